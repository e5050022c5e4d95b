package agents_test

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agents-mcp/agents-mcp/agents"
	"github.com/agents-mcp/agents-mcp/localtools"
	"github.com/agents-mcp/agents-mcp/memory/sqlite"
	"github.com/agents-mcp/agents-mcp/router"
	"github.com/agents-mcp/agents-mcp/router/toolsearch"
)

// The crash tests (crash_test.go) re-execute this test binary as a child
// process that runs an executor, and kill it in the middle of a task. These
// environment variables make the binary that child instead of running the
// tests.
const (
	crashChildEnv = "AGENTS_CRASH_CHILD" // "1": run runCrashChild
	crashDBEnv    = "AGENTS_CRASH_DB"    // the SQLite database the parent created
	crashLogEnv   = "AGENTS_CRASH_LOG"   // the call log the tools append to
	crashPlanEnv  = "AGENTS_CRASH_PLAN"  // the id of the stored plan to start
)

func TestMain(m *testing.M) {
	if os.Getenv(crashChildEnv) == "1" {
		os.Exit(runCrashChild())
	}
	os.Exit(m.Run())
}

// runCrashChild is the child of TestCrashResume: it starts a task of the
// stored plan with an executor whose slow tools take 30 s, prints
// "started <task id>", and then waits to be killed. It never returns to
// the tests. Should the parent die without killing it, it exits when its
// stdin closes (the parent's end of the pipe), and after two minutes in any
// case.
func runCrashChild() int {
	fail := func(format string, args ...any) int {
		fmt.Fprintf(os.Stderr, "crash child: "+format+"\n", args...)
		return 2
	}
	go func() {
		_, _ = io.Copy(io.Discard, os.Stdin)
		fmt.Fprintln(os.Stderr, "crash child: stdin closed; exiting")
		os.Exit(4)
	}()
	ctx := context.Background()
	db, err := sqlite.Open(ctx, os.Getenv(crashDBEnv))
	if err != nil {
		return fail("open the database: %v", err)
	}
	r, err := newCrashTools("child", os.Getenv(crashLogEnv), 30*time.Second, nil)
	if err != nil {
		return fail("tools: %v", err)
	}
	ex := agents.NewExecutor(agents.ExecutorOptions{
		Tasks: db, Plans: db, Tools: r, Catalog: toolsearch.NewCatalog(r, nil, nil),
		Owner: "child", LeaseTTL: time.Second,
	})
	plan, err := db.FindPlanByID(ctx, os.Getenv(crashPlanEnv))
	if err != nil {
		return fail("read the plan: %v", err)
	}
	task, err := ex.Start(ctx, plan, nil, nil, nil)
	if err != nil {
		return fail("start the task: %v", err)
	}
	fmt.Printf("started %s\n", task.ID)
	time.Sleep(2 * time.Minute)
	return fail("not killed within two minutes")
}

// callLog appends one line per event of a tool call to a file shared by the
// processes of a test, and syncs it before the call goes on: once a line is
// in the file, the event happened, even if the process is killed right
// after. Lines are "<role> <event> <tool> <label>", event being start, done
// or cancelled.
type callLog struct {
	mu   sync.Mutex
	path string
	role string
}

func (l *callLog) add(event, tool, label string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	f, err := os.OpenFile(l.path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	_, werr := fmt.Fprintf(f, "%s %s %s %s\n", l.role, event, tool, label)
	serr := f.Sync()
	cerr := f.Close()
	for _, err := range []error{werr, serr, cerr} {
		if err != nil {
			return fmt.Errorf("call log: %w", err)
		}
	}
	return nil
}

// readCallLog returns the lines of the call log (none when it does not
// exist yet).
func readCallLog(path string) []string {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	return strings.Split(strings.TrimSpace(string(b)), "\n")
}

type labelIn struct {
	Label string `json:"label"`
}

// newCrashTools returns a router with three local tools that log their
// calls (see callLog) under role:
//   - quick returns at once (idempotent);
//   - slow_idempotent takes slow, or until its context ends (idempotent);
//   - slow_effect takes slow too, and has no annotation: it may have
//     effects, so it must not run again on its own after an interruption.
//
// onCall, when not nil, runs at the start of every call.
func newCrashTools(role, logPath string, slow time.Duration, onCall func(ctx context.Context, tool, label string)) (*router.Router, error) {
	log := &callLog{path: logPath, role: role}
	handler := func(name string, d time.Duration) mcp.ToolHandlerFor[labelIn, map[string]any] {
		return func(ctx context.Context, _ *mcp.CallToolRequest, in labelIn) (*mcp.CallToolResult, map[string]any, error) {
			if err := log.add("start", name, in.Label); err != nil {
				return nil, nil, err
			}
			if onCall != nil {
				onCall(ctx, name, in.Label)
			}
			if d > 0 {
				select {
				case <-time.After(d):
				case <-ctx.Done():
					_ = log.add("cancelled", name, in.Label)
					return nil, nil, ctx.Err()
				}
			}
			if err := log.add("done", name, in.Label); err != nil {
				return nil, nil, err
			}
			return nil, map[string]any{"tool": name, "label": in.Label, "by": role}, nil
		}
	}
	local := localtools.New()
	idempotent := &mcp.ToolAnnotations{IdempotentHint: true}
	for _, add := range []func() error{
		func() error {
			return localtools.Add(local, &mcp.Tool{Name: "quick", Description: "returns at once", Annotations: idempotent}, handler("quick", 0))
		},
		func() error {
			return localtools.Add(local, &mcp.Tool{Name: "slow_idempotent", Description: "slow, idempotent", Annotations: idempotent}, handler("slow_idempotent", slow))
		},
		func() error {
			return localtools.Add(local, &mcp.Tool{Name: "slow_effect", Description: "slow, with effects"}, handler("slow_effect", slow))
		},
	} {
		if err := add(); err != nil {
			return nil, err
		}
	}
	r := router.New(router.Options{Version: "test"})
	if err := r.AddProvider(context.Background(), local); err != nil {
		return nil, err
	}
	return r, nil
}
