package agents_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/agents"
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
	plan := &agentsmcp.Plan{ID: "pln_x", Steps: []agentsmcp.PlanStep{
		{ID: "s1", Tool: "echo", Arguments: json.RawMessage(`{"value":1}`)},
		{ID: "s2", Tool: "delete_all", Arguments: json.RawMessage(`{}`)},
	}}
	for _, tc := range []struct {
		task    *agentsmcp.Task
		want    agentsmcp.MCPTaskStatus
		isError bool
		message string
		asks    []string
	}{
		{task: base(agentsmcp.TaskPending), want: agentsmcp.MCPTaskWorking, message: "0 of 0 steps ended"},
		{task: base(agentsmcp.TaskRunning,
			agentsmcp.StepState{StepID: "s1", Status: agentsmcp.StepSucceeded, EndedAt: at},
			agentsmcp.StepState{StepID: "s2", Status: agentsmcp.StepRunning}),
			want: agentsmcp.MCPTaskWorking, message: "1 of 2 steps ended; last: step s1 succeeded"},
		{task: base(agentsmcp.TaskPaused,
			agentsmcp.StepState{StepID: "s1", Status: agentsmcp.StepSucceeded},
			agentsmcp.StepState{StepID: "s2", Status: agentsmcp.StepWaitingConfirmation}),
			want: agentsmcp.MCPTaskInputRequired, message: "waiting for: confirmation of step s2 (delete_all) (tasks/update or resume_task answers it)", asks: []string{"confirm.s2.1"}},
		{task: base(agentsmcp.TaskSucceeded), want: agentsmcp.MCPTaskCompleted},
		// Failed steps are a tool-level failure: completed, isError.
		{task: ended(agentsmcp.TaskFailed, "step s1 failed"), want: agentsmcp.MCPTaskCompleted, isError: true, message: "step s1 failed"},
		{task: ended(agentsmcp.TaskCancelled, "cancelled by the user"), want: agentsmcp.MCPTaskCancelled, message: "cancelled by the user"},
	} {
		v := agents.MCPTaskView(tc.task, plan)
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
		if tc.want == agentsmcp.MCPTaskCompleted {
			var sc struct{ Task agentsmcp.Task }
			raw, _ := json.Marshal(v.Result.StructuredContent)
			if v.Result.IsError != tc.isError || json.Unmarshal(raw, &sc) != nil || sc.Task.ID != "tsk_x" || len(v.Result.Content) != 1 {
				t.Errorf("%s: result %+v", tc.task.Status, v.Result)
			}
		} else if v.Result != nil {
			t.Errorf("%s: a result before the end", tc.task.Status)
		}
	}
}

func accept(content map[string]any) *mcp.ElicitResult {
	return &mcp.ElicitResult{Action: "accept", Content: content}
}

