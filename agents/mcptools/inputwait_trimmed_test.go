package mcptools_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/agents"
	"github.com/agents-mcp/agents-mcp/agents/mcptools"
	"github.com/agents-mcp/agents-mcp/internal/agentstest"
	"github.com/agents-mcp/agents-mcp/internal/mcpwire"
)

// An MCP task whose wait for an answer ended stays ended when the stored
// task, resumed late, goes on to more events than its history keeps: the
// trimming drops the pause, not the end of the wait.
func TestMCPTaskInputWaitEndSurvivesHistoryTrimming(t *testing.T) {
	h := agentstest.NewHarness(t, nil)
	ctx := context.Background()
	const wait = 300 * time.Millisecond
	m := &mcptools.MCPTasks{Executor: h.Exec, Plans: h.Store, InputWait: wait}
	p := h.Plan(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`,
		agentstest.Step("use", "echo", `{"value":"{{inputs.path}}"}`))
	started, err := h.Exec.Start(ctx, p, nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	id := started.ID
	if v := waitMCP(t, m, ctx, id, mcpwire.MCPTaskWorking); v.Status != mcpwire.MCPTaskInputRequired {
		t.Fatalf("waiting task: %+v", v)
	}
	_, paused := pausedAt(t, h, id)
	time.Sleep(time.Until(paused.Add(wait + 50*time.Millisecond)))
	if _, err := h.Exec.Resume(ctx, id, agents.ResumeRequest{Inputs: json.RawMessage(`{"path":"/data"}`)}, nil); err != nil {
		t.Fatal(err)
	}
	stored, err := h.Exec.Wait(ctx, id)
	if err != nil || stored.Status != agentsmcp.TaskSucceeded {
		t.Fatalf("resumed task: %+v, %v", stored, err)
	}
	if v, err := m.GetTask(ctx, id); err != nil || !strings.Contains(v.StatusMessage, "no answer within") {
		t.Fatalf("before trimming: %+v, %v; want the ended wait", v, err)
	}

	// Later events push every event of the pause out of the stored history.
	for i := range agentsmcp.MaxTaskHistory {
		stored.History = append(stored.History, agentsmcp.TaskEvent{At: time.Now(), Type: "note", Message: fmt.Sprint(i)})
	}
	if err := h.Store.UpdateTask(ctx, stored); err != nil {
		t.Fatal(err)
	}
	again, err := h.Store.FindTaskByID(ctx, id)
	if err != nil || len(again.History) != agentsmcp.MaxTaskHistory || again.History[len(again.History)-1].Message != fmt.Sprint(agentsmcp.MaxTaskHistory-1) {
		t.Fatalf("the stored history was not trimmed to its newest events: %+v, %v", again, err)
	}
	for _, e := range again.History {
		if e.Type == "paused" {
			t.Fatalf("the pause is still in the trimmed history: %+v", e)
		}
	}
	if v, err := m.GetTask(ctx, id); err != nil || v.Status != mcpwire.MCPTaskCompleted || !strings.Contains(v.StatusMessage, "no answer within") {
		t.Errorf("after trimming the MCP task flipped back: %+v, %v; want it ended by its wait", v, err)
	}
}
