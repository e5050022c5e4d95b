package agents_test

import (
	"context"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/agents"
	"github.com/agents-mcp/agents-mcp/agents/mcptools"
)

func TestMCPTasksTTLFollowsTheRetention(t *testing.T) {
	h := newHarness(t, nil)
	ctx := context.Background()
	ended := h.run(h.plan("", step("a", "echo", `{"value":"x"}`)), "", nil)
	paused, err := h.exec.Start(ctx, h.plan(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`,
		step("use", "echo", `{"value":"{{inputs.path}}"}`)), nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	keep := &mcptools.MCPTasks{Executor: h.exec, Plans: h.store}
	if v := waitMCP(t, keep, ctx, paused.ID, agentsmcp.MCPTaskWorking); v.Status != agentsmcp.MCPTaskInputRequired {
		t.Fatalf("the task with inputs: %+v", v)
	}

	// No retention: tasks are kept, ttlMs is null.
	for _, id := range []string{ended.ID, paused.ID} {
		if v, err := keep.GetTask(ctx, id); err != nil || v.TTLMs != nil {
			t.Errorf("no retention, task %s: ttlMs %v, %v; want null", id, v.TTLMs, err)
		}
	}

	// A retention: an ended task lives its run plus the retention, counted
	// from CreatedAt.
	const r = time.Hour
	m := &mcptools.MCPTasks{Executor: h.exec, Plans: h.store, Retention: r}
	v, err := m.GetTask(ctx, ended.ID)
	if want := (ended.EndedAt.Sub(ended.CreatedAt) + r).Milliseconds(); err != nil || v.TTLMs == nil || *v.TTLMs != want {
		t.Errorf("ended task: ttlMs %v, %v; want %d", v.TTLMs, err, want)
	}
	// A task that has not ended: its TTL runs from now, so it grows and
	// never lapses while the task waits.
	before := time.Since(paused.CreatedAt)
	v, err = m.GetTask(ctx, paused.ID)
	after := time.Since(paused.CreatedAt)
	if err != nil || v.TTLMs == nil || *v.TTLMs < (before+r).Milliseconds()-1 || *v.TTLMs > (after+r).Milliseconds()+1 {
		t.Errorf("paused task: ttlMs %v, %v; want between %d and %d", v.TTLMs, err, (before + r).Milliseconds(), (after + r).Milliseconds())
	}

	// Past its retention a task is gone, as an unknown id, for get, update
	// and cancel, even before a sweep deletes it; one that has not ended
	// never is.
	short := &mcptools.MCPTasks{Executor: h.exec, Plans: h.store, Retention: 50 * time.Millisecond}
	time.Sleep(time.Until(ended.EndedAt.Add(60 * time.Millisecond)))
	for name, err := range map[string]error{
		"get":    func() error { _, err := short.GetTask(ctx, ended.ID); return err }(),
		"cancel": short.CancelTask(ctx, ended.ID),
		"update": short.UpdateTask(ctx, ended.ID, mcp.InputResponseMap{}),
	} {
		if agentsmcp.ErrorCode(err) != agentsmcp.ENOTFOUND {
			t.Errorf("%s of a task past its retention: %v, want ENOTFOUND", name, err)
		}
	}
	if _, err := h.store.FindTaskByID(ctx, ended.ID); err != nil {
		t.Errorf("the expired task is hidden, not deleted, before a sweep: %v", err)
	}
	if v, err := short.GetTask(ctx, paused.ID); err != nil || v.Status != agentsmcp.MCPTaskInputRequired {
		t.Errorf("a paused task older than the retention: %+v, %v; want it kept", v, err)
	}
}

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
