package agents_test

import (
	"context"
	"encoding/json"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/agents"
	"github.com/agents-mcp/agents-mcp/internal/storedform"
	"github.com/agents-mcp/agents-mcp/localtools"
	"github.com/agents-mcp/agents-mcp/router"
	"github.com/agents-mcp/agents-mcp/router/toolsearch"
)

// slowTasks is a task store whose writes of step transitions take delay
// longer, and that can hold a write setting one step running until hold is
// closed (at most holdFor): what the runner does while its writes are in
// flight then shows.
type slowTasks struct {
	agentsmcp.TaskService
	delay   time.Duration
	writes  atomic.Int64
	holdFor time.Duration
	holdOn  string        // the step whose running state is held
	hold    chan struct{} // closed by the test's tool when called
	held    atomic.Int32  // 1: a held write was released by the call; 2: by the timeout
}

func (s *slowTasks) UpdateTask(ctx context.Context, t *agentsmcp.Task) error {
	s.writes.Add(1)
	time.Sleep(s.delay)
	return s.TaskService.UpdateTask(ctx, t)
}

func (s *slowTasks) UpdateTaskSteps(ctx context.Context, t *agentsmcp.Task, c agentsmcp.TaskChange) error {
	s.writes.Add(1)
	time.Sleep(s.delay)
	for _, i := range c.Steps {
		if st := t.Steps[i]; s.hold != nil && st.StepID == s.holdOn && st.Status == agentsmcp.StepRunning {
			select {
			case <-s.hold:
				s.held.CompareAndSwap(0, 1)
			case <-time.After(s.holdFor):
				s.held.CompareAndSwap(0, 2)
			}
		}
	}
	return storedform.UpdateTaskSteps(ctx, s.TaskService, t, c)
}

// stepAtCall is the state of step id in the task as stored when a tool of
// the test is called (the store holds one task).
func stepAtCall(ctx context.Context, store agentsmcp.TaskService, id string) agentsmcp.StepState {
	tasks, _, err := store.FindTasks(ctx, agentsmcp.TaskFilter{Limit: 1})
	if err != nil || len(tasks) != 1 {
		return agentsmcp.StepState{}
	}
	return stateOf(tasks[0], id)
}

