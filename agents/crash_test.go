//go:build unix

package agents_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/agents"
	"github.com/agents-mcp/agents-mcp/internal/agentstest"
	"github.com/agents-mcp/agents-mcp/internal/testutil"
	"github.com/agents-mcp/agents-mcp/memory/sqlite"
	"github.com/agents-mcp/agents-mcp/router/toolsearch"
)

// crashChild is this test binary running runCrashChild, in a process group
// of its own.
type crashChild struct {
	cmd     *exec.Cmd
	exited  chan struct{} // closed once the process has been reaped
	waitErr error         // set before exited is closed
	stdin   *os.File      // the parent's end of the child's stdin
	stderr  string        // path of the child's stderr
}

// startCrashChild starts the child on the database and call log, for the
// stored plan; it returns once the child printed the id of the task it
// started. t.Cleanup kills it.
func startCrashChild(t *testing.T, dbPath, logPath, planID string) (*crashChild, string) {
	t.Helper()
	dir := t.TempDir()
	stdinR, stdinW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	stdoutR, stdoutW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	errPath := filepath.Join(dir, "child.stderr")
	stderr, err := os.Create(errPath)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$", "-test.count=1")
	cmd.Env = append(os.Environ(),
		crashChildEnv+"=1", crashDBEnv+"="+dbPath, crashLogEnv+"="+logPath, crashPlanEnv+"="+planID)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdinR, stdoutW, stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// The child holds its ends now.
	stdinR.Close()
	stdoutW.Close()
	stderr.Close()
	c := &crashChild{cmd: cmd, exited: make(chan struct{}), stdin: stdinW, stderr: errPath}
	go func() {
		c.waitErr = cmd.Wait()
		close(c.exited)
	}()
	t.Cleanup(func() {
		c.kill(t)
		stdinW.Close()
		stdoutR.Close()
	})

	lines := make(chan string, 1)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(stdoutR)
		for sc.Scan() {
			if id, ok := strings.CutPrefix(sc.Text(), "started "); ok {
				lines <- id
				break
			}
		}
		// Drain, so that the child never blocks on its stdout.
		for sc.Scan() {
		}
	}()
	select {
	case id, ok := <-lines:
		if !ok {
			t.Fatalf("the child closed its stdout without starting the task; stderr:\n%s", c.errors())
		}
		return c, id
	case <-c.exited:
		t.Fatalf("the child exited (%v) before starting the task; stderr:\n%s", c.waitErr, c.errors())
	case <-time.After(60 * time.Second):
		t.Fatalf("the child did not start the task within 60 s; stderr:\n%s", c.errors())
	}
	return nil, ""
}

// kill sends SIGKILL to the child's process group and reaps the child.
func (c *crashChild) kill(t *testing.T) {
	t.Helper()
	if err := syscall.Kill(-c.cmd.Process.Pid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		t.Errorf("kill the child's process group: %v", err)
	}
	select {
	case <-c.exited:
	case <-time.After(10 * time.Second):
		t.Error("the killed child was not reaped within 10 s")
	}
}

func (c *crashChild) errors() string {
	b, _ := os.ReadFile(c.stderr)
	return string(b)
}

// countLines counts the call log lines equal to want.
func countLines(lines []string, want string) int {
	n := 0
	for _, l := range lines {
		if l == want {
			n++
		}
	}
	return n
}

func describeTask(task *agentsmcp.Task) string {
	if task == nil {
		return "<no task>"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "task %s v%d lease %q:", task.Status, task.Version, task.Lease.Owner)
	for _, s := range task.Steps {
		fmt.Fprintf(&b, " %s=%s(attempts %d, %q)", s.StepID, s.Status, s.Attempts, s.Error)
	}
	b.WriteString("; history:")
	for _, e := range task.History {
		fmt.Fprintf(&b, " %s[%s]", e.Type, e.StepID)
	}
	return b.String()
}

var hasEvent = agentstest.HasEvent

// leaseRecorder remembers the lease owner of a task as the store shows it
// while a tool of the task runs.
type leaseRecorder struct {
	db     *sqlite.DB
	taskID func() string
	mu     sync.Mutex
	seen   []string // "<tool> <label>: <owner>"
	owners map[string]int
}

