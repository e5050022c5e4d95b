package admin_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/api/admin"
)

func TestTasksPlansAndThoughts(t *testing.T) {
	e := newEnv(t)
	e.addFixtureUpstream("fx")
	ctx := context.Background()

	th := &agentsmcp.Thought{Request: "wait for the fixture", SubGoals: []string{"call block"}, Confidence: 0.9,
		RecommendedTools: []agentsmcp.ToolRecommendation{{Tool: "fx__block", Reason: "it blocks"}}}
	if err := e.db.CreateThought(ctx, th); err != nil {
		t.Fatal(err)
	}
	plan := &agentsmcp.Plan{ThoughtID: th.ID, Request: th.Request, Goal: "wait", Steps: []agentsmcp.PlanStep{
		{ID: "wait", Tool: "fx__block", Arguments: json.RawMessage(`{"id":"t1"}`)},
		{ID: "after", Tool: "fx__echo", Arguments: json.RawMessage(`{"text":"done"}`), DependsOn: []string{"wait"}},
	}}
	if err := e.db.CreatePlan(ctx, plan); err != nil {
		t.Fatal(err)
	}
	// A real task, running a real upstream call that blocks until the
	// task is cancelled.
	running, err := e.executor.Start(ctx, plan, nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	// A failure below must not leave the task blocked in the upstream:
	// the environment's cleanup would wait for it until the test binary
	// times out. Cancelling an ended task is refused, which is fine here.
	t.Cleanup(func() { _, _ = e.executor.Cancel(context.Background(), running.ID) })
	select {
	case <-e.fx.started:
	case <-time.After(10 * time.Second):
		t.Fatal("the task's step never reached the upstream")
	}
	// Newer than the running task by a clear margin: two tasks created in
	// the same millisecond are ordered by their ids' random part.
	ended := &agentsmcp.Task{Request: "an old task", Status: agentsmcp.TaskSucceeded, CreatedAt: running.CreatedAt.Add(time.Second),
		Steps: []agentsmcp.StepState{{StepID: "only", Status: agentsmcp.StepSucceeded, Output: json.RawMessage(`{"ok":true}`)}}}
	if err := e.db.CreateTask(ctx, ended); err != nil {
		t.Fatal(err)
	}

	type page struct {
		Items []admin.TaskSummary `json:"items"`
		Next  string              `json:"next"`
	}
	var runningPage page
	e.expect(http.StatusOK, request{method: "GET", path: admin.Prefix + "/tasks?status=running", as: readOnly}).decode(t, &runningPage)
	if len(runningPage.Items) != 1 || runningPage.Items[0].ID != running.ID || runningPage.Items[0].StepCounts[agentsmcp.StepRunning] != 1 ||
		runningPage.Items[0].StepCounts[agentsmcp.StepPending] != 1 || runningPage.Items[0].PlanID != plan.ID {
		t.Fatalf("running tasks %+v", runningPage)
	}
	var first, second page
	e.expect(http.StatusOK, request{method: "GET", path: admin.Prefix + "/tasks?limit=1", as: readOnly}).decode(t, &first)
	e.expect(http.StatusOK, request{method: "GET", path: admin.Prefix + "/tasks?limit=1&cursor=" + first.Next, as: readOnly}).decode(t, &second)
	if len(first.Items) != 1 || len(second.Items) != 1 || first.Items[0].ID != ended.ID || second.Items[0].ID != running.ID || second.Next != "" {
		t.Fatalf("pages %+v, %+v", first, second)
	}
	var byPlan page
	e.expect(http.StatusOK, request{method: "GET", path: admin.Prefix + "/tasks?planId=" + plan.ID, as: readOnly}).decode(t, &byPlan)
	if len(byPlan.Items) != 1 || byPlan.Items[0].ID != running.ID {
		t.Fatalf("by plan %+v", byPlan)
	}

	var detail admin.TaskDetail
	e.expect(http.StatusOK, request{method: "GET", path: admin.Prefix + "/tasks/" + running.ID, as: readOnly}).decode(t, &detail)
	if detail.Task == nil || detail.ID != running.ID || detail.Plan == nil || detail.Plan.ID != plan.ID || len(detail.Plan.Steps) != 2 ||
		len(detail.Steps) != 2 || len(detail.History) == 0 {
		t.Fatalf("task detail %+v", detail)
	}
	var noPlan admin.TaskDetail
	e.expect(http.StatusOK, request{method: "GET", path: admin.Prefix + "/tasks/" + ended.ID, as: readOnly}).decode(t, &noPlan)
	if noPlan.Plan != nil || string(noPlan.Steps[0].Output) != `{"ok":true}` {
		t.Fatalf("task without plan %+v", noPlan)
	}

	var cancelled agentsmcp.Task
	e.expect(http.StatusOK, request{method: "POST", path: admin.Prefix + "/tasks/" + running.ID + "/cancel", as: writeOnly}).decode(t, &cancelled)
	if cancelled.Status != agentsmcp.TaskCancelled {
		t.Fatalf("after cancel: %+v", cancelled)
	}
	e.expect(http.StatusOK, request{method: "POST", path: admin.Prefix + "/tasks/" + running.ID + "/cancel", as: writeOnly, body: map[string]any{}})
	e.expectError(http.StatusConflict, admin.CodeConflict, request{method: "POST", path: admin.Prefix + "/tasks/" + ended.ID + "/cancel", as: writeOnly})
	e.expectError(http.StatusNotFound, admin.CodeNotFound, request{method: "POST", path: admin.Prefix + "/tasks/" + agentsmcp.NewID("tsk") + "/cancel", as: writeOnly})

	var gotPlan agentsmcp.Plan
	e.expect(http.StatusOK, request{method: "GET", path: admin.Prefix + "/plans/" + plan.ID, as: readOnly}).decode(t, &gotPlan)
	if gotPlan.ThoughtID != th.ID || gotPlan.Steps[1].DependsOn[0] != "wait" {
		t.Fatalf("plan %+v", gotPlan)
	}
	var gotThought agentsmcp.Thought
	e.expect(http.StatusOK, request{method: "GET", path: admin.Prefix + "/thoughts/" + th.ID, as: readOnly}).decode(t, &gotThought)
	if gotThought.Request != th.Request || gotThought.RecommendedTools[0].Tool != "fx__block" {
		t.Fatalf("thought %+v", gotThought)
	}
	for _, p := range []string{"/plans/" + agentsmcp.NewID("pln"), "/thoughts/" + agentsmcp.NewID("thg"), "/tasks/" + agentsmcp.NewID("tsk"), "/plans/" + th.ID} {
		e.expectError(http.StatusNotFound, admin.CodeNotFound, request{method: "GET", path: admin.Prefix + p, as: readOnly})
	}
	for _, q := range []string{"?status=sleeping", "?cursor=garbage", "?limit=-1", "?planid=x"} {
		e.expectError(http.StatusBadRequest, admin.CodeInvalid, request{method: "GET", path: admin.Prefix + "/tasks" + q, as: readOnly})
	}

	entries := e.audit.all()
	found := false
	for _, a := range entries {
		if a.Target == "POST /admin/v1/tasks/{id}/cancel" && a.Outcome == agentsmcp.AuditOK && a.Principal == writeOnly.id {
			found = true
		}
	}
	if !found {
		t.Fatalf("the cancel was not audited: %+v", entries)
	}
}

// TestTasksShowTheirOwnerAndNoSecrets: GET /tasks shows each task's
// principal and filters by it; a task's detail, its plan and a thought show
// their secrets redacted.
func TestTasksShowTheirOwnerAndNoSecrets(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	const apiKey, password = "ak-9Zx8Yw7Vu6Ts5Rq4", "s3cret-horse-battery"
	plan := &agentsmcp.Plan{Request: "use password=" + password, Principal: "key:aaaaaaaaaaaa", Steps: []agentsmcp.PlanStep{
		{ID: "call", Tool: "fx__echo", Arguments: json.RawMessage(`{"text":"hi","api_key":"` + apiKey + `"}`)},
	}}
	if err := e.db.CreatePlan(ctx, plan); err != nil {
		t.Fatal(err)
	}
	th := &agentsmcp.Thought{Request: "log in with password=" + password, Principal: "key:aaaaaaaaaaaa"}
	if err := e.db.CreateThought(ctx, th); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"key:aaaaaaaaaaaa", "key:bbbbbbbbbbbb"} {
		task := &agentsmcp.Task{Request: "call with password=" + password, PlanID: plan.ID, Principal: p, Status: agentsmcp.TaskPaused,
			Inputs: json.RawMessage(`{"api_key":"` + apiKey + `"}`)}
		if err := e.db.CreateTask(ctx, task); err != nil {
			t.Fatal(err)
		}
	}
	var page struct {
		Items []admin.TaskSummary `json:"items"`
	}
	res := e.expect(http.StatusOK, request{method: "GET", path: admin.Prefix + "/tasks?principal=key:aaaaaaaaaaaa", as: readOnly})
	res.decode(t, &page)
	if len(page.Items) != 1 || page.Items[0].Principal != "key:aaaaaaaaaaaa" {
		t.Fatalf("tasks of one principal: %+v", page.Items)
	}
	for _, path := range []string{"/tasks", "/tasks/" + page.Items[0].ID, "/plans/" + plan.ID, "/thoughts/" + th.ID} {
		body := string(e.expect(http.StatusOK, request{method: "GET", path: admin.Prefix + path, as: readOnly}).body)
		if strings.Contains(body, apiKey) || strings.Contains(body, password) {
			t.Errorf("GET %s shows a secret: %s", path, body)
		}
	}
}

