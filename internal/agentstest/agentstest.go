// Package agentstest holds what the tests of the agents' engine (agents)
// and of its MCP face (agents/mcptools) share: real local tools behind a
// real router, an executor over SQLite, and the whole assembly of thought
// agent, planner and executor. Test support only: no shipped code imports
// it.
package agentstest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/agents"
	"github.com/agents-mcp/agents-mcp/internal/mcpwire"
	"github.com/agents-mcp/agents-mcp/internal/storedform"
	"github.com/agents-mcp/agents-mcp/localtools"
	"github.com/agents-mcp/agents-mcp/memory/sqlite"
	"github.com/agents-mcp/agents-mcp/router"
	"github.com/agents-mcp/agents-mcp/router/toolsearch"
)

// Toolbox is a set of real local tools behind a real router, with counters
// the tests read.
type Toolbox struct {
	mu        sync.Mutex
	calls     map[string]int // tool → calls
	running   int
	maxSeen   int
	flakyLeft map[string]int // key → failures still to give
	Cancelled atomic.Int32   // block calls that saw their context end
	// Authorized ends the authorization requests of needs_auth.
	Authorized atomic.Bool
}

type EchoIn struct {
	Value any `json:"value"`
}

type SleepIn struct {
	Ms    int    `json:"ms"`
	Label string `json:"label,omitempty"`
}

type FlakyIn struct {
	Key      string `json:"key"`
	Failures int    `json:"failures"`
}

type PathIn struct {
	Path string `json:"path"`
}

func (tb *Toolbox) count(name string) {
	tb.mu.Lock()
	tb.calls[name]++
	tb.mu.Unlock()
}

// MaxSeen is the most sleep calls that ran at once.
func (tb *Toolbox) MaxSeen() int {
	tb.mu.Lock()
	defer tb.mu.Unlock()
	return tb.maxSeen
}

// CallsOf is how many times tool name was called.
func (tb *Toolbox) CallsOf(name string) int {
	tb.mu.Lock()
	defer tb.mu.Unlock()
	return tb.calls[name]
}

