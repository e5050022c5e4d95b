package remote

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/internal/testutil"
)

// Environment of the re-executed test binary (see TestMain).
const (
	grandchildEnv = "REMOTE_TEST_GRANDCHILD"  // "1": also start `sleep 300` in the same process group
	configuredEnv = "REMOTE_TEST_CONFIGURED"  // set through agentsmcp.UpstreamConfig.Env
	secretEnv     = "AGENTS_MCP_TEST_API_KEY" // set in the parent only; must not reach the child
)

// runStdioServer is the stdio upstream: the fixture's tools plus a few that
// describe the process, served on stdin/stdout.
func runStdioServer() int {
	fmt.Fprintf(os.Stderr, "stdio fixture up pid=%d\n", os.Getpid())
	grandchild := 0
	if os.Getenv(grandchildEnv) == "1" {
		cmd := exec.Command("sleep", "300")
		cmd.Stderr = os.Stderr // inherited, as a real server's children (npx → node) do
		if err := cmd.Start(); err != nil {
			fmt.Fprintf(os.Stderr, "start grandchild: %v\n", err)
			return 1
		}
		grandchild = cmd.Process.Pid
	}
	fx := newFixture("stdio")
	text := func(s string) *mcp.CallToolResult {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
	}
	fx.server.AddTool(&mcp.Tool{Name: "env", InputSchema: json.RawMessage(anySchema)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return text(strings.Join(os.Environ(), "\n")), nil
		})
	fx.server.AddTool(&mcp.Tool{Name: "pids", InputSchema: json.RawMessage(anySchema)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			b, _ := json.Marshal(map[string]int{"pid": os.Getpid(), "pgid": syscall.Getpgrp(), "grandchild": grandchild})
			return text(string(b)), nil
		})
	fx.server.AddTool(&mcp.Tool{Name: "stderr", InputSchema: json.RawMessage(anySchema)},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var a struct {
				Line string `json:"line"`
			}
			_ = json.Unmarshal(req.Params.Arguments, &a)
			fmt.Fprintln(os.Stderr, a.Line)
			return text("written"), nil
		})
	if err := fx.server.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		fmt.Fprintf(os.Stderr, "stdio fixture: %v\n", err)
		return 1
	}
	return 0
}

func stdioConfig(t *testing.T, name string) agentsmcp.UpstreamConfig {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return agentsmcp.UpstreamConfig{
		Name:      name,
		Transport: TransportStdio,
		Command:   exe,
		Env:       map[string]string{stdioServerEnv: "1", grandchildEnv: "1", configuredEnv: "configured-value"},
		// The child is this test binary, built with -race: give it time.
		Timeout:    15 * time.Second,
		MaxBackoff: 300 * time.Millisecond,
	}
}

type childPIDs struct {
	PID        int `json:"pid"`
	PGID       int `json:"pgid"`
	Grandchild int `json:"grandchild"`
}

func pidsOf(t *testing.T, cs *mcp.ClientSession, upstream string) childPIDs {
	t.Helper()
	var p childPIDs
	if err := json.Unmarshal([]byte(mustText(t, cs, upstream+"__pids", `{}`)), &p); err != nil {
		t.Fatal(err)
	}
	if p.PID == 0 || p.Grandchild == 0 {
		t.Fatalf("pids tool answered %+v", p)
	}
	return p
}

// procStat returns a process's state letter, parent and process group from
// /proc, and false if there is no such process.
func procStat(pid int) (state byte, ppid, pgid int, ok bool) {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return 0, 0, 0, false
	}
	// pid (comm) state ppid pgrp ...; comm may contain spaces.
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	ppid, _ = strconv.Atoi(f[1])
	pgid, _ = strconv.Atoi(f[2])
	return f[0][0], ppid, pgid, true
}

// liveGroupMembers lists the processes of group pgid that are not zombies.
func liveGroupMembers(pgid int) []int {
	entries, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if state, _, g, ok := procStat(pid); ok && g == pgid && state != 'Z' {
			out = append(out, pid)
		}
	}
	return out
}