func (l *leaseRecorder) record(ctx context.Context, tool, label string) {
	owner := "<error>"
	if task, err := l.db.FindTaskByID(ctx, l.taskID()); err == nil {
		owner = task.Lease.Owner
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.seen = append(l.seen, fmt.Sprintf("%s %s: %s", tool, label, owner))
	l.owners[owner]++
}

func (l *leaseRecorder) check(t *testing.T, owner string) {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.seen) == 0 || l.owners[owner] != len(l.seen) {
		t.Errorf("lease owners seen during the tool calls: %v; want every one %q", l.seen, owner)
	}
}

// TestCrashResume kills a process in the middle of a task (SIGKILL, while
// two steps run) and checks that another executor resumes it from its
// stored state: the completed step is not run again, the interrupted
// idempotent step is, the interrupted step with effects waits for a
// confirmation, and the history says what happened.
func TestCrashResume(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	dbPath, logPath := filepath.Join(dir, "agents.db"), filepath.Join(dir, "calls.log")
	db, err := sqlite.Open(ctx, dbPath)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	plan := &agentsmcp.Plan{Request: "crash test", Steps: []agentsmcp.PlanStep{
		step("a", "quick", `{"label":"a"}`),
		step("b", "slow_idempotent", `{"label":"b"}`, "a"),
		step("c", "slow_effect", `{"label":"c"}`, "a"),
		step("d", "quick", `{"label":"d"}`, "b", "c"),
	}}
	if err := db.CreatePlan(ctx, plan); err != nil {
		t.Fatal(err)
	}

	child, taskID := startCrashChild(t, dbPath, logPath, plan.ID)

	// Wait for the child to be in the middle of the task: a done, b and c
	// called (and so stored running before that).
	var before *agentsmcp.Task
	testutil.EventuallyState(t, 30*time.Second, "the child runs b and c", func() (bool, string) {
		select {
		case <-child.exited:
			t.Fatalf("the child exited before it ran b and c; log %q", readCallLog(logPath))
		default:
		}
		lines := readCallLog(logPath)
		called := countLines(lines, "child done quick a") == 1 &&
			countLines(lines, "child start slow_idempotent b") == 1 &&
			countLines(lines, "child start slow_effect c") == 1
		task, err := db.FindTaskByID(ctx, taskID)
		if err != nil {
			return false, fmt.Sprintf("log %q; %v", lines, err)
		}
		before = task
		stored := stateOf(task, "a").Status == agentsmcp.StepSucceeded &&
			stateOf(task, "b").Status == agentsmcp.StepRunning &&
			stateOf(task, "c").Status == agentsmcp.StepRunning
		return called && stored, fmt.Sprintf("log %q; %s", lines, describeTask(task))
	})
	child.kill(t)
	if child.waitErr == nil {
		t.Fatal("the child exited normally, not killed")
	}

	// Killed: the task is left as it was, running, its lease still the
	// child's (nobody released it).
	crashed, err := db.FindTaskByID(ctx, taskID)
	if err != nil {
		t.Fatal(err)
	}
	if crashed.Status != agentsmcp.TaskRunning || crashed.Lease.Owner != "child" ||
		stateOf(crashed, "b").Status != agentsmcp.StepRunning || stateOf(crashed, "c").Status != agentsmcp.StepRunning {
		t.Fatalf("after the kill: %s; want running, leased by child, b and c running", describeTask(crashed))
	}
	before = crashed
	logBefore := readCallLog(logPath)

	// Another executor, on the same database and tools (quick ones now),
	// finds the task once the child's lease expires.
	leases := &leaseRecorder{db: db, taskID: func() string { return taskID }, owners: map[string]int{}}
	r, err := newCrashTools("parent", logPath, 0, leases.record)
	if err != nil {
		t.Fatal(err)
	}
	ex := agents.NewExecutor(agents.ExecutorOptions{
		Tasks: db, Plans: db, Tools: r, Catalog: toolsearch.NewCatalog(r, nil, nil),
		Owner: "parent", LeaseTTL: 3 * time.Second, ResumeInterval: 50 * time.Millisecond,
	})
	t.Cleanup(func() {
		cctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = ex.Close(cctx)
	})
	runCtx, stopRun := context.WithCancel(ctx)
	runDone := make(chan struct{})
	go func() {
		defer close(runDone)
		ex.Run(runCtx)
	}()
	t.Cleanup(func() {
		stopRun()
		<-runDone
	})

	wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	paused, err := ex.Wait(wctx, taskID)
	if err != nil {
		t.Fatal(err)
	}
	if wctx.Err() != nil {
		t.Fatalf("not paused within 30 s: %s", describeTask(paused))
	}
	lines := readCallLog(logPath)
	t.Logf("after the resume: %s; log %q", describeTask(paused), lines)

	// The stored history is kept whole: what the child recorded comes first.
	if len(paused.History) < len(before.History) {
		t.Errorf("history shrank from %d to %d events", len(before.History), len(paused.History))
	} else {
		for i, e := range before.History {
			if g := paused.History[i]; g.Type != e.Type || g.StepID != e.StepID || g.Message != e.Message {
				t.Errorf("history event %d changed from %+v to %+v", i, e, g)
			}
		}
	}
	if paused.Status != agentsmcp.TaskPaused {
		t.Errorf("task %s, want paused for the confirmation of c", paused.Status)
	}
	// a had ended: it is not run again.
	if s := stateOf(paused, "a"); s.Status != agentsmcp.StepSucceeded || s.Attempts != 1 {
		t.Errorf("a: %s after %d attempts, want succeeded once", s.Status, s.Attempts)
	}
	if n := countLines(lines, "parent start quick a"); n != 0 {
		t.Errorf("the completed step a ran again after the crash (%d times)", n)
	}
	// b was interrupted, and is idempotent: run again.
	if s := stateOf(paused, "b"); s.Status != agentsmcp.StepSucceeded {
		t.Errorf("b (idempotent, interrupted): %s %q, want run again and succeeded", s.Status, s.Error)
	}
	if n := countLines(lines, "parent start slow_idempotent b"); n != 1 {
		t.Errorf("b was called %d times after the crash, want 1", n)
	}
	if !hasEvent(paused, "step_interrupted", "b") {
		t.Error("no step_interrupted event for b")
	}
	// c was interrupted and may have had effects: it waits for the user.
	if s := stateOf(paused, "c"); s.Status != agentsmcp.StepWaitingConfirmation || s.Confirmed || !strings.Contains(s.Error, "interrupted") {
		t.Errorf("c (with effects, interrupted): %s confirmed=%v %q, want waiting_confirmation explaining the interruption", s.Status, s.Confirmed, s.Error)
	}
	if n := countLines(lines, "parent start slow_effect c"); n != 0 {
		t.Errorf("c, a step with effects, was run again %d times without a confirmation", n)
	}
	if !hasEvent(paused, "step_interrupted", "c") {
		t.Error("no step_interrupted event for c")
	}
	if !hasEvent(paused, "resumed", "") {
		t.Error("no resumed event")
	}
	// d waits for c.
	if s := stateOf(paused, "d"); s.Status != agentsmcp.StepPending || countLines(lines, "parent start quick d") != 0 {
		t.Errorf("d: %s, want pending and not called", s.Status)
	}
	// The parent held the lease while it ran, and released it on pausing.
	leases.check(t, "parent")
	if paused.Lease.Owner != "" {
		t.Errorf("paused task still leased by %q", paused.Lease.Owner)
	}
	if t.Failed() {
		t.FailNow()
	}

	// The resume loop is stopped before the user answers: see
	// TestResumeRacesRunLoop for what happens when it runs.
	stopRun()
	<-runDone
	if _, err := ex.Resume(ctx, taskID, agents.ResumeRequest{Confirm: []string{"c"}}, nil); err != nil {
		t.Fatal(err)
	}
	done, err := ex.Wait(wctx, taskID)
	if err != nil {
		t.Fatal(err)
	}
	lines = readCallLog(logPath)
	if done.Status != agentsmcp.TaskSucceeded {
		t.Fatalf("after confirming c: %s; log %q", describeTask(done), lines)
	}
	if s := stateOf(done, "c"); s.Status != agentsmcp.StepSucceeded || !s.Confirmed {
		t.Errorf("c: %s confirmed=%v", s.Status, s.Confirmed)
	}
	if n := countLines(lines, "parent start slow_effect c"); n != 1 {
		t.Errorf("c called %d times once confirmed, want 1", n)
	}
	if n := countLines(lines, "parent start quick d"); n != 1 {
		t.Errorf("d called %d times, want 1", n)
	}
	// Every step completed exactly once over both processes, and the only
	// calls besides are the two the kill interrupted.
	for _, want := range []string{"done quick a", "done slow_idempotent b", "done slow_effect c", "done quick d"} {
		if n := countLines(lines, "child "+want) + countLines(lines, "parent "+want); n != 1 {
			t.Errorf("%q %d times over both processes, want exactly once", want, n)
		}
	}
	if n := len(lines) - len(logBefore); n != 6 {
		t.Errorf("%d calls logged after the crash, want 6 (b, c, d: start and done): %q", n, lines[len(logBefore):])
	}
	leases.check(t, "parent")
	if done.Lease.Owner != "" {
		t.Errorf("ended task still leased by %q", done.Lease.Owner)
	}
}

