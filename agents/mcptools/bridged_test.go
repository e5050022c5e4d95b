package mcptools_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/agents"
	"github.com/agents-mcp/agents-mcp/agents/mcptools"
	"github.com/agents-mcp/agents-mcp/internal/agentstest"
	"github.com/agents-mcp/agents-mcp/internal/mcpwire"
)

// storeBridged stores a bridged call's task as the pool's holder does
// (remote/bridged.go): running, leased to owner until expires, its one
// step waiting on question call.1, an elicitation.
func storeBridged(t *testing.T, h *agentstest.Harness, principal, owner string, expires time.Time) *agentsmcp.Task {
	t.Helper()
	q, _ := json.Marshal(mcpwire.BridgedQuestion{Key: "call.1", Request: json.RawMessage(
		`{"method":"elicitation/create","params":{"message":"Your name?","requestedSchema":{"type":"object","properties":{"name":{"type":"string"}}}}}`)})
	task := &agentsmcp.Task{
		Request: "call up__ask (bridged)", Principal: principal, Status: agentsmcp.TaskRunning,
		Steps: []agentsmcp.StepState{{StepID: mcpwire.BridgedStepID, Status: agentsmcp.StepWaitingInput, Attempts: 1, Output: q, StartedAt: time.Now()}},
		Lease: agentsmcp.TaskLease{Owner: owner, ExpiresAt: expires},
	}
	if err := h.Store.CreateTask(context.Background(), task); err != nil {
		t.Fatal(err)
	}
	return task
}

// tasks/get and tasks/update on a bridged call: the question is shown to
// its creator only, an answer of the right kind to the open key is stored
// for the holder (others are ignored), and the stored end is rendered as
// the call's result or protocol error.
func TestMCPTasksServeBridgedCalls(t *testing.T) {
	h := agentstest.NewHarness(t, nil)
	m := &mcptools.MCPTasks{Executor: h.Exec, Plans: h.Store}
	alice := agentsmcp.WithPrincipal(context.Background(), &agentsmcp.Principal{ID: "alice", Scopes: []string{agentsmcp.ScopeMCP}})
	bob := agentsmcp.WithPrincipal(context.Background(), &agentsmcp.Principal{ID: "bob", Scopes: []string{agentsmcp.ScopeMCP}})
	task := storeBridged(t, h, "alice", "holder", time.Now().Add(time.Minute))

	v, err := m.GetTask(alice, task.ID)
	if err != nil {
		t.Fatal(err)
	}
	q, ok := v.InputRequests["call.1"].(*mcp.ElicitParams)
	if v.Status != mcpwire.MCPTaskInputRequired || !ok || q.Message != "Your name?" || len(v.InputRequests) != 1 {
		t.Fatalf("open question: %+v", v)
	}
	if _, err := m.GetTask(bob, task.ID); agentsmcp.ErrorCode(err) != agentsmcp.ENOTFOUND {
		t.Errorf("another principal sees the call: %v", err)
	}
	if err := m.UpdateTask(bob, task.ID, mcp.InputResponseMap{"call.1": accept(map[string]any{"name": "Eve"})}); agentsmcp.ErrorCode(err) != agentsmcp.ENOTFOUND {
		t.Errorf("another principal answers the call: %v", err)
	}

	// Another key, or a sampling result to an elicitation: ignored.
	for _, r := range []mcp.InputResponseMap{
		{"call.2": accept(map[string]any{"name": "x"})},
		{"call.1": &mcp.CreateMessageWithToolsResult{Model: "m", Role: "assistant", Content: []mcp.Content{&mcp.TextContent{Text: "x"}}}},
	} {
		if err := m.UpdateTask(alice, task.ID, r); err != nil {
			t.Fatal(err)
		}
	}
	stored, _ := h.Store.FindTaskByID(context.Background(), task.ID)
	if len(mcpwire.BridgedAnswers(stored)) != 0 {
		t.Fatalf("ignored answers were stored: %s", stored.Inputs)
	}
	if err := m.UpdateTask(alice, task.ID, mcp.InputResponseMap{"call.1": accept(map[string]any{"name": "Ann"})}); err != nil {
		t.Fatal(err)
	}
	stored, _ = h.Store.FindTaskByID(context.Background(), task.ID)
	if got := string(mcpwire.BridgedAnswers(stored)["call.1"]); !strings.Contains(got, `"Ann"`) {
		t.Fatalf("stored answer %q", got)
	}
	if v, _ := m.GetTask(alice, task.ID); v.Status != mcpwire.MCPTaskWorking || len(v.InputRequests) != 0 {
		t.Errorf("answered, the call works again: %+v", v)
	}

	// The holder stores the result: completed, with it.
	stored.Status, stored.EndedAt = agentsmcp.TaskSucceeded, time.Now()
	stored.Steps[0].Status, stored.Steps[0].Output = agentsmcp.StepSucceeded, json.RawMessage(`{"content":[{"type":"text","text":"hello Ann"}]}`)
	if err := h.Store.UpdateTask(context.Background(), stored); err != nil {
		t.Fatal(err)
	}
	v, _ = m.GetTask(alice, task.ID)
	if v.Status != mcpwire.MCPTaskCompleted || v.Result == nil || v.Result.Content[0].(*mcp.TextContent).Text != "hello Ann" {
		t.Errorf("completed: %+v", v)
	}

	// A call that failed with the upstream's JSON-RPC error keeps its code.
	failed := storeBridged(t, h, "alice", "holder", time.Now().Add(time.Minute))
	failed.Status, failed.EndedAt, failed.Error = agentsmcp.TaskFailed, time.Now(), "bad argument"
	failed.Steps[0].Status, failed.Steps[0].Output = agentsmcp.StepFailed, json.RawMessage(`{"code":-32602,"message":"bad argument"}`)
	if err := h.Store.UpdateTask(context.Background(), failed); err != nil {
		t.Fatal(err)
	}
	v, _ = m.GetTask(alice, failed.ID)
	var rpcErr *jsonrpc.Error
	if v.Status != mcpwire.MCPTaskFailed || !errors.As(v.Error, &rpcErr) || rpcErr.Code != jsonrpc.CodeInvalidParams {
		t.Errorf("failed: %+v", v)
	}
}