// NewToolbox is a toolbox behind a new router.
func NewToolbox(t testing.TB) (*Toolbox, *router.Router) {
	t.Helper()
	tb := &Toolbox{calls: map[string]int{}, flakyLeft: map[string]int{}}
	local := localtools.New()
	yes := true
	must := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	must(localtools.Add(local, &mcp.Tool{Name: "echo", Description: "returns its value", Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		func(_ context.Context, _ *mcp.CallToolRequest, in EchoIn) (*mcp.CallToolResult, map[string]any, error) {
			tb.count("echo")
			return nil, map[string]any{"value": in.Value}, nil
		}))
	must(localtools.Add(local, &mcp.Tool{Name: "sleep", Description: "sleeps", Annotations: &mcp.ToolAnnotations{IdempotentHint: true}},
		func(ctx context.Context, _ *mcp.CallToolRequest, in SleepIn) (*mcp.CallToolResult, map[string]any, error) {
			tb.count("sleep")
			tb.mu.Lock()
			tb.running++
			tb.maxSeen = max(tb.maxSeen, tb.running)
			tb.mu.Unlock()
			defer func() {
				tb.mu.Lock()
				tb.running--
				tb.mu.Unlock()
			}()
			select {
			case <-time.After(time.Duration(in.Ms) * time.Millisecond):
			case <-ctx.Done():
				return nil, nil, ctx.Err()
			}
			return nil, map[string]any{"slept": in.Ms, "label": in.Label}, nil
		}))
	must(localtools.Add(local, &mcp.Tool{Name: "flaky", Description: "fails a few times, then works"},
		func(_ context.Context, _ *mcp.CallToolRequest, in FlakyIn) (*mcp.CallToolResult, map[string]any, error) {
			tb.count("flaky")
			tb.mu.Lock()
			left, seen := tb.flakyLeft[in.Key]
			if !seen {
				left = in.Failures
			}
			tb.flakyLeft[in.Key] = left - 1
			tb.mu.Unlock()
			if left > 0 {
				// Each failure says something new (how long to wait): the
				// same error twice in a row would be a permanent one.
				return nil, nil, fmt.Errorf("service temporarily unavailable, try again in %d s", left)
			}
			return nil, map[string]any{"ok": true}, nil
		}))
	must(localtools.Add(local, &mcp.Tool{Name: "broken", Description: "always fails"},
		func(_ context.Context, _ *mcp.CallToolRequest, in PathIn) (*mcp.CallToolResult, map[string]any, error) {
			tb.count("broken")
			return nil, nil, errors.New("bad argument: path is empty")
		}))
	must(localtools.Add(local, &mcp.Tool{Name: "outage", Description: "answers that its service is unavailable, every time"},
		func(_ context.Context, _ *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, map[string]any, error) {
			tb.count("outage")
			return nil, nil, errors.New("service unavailable (503)")
		}))
	must(localtools.Add(local, &mcp.Tool{Name: "delete_all", Description: "deletes everything", Annotations: &mcp.ToolAnnotations{DestructiveHint: &yes}},
		func(_ context.Context, _ *mcp.CallToolRequest, in PathIn) (*mcp.CallToolResult, map[string]any, error) {
			tb.count("delete_all")
			return nil, map[string]any{"deleted": in.Path}, nil
		}))
	must(localtools.Add(local, &mcp.Tool{Name: "block", Description: "blocks until cancelled"},
		func(ctx context.Context, _ *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, map[string]any, error) {
			tb.count("block")
			<-ctx.Done()
			tb.Cancelled.Add(1)
			return nil, nil, ctx.Err()
		}))
	must(localtools.Add(local, &mcp.Tool{Name: "needs_auth", Description: "answers that a person must authorize, until authorized"},
		func(_ context.Context, _ *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, map[string]any, error) {
			tb.count("needs_auth")
			if !tb.Authorized.Load() {
				return mcpwire.AuthorizationRequiredResult(&agentsmcp.AuthorizationRequired{Integration: "crm",
					AuthorizeURL: "http://127.0.0.1:9/authorize?state=s", Reason: "no authorization yet"}), nil, nil
			}
			return nil, map[string]any{"ok": true}, nil
		}))
	r := router.New(router.Options{Version: "test"})
	must(r.AddProvider(context.Background(), local))
	return tb, r
}

// Harness runs plans with an executor over SQLite and the toolbox.
type Harness struct {
	T      testing.TB
	Store  *sqlite.DB
	Tools  *Toolbox
	Router *router.Router
	Exec   *agents.Executor
}

// NewHarness is a harness; tune adjusts the executor's options.
func NewHarness(t testing.TB, tune func(*agents.ExecutorOptions)) *Harness {
	t.Helper()
	ctx := context.Background()
	db, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "agents.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	tb, r := NewToolbox(t)
	opts := agents.ExecutorOptions{
		Tasks: db, Plans: db, Tools: r, Catalog: toolsearch.NewCatalog(r, nil, nil),
		Retry: agentsmcp.RetryPolicy{MaxAttempts: 3, InitialBackoff: 5 * time.Millisecond, MaxBackoff: 20 * time.Millisecond},
	}
	if tune != nil {
		tune(&opts)
	}
	ex := agents.NewExecutor(opts)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = ex.Close(ctx)
	})
	return &Harness{T: t, Store: db, Tools: tb, Router: r, Exec: ex}
}

// Plan stores a plan built from steps.
func (h *Harness) Plan(inputs string, steps ...agentsmcp.PlanStep) *agentsmcp.Plan {
	h.T.Helper()
	p := &agentsmcp.Plan{Request: "test request", Steps: steps}
	if inputs != "" {
		p.Inputs = json.RawMessage(inputs)
	}
	if err := h.Store.CreatePlan(context.Background(), p); err != nil {
		h.T.Fatal(err)
	}
	return p
}

