package agents_test

import (
	"context"
	"testing"
	"time"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/agents"
)

func TestTaskSweeperDeletesOnlyEndedTasksPastTheRetention(t *testing.T) {
	h := newHarness(t, nil)
	ctx := context.Background()
	ended := h.run(h.plan("", step("a", "echo", `{"value":"x"}`)), "", nil)
	paused, err := h.exec.Start(ctx, h.plan(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`,
		step("use", "echo", `{"value":"{{inputs.path}}"}`)), nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	// More ended tasks than one batch, long past the retention: a sweep
	// goes on until all are deleted.
	var old []string
	for range agentsmcp.MaxPageSize + 5 {
		tk := &agentsmcp.Task{Request: "old", Status: agentsmcp.TaskSucceeded, EndedAt: time.Now().Add(-time.Hour)}
		if err := h.store.CreateTask(ctx, tk); err != nil {
			t.Fatal(err)
		}
		old = append(old, tk.ID)
	}

	const retention = 300 * time.Millisecond
	s := &agents.TaskSweeper{Tasks: h.store, Retention: retention, Interval: 50 * time.Millisecond}
	sweepCtx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); s.Run(sweepCtx) }()
	defer func() { stop(); <-done }()

	gone := func(id string) bool {
		_, err := h.store.FindTaskByID(ctx, id)
		if err != nil && agentsmcp.ErrorCode(err) != agentsmcp.ENOTFOUND {
			t.Fatal(err)
		}
		return err != nil
	}
	deadline := time.Now().Add(10 * time.Second)
	for !gone(ended.ID) || !gone(old[len(old)-1]) {
		if time.Now().After(deadline) {
			t.Fatalf("after 10 s, the ended tasks are still there (ended %v)", ended.EndedAt)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if at := time.Since(ended.EndedAt); at < retention {
		t.Errorf("task deleted %s after it ended, before its retention of %s", at, retention)
	}
	for _, id := range old {
		if !gone(id) {
			t.Errorf("old task %s kept", id)
		}
	}
	// Several sweeps later, the paused task is still there.
	time.Sleep(4 * s.Interval)
	if gone(paused.ID) {
		t.Error("the sweeper deleted a paused task")
	}
}

// TestPlannerReusesPlansOfDeletedTasks: the retention deletes tasks, not
// what was learnt from them; the learning's PlanID still leads to the
// plan, for its owner only.
func TestPlannerReusesPlansOfDeletedTasks(t *testing.T) {
	s := newFetchPageStack(t)
	run := func(p *agentsmcp.Principal, request string) (*agentsmcp.Plan, *agents.PlanReport) {
		t.Helper()
		_, plan, report := s.runAs(t, p, request)
		return plan, report
	}
	first, _ := run(alice, "fetch the web page https://example.com/a")
	n, err := s.db.DeleteEndedTasks(t.Context(), time.Now().Add(time.Hour), 0)
	if err != nil || n != 1 {
		t.Fatalf("DeleteEndedTasks = %d, %v; want the one task", n, err)
	}
	if _, report := run(alice, "fetch the web page https://example.com/b"); report.ReusedPlan != first.ID {
		t.Errorf("after its task was deleted, alice's second plan reused %q, want her first %s", report.ReusedPlan, first.ID)
	}
	if _, err := s.db.DeleteEndedTasks(t.Context(), time.Now().Add(time.Hour), 0); err != nil {
		t.Fatal(err)
	}
	if _, report := run(bob, "fetch the web page https://example.com/c"); report.ReusedPlan != "" {
		t.Errorf("bob's plan reused %s, a plan of alice whose task is deleted", report.ReusedPlan)
	}
}