// A step of a tool that is neither read-only nor idempotent is stored
// running before its call, so that a crash during the call leaves it
// running, and the resume asks before running it again. A step of a
// read-only tool is called while the write that says it runs is still in
// flight: a crash there runs it again, which is harmless. The store is
// slow (30 ms a write), so that a call made before its write would see
// the step pending.
func TestOnlyStepsThatMayHaveEffectsWaitForTheirRunningState(t *testing.T) {
	slow := &slowTasks{delay: 30 * time.Millisecond, holdOn: "reader", hold: make(chan struct{}), holdFor: 3 * time.Second}
	var plainSaw, readerSaw atomic.Pointer[agentsmcp.StepState]
	var h *harness
	local := localtools.New()
	must := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	must(localtools.Add(local, &mcp.Tool{Name: "plain", Description: "may have effects"},
		func(ctx context.Context, _ *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, map[string]any, error) {
			s := stepAtCall(ctx, h.store, "plain")
			plainSaw.Store(&s)
			return nil, map[string]any{"ok": true}, nil
		}))
	must(localtools.Add(local, &mcp.Tool{Name: "reader", Description: "reads", Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		func(ctx context.Context, _ *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, map[string]any, error) {
			s := stepAtCall(ctx, h.store, "reader")
			readerSaw.Store(&s)
			close(slow.hold)
			return nil, map[string]any{"ok": true}, nil
		}))
	r := router.New(router.Options{Version: "test"})
	must(r.AddProvider(context.Background(), local))
	h = newHarness(t, func(o *agents.ExecutorOptions) {
		o.Tools, o.Catalog = r, toolsearch.NewCatalog(r, nil, nil)
		slow.TaskService = o.Tasks
		o.Tasks = slow
	})
	p := h.plan("", step("plain", "plain", `{}`), step("reader", "reader", `{}`, "plain"))
	done := h.run(p, "", nil)
	if done.Status != agentsmcp.TaskSucceeded {
		t.Fatalf("task %s: %s", done.Status, done.Error)
	}
	if s := plainSaw.Load(); s == nil || s.Status != agentsmcp.StepRunning || s.Attempts != 1 {
		t.Errorf("the step of a tool that may have effects was called while stored as %+v; want running, 1 attempt", s)
	}
	if got := slow.held.Load(); got != 1 {
		t.Errorf("the read-only step was not called while its running state was being written (held %d)", got)
	}
	if s := readerSaw.Load(); s == nil || s.Status != agentsmcp.StepPending {
		t.Errorf("the read-only step saw itself stored as %+v; want pending (its write in flight)", s)
	}
	stored, err := h.store.FindTaskByID(context.Background(), done.ID)
	if err != nil {
		t.Fatal(err)
	}
	if s := stateOf(stored, "reader"); s.Status != agentsmcp.StepSucceeded || s.Attempts != 1 {
		t.Errorf("stored at the end: %+v", s)
	}
}

// The transitions made while a write is in flight share the next write
// (a group commit): a chain of eight read-only steps on a store that takes
// 100 ms a write is not written eight times or more, as it would be if
// each step waited for the write of its start.
func TestTransitionsDuringAWriteShareTheNextOne(t *testing.T) {
	slow := &slowTasks{delay: 100 * time.Millisecond}
	h := newHarness(t, func(o *agents.ExecutorOptions) {
		slow.TaskService = o.Tasks
		o.Tasks = slow
	})
	steps := []agentsmcp.PlanStep{step("s0", "echo", `{"value":0}`)}
	for i := 1; i < 8; i++ {
		id, prev := "s"+string(rune('0'+i)), "s"+string(rune('0'+i-1))
		steps = append(steps, step(id, "echo", `{"value":"{{steps.`+prev+`.output.value}}"}`, prev))
	}
	done := h.run(h.plan("", steps...), "", nil)
	if done.Status != agentsmcp.TaskSucceeded || h.tools.CallsOf("echo") != 8 {
		t.Fatalf("task %s (%s), echo called %d times", done.Status, done.Error, h.tools.CallsOf("echo"))
	}
	if n := slow.writes.Load(); n >= 8 {
		t.Errorf("%d writes for a chain of 8 steps; want fewer: transitions made during a write go in the next one", n)
	}
	stored, err := h.store.FindTaskByID(context.Background(), done.ID)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := json.Marshal(stored.Steps)
	want, _ := json.Marshal(done.Steps)
	if string(got) != string(want) || stored.Version != done.Version {
		t.Errorf("stored (version %d)\n%s\nwant the runner's (version %d)\n%s", stored.Version, got, done.Version, want)
	}
}

// waitingCaller is a caller that can be asked, but never answers: the
// question stays open until the task's steps stop.
type waitingCaller struct{ asked chan struct{} }

func (c *waitingCaller) Progress(context.Context, int, int, string) {}
func (c *waitingCaller) Elicit(ctx context.Context, _ string, _ json.RawMessage) (json.RawMessage, bool, error) {
	select {
	case c.asked <- struct{}{}:
	default:
	}
	<-ctx.Done()
	return nil, false, ctx.Err()
}
func (c *waitingCaller) Session() *mcp.ServerSession { return nil }
func (c *waitingCaller) Request() context.Context    { return nil }

// An answer given with Resume to a task that runs here is stored before
// Resume returns: the task it returns holds the answer, and a crash after
// it cannot lose it. The store is slow (50 ms a write), so that a Resume
// that returned before the write would read the task without it.
func TestResumeOfARunningTaskReturnsOnceTheAnswerIsStored(t *testing.T) {
	slow := &slowTasks{delay: 50 * time.Millisecond}
	h := newHarness(t, func(o *agents.ExecutorOptions) {
		slow.TaskService = o.Tasks
		o.Tasks = slow
	})
	p := h.plan("", step("wipe", "delete_all", `{"path":"/tmp/x"}`))
	caller := &waitingCaller{asked: make(chan struct{}, 1)}
	task, err := h.exec.Start(context.Background(), p, nil, nil, caller)
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-caller.asked:
	case <-time.After(30 * time.Second):
		t.Fatal("the confirmation was never asked")
	}
	resumed, err := h.exec.Resume(context.Background(), task.ID, agents.ResumeRequest{Confirm: []string{"wipe"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if countEvents(resumed, "resumed", "") != 1 || !stateOf(resumed, "wipe").Confirmed && !stepDone(stateOf(resumed, "wipe").Status) {
		t.Errorf("Resume returned the task without its answer: %+v, %d resumed events", stateOf(resumed, "wipe"), countEvents(resumed, "resumed", ""))
	}
	// The question stays open until the task's steps stop.
	if _, err := h.exec.Cancel(context.Background(), task.ID); err != nil {
		t.Fatal(err)
	}
}

func stepDone(s agentsmcp.StepStatus) bool {
	return s == agentsmcp.StepRunning || s == agentsmcp.StepSucceeded
}

// A task resumed after its executor stopped stores every step running
// before its call, read-only ones included: a call that crashes the process
// then counts as an attempt each time, and is not tried forever. The store
// holds the write of the step's start for up to a second, and the tool
// must not be called meanwhile.
func TestAResumedTaskStoresEveryStepRunningBeforeItsCall(t *testing.T) {
	slow := &slowTasks{holdOn: "reader", hold: make(chan struct{}), holdFor: time.Second}
	var readerSaw atomic.Pointer[agentsmcp.StepState]
	var h *harness
	local := localtools.New()
	err := localtools.Add(local, &mcp.Tool{Name: "reader", Description: "reads", Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		func(ctx context.Context, _ *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, map[string]any, error) {
			s := stepAtCall(ctx, h.store, "reader")
			if readerSaw.CompareAndSwap(nil, &s) {
				close(slow.hold)
			}
			return nil, map[string]any{"ok": true}, nil
		})
	if err != nil {
		t.Fatal(err)
	}
	r := router.New(router.Options{Version: "test"})
	if err := r.AddProvider(context.Background(), local); err != nil {
		t.Fatal(err)
	}
	h = newHarness(t, func(o *agents.ExecutorOptions) {
		o.Tools, o.Catalog = r, toolsearch.NewCatalog(r, nil, nil)
		o.ResumeInterval = 20 * time.Millisecond
		slow.TaskService = o.Tasks
		o.Tasks = slow
	})
	p := h.plan("", step("reader", "reader", `{}`))
	// Left running, lease free, by an executor that stopped before the
	// step started.
	task := &agentsmcp.Task{PlanID: p.ID, Request: p.Request, Status: agentsmcp.TaskRunning,
		Steps: []agentsmcp.StepState{{StepID: "reader", Status: agentsmcp.StepPending}}}
	if err := h.store.CreateTask(context.Background(), task); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	ran := make(chan struct{})
	go func() {
		defer close(ran)
		h.exec.Run(ctx)
	}()
	t.Cleanup(func() { cancel(); <-ran })
	deadline := time.Now().Add(30 * time.Second)
	for readerSaw.Load() == nil && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	done := h.wait(task.ID)
	if done.Status != agentsmcp.TaskSucceeded {
		t.Fatalf("task %s: %s", done.Status, done.Error)
	}
	if s := readerSaw.Load(); s == nil || s.Status != agentsmcp.StepRunning || s.Attempts != 1 {
		t.Errorf("the step of a resumed task was called while stored as %+v; want running, 1 attempt", s)
	}
	if got := slow.held.Load(); got != 2 {
		t.Errorf("the step was called while the write of its start was held (held %d)", got)
	}
}
