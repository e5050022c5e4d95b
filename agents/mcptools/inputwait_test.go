package mcptools_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/agents"
	"github.com/agents-mcp/agents-mcp/agents/mcptools"
	"github.com/agents-mcp/agents-mcp/internal/agentstest"
	"github.com/agents-mcp/agents-mcp/internal/mcpwire"
)

// pausedAt is when the stored task last paused.
func pausedAt(t *testing.T, h *agentstest.Harness, id string) (*agentsmcp.Task, time.Time) {
	t.Helper()
	stored, err := h.Exec.Task(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	var at time.Time
	for _, e := range stored.History {
		if e.Type == "paused" {
			at = e.At
		}
	}
	if at.IsZero() {
		t.Fatalf("no paused event in %+v", stored.History)
	}
	return stored, at
}

// A client that cannot answer (the Tasks extension without elicitation)
// polls tasks/get until the task ends: the wait for an answer is bounded
// by InputWait, announced in ttlMs, and past it the MCP task ends
// completed with the paused task and a message saying how to answer and
// go on; it stays ended, whatever happens to the stored task after.
func TestMCPTaskInputWaitEndsTheTask(t *testing.T) {
	h := agentstest.NewHarness(t, nil)
	ctx := context.Background()
	const wait = 400 * time.Millisecond
	m := &mcptools.MCPTasks{Executor: h.Exec, Plans: h.Store, InputWait: wait}
	p := h.Plan(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`,
		agentstest.Step("use", "echo", `{"value":"{{inputs.path}}"}`))
	started, err := h.Exec.Start(ctx, p, nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	id := started.ID
	v := waitMCP(t, m, ctx, id, mcpwire.MCPTaskWorking)
	if v.Status != mcpwire.MCPTaskInputRequired || !strings.Contains(v.StatusMessage, "tasks/update") || !strings.Contains(v.StatusMessage, "inputs.use.1") {
		t.Fatalf("waiting task: %+v", v)
	}
	stored, paused := pausedAt(t, h, id)
	if want := paused.Add(wait).Sub(stored.CreatedAt).Milliseconds(); v.TTLMs == nil || *v.TTLMs != want {
		t.Errorf("waiting task: ttlMs %v, want the end of its wait, %d", v.TTLMs, want)
	}

	time.Sleep(time.Until(paused.Add(wait + 50*time.Millisecond)))
	ended, err := m.GetTask(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if ended.Status != mcpwire.MCPTaskCompleted || ended.Result == nil || ended.Result.IsError || ended.TTLMs != nil {
		t.Fatalf("past the wait: %+v, want completed, the result not an error, ttlMs null (no retention)", ended)
	}
	for _, want := range []string{"no answer within 400ms", "tasks/update", "inputs.use.1", "resume_task", id, "new task"} {
		if !strings.Contains(ended.StatusMessage, want) {
			t.Errorf("the status message %q does not say %q", ended.StatusMessage, want)
		}
	}
	var res struct {
		Task struct {
			ID     string `json:"id"`
			Status string `json:"status"`
		} `json:"task"`
	}
	if err := json.Unmarshal(ended.Result.StructuredContent.(json.RawMessage), &res); err != nil || res.Task.ID != id || res.Task.Status != "paused" {
		t.Errorf("the result is not run_task's paused task: %s, %v", ended.Result.StructuredContent, err)
	}

	// Its questions are no longer outstanding: an answer is acked and
	// ignored; the stored task is still paused, for resume_task.
	if err := m.UpdateTask(ctx, id, mcp.InputResponseMap{"inputs.use.1": accept(map[string]any{"path": "/late"})}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond)
	if s, _ := h.Exec.Task(ctx, id); s.Status != agentsmcp.TaskPaused {
		t.Fatalf("a late tasks/update resumed the task: %s", s.Status)
	}
	// resume_task answers it; the MCP task stays as it ended.
	if _, err := h.Exec.Resume(ctx, id, agents.ResumeRequest{Inputs: json.RawMessage(`{"path":"/data"}`)}, nil); err != nil {
		t.Fatal(err)
	}
	if s, err := h.Exec.Wait(ctx, id); err != nil || s.Status != agentsmcp.TaskSucceeded {
		t.Fatalf("resumed task: %+v, %v", s, err)
	}
	if again, err := m.GetTask(ctx, id); err != nil || again.Status != mcpwire.MCPTaskCompleted || !strings.Contains(again.StatusMessage, "no answer within") {
		t.Errorf("after resume_task the ended MCP task changed: %+v, %v", again, err)
	}
}
