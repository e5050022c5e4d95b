package agents_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/agents"
)

// limitInputs bound a number, so that the validator converts the inputs'
// numbers (1e9999999 once made it dereference nil).
const limitInputs = `{"type":"object","properties":{"limit":{"type":"number","minimum":0}},"required":["limit"]}`

// TestHugeNumberInInputsIsRefused: the executor checks a task's inputs
// against its plan's inputs schema itself, when the task starts, when it
// is resumed and on the task's own goroutine when a client answers the
// question for inputs; a number beyond the bounds is EINVALID (the answer
// rejected) in each, never a panic, and a plan whose inputs schema holds
// one is refused as well. Without the bounds the first Start ends the test
// process.
func TestHugeNumberInInputsIsRefused(t *testing.T) {
	h := newHarness(t, nil)
	ctx := context.Background()
	p := h.plan(limitInputs, step("use", "echo", `{"value":"{{inputs.limit}}"}`))
	if _, err := h.exec.Start(ctx, p, json.RawMessage(`{"limit":1e9999999}`), nil, nil); agentsmcp.ErrorCode(err) != agentsmcp.EINVALID ||
		!strings.Contains(err.Error(), "1e9999999 at /limit is out of range") {
		t.Errorf("Start: %v, want EINVALID naming the number", err)
	}

	task := h.run(p, "", nil)
	if task.Status != agentsmcp.TaskPaused {
		t.Fatalf("status %s, want paused for its inputs", task.Status)
	}
	if _, err := h.exec.Resume(ctx, task.ID, agents.ResumeRequest{Inputs: json.RawMessage(`{"limit":1e9999999}`)}, nil); agentsmcp.ErrorCode(err) != agentsmcp.EINVALID {
		t.Errorf("Resume: %v, want EINVALID", err)
	}

	// A client asked for the inputs answers with the number: the runner's
	// own check rejects the answer, and the task waits on.
	caller := &scriptedCaller{inputs: json.RawMessage(`{"limit":1e9999999}`)}
	task = h.run(p, "", caller)
	if task.Status != agentsmcp.TaskPaused || len(caller.questions) == 0 {
		t.Errorf("after a huge answer: %s, %d questions, want paused after asking", task.Status, len(caller.questions))
	}
	rejected := false
	for _, ev := range task.History {
		rejected = rejected || strings.Contains(ev.Message, "out of range")
	}
	if !rejected {
		t.Errorf("no event says the answer was rejected: %+v", task.History)
	}

	odd := h.plan(`{"type":"object","properties":{"limit":{"type":"number","multipleOf":1e-999999}}}`, step("use", "echo", `{"value":"x"}`))
	if _, err := h.exec.Start(ctx, odd, json.RawMessage(`{"limit":1}`), nil, nil); agentsmcp.ErrorCode(err) != agentsmcp.EINVALID {
		t.Errorf("a plan whose inputs schema holds a huge number: %v, want EINVALID", err)
	}
}
