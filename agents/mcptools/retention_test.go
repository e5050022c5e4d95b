package mcptools_test

import (
	"context"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/agents/mcptools"
	"github.com/agents-mcp/agents-mcp/internal/agentstest"
	"github.com/agents-mcp/agents-mcp/internal/mcpwire"
)

func TestMCPTasksTTLFollowsTheRetention(t *testing.T) {
	h := agentstest.NewHarness(t, nil)
	ctx := context.Background()
	ended := h.Run(h.Plan("", agentstest.Step("a", "echo", `{"value":"x"}`)), "", nil)
	paused, err := h.Exec.Start(ctx, h.Plan(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`,
		agentstest.Step("use", "echo", `{"value":"{{inputs.path}}"}`)), nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	keep := &mcptools.MCPTasks{Executor: h.Exec, Plans: h.Store}
	if v := waitMCP(t, keep, ctx, paused.ID, mcpwire.MCPTaskWorking); v.Status != mcpwire.MCPTaskInputRequired {
		t.Fatalf("the task with inputs: %+v", v)
	}

	// No retention: an ended task is kept, its ttlMs is null; a task
	// waiting for an answer announces the end of its wait.
	if v, err := keep.GetTask(ctx, ended.ID); err != nil || v.TTLMs != nil {
		t.Errorf("no retention, ended task: ttlMs %v, %v; want null", v.TTLMs, err)
	}
	stored, pause := pausedAt(t, h, paused.ID)
	waitEnd := pause.Add(mcptools.DefaultInputWait).Sub(stored.CreatedAt)
	if v, err := keep.GetTask(ctx, paused.ID); err != nil || v.TTLMs == nil || *v.TTLMs != waitEnd.Milliseconds() {
		t.Errorf("no retention, paused task: ttlMs %v, %v; want %d", v.TTLMs, err, waitEnd.Milliseconds())
	}

	// A retention: an ended task lives its run plus the retention, counted
	// from CreatedAt.
	const r = time.Hour
	m := &mcptools.MCPTasks{Executor: h.Exec, Plans: h.Store, Retention: r}
	v, err := m.GetTask(ctx, ended.ID)
	if want := (ended.EndedAt.Sub(ended.CreatedAt) + r).Milliseconds(); err != nil || v.TTLMs == nil || *v.TTLMs != want {
		t.Errorf("ended task: ttlMs %v, %v; want %d", v.TTLMs, err, want)
	}
	// A task waiting for an answer: the end of its wait, plus the
	// retention.
	v, err = m.GetTask(ctx, paused.ID)
	if err != nil || v.TTLMs == nil || *v.TTLMs != (waitEnd+r).Milliseconds() {
		t.Errorf("paused task: ttlMs %v, %v; want %d", v.TTLMs, err, (waitEnd + r).Milliseconds())
	}

	// Past its retention a task is gone, as an unknown id, for get, update
	// and cancel, even before a sweep deletes it; one that has not ended
	// never is.
	short := &mcptools.MCPTasks{Executor: h.Exec, Plans: h.Store, Retention: 50 * time.Millisecond}
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
	if _, err := h.Store.FindTaskByID(ctx, ended.ID); err != nil {
		t.Errorf("the expired task is hidden, not deleted, before a sweep: %v", err)
	}
	if v, err := short.GetTask(ctx, paused.ID); err != nil || v.Status != mcpwire.MCPTaskInputRequired {
		t.Errorf("a paused task older than the retention: %+v, %v; want it kept", v, err)
	}
}
