package mcptools_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/agents"
	"github.com/agents-mcp/agents-mcp/agents/mcptools"
	"github.com/agents-mcp/agents-mcp/internal/agentstest"
	"github.com/agents-mcp/agents-mcp/internal/mcpwire"
	"github.com/agents-mcp/agents-mcp/mock"
)

func TestMCPTaskViewMapsStoredStatuses(t *testing.T) {
	at := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	base := func(status agentsmcp.TaskStatus, steps ...agentsmcp.StepState) *agentsmcp.Task {
		return &agentsmcp.Task{ID: "tsk_x", PlanID: "pln_x", Status: status, Steps: steps, CreatedAt: at, UpdatedAt: at.Add(time.Second)}
	}
	ended := func(status agentsmcp.TaskStatus, why string) *agentsmcp.Task {
		t := base(status)
		t.Error = why
		return t
	}
	fault := ended(agentsmcp.TaskFailed, "cannot resume: its plan pln_x cannot be read")
	fault.ErrorCode = agentsmcp.EUNAVAILABLE
	plan := &agentsmcp.Plan{ID: "pln_x", Steps: []agentsmcp.PlanStep{
		{ID: "s1", Tool: "echo", Arguments: json.RawMessage(`{"value":1}`)},
		{ID: "s2", Tool: "delete_all", Arguments: json.RawMessage(`{}`)},
	}}
	for _, tc := range []struct {
		task    *agentsmcp.Task
		want    mcpwire.MCPTaskStatus
		isError bool
		message string
		asks    []string
	}{
		{task: base(agentsmcp.TaskPending), want: mcpwire.MCPTaskWorking, message: "0 of 0 steps ended"},
		{task: base(agentsmcp.TaskRunning,
			agentsmcp.StepState{StepID: "s1", Status: agentsmcp.StepSucceeded, EndedAt: at},
			agentsmcp.StepState{StepID: "s2", Status: agentsmcp.StepRunning}),
			want: mcpwire.MCPTaskWorking, message: "1 of 2 steps ended; last: step s1 succeeded"},
		{task: base(agentsmcp.TaskPaused,
			agentsmcp.StepState{StepID: "s1", Status: agentsmcp.StepSucceeded},
			agentsmcp.StepState{StepID: "s2", Status: agentsmcp.StepWaitingConfirmation}),
			want: mcpwire.MCPTaskInputRequired, message: "waiting for: confirmation of step s2 (delete_all) (answer with tasks/update, inputResponses keyed confirm.s2.1; or call resume_task)", asks: []string{"confirm.s2.1"}},
		// The key counts the step's questions: the third ask is .3.
		{task: base(agentsmcp.TaskPaused,
			agentsmcp.StepState{StepID: "s1", Status: agentsmcp.StepSucceeded},
			agentsmcp.StepState{StepID: "s2", Status: agentsmcp.StepWaitingConfirmation, Asks: 3}),
			want: mcpwire.MCPTaskInputRequired, message: "waiting for: confirmation of step s2 (delete_all) (answer with tasks/update, inputResponses keyed confirm.s2.3; or call resume_task)", asks: []string{"confirm.s2.3"}},
		{task: base(agentsmcp.TaskSucceeded), want: mcpwire.MCPTaskCompleted},
		// The executor's own fault is a protocol-level failure.
		{task: fault, want: mcpwire.MCPTaskFailed, message: fault.Error},
		// Failed steps are a tool-level failure: completed, isError.
		{task: ended(agentsmcp.TaskFailed, "step s1 failed"), want: mcpwire.MCPTaskCompleted, isError: true, message: "step s1 failed"},
		{task: ended(agentsmcp.TaskCancelled, "cancelled by the user"), want: mcpwire.MCPTaskCancelled, message: "cancelled by the user"},
	} {
		v := mcptools.MCPTaskView(tc.task, plan)
		if v.Status != tc.want || v.StatusMessage != tc.message || !v.CreatedAt.Equal(at) || !v.UpdatedAt.Equal(at.Add(time.Second)) || v.TTLMs != nil {
			t.Errorf("%s: %+v", tc.task.Status, v)
		}
		if len(v.InputRequests) != len(tc.asks) {
			t.Errorf("%s: questions %v, want %v", tc.task.Status, v.InputRequests, tc.asks)
		}
		for _, k := range tc.asks {
			if ask, ok := v.InputRequests[k].(*mcp.ElicitParams); !ok || !strings.Contains(ask.Message, "delete_all") {
				t.Errorf("%s: question %s: %+v", tc.task.Status, k, v.InputRequests[k])
			}
		}
		if tc.want == mcpwire.MCPTaskCompleted {
			var sc struct{ Task agentsmcp.Task }
			raw, _ := json.Marshal(v.Result.StructuredContent)
			if v.Result.IsError != tc.isError || json.Unmarshal(raw, &sc) != nil || sc.Task.ID != "tsk_x" || len(v.Result.Content) != 1 {
				t.Errorf("%s: result %+v", tc.task.Status, v.Result)
			}
		} else if v.Result != nil {
			t.Errorf("%s: a result that is not completed", tc.task.Status)
		}
		var ae *agentsmcp.Error
		if tc.want == mcpwire.MCPTaskFailed {
			if !errors.As(v.Error, &ae) || ae.Code != agentsmcp.EUNAVAILABLE || ae.Message != fault.Error {
				t.Errorf("%s: error %v, want the task's code and error", tc.task.Status, v.Error)
			}
		} else if v.Error != nil {
			t.Errorf("%s: error %v on a task that is not failed", tc.task.Status, v.Error)
		}
	}
}

