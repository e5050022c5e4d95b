package mcptools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/agents"
	"github.com/agents-mcp/agents-mcp/agents/planlang"
	"github.com/agents-mcp/agents-mcp/internal/mcpwire"
	"github.com/agents-mcp/agents-mcp/internal/seal"
)

// This file is how run_task and execute_task ask a client of MCP
// 2026-07-28 for what a task waits for: multi round-trip requests (MRTR,
// SEP-2322) instead of server-to-client elicitation, which that revision
// no longer has. The call answers resultType "input_required" with the
// questions (inputRequests) and a requestState that names the stored,
// paused task; the client calls again with its answers (inputResponses)
// and the requestState, and whichever replica receives that call resumes
// the task from the store. Clients of earlier revisions are asked through
// elicitation while the call waits, as before.

// DefaultRequestStateTTL is how long a requestState stays valid when
// [RequestStates.TTL] is not set: as long as an elicitation waits for the
// user (the task stays paused after it; resume_task still answers it).
const DefaultRequestStateTTL = elicitTimeout

// RequestStateKeySize is the size of the key of [RequestStates]: an
// HMAC-SHA-256 key.
const RequestStateKeySize = seal.KeySize

// RequestStates seals and opens the requestState of the agents' MRTR
// results: an HMAC-SHA-256 under Key over what the state says, so that the
// server can trust it when the client brings it back. Every replica must
// have the same Key for a retry to land on any of them.
type RequestStates struct {
	Key []byte
	// TTL is how long a state is accepted after it was issued; default
	// DefaultRequestStateTTL.
	TTL time.Duration
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// requestState is what a sealed requestState says. It names the stored
// task rather than carrying it: the task is durable, so the state only
// has to say which task, for whom and what was asked; the seal adds until
// when.
type requestState struct {
	// Task is the paused task the answers are for.
	Task string `json:"task"`
	// Call identifies the call the state was issued to (the tool and its
	// salient argument, hashed): a state is refused on another call.
	Call string `json:"call"`
	// Principal is the caller the state was issued to; another caller's
	// state is refused.
	Principal string `json:"principal"`
	// Asks says what each input request asked, by its key.
	Asks map[string]stateAsk `json:"asks"`
}

// stateAsk is one question of an input_required result: the task's
// missing inputs, or the confirmation of one step.
type stateAsk struct {
	Inputs []string `json:"inputs,omitempty"`
	Step   string   `json:"step,omitempty"`
}

// requestStateLabel separates a requestState from any other token sealed
// under the same key (internal/seal).
const requestStateLabel = "agents-mcp requestState v2"

func (rs *RequestStates) sealer() *seal.Sealer {
	return &seal.Sealer{Key: rs.Key, Now: rs.Now}
}

func (rs *RequestStates) ttl() time.Duration {
	if rs.TTL > 0 {
		return rs.TTL
	}
	return DefaultRequestStateTTL
}

// seal returns st as a requestState that expires after the TTL.
func (rs *RequestStates) seal(st requestState) (string, error) {
	return rs.sealer().Seal(requestStateLabel, st, rs.ttl())
}

// open verifies a requestState brought back on call by principal and
// returns what it says. A state that fails verification, has expired, or
// was issued to another caller or call is refused with a JSON-RPC invalid
// params error (-32602), as the MRTR conformance scenarios expect.
func (rs *RequestStates) open(state, call, principal string) (*requestState, error) {
	var st requestState
	expires, err := rs.sealer().Open(requestStateLabel, state, &st)
	switch {
	case errors.Is(err, seal.ErrForged):
		return nil, invalidState("requestState failed verification: it was not issued by this server, or was changed")
	case errors.Is(err, seal.ErrExpired):
		// The MAC held, so the task the state names is the one issued.
		return nil, invalidState(fmt.Sprintf("requestState expired at %s; task %s is still paused: answer it with resume_task, or read it with get_task",
			expires.UTC().Format(time.RFC3339), st.Task))
	case err != nil || st.Task == "":
		return nil, invalidState("requestState is malformed")
	case st.Principal != principal:
		return nil, invalidState("requestState was issued to another caller")
	case st.Call != call:
		return nil, invalidState("requestState was issued to another call: retry the call with the arguments it had")
	}
	return &st, nil
}

func invalidState(msg string) error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: msg}
}

// callDigest identifies a call for its requestState: the tool, and the
// argument that decides what the call does (run_task's request,
// execute_task's plan). The other arguments only matter for the first
// call: the retry resumes the task.
func callDigest(tool, salient string) string {
	return seal.Digest(tool, salient)
}