// TestResumeTask: a task paused for a confirmation and an input is
// answered through the API and runs to the end; the audit entry names
// the input but does not hold its value.
func TestResumeTask(t *testing.T) {
	e := newEnv(t)
	e.addFixtureUpstream("fx")
	ctx := context.Background()
	plan := &agentsmcp.Plan{Request: "echo after asking", Goal: "echo", Steps: []agentsmcp.PlanStep{
		{ID: "ask", Tool: "fx__echo", Arguments: json.RawMessage(`{"text":"confirmed"}`), NeedsConfirmation: true},
	}}
	if err := e.db.CreatePlan(ctx, plan); err != nil {
		t.Fatal(err)
	}
	task, err := e.executor.Start(ctx, plan, nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	path := admin.Prefix + "/tasks/" + task.ID
	waitStatus := func(want agentsmcp.TaskStatus) *agentsmcp.Task {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for {
			var got admin.TaskDetail
			e.expect(http.StatusOK, request{method: "GET", path: path, as: readOnly}).decode(t, &got)
			if got.Status == want {
				return got.Task
			}
			if time.Now().After(deadline) {
				t.Fatalf("task %s, want %s: %+v", got.Status, want, got.Steps)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	waitStatus(agentsmcp.TaskPaused)

	e.expectError(http.StatusBadRequest, admin.CodeInvalid, request{method: "POST", path: path + "/resume", as: writeOnly, body: map[string]any{}})
	e.expectError(http.StatusForbidden, admin.CodeForbidden, request{method: "POST", path: path + "/resume", as: readOnly, body: map[string]any{"confirm": []string{"ask"}}})
	const secret = "hunter2-do-not-log"
	e.expect(http.StatusOK, request{method: "POST", path: path + "/resume", as: writeOnly,
		body: map[string]any{"confirm": []string{"ask"}, "inputs": map[string]any{"note": secret}}})
	done := waitStatus(agentsmcp.TaskSucceeded)
	if !strings.Contains(string(done.Inputs), secret) {
		t.Errorf("inputs %s: the resume's input was not merged", done.Inputs)
	}
	// Resuming an ended task is a conflict.
	e.expectError(http.StatusConflict, admin.CodeConflict, request{method: "POST", path: path + "/resume", as: writeOnly, body: map[string]any{"confirm": []string{"ask"}}})

	var audited bool
	for _, a := range e.audit.all() {
		if a.Target == "POST "+admin.Prefix+"/tasks/{id}/resume" && a.Outcome == agentsmcp.AuditOK {
			audited = true
			if strings.Contains(string(a.Arguments), secret) || !strings.Contains(string(a.Arguments), "note") {
				t.Errorf("audit arguments %s: want the input's name without its value", a.Arguments)
			}
		}
	}
	if !audited {
		t.Error("no audit entry for the resume")
	}
}