func accept(content map[string]any) *mcp.ElicitResult {
	return &mcp.ElicitResult{Action: "accept", Content: content}
}

// waitMCP polls the backend until the task leaves status.
func waitMCP(t *testing.T, m *mcptools.MCPTasks, ctx context.Context, id string, status mcpwire.MCPTaskStatus) *mcpwire.MCPTask {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		v, err := m.GetTask(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if v.Status != status || time.Now().After(deadline) {
			return v
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestMCPTasksAnswersInputsAndKeepsOthersOut(t *testing.T) {
	h := agentstest.NewHarness(t, nil)
	m := &mcptools.MCPTasks{Executor: h.Exec, Plans: h.Store}
	alice := agentsmcp.WithPrincipal(context.Background(), &agentsmcp.Principal{ID: "alice", Scopes: []string{agentsmcp.ScopeMCP}})
	bob := agentsmcp.WithPrincipal(context.Background(), &agentsmcp.Principal{ID: "bob", Scopes: []string{agentsmcp.ScopeMCP}})
	reader := agentsmcp.WithPrincipal(context.Background(), &agentsmcp.Principal{ID: "ops", Scopes: []string{agentsmcp.ScopeAdminRead}})

	p := h.Plan(`{"type":"object","properties":{"path":{"type":"string","minLength":1}},"required":["path"]}`,
		agentstest.Step("use", "echo", `{"value":"{{inputs.path}}"}`))
	started, err := h.Exec.Start(alice, p, nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	id := started.ID
	if !m.Owns(id) || m.Owns("fxt_1") {
		t.Error("Owns")
	}
	v := waitMCP(t, m, alice, id, mcpwire.MCPTaskWorking)
	ask, ok := v.InputRequests["inputs.use.1"].(*mcp.ElicitParams)
	if v.Status != mcpwire.MCPTaskInputRequired || !ok || !strings.Contains(jsonOf(ask.RequestedSchema), `"path"`) {
		t.Fatalf("paused task: %+v", v)
	}

	// Another principal: as if the task did not exist. A reader sees it
	// but may not change it.
	for _, err := range []error{
		func() error { _, err := m.GetTask(bob, id); return err }(),
		m.CancelTask(bob, id),
		m.UpdateTask(bob, id, mcp.InputResponseMap{"inputs.use.1": accept(map[string]any{"path": "/x"})}),
	} {
		if agentsmcp.ErrorCode(err) != agentsmcp.ENOTFOUND || strings.Contains(err.Error(), "another principal") {
			t.Errorf("another principal: %v", err)
		}
	}
	if _, err := m.GetTask(reader, id); err != nil {
		t.Errorf("admin:read: %v", err)
	}
	if err := m.CancelTask(reader, id); agentsmcp.ErrorCode(err) != agentsmcp.EUNAUTHORIZED {
		t.Errorf("cancel by a reader: %v", err)
	}

	// Unknown keys and dismissed questions are acked; the question stays
	// open, under its key. Inputs the plan rejects are acked too, and
	// asked again under a new key, saying why.
	for _, r := range []mcp.InputResponseMap{
		{"inputs.nope.1": accept(map[string]any{"path": "/x"})},
		{"inputs.use.1": &mcp.ElicitResult{Action: "cancel"}},
		{"inputs.use.1": accept(map[string]any{"path": ""})},
	} {
		if err := m.UpdateTask(alice, id, r); err != nil {
			t.Fatalf("update %v: %v", r, err)
		}
	}
	v = waitMCP(t, m, alice, id, mcpwire.MCPTaskWorking)
	ask, ok = v.InputRequests["inputs.use.2"].(*mcp.ElicitParams)
	if v.Status != mcpwire.MCPTaskInputRequired || len(v.InputRequests) != 1 || !ok || !strings.HasPrefix(ask.Message, "The last answer was refused: ") {
		t.Fatalf("after a refused answer: %+v", v)
	}
	if err := m.UpdateTask(alice, id, mcp.InputResponseMap{"inputs.use.2": accept(map[string]any{"path": "/data", "other": 1})}); err != nil {
		t.Fatal(err)
	}
	done := waitMCP(t, m, alice, id, mcpwire.MCPTaskInputRequired)
	if done.Status == mcpwire.MCPTaskWorking {
		done = waitMCP(t, m, alice, id, mcpwire.MCPTaskWorking)
	}
	if done.Status != mcpwire.MCPTaskCompleted || done.Result.IsError || !strings.Contains(jsonOf(done.Result.StructuredContent), `/data`) {
		t.Fatalf("after the inputs: %+v", done)
	}
	stored, _ := h.Exec.Task(context.Background(), id)
	if strings.Contains(string(stored.Inputs), "other") {
		t.Errorf("an input that was not asked for was taken: %s", stored.Inputs)
	}
	// Cancelling an ended task changes nothing.
	if err := m.CancelTask(alice, id); err != nil {
		t.Fatal(err)
	}
	if v, _ := m.GetTask(alice, id); v.Status != mcpwire.MCPTaskCompleted {
		t.Errorf("after cancelling an ended task: %s", v.Status)
	}
}

func TestMCPTasksDeclinedConfirmationSkipsTheStep(t *testing.T) {
	h := agentstest.NewHarness(t, nil)
	m := &mcptools.MCPTasks{Executor: h.Exec, Plans: h.Store}
	ctx := context.Background()
	p := h.Plan("", agentstest.Step("wipe", "delete_all", `{}`), agentstest.Step("after", "echo", `{"value":"x"}`, "wipe"))
	started, err := h.Exec.Start(ctx, p, nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	v := waitMCP(t, m, ctx, started.ID, mcpwire.MCPTaskWorking)
	if v.Status != mcpwire.MCPTaskInputRequired || v.InputRequests["confirm.wipe.1"] == nil {
		t.Fatalf("destructive step: %+v", v)
	}
	if err := m.UpdateTask(ctx, started.ID, mcp.InputResponseMap{"confirm.wipe.1": &mcp.ElicitResult{Action: "decline"}}); err != nil {
		t.Fatal(err)
	}
	task := h.Wait(started.ID)
	if s := agentstest.StateOf(task, "wipe"); s.Status != agentsmcp.StepSkipped || h.Tools.CallsOf("delete_all") != 0 {
		t.Fatalf("declined step: %+v, %d calls", s, h.Tools.CallsOf("delete_all"))
	}
	if v, _ := m.GetTask(ctx, started.ID); !v.Status.Terminal() {
		t.Errorf("after the decline: %+v", v)
	}
}

func jsonOf(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// keysOf lists the keys of v's questions, sorted.
func keysOf(v *mcpwire.MCPTask) []string {
	var keys []string
	for k := range v.InputRequests {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// settle polls the task until it is neither working nor its status before
// an update that has not been taken up yet.
func settle(t *testing.T, m *mcptools.MCPTasks, ctx context.Context, id string) *mcpwire.MCPTask {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		v, err := m.GetTask(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		task, err := m.Executor.Task(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		// Paused with its lease released: no runner will change it.
		if v.Status != mcpwire.MCPTaskWorking && task.Lease.Owner == "" || time.Now().After(deadline) {
			return v
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// A question keeps its key while it is open, across polls and answers to
// other questions, and gets a new one once an answer to it was taken: a
// partial answer, or one the plan refuses. An answer to an old key is
// ignored.
func TestMCPTaskKeysChangeOnlyWhenAnswered(t *testing.T) {
	h := agentstest.NewHarness(t, nil)
	m := &mcptools.MCPTasks{Executor: h.Exec, Plans: h.Store}
	ctx := context.Background()
	p := h.Plan(`{"type":"object","properties":{"path":{"type":"string","minLength":1},"mode":{"type":"string","minLength":1}}}`,
		agentstest.Step("wipe", "delete_all", `{"path":"/tmp/x"}`),
		agentstest.Step("use", "echo", `{"value":["{{inputs.path}}","{{inputs.mode}}"]}`))
	started, err := h.Exec.Start(ctx, p, nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	id := started.ID
	update := func(r mcp.InputResponseMap) *mcpwire.MCPTask {
		t.Helper()
		if err := m.UpdateTask(ctx, id, r); err != nil {
			t.Fatalf("update %v: %v", keysOfMap(r), err)
		}
		return settle(t, m, ctx, id)
	}
	want := func(v *mcpwire.MCPTask, keys ...string) {
		t.Helper()
		if got := keysOf(v); v.Status != mcpwire.MCPTaskInputRequired || !slices.Equal(got, keys) {
			t.Fatalf("%s with keys %v, want input_required with %v (%s)", v.Status, got, keys, v.StatusMessage)
		}
	}
	first := settle(t, m, ctx, id)
	want(first, "confirm.wipe.1", "inputs.use.1")
	want(settle(t, m, ctx, id), "confirm.wipe.1", "inputs.use.1")

	// The confirmation is answered: its step runs; the inputs question
	// was not answered and keeps its key.
	want(update(mcp.InputResponseMap{"confirm.wipe.1": accept(map[string]any{"confirm": true})}), "inputs.use.1")
	if n := h.Tools.CallsOf("delete_all"); n != 1 {
		t.Fatalf("delete_all called %d times, want 1", n)
	}

	// Refused by the plan's schema: asked again under a new key, saying
	// why; the refusal is in the history.
	v := update(mcp.InputResponseMap{"inputs.use.1": accept(map[string]any{"path": ""})})
	want(v, "inputs.use.2")
	if msg := v.InputRequests["inputs.use.2"].(*mcp.ElicitParams).Message; !strings.HasPrefix(msg, "The last answer was refused: ") {
		t.Errorf("question after a refusal: %q", msg)
	}
	task, _ := h.Exec.Task(ctx, id)
	if !agentstest.HasEvent(task, "inputs_rejected", "use") || agentstest.StateOf(task, "use").Asks != 2 {
		t.Errorf("after a refusal: asks %d, history %+v", agentstest.StateOf(task, "use").Asks, task.History)
	}

	// A partial answer is taken: the rest is a new question, without the
	// reason of the earlier refusal.
	v = update(mcp.InputResponseMap{"inputs.use.2": accept(map[string]any{"path": "/a"})})
	want(v, "inputs.use.3")
	ask := v.InputRequests["inputs.use.3"].(*mcp.ElicitParams)
	if schema := jsonOf(ask.RequestedSchema); !strings.Contains(schema, `"mode"`) || strings.Contains(schema, `"path"`) || strings.Contains(ask.Message, "refused") {
		t.Errorf("question for the rest: %q %s", ask.Message, schema)
	}

	// An answer to a key already answered is ignored.
	want(update(mcp.InputResponseMap{"inputs.use.2": accept(map[string]any{"mode": "fast"})}), "inputs.use.3")
	done := update(mcp.InputResponseMap{"inputs.use.3": accept(map[string]any{"mode": "fast"})})
	if done.Status != mcpwire.MCPTaskCompleted || done.Result.IsError || !strings.Contains(jsonOf(done.Result.StructuredContent), `["/a","fast"]`) {
		t.Fatalf("after the last answer: %+v", done)
	}
}

func keysOfMap(r mcp.InputResponseMap) []string {
	var keys []string
	for k := range r {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// runResumeLoop runs the executor's resume loop until the test ends.
func runResumeLoop(t *testing.T, ex *agents.Executor) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		ex.Run(ctx)
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
}

// A step that was running when its replica died, with a tool that may
// have had its effect, is asked again under a new key: the confirmation
// given before was for the run that was cut.
func TestMCPTaskInterruptedStepAsksUnderANewKey(t *testing.T) {
	h := agentstest.NewHarness(t, func(o *agents.ExecutorOptions) { o.ResumeInterval = 50 * time.Millisecond })
	m := &mcptools.MCPTasks{Executor: h.Exec, Plans: h.Store}
	ctx := context.Background()
	p := h.Plan("", agentstest.Step("wipe", "delete_all", `{"path":"/tmp/x"}`))
	// As the dead replica left it: confirmed under confirm.wipe.1, running,
	// its lease free.
	orphan := &agentsmcp.Task{PlanID: p.ID, Request: p.Request, Status: agentsmcp.TaskRunning, Steps: []agentsmcp.StepState{
		{StepID: "wipe", Status: agentsmcp.StepRunning, Attempts: 1, Confirmed: true, Asks: 1, StartedAt: time.Now()},
	}}
	if err := h.Store.CreateTask(ctx, orphan); err != nil {
		t.Fatal(err)
	}
	runResumeLoop(t, h.Exec)
	v := settle(t, m, ctx, orphan.ID)
	if got := keysOf(v); v.Status != mcpwire.MCPTaskInputRequired || !slices.Equal(got, []string{"confirm.wipe.2"}) {
		t.Fatalf("interrupted step: %s with keys %v, want input_required with confirm.wipe.2", v.Status, got)
	}
	if err := m.UpdateTask(ctx, orphan.ID, mcp.InputResponseMap{"confirm.wipe.1": accept(map[string]any{"confirm": true})}); err != nil {
		t.Fatal(err)
	}
	if v := settle(t, m, ctx, orphan.ID); !slices.Equal(keysOf(v), []string{"confirm.wipe.2"}) || h.Tools.CallsOf("delete_all") != 0 {
		t.Fatalf("the old key was taken: %s %v, %d calls", v.Status, keysOf(v), h.Tools.CallsOf("delete_all"))
	}
	if err := m.UpdateTask(ctx, orphan.ID, mcp.InputResponseMap{"confirm.wipe.2": accept(map[string]any{"confirm": true})}); err != nil {
		t.Fatal(err)
	}
	if v := settle(t, m, ctx, orphan.ID); v.Status != mcpwire.MCPTaskCompleted || v.Result.IsError || h.Tools.CallsOf("delete_all") != 1 {
		t.Fatalf("after the new confirmation: %+v, %d calls", v, h.Tools.CallsOf("delete_all"))
	}
}

// A task the executor itself could not run is failed, with an error; a
// task whose steps failed is completed, with a tool error.
func TestMCPTaskFailedByTheExecutorIsFailed(t *testing.T) {
	h := agentstest.NewHarness(t, func(o *agents.ExecutorOptions) { o.ResumeInterval = 50 * time.Millisecond })
	m := &mcptools.MCPTasks{Executor: h.Exec, Plans: h.Store}
	ctx := context.Background()

	// Its plan is gone: the resume loop cannot run it.
	lost := &agentsmcp.Task{PlanID: agentsmcp.NewID(agentsmcp.PlanIDPrefix), Request: "lost plan", Status: agentsmcp.TaskPending,
		Steps: []agentsmcp.StepState{{StepID: "s1", Status: agentsmcp.StepPending}}}
	if err := h.Store.CreateTask(ctx, lost); err != nil {
		t.Fatal(err)
	}
	runResumeLoop(t, h.Exec)
	v := settle(t, m, ctx, lost.ID)
	var ae *agentsmcp.Error
	if v.Status != mcpwire.MCPTaskFailed || v.Result != nil || !errors.As(v.Error, &ae) || ae.Code != agentsmcp.EINTERNAL || !strings.Contains(ae.Message, "cannot resume") {
		t.Fatalf("task with a lost plan: %+v", v)
	}
	if stored, _ := h.Exec.Task(ctx, lost.ID); stored.Status != agentsmcp.TaskFailed || stored.ErrorCode != agentsmcp.EINTERNAL {
		t.Errorf("stored: %s, code %q", stored.Status, stored.ErrorCode)
	}

	failed := h.Run(h.Plan("", agentstest.Step("s1", "broken", `{"path":""}`)), "", nil)
	v, err := m.GetTask(ctx, failed.ID)
	if err != nil || failed.Status != agentsmcp.TaskFailed || failed.ErrorCode != "" {
		t.Fatalf("task with a broken step: %v, %s, code %q", err, failed.Status, failed.ErrorCode)
	}
	if v.Status != mcpwire.MCPTaskCompleted || v.Result == nil || !v.Result.IsError || v.Error != nil {
		t.Fatalf("task with a broken step: %+v", v)
	}
}

// A task whose state the store refused is failed by the executor, with
// EINTERNAL: MCP shows it failed, with an error.
func TestMCPTaskRefusedByTheStoreIsFailed(t *testing.T) {
	// The real store, which refuses (EINVALID) the first state of a task
	// with a running step: as if the executor had produced a state that
	// breaks an invariant of the store.
	var refused atomic.Bool
	h := agentstest.NewHarness(t, func(o *agents.ExecutorOptions) {
		real := o.Tasks
		o.Tasks = &mock.TaskService{TaskService: real, UpdateTaskFn: func(ctx context.Context, t *agentsmcp.Task) error {
			if slices.ContainsFunc(t.Steps, func(st agentsmcp.StepState) bool { return st.Status == agentsmcp.StepRunning }) && refused.CompareAndSwap(false, true) {
				return agentsmcp.Errorf(agentsmcp.EINVALID, "task holds too much")
			}
			return real.UpdateTask(ctx, t)
		}}
	})
	m := &mcptools.MCPTasks{Executor: h.Exec, Plans: h.Store}
	ctx := context.Background()
	task := h.Run(h.Plan("", agentstest.Step("s1", "echo", `{"value":1}`)), "", nil)
	if !refused.Load() || task.Status != agentsmcp.TaskFailed || task.ErrorCode != agentsmcp.EINTERNAL {
		t.Fatalf("refused %v; task %s, code %q: %s", refused.Load(), task.Status, task.ErrorCode, task.Error)
	}
	v, err := m.GetTask(ctx, task.ID)
	var ae *agentsmcp.Error
	if err != nil || v.Status != mcpwire.MCPTaskFailed || !errors.As(v.Error, &ae) || ae.Code != agentsmcp.EINTERNAL || !strings.Contains(ae.Message, "store rejects") {
		t.Fatalf("%v %+v", err, v)
	}
}