// A bridged call whose holder stopped (its lease expired) is failed by the
// resume loop of any replica, with an EUNAVAILABLE error that says so:
// tasks/get answers failed. resume_task is refused on a bridged call.
func TestResumeLoopFailsOrphanedBridgedCall(t *testing.T) {
	h := agentstest.NewHarness(t, func(o *agents.ExecutorOptions) { o.ResumeInterval = 50 * time.Millisecond })
	m := &mcptools.MCPTasks{Executor: h.Exec, Plans: h.Store}
	alice := agentsmcp.WithPrincipal(context.Background(), &agentsmcp.Principal{ID: "alice", Scopes: []string{agentsmcp.ScopeMCP}})
	live := storeBridged(t, h, "alice", "holder-alive", time.Now().Add(time.Minute))
	orphan := storeBridged(t, h, "alice", "holder-gone", time.Now().Add(-time.Second))

	if _, err := h.Exec.Resume(alice, orphan.ID, agents.ResumeRequest{Confirm: []string{mcpwire.BridgedStepID}}, nil); agentsmcp.ErrorCode(err) != agentsmcp.EINVALID {
		t.Errorf("resume_task on a bridged call: %v", err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); h.Exec.Run(ctx) }()
	defer func() { cancel(); <-done }()

	v := waitMCP(t, m, alice, orphan.ID, mcpwire.MCPTaskInputRequired)
	if v.Status != mcpwire.MCPTaskFailed || agentsmcp.ErrorCode(v.Error) != agentsmcp.EUNAVAILABLE || !strings.Contains(agentsmcp.ErrorMessage(v.Error), "call (holder-gone) stopped") {
		t.Errorf("orphaned call: %+v (%v)", v, v.Error)
	}
	if v, _ := m.GetTask(alice, live.ID); v.Status != mcpwire.MCPTaskInputRequired {
		t.Errorf("a call whose holder is alive: %+v", v)
	}
}