// TestResumeAfterCleanShutdown closes an executor whose grace period ends
// while a step of an idempotent tool runs: the task stays running, with its
// lease released, and another executor resumes it at once and completes
// it without running the completed step again.
func TestResumeAfterCleanShutdown(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	logPath := filepath.Join(dir, "calls.log")
	db, err := sqlite.Open(ctx, filepath.Join(dir, "agents.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	plan := &agentsmcp.Plan{Request: "shutdown test", Steps: []agentsmcp.PlanStep{
		step("x", "quick", `{"label":"x"}`),
		step("s", "slow_idempotent", `{"label":"s"}`, "x"),
		step("y", "quick", `{"label":"y"}`, "s"),
	}}
	if err := db.CreatePlan(ctx, plan); err != nil {
		t.Fatal(err)
	}

	r1, err := newCrashTools("first", logPath, 30*time.Second, nil)
	if err != nil {
		t.Fatal(err)
	}
	// A long lease: the second executor can only take the task quickly if
	// the first released it.
	first := agents.NewExecutor(agents.ExecutorOptions{
		Tasks: db, Plans: db, Tools: r1, Catalog: toolsearch.NewCatalog(r1, nil, nil),
		Owner: "first", LeaseTTL: time.Minute,
	})
	t.Cleanup(func() {
		cctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = first.Close(cctx)
	})
	started, err := first.Start(ctx, plan, nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	testutil.EventuallyState(t, 10*time.Second, "s runs", func() (bool, string) {
		lines := readCallLog(logPath)
		return countLines(lines, "first start slow_idempotent s") == 1, fmt.Sprintf("log %q", lines)
	})

	cctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	closeStarted := time.Now()
	err = first.Close(cctx)
	if took := time.Since(closeStarted); took > 5*time.Second {
		t.Errorf("Close took %v with a 200 ms grace period", took)
	}
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Close: %v, want the deadline exceeded (s was still running)", err)
	}
	if n := countLines(readCallLog(logPath), "first cancelled slow_idempotent s"); n != 1 {
		t.Errorf("the call of s saw its context end %d times, want 1", n)
	}
	stopped, err := db.FindTaskByID(ctx, started.ID)
	if err != nil {
		t.Fatal(err)
	}
	if stopped.Status != agentsmcp.TaskRunning || stopped.Lease.Owner != "" ||
		stateOf(stopped, "x").Status != agentsmcp.StepSucceeded || stateOf(stopped, "s").Status != agentsmcp.StepRunning ||
		stateOf(stopped, "y").Status != agentsmcp.StepPending {
		t.Fatalf("after Close: %s; want running with the lease released, x succeeded, s running, y pending", describeTask(stopped))
	}
	if !hasEvent(stopped, "step_interrupted", "s") {
		t.Errorf("no step_interrupted event for s: %s", describeTask(stopped))
	}

	leases := &leaseRecorder{db: db, taskID: func() string { return started.ID }, owners: map[string]int{}}
	r2, err := newCrashTools("second", logPath, 0, leases.record)
	if err != nil {
		t.Fatal(err)
	}
	second := agents.NewExecutor(agents.ExecutorOptions{
		Tasks: db, Plans: db, Tools: r2, Catalog: toolsearch.NewCatalog(r2, nil, nil),
		Owner: "second", LeaseTTL: time.Minute, ResumeInterval: 50 * time.Millisecond,
	})
	t.Cleanup(func() {
		cctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = second.Close(cctx)
	})
	runCtx, stopRun := context.WithCancel(ctx)
	runDone := make(chan struct{})
	go func() {
		defer close(runDone)
		second.Run(runCtx)
	}()
	t.Cleanup(func() {
		stopRun()
		<-runDone
	})
	wctx, wcancel := context.WithTimeout(ctx, 30*time.Second)
	defer wcancel()
	done, err := second.Wait(wctx, started.ID)
	if err != nil {
		t.Fatal(err)
	}
	lines := readCallLog(logPath)
	if done.Status != agentsmcp.TaskSucceeded {
		t.Fatalf("after the resume: %s; log %q", describeTask(done), lines)
	}
	for _, want := range []string{"done quick x", "done slow_idempotent s", "done quick y"} {
		if n := countLines(lines, "first "+want) + countLines(lines, "second "+want); n != 1 {
			t.Errorf("%q %d times over both executors, want exactly once; log %q", want, n, lines)
		}
	}
	if n := countLines(lines, "second start quick x"); n != 0 {
		t.Errorf("the completed step x ran again after the restart (%d times)", n)
	}
	if n := countLines(lines, "second start slow_idempotent s"); n != 1 {
		t.Errorf("s called %d times by the second executor, want 1", n)
	}
	if !hasEvent(done, "resumed", "") {
		t.Errorf("no resumed event: %s", describeTask(done))
	}
	leases.check(t, "second")
}