// requireGroupGone checks that nothing of process group pgid runs any more
// (within live: SIGKILL takes effect asynchronously), that the group is
// gone altogether (within gone: the grandchild, orphaned, is reaped by PID
// 1, which in some sandboxes does that only every few seconds), and that its
// leader is not left as an unreaped child of this process.
func requireGroupGone(t *testing.T, pgid int, live, gone time.Duration) {
	t.Helper()
	testutil.Eventually(t, live, fmt.Sprintf("no process of group %d runs", pgid), func() bool {
		return len(liveGroupMembers(pgid)) == 0
	})
	testutil.Eventually(t, gone, fmt.Sprintf("kill(-%d, 0) is ESRCH", pgid), func() bool {
		return errors.Is(syscall.Kill(-pgid, 0), syscall.ESRCH)
	})
	if state, ppid, _, ok := procStat(pgid); ok && state == 'Z' && ppid == os.Getpid() {
		t.Errorf("the old child %d is a zombie of the test process: never reaped", pgid)
	}
}

func TestStdioUpstreamIsSupervised(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("uses /proc")
	}
	t.Setenv(secretEnv, "hunter2-must-not-leak")
	e := newEnv(t, fastOptions())
	cfg := stdioConfig(t, "kid")

	// Only the config file may define stdio upstreams.
	if err := e.pool.Add(testCtx(t, 5*time.Second), cfg); agentsmcp.ErrorCode(err) != agentsmcp.EINVALID {
		t.Fatalf("Add(stdio) = %v, want EINVALID", err)
	}
	e.add(cfg)
	st := e.status("kid")
	if st.PID <= 0 || st.Command != cfg.Command || st.Origin != OriginConfig || st.Transport != TransportStdio {
		t.Fatalf("status %+v", st)
	}
	cs := e.caller(nil, callerVersion)
	if n := len(e.routerToolNames("kid__")); n != 12 {
		t.Errorf("%d tools listed, want 12", n)
	}
	if got := mustText(t, cs, "kid__echo", `{"text":"over stdio"}`); !strings.Contains(got, "over stdio") {
		t.Errorf("echo answered %q", got)
	}

	// Its own process group, with the grandchild in it.
	p := pidsOf(t, cs, "kid")
	if p.PID != st.PID || p.PGID != p.PID {
		t.Errorf("child pid %d pgid %d, status PID %d: want the child to lead its own group", p.PID, p.PGID, st.PID)
	}
	if p.PGID == syscall.Getpgrp() {
		t.Error("the child shares the test's process group")
	}
	if _, _, g, ok := procStat(p.Grandchild); !ok || g != p.PGID {
		t.Errorf("grandchild %d: in group %d (exists %v), want %d", p.Grandchild, g, ok, p.PGID)
	}

	// Allowlisted environment plus the configured variables, nothing else.
	var names []string
	for _, kv := range strings.Split(mustText(t, cs, "kid__env", `{}`), "\n") {
		k, v, _ := strings.Cut(kv, "=")
		names = append(names, k)
		if strings.Contains(v, "hunter2") {
			t.Errorf("a secret value reached the child as %s", k)
		}
		if !slices.Contains(EnvAllowlist, k) && cfg.Env[k] == "" {
			t.Errorf("variable %s is neither allowlisted nor configured", k)
		}
	}
	for _, want := range []string{stdioServerEnv, configuredEnv, "PATH"} {
		if !slices.Contains(names, want) {
			t.Errorf("child environment lacks %s: %v", want, names)
		}
	}
	if slices.Contains(names, secretEnv) {
		t.Errorf("%s reached the child", secretEnv)
	}

	// stderr goes to the log, line by line, under the upstream's name.
	testutil.Eventually(t, 5*time.Second, "the child's start-up line is logged", func() bool {
		return len(e.logs.lines("upstream stderr", "upstream=kid", fmt.Sprintf("stdio fixture up pid=%d", p.PID))) == 1
	})
	mustText(t, cs, "kid__stderr", `{"line":"a line from the child"}`)
	testutil.Eventually(t, 5*time.Second, "a stderr line written during a call is logged", func() bool {
		return len(e.logs.lines("upstream stderr", "upstream=kid", "a line from the child")) == 1
	})

	// A crashed child is restarted: new process, ready again, and the old
	// group (the grandchild included) is killed and reaped.
	if err := syscall.Kill(p.PID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, 20*time.Second, "a new child is ready", func() bool {
		st := e.status("kid")
		return st.State == StateReady && st.PID != p.PID && st.PID > 0
	})
	requireGroupGone(t, p.PGID, 10*time.Second, 15*time.Second)
	if lines := e.logs.lines("upstream session lost", "upstream=kid"); len(lines) == 0 {
		t.Error("the lost session was not logged")
	}
	p2 := pidsOf(t, cs, "kid")
	if p2.PID != e.status("kid").PID {
		t.Errorf("the new child's pid %d differs from Status.PID %d", p2.PID, e.status("kid").PID)
	}

	// Remove stops the child and its group before it returns.
	start := time.Now()
	if err := e.pool.Remove(testCtx(t, 15*time.Second), "kid"); err != nil {
		t.Fatal(err)
	}
	t.Logf("Remove took %s", time.Since(start))
	requireGroupGone(t, p2.PGID, time.Second, 15*time.Second)
	if n := len(e.routerToolNames("kid__")); n != 0 {
		t.Errorf("%d tools still listed after Remove", n)
	}
}