// waitMCP polls the backend until the task leaves status.
func waitMCP(t *testing.T, m *agents.MCPTasks, ctx context.Context, id string, status agentsmcp.MCPTaskStatus) *agentsmcp.MCPTask {
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
	h := newHarness(t, nil)
	m := &agents.MCPTasks{Executor: h.exec, Plans: h.store}
	alice := agentsmcp.WithPrincipal(context.Background(), &agentsmcp.Principal{ID: "alice", Scopes: []string{agentsmcp.ScopeMCP}})
	bob := agentsmcp.WithPrincipal(context.Background(), &agentsmcp.Principal{ID: "bob", Scopes: []string{agentsmcp.ScopeMCP}})
	reader := agentsmcp.WithPrincipal(context.Background(), &agentsmcp.Principal{ID: "ops", Scopes: []string{agentsmcp.ScopeAdminRead}})

	p := h.plan(`{"type":"object","properties":{"path":{"type":"string","minLength":1}},"required":["path"]}`,
		step("use", "echo", `{"value":"{{inputs.path}}"}`))
	started, err := h.exec.Start(alice, p, nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	id := started.ID
	if !m.Owns(id) || m.Owns("fxt_1") {
		t.Error("Owns")
	}
	v := waitMCP(t, m, alice, id, agentsmcp.MCPTaskWorking)
	ask, ok := v.InputRequests["inputs.use.1"].(*mcp.ElicitParams)
	if v.Status != agentsmcp.MCPTaskInputRequired || !ok || !strings.Contains(jsonOf(ask.RequestedSchema), `"path"`) {
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

	// Inputs the plan rejects, unknown keys and dismissed questions are
	// acked; the question stays open.
	for _, r := range []mcp.InputResponseMap{
		{"inputs.use.1": accept(map[string]any{"path": ""})},
		{"inputs.nope.1": accept(map[string]any{"path": "/x"})},
		{"inputs.use.1": &mcp.ElicitResult{Action: "cancel"}},
	} {
		if err := m.UpdateTask(alice, id, r); err != nil {
			t.Fatalf("update %v: %v", r, err)
		}
		if v := waitMCP(t, m, alice, id, agentsmcp.MCPTaskWorking); v.Status != agentsmcp.MCPTaskInputRequired || v.InputRequests["inputs.use.1"] == nil {
			t.Fatalf("after %v: %+v", r, v)
		}
	}
	if err := m.UpdateTask(alice, id, mcp.InputResponseMap{"inputs.use.1": accept(map[string]any{"path": "/data", "other": 1})}); err != nil {
		t.Fatal(err)
	}
	done := waitMCP(t, m, alice, id, agentsmcp.MCPTaskInputRequired)
	if done.Status == agentsmcp.MCPTaskWorking {
		done = waitMCP(t, m, alice, id, agentsmcp.MCPTaskWorking)
	}
	if done.Status != agentsmcp.MCPTaskCompleted || done.Result.IsError || !strings.Contains(jsonOf(done.Result.StructuredContent), `/data`) {
		t.Fatalf("after the inputs: %+v", done)
	}
	stored, _ := h.exec.Task(context.Background(), id)
	if strings.Contains(string(stored.Inputs), "other") {
		t.Errorf("an input that was not asked for was taken: %s", stored.Inputs)
	}
	// Cancelling an ended task changes nothing.
	if err := m.CancelTask(alice, id); err != nil {
		t.Fatal(err)
	}
	if v, _ := m.GetTask(alice, id); v.Status != agentsmcp.MCPTaskCompleted {
		t.Errorf("after cancelling an ended task: %s", v.Status)
	}
}

func TestMCPTasksDeclinedConfirmationSkipsTheStep(t *testing.T) {
	h := newHarness(t, nil)
	m := &agents.MCPTasks{Executor: h.exec, Plans: h.store}
	ctx := context.Background()
	p := h.plan("", step("wipe", "delete_all", `{}`), step("after", "echo", `{"value":"x"}`, "wipe"))
	started, err := h.exec.Start(ctx, p, nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	v := waitMCP(t, m, ctx, started.ID, agentsmcp.MCPTaskWorking)
	if v.Status != agentsmcp.MCPTaskInputRequired || v.InputRequests["confirm.wipe.1"] == nil {
		t.Fatalf("destructive step: %+v", v)
	}
	if err := m.UpdateTask(ctx, started.ID, mcp.InputResponseMap{"confirm.wipe.1": &mcp.ElicitResult{Action: "decline"}}); err != nil {
		t.Fatal(err)
	}
	task := h.wait(started.ID)
	if s := stateOf(task, "wipe"); s.Status != agentsmcp.StepSkipped || h.tools.callsOf("delete_all") != 0 {
		t.Fatalf("declined step: %+v, %d calls", s, h.tools.callsOf("delete_all"))
	}
	if v, _ := m.GetTask(ctx, started.ID); !v.Status.Terminal() {
		t.Errorf("after the decline: %+v", v)
	}
}

func jsonOf(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
