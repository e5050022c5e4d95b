package mcpwire

import (
	"encoding/json"
	"time"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/internal/storedform"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A bridged call (ADR 0010 D4) is a tools/call of a client of MCP
// 2026-07-28, which cannot receive server-to-client requests, to an
// upstream of an earlier revision that sends one (elicitation/create,
// sampling/createMessage) in the middle of the call. The replica that
// holds the upstream request stores the call as an [agentsmcp.Task] with no plan and
// one step, [BridgedStepID], and holds the task's lease while it holds the
// request. The stored task is how the other replicas see and answer the
// call:
//
//   - while the upstream waits for an answer, the task is running and its
//     step is [agentsmcp.StepWaitingInput], with the question, a [BridgedQuestion],
//     as the step's Output;
//   - an answer is stored in the task's Inputs, under the question's key
//     (a JSON object of key to the client's response), by whichever
//     replica receives it; the holder reads it and hands it to the
//     upstream;
//   - when the upstream answers the call, the task succeeds with the
//     step's Output the tool's result (a CallToolResult), or fails with
//     the step's Output a [BridgedError];
//   - when the holder stops, its lease expires and the executor's resume
//     loop fails the task: a planless task cannot be resumed.
//
// Remote (the holder) and agents (tasks/get, tasks/update) share this
// format through this package.

// BridgedStepID is the id of the one step of a bridged call's task.
const BridgedStepID = "call"

// IsBridgedCall reports whether t is a bridged call's task: no plan, and
// the one step BridgedStepID.
func IsBridgedCall(t *agentsmcp.Task) bool {
	return t != nil && t.PlanID == "" && len(t.Steps) == 1 && t.Steps[0].StepID == BridgedStepID
}

// BridgedQuestion is the upstream's open request of a bridged call, as
// stored in the step's Output while it waits. Key is unique over the
// call's life (call.1, call.2, …): an answer to an earlier question is
// never taken for a later one.
type BridgedQuestion struct {
	Key string `json:"key"`
	// Request is the request as an MRTR input request:
	// {"method": "elicitation/create", "params": {...}}.
	Request json.RawMessage `json:"request"`
}

// BridgedError is the step's Output of a bridged call that failed with a
// protocol error (the upstream's JSON-RPC error, or the upstream being
// unreachable).
type BridgedError struct {
	Code    int64  `json:"code"`
	Message string `json:"message"`
}

// OpenQuestion returns the question a bridged call waits for, or nil: the
// task is not a bridged call, is not running, or its step does not wait,
// or the question was answered already (its answer is stored).
func OpenQuestion(t *agentsmcp.Task) *BridgedQuestion {
	if !IsBridgedCall(t) || t.Status != agentsmcp.TaskRunning || t.Steps[0].Status != agentsmcp.StepWaitingInput {
		return nil
	}
	var q BridgedQuestion
	if json.Unmarshal(t.Steps[0].Output, &q) != nil || q.Key == "" {
		return nil
	}
	if _, answered := BridgedAnswers(t)[q.Key]; answered {
		return nil
	}
	return &q
}

// InputRequest decodes the question as the MRTR input request it is.
func (q *BridgedQuestion) InputRequest() (mcp.InputRequest, error) {
	var m mcp.InputRequestMap
	if err := json.Unmarshal([]byte(`{"q":`+string(q.Request)+`}`), &m); err != nil {
		return nil, err
	}
	return m["q"], nil
}

// BridgedAnswers returns the stored answers of a bridged call, by key
// (the raw responses of the client).
func BridgedAnswers(t *agentsmcp.Task) map[string]json.RawMessage {
	out := map[string]json.RawMessage{}
	if len(t.Inputs) > 0 {
		_ = json.Unmarshal(t.Inputs, &out)
	}
	return out
}

// BridgedOutcome returns the end of a bridged call that ended: the tool's
// result when it succeeded, the protocol error when it failed (a
// *jsonrpc.Error, else an error with the task's ErrorCode, agentsmcp.EUNAVAILABLE
// when it has none: the holder stopped, or could not reach the upstream).
// A cancelled call is an agentsmcp.ECONFLICT error. Both are nil while the call
// runs.
func BridgedOutcome(t *agentsmcp.Task) (*mcp.CallToolResult, error) {
	if !IsBridgedCall(t) {
		return nil, nil
	}
	out := t.Steps[0].Output
	switch t.Status {
	case agentsmcp.TaskSucceeded:
		var res mcp.CallToolResult
		if err := json.Unmarshal(out, &res); err != nil {
			return nil, agentsmcp.Errorf(agentsmcp.EINTERNAL, "the stored result of bridged call %s cannot be read: %v", t.ID, err)
		}
		return &res, nil
	case agentsmcp.TaskFailed:
		var e BridgedError
		if json.Unmarshal(out, &e) == nil && e.Code != 0 {
			return nil, &jsonrpc.Error{Code: e.Code, Message: e.Message}
		}
		code := t.ErrorCode
		if code == "" {
			code = agentsmcp.EUNAVAILABLE
		}
		return nil, agentsmcp.Errorf(code, "%s", t.Error)
	case agentsmcp.TaskCancelled:
		return nil, agentsmcp.Errorf(agentsmcp.ECONFLICT, "bridged call %s was cancelled: %s", t.ID, t.Error)
	}
	return nil, nil
}

// Accepts reports whether r is a response of the kind q asks for: an
// ElicitResult for an elicitation, a sampling result for a sampling
// request, a ListRootsResult for roots/list.
func (q *BridgedQuestion) Accepts(r mcp.InputResponse) bool {
	var m struct {
		Method string `json:"method"`
	}
	_ = json.Unmarshal(q.Request, &m)
	switch r.(type) {
	case *mcp.ElicitResult:
		return m.Method == "elicitation/create"
	case *mcp.CreateMessageResult, *mcp.CreateMessageWithToolsResult:
		return m.Method == "sampling/createMessage"
	case *mcp.ListRootsResult:
		return m.Method == "roots/list"
	}
	return false
}

// AnswerBridged records, in t, the answer responses hold to t's open
// question, and reports whether it did: false when no question is open, or
// responses has no answer of the right kind under its key (other keys are
// answers to questions that are no longer open, and are ignored). The
// caller stores t.
func AnswerBridged(t *agentsmcp.Task, responses mcp.InputResponseMap, now time.Time) (bool, error) {
	q := OpenQuestion(t)
	if q == nil {
		return false, nil
	}
	r, ok := responses[q.Key]
	if !ok || r == nil || !q.Accepts(r) {
		return false, nil
	}
	raw, err := json.Marshal(r)
	if err != nil {
		return false, err
	}
	answers := BridgedAnswers(t)
	answers[q.Key] = raw
	if t.Inputs, err = json.Marshal(answers); err != nil {
		return false, err
	}
	storedform.AddEvent(t, agentsmcp.TaskEvent{At: now, Type: "answered", StepID: BridgedStepID, Message: "the client answered " + q.Key})
	return true, nil
}