// isRetry reports whether req is the retry of an input_required result.
func isRetry(req *mcp.CallToolRequest) bool {
	return req != nil && req.Params != nil && (req.Params.RequestState != "" || len(req.Params.InputResponses) > 0)
}

// inputRequired returns the input_required result that asks the client
// of req for what task (of plan) waits for, its requestState bound to the
// principal ctx carries and to call; or nil when there is nothing to ask
// it: the task is not paused, the client does not speak MRTR or did not
// declare elicitation (the spec forbids asking it then), or every
// question was declined in this round (declined: input names). note, when
// set, prefixes the inputs question (why the last answer was refused).
func (t *Tools) inputRequired(ctx context.Context, req *mcp.CallToolRequest, task *agentsmcp.Task, plan *agentsmcp.Plan, call string, declined []string, note string) (*mcp.CallToolResult, error) {
	if t.RequestStates == nil || task.Status != agentsmcp.TaskPaused || !agents.IsMRTRClient(ctx, req) {
		return nil, nil
	}
	if !mcpwire.CallCapabilities(ctx, req).Elicitation() {
		return nil, nil
	}
	if len(task.Steps) != len(plan.Steps) {
		return nil, nil
	}
	asks := map[string]stateAsk{}
	requests := mcp.InputRequestMap{}
	missing := slices.DeleteFunc(missingTaskInputs(task, plan), func(n string) bool { return slices.Contains(declined, n) })
	if len(missing) > 0 {
		if schema, ok := agents.ElicitationSchema(plan.Inputs, missing); ok {
			msg := agents.InputsQuestion(task, missing)
			if note != "" {
				msg = note + " " + msg
			}
			requests["inputs"] = &mcp.ElicitParams{Message: msg, RequestedSchema: schema}
			asks["inputs"] = stateAsk{Inputs: missing}
		}
	}
	for i, s := range task.Steps {
		if s.Status == agentsmcp.StepWaitingConfirmation && !s.Confirmed {
			key := "confirm:" + s.StepID
			requests[key] = &mcp.ElicitParams{Message: agents.ConfirmQuestion(task, plan, i), RequestedSchema: agents.ConfirmSchema}
			asks[key] = stateAsk{Step: s.StepID}
		}
	}
	if len(requests) == 0 {
		return nil, nil
	}
	state, err := t.RequestStates.seal(requestState{Task: task.ID, Call: call, Principal: agentsmcp.PrincipalIDFrom(ctx), Asks: asks})
	if err != nil {
		return nil, err
	}
	return &mcp.CallToolResult{InputRequests: requests, RequestState: state}, nil
}

// missingTaskInputs lists the inputs that the steps of t waiting for
// inputs reference and t lacks, in step order.
func missingTaskInputs(t *agentsmcp.Task, plan *agentsmcp.Plan) []string {
	have := planlang.InputNames(t.Inputs)
	var missing []string
	for i, s := range t.Steps {
		if s.Status != agentsmcp.StepWaitingInput {
			continue
		}
		for _, name := range agents.StepMissingInputs(t, plan, i, have) {
			if !slices.Contains(missing, name) {
				missing = append(missing, name)
			}
		}
	}
	return missing
}

// answers turns the client's inputResponses to the questions of st into
// a resume request, and lists the inputs it declined. A question without
// an answer is asked again; declining a confirmation refuses the step, as
// declining the elicitation does.
func answers(st *requestState, responses mcp.InputResponseMap) (agents.ResumeRequest, []string) {
	var rr agents.ResumeRequest
	var declined []string
	keys := make([]string, 0, len(st.Asks))
	for k := range st.Asks {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, key := range keys {
		ask := st.Asks[key]
		er, ok := responses[key].(*mcp.ElicitResult)
		if !ok {
			continue
		}
		accepted := er.Action == "accept"
		switch {
		case ask.Step != "":
			confirm, _ := er.Content["confirm"].(bool)
			if accepted && confirm {
				rr.Confirm = append(rr.Confirm, ask.Step)
			} else {
				rr.Reject = append(rr.Reject, ask.Step)
			}
		case len(ask.Inputs) > 0:
			if !accepted {
				declined = append(declined, ask.Inputs...)
				continue
			}
			// Only what was asked: a client may not set other inputs
			// through this question.
			values := map[string]any{}
			for _, n := range ask.Inputs {
				if v, ok := er.Content[n]; ok {
					values[n] = v
				}
			}
			if len(values) > 0 {
				rr.Inputs, _ = json.Marshal(values)
			}
		}
	}
	return rr, declined
}

// emptyResume reports whether rr answers nothing.
func emptyResume(rr agents.ResumeRequest) bool {
	return len(rr.Inputs) == 0 && len(rr.Confirm) == 0 && len(rr.Reject) == 0
}