// Run starts a task of p with inputs for caller and waits for it.
func (h *Harness) Run(p *agentsmcp.Plan, inputs string, caller agents.Caller) *agentsmcp.Task {
	h.T.Helper()
	var in json.RawMessage
	if inputs != "" {
		in = json.RawMessage(inputs)
	}
	t, err := h.Exec.Start(context.Background(), p, in, nil, caller)
	if err != nil {
		h.T.Fatal(err)
	}
	return h.Wait(t.ID)
}

// Wait returns task id once it ended or paused.
func (h *Harness) Wait(id string) *agentsmcp.Task {
	h.T.Helper()
	// A guard against a hang, not a speed goal: under -race on a busy
	// machine the large-output tests take tens of seconds.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	t, err := h.Exec.Wait(ctx, id)
	if err != nil {
		h.T.Fatal(err)
	}
	if ctx.Err() != nil {
		// Step states only: outputs can be megabytes.
		var states []string
		for _, s := range t.Steps {
			states = append(states, s.StepID+":"+string(s.Status))
		}
		h.T.Fatalf("task %s still %s after a minute: %s", id, t.Status, strings.Join(states, " "))
	}
	return t
}

// Step is a plan step calling tool with arguments args after deps.
func Step(id, tool, args string, deps ...string) agentsmcp.PlanStep {
	s := agentsmcp.PlanStep{ID: id, Tool: tool, DependsOn: deps}
	if args != "" {
		s.Arguments = json.RawMessage(args)
	}
	return s
}

// StoreMemory recalls from the store by words. It stands for the server's
// semantic recall (cmd/agents-mcp wires recall.AgentMemory), which needs an
// embedder and a vector index this test does not start.
type StoreMemory struct{ DB *sqlite.DB }

func (m StoreMemory) SimilarLearnings(ctx context.Context, text string, max int) ([]*agentsmcp.Learning, error) {
	ls, _, err := m.DB.FindLearnings(ctx, agentsmcp.LearningFilter{Text: agents.GoalOf(text), Limit: max})
	return ls, err
}

func (m StoreMemory) RecentLearnings(ctx context.Context, max int) ([]*agentsmcp.Learning, error) {
	ls, _, err := m.DB.FindLearnings(ctx, agentsmcp.LearningFilter{Limit: max})
	return ls, err
}

func (m StoreMemory) FamilyPatterns(ctx context.Context, family string, max int) ([]*agentsmcp.PlanPattern, error) {
	ps, _, err := m.DB.FindPatterns(ctx, agentsmcp.PatternFilter{Text: family, Limit: agentsmcp.MaxPageSize})
	var out []*agentsmcp.PlanPattern
	for _, p := range ps {
		if p.Goal == family && p.Successes > 0 && p.SuccessRate() >= 0.5 && len(out) < max {
			out = append(out, p)
		}
	}
	return out, err
}

func (m StoreMemory) RelevantInsights(ctx context.Context, _ string, tools []string, max int) ([]*agentsmcp.Insight, error) {
	var out []*agentsmcp.Insight
	for _, t := range tools {
		ins, _, err := m.DB.FindInsights(ctx, agentsmcp.InsightFilter{AppliesTo: t, Limit: max})
		if err != nil {
			return nil, err
		}
		out = append(out, ins...)
	}
	return out, nil
}

func (m StoreMemory) SuccessfulPatterns(ctx context.Context, text string, max int) ([]*agentsmcp.PlanPattern, error) {
	ps, _, err := m.DB.FindPatterns(ctx, agentsmcp.PatternFilter{Text: agents.FamilyOf(text), Limit: max})
	var out []*agentsmcp.PlanPattern
	for _, p := range ps {
		if p.Successes > 0 && p.SuccessRate() >= 0.5 {
			out = append(out, p)
		}
	}
	return out, err
}

// Stack is the whole agents assembly over real parts: SQLite, a router
// with local tools recording their performance, the learner.
type Stack struct {
	DB      *sqlite.DB
	Router  *router.Router
	Thinker *agents.Thinker
	Planner *agents.Planner
	Exec    *agents.Executor
}