// racyStore widens two windows of the executor's use of its TaskService,
// so that a test can make its resume loop (Run) and Resume meet there.
type racyStore struct {
	*sqlite.DB
	// pauseAfterPending: how long the next UpdateTask that stores a
	// pending task (Resume's) waits before returning, once.
	pauseAfterPending atomic.Int64
	// pauseAfterLoopAcquire: how long the next AcquireTaskLease made with a
	// deadline (the resume loop's; Resume's here has none) waits after
	// taking the lease, once.
	pauseAfterLoopAcquire atomic.Int64
	watchRelease          atomic.Bool
	released              chan string // owners passed to ReleaseTaskLease while watched
}

func (s *racyStore) UpdateTask(ctx context.Context, t *agentsmcp.Task) error {
	err := s.DB.UpdateTask(ctx, t)
	if err == nil && t.Status == agentsmcp.TaskPending {
		time.Sleep(time.Duration(s.pauseAfterPending.Swap(0)))
	}
	return err
}

func (s *racyStore) AcquireTaskLease(ctx context.Context, id, owner string, ttl time.Duration) (*agentsmcp.Task, error) {
	task, err := s.DB.AcquireTaskLease(ctx, id, owner, ttl)
	if _, loop := ctx.Deadline(); loop && err == nil {
		time.Sleep(time.Duration(s.pauseAfterLoopAcquire.Swap(0)))
	}
	return task, err
}