func TestStdioChildrenAreStoppedOnClose(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("uses /proc")
	}
	t.Parallel()
	e := newEnv(t, fastOptions())
	e.add(stdioConfig(t, "one"))
	e.add(stdioConfig(t, "two"))
	cs := e.caller(nil, callerVersion)
	one, two := pidsOf(t, cs, "one"), pidsOf(t, cs, "two")

	if err := e.pool.Close(testCtx(t, 15*time.Second)); err != nil {
		t.Fatal(err)
	}
	requireGroupGone(t, one.PGID, time.Second, 15*time.Second)
	requireGroupGone(t, two.PGID, time.Second, 15*time.Second)
	if len(e.pool.Statuses()) != 0 || len(e.routerToolNames("")) != 0 {
		t.Error("upstreams remain after Close")
	}
}

func TestStdioCommandThatFailsIsDown(t *testing.T) {
	t.Parallel()
	e := newEnv(t, fastOptions())
	cfg := agentsmcp.UpstreamConfig{Name: "broken", Transport: TransportStdio, Command: "/nonexistent/mcp-server", Timeout: 2 * time.Second, MaxBackoff: 300 * time.Millisecond}
	if err := e.pool.AddFromConfig(testCtx(t, 5*time.Second), cfg); err != nil {
		t.Fatal(err)
	}
	st := e.waitState("broken", StateDown, 5*time.Second)
	if !strings.Contains(st.LastError, "/nonexistent/mcp-server") || st.PID != 0 {
		t.Errorf("status %+v", st)
	}

	// A command that exits at once (here: the test binary without the
	// server variable, which runs no test and exits) is down too.
	exe, _ := os.Executable()
	cfg = agentsmcp.UpstreamConfig{Name: "exits", Transport: TransportStdio, Command: exe, Args: []string{"-test.run=^$"}, Timeout: 5 * time.Second, MaxBackoff: 300 * time.Millisecond}
	if err := e.pool.AddFromConfig(testCtx(t, 10*time.Second), cfg); err != nil {
		t.Fatal(err)
	}
	st = e.waitState("exits", StateDown, 10*time.Second)
	if st.LastError == "" {
		t.Errorf("status %+v", st)
	}
}