// NewStack is a stack whose local tools register adds.
func NewStack(t *testing.T, register func(*localtools.Provider)) *Stack {
	t.Helper()
	ctx := context.Background()
	db, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "agents.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	r := router.New(router.Options{Version: "test", OnToolCall: func(c router.ToolCallRecord) {
		_ = db.RecordToolCall(context.Background(), agentsmcp.ToolCall{Tool: c.Tool, Duration: c.Duration, Error: c.Error})
	}})
	local := localtools.New()
	register(local)
	if err := r.AddProvider(ctx, local); err != nil {
		t.Fatal(err)
	}
	catalog := toolsearch.NewCatalog(r, nil, nil)
	g := &agents.Gatherer{Catalog: catalog, Memory: StoreMemory{DB: db}, Performance: db}
	learner := &agents.Learner{Learnings: db, Patterns: db, Insights: db, Catalog: catalog}
	ex := agents.NewExecutor(agents.ExecutorOptions{Tasks: db, Plans: db, Tools: r, Catalog: catalog, OnEnd: learner.Learn,
		Retry: agentsmcp.RetryPolicy{MaxAttempts: 2, InitialBackoff: time.Millisecond}})
	t.Cleanup(func() { _ = ex.Close(context.Background()) })
	return &Stack{DB: db, Router: r, Exec: ex,
		Thinker: &agents.Thinker{Gatherer: g, Thoughts: db},
		Planner: &agents.Planner{Gatherer: g, Validator: r, Plans: db, Tasks: db}}
}

// StateOf is the state of step id in t; the zero state when t has none.
func StateOf(t *agentsmcp.Task, id string) agentsmcp.StepState {
	for _, s := range t.Steps {
		if s.StepID == id {
			return s
		}
	}
	return agentsmcp.StepState{}
}

// HasEvent reports whether t's history has an event of type typ for step
// stepID.
func HasEvent(task *agentsmcp.Task, typ, stepID string) bool {
	return slices.ContainsFunc(task.History, func(e agentsmcp.TaskEvent) bool { return e.Type == typ && e.StepID == stepID })
}

// URLIn is the input of the fetch tools.
type URLIn struct {
	URL string `json:"url"`
}

// FetchTools registers two tools for the same job; the one that ranks
// first for "fetch the web page …" always fails.
func FetchTools(t *testing.T) func(*localtools.Provider) {
	return func(l *localtools.Provider) {
		if err := localtools.Add(l, &mcp.Tool{Name: "fetch_web_page_fast", Description: "fetch the web page at a url, fast web page fetch"},
			func(context.Context, *mcp.CallToolRequest, URLIn) (*mcp.CallToolResult, map[string]any, error) {
				return nil, nil, errors.New("fetch failed: HTTP 400 bad request")
			}); err != nil {
			t.Fatal(err)
		}
		if err := localtools.Add(l, &mcp.Tool{Name: "fetch_page", Description: "download a web page by url"},
			func(_ context.Context, _ *mcp.CallToolRequest, in URLIn) (*mcp.CallToolResult, map[string]any, error) {
				return nil, map[string]any{"status": 200, "url": in.URL}, nil
			}); err != nil {
			t.Fatal(err)
		}
	}
}

// ReadCountingTasks counts the reads of a task by id, and says whether
// its store stores tasks verbatim as told.
type ReadCountingTasks struct {
	agentsmcp.TaskService
	Verbatim bool
	Reads    atomic.Int64
}

func (c *ReadCountingTasks) FindTaskByID(ctx context.Context, id string) (*agentsmcp.Task, error) {
	c.Reads.Add(1)
	return c.TaskService.FindTaskByID(ctx, id)
}

func (c *ReadCountingTasks) UpdateTaskSteps(ctx context.Context, t *agentsmcp.Task, ch agentsmcp.TaskChange) error {
	return storedform.UpdateTaskSteps(ctx, c.TaskService, t, ch)
}

func (c *ReadCountingTasks) TasksVerbatim() bool { return c.Verbatim }