func (s *racyStore) ReleaseTaskLease(ctx context.Context, id, owner string) error {
	if s.watchRelease.Load() {
		s.released <- owner
	}
	return s.DB.ReleaseTaskLease(ctx, id, owner)
}

// raceRig is an executor on a racyStore with one paused task, whose only
// step (slow_effect, slow long) waits for its confirmation, and whose
// resume loop runs every 10 ms.
type raceRig struct {
	store   *racyStore
	ex      *agents.Executor
	id      string
	logPath string
	ended   atomic.Int32 // OnEnd calls
}

func newRaceRig(t *testing.T, slow time.Duration) *raceRig {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	rig := &raceRig{logPath: filepath.Join(dir, "calls.log")}
	db, err := sqlite.Open(ctx, filepath.Join(dir, "agents.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	rig.store = &racyStore{DB: db, released: make(chan string, 16)}
	e := step("e", "slow_effect", `{"label":"e"}`)
	e.NeedsConfirmation = true
	plan := &agentsmcp.Plan{Request: "race test", Steps: []agentsmcp.PlanStep{e}}
	if err := db.CreatePlan(ctx, plan); err != nil {
		t.Fatal(err)
	}
	r, err := newCrashTools("exec", rig.logPath, slow, nil)
	if err != nil {
		t.Fatal(err)
	}
	rig.ex = agents.NewExecutor(agents.ExecutorOptions{
		Tasks: rig.store, Plans: db, Tools: r, Catalog: toolsearch.NewCatalog(r, nil, nil),
		Owner: "exec", LeaseTTL: 30 * time.Second, ResumeInterval: 10 * time.Millisecond,
		OnEnd: func(context.Context, *agentsmcp.Task, *agentsmcp.Plan) { rig.ended.Add(1) },
	})
	t.Cleanup(func() {
		cctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = rig.ex.Close(cctx)
	})
	started, err := rig.ex.Start(ctx, plan, nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	rig.id = started.ID
	wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if paused, err := rig.ex.Wait(wctx, rig.id); err != nil || paused.Status != agentsmcp.TaskPaused {
		t.Fatalf("want paused for the confirmation: %s, %v", describeTask(paused), err)
	}
	runCtx, stopRun := context.WithCancel(ctx)
	runDone := make(chan struct{})
	go func() {
		defer close(runDone)
		rig.ex.Run(runCtx)
	}()
	t.Cleanup(func() {
		stopRun()
		<-runDone
	})
	return rig
}

func (rig *raceRig) resume(t *testing.T) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := rig.ex.Resume(ctx, rig.id, agents.ResumeRequest{Confirm: []string{"e"}}, nil)
	return err
}

// finish waits for the task to end and checks that it ended once: e called
// once, one terminal event and nothing after it, OnEnd called once.
func (rig *raceRig) finish(t *testing.T) {
	t.Helper()
	wctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if _, err := rig.ex.Wait(wctx, rig.id); err != nil {
		t.Fatal(err)
	}
	// Let a second runner, if any, end too.
	cctx, ccancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer ccancel()
	_ = rig.ex.Close(cctx)
	done, err := rig.store.FindTaskByID(context.Background(), rig.id)
	if err != nil {
		t.Fatal(err)
	}
	lines := readCallLog(rig.logPath)
	if done.Status != agentsmcp.TaskSucceeded || countLines(lines, "exec start slow_effect e") != 1 {
		t.Errorf("after the confirmation: %s; log %q; want succeeded, e called once", describeTask(done), lines)
	}
	terminal := slices.IndexFunc(done.History, func(e agentsmcp.TaskEvent) bool { return agentsmcp.TaskStatus(e.Type).Terminal() })
	if terminal < 0 || terminal != len(done.History)-1 {
		t.Errorf("the task did not end once, for good: %s (executor.go Resume: AcquireTaskLease does not check "+
			"the status, and launch runs a task that the resume loop ended meanwhile; runner.run sets it running again)", describeTask(done))
	}
	if n := rig.ended.Load(); n != 1 {
		t.Errorf("OnEnd called %d times, want once", n)
	}
}

// TestResumeRacesRunLoop resumes a paused task while the executor's resume
// loop runs, the interleavings made deterministic by racyStore. Resume
// stores the task pending with a free lease before it takes the lease, so
// the loop can find it then; and leases are re-entrant for one owner, so
// both of them get the lease.
func TestResumeRacesRunLoop(t *testing.T) {
	t.Run("loop launches first", func(t *testing.T) {
		rig := newRaceRig(t, time.Second)
		// The loop finds the task pending, leases and launches it while
		// Resume waits between storing it and taking the lease.
		rig.store.pauseAfterPending.Store(int64(300 * time.Millisecond))
		if err := rig.resume(t); err != nil {
			t.Errorf("Resume failed although the confirmation was stored and the task runs: %v "+
				"(executor.go Resume: the resume loop launched the task between Resume's UpdateTask and its "+
				"AcquireTaskLease, which succeeds for the same owner; launch then fails as a duplicate)", err)
		}
		rig.finish(t)
	})

	t.Run("loop finishes first", func(t *testing.T) {
		rig := newRaceRig(t, 0)
		// As above, but the task ends before Resume takes the lease.
		rig.store.pauseAfterPending.Store(int64(300 * time.Millisecond))
		_ = rig.resume(t)
		rig.finish(t)
	})

	t.Run("resume launches first", func(t *testing.T) {
		rig := newRaceRig(t, 2*time.Second)
		// The loop finds the task pending and leases it (re-entrant: the
		// same owner); Resume launches it meanwhile; the loop's launch then
		// fails as a duplicate, and it releases the lease of the runner
		// Resume started.
		rig.store.pauseAfterPending.Store(int64(100 * time.Millisecond))
		rig.store.pauseAfterLoopAcquire.Store(int64(400 * time.Millisecond))
		rig.store.watchRelease.Store(true)
		if err := rig.resume(t); err != nil {
			t.Fatalf("Resume: %v", err)
		}
		select {
		case owner := <-rig.store.released:
			task, err := rig.store.FindTaskByID(context.Background(), rig.id)
			if err != nil {
				t.Fatal(err)
			}
			if task.Status == agentsmcp.TaskRunning && task.Lease.Owner != "exec" {
				t.Errorf("the task runs (e in its 2 s call) but its lease was released (by %q): %s; another replica "+
					"could take it and run e a second time (executor.go resumeOrphans: on a failed launch it "+
					"releases a lease that the runner Resume started holds)", owner, describeTask(task))
			}
		case <-time.After(1500 * time.Millisecond):
			// No release while e runs (2 s): the lease stayed with its runner.
		}
		rig.store.watchRelease.Store(false)
		rig.finish(t)
	})
}
