package remote

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/internal/mcpwire"
	"github.com/agents-mcp/agents-mcp/internal/seal"
	"github.com/agents-mcp/agents-mcp/internal/storedform"
)

// This file is the multi round-trip bridge (MRTR, SEP-2322; ADR 0010 D1
// and D2): what a tools/call does when a 2026-07-28 upstream answers
// input_required. The pool's go-sdk client has its own MRTR loop turned
// off (see newUpstream): the loop here decides per call, by the caller.
//
//   - A request of MCP 2026-07-28 gets the input_required passed through:
//     the same inputRequests, and the upstream's requestState sealed with
//     the upstream, the tool and the caller's principal (upstreamState).
//     Its retry is opened and checked here, on whichever replica it
//     lands, and forwarded with the upstream's own state.
//   - A session of an earlier revision is asked with server-to-client
//     requests (elicitation/create, sampling/createMessage, roots/list),
//     each only if it declared the capability, and the pool retries the
//     upstream with the answers, within the one tools/call.
//   - A call that no client can answer (a task step run inside agents-mcp)
//     gets an isError result that names what the upstream asked.
//
// In every case the upstream is told, per request, only the capabilities
// of the caller that the pool can relay, so that a conforming upstream
// asks only what the caller can answer.

// upstreamStateLabel separates the sealed requestState of an upstream's
// input_required from every other token sealed under the same key.
const upstreamStateLabel = "agents-mcp upstream-state v1"

// DefaultStateTTL is how long the sealed requestState of a passed-through
// input_required is accepted when [Options.StateTTL] is not set: as long
// as the agents' own requestState (tasks.request_state_ttl's default).
const DefaultStateTTL = 10 * time.Minute

// maxRounds bounds the tools/call requests of one call that answer
// input_required, as go-sdk's client does: an upstream that keeps asking
// ends with an isError result. For a 2026-07-28 caller the count travels
// in the sealed state, across its retries.
const maxRounds = 10

// maxBusyRounds bounds the input_required answers without input requests
// (the upstream is busy and asks to be retried) that the pool retries for
// a caller that it asks itself, as go-sdk's client does.
const maxBusyRounds = 3

// busyPause is how long the pool waits before retrying a busy upstream,
// times the number of busy answers so far.
const busyPause = 200 * time.Millisecond

// upstreamState is what the requestState given to a 2026-07-28 caller
// says. It carries everything the retry needs, so that any replica can
// forward it: the replica's pool has its own session to the upstream.
type upstreamState struct {
	// Upstream and Tool (the upstream's own name of it) bind the state to
	// the call that got it: a retry of another tool is refused.
	Upstream string `json:"u"`
	Tool     string `json:"t"`
	// Principal is the digest of the caller's principal id: another
	// caller's retry is refused, since behind the gateway every caller is
	// the same client to the upstream.
	Principal string `json:"p"`
	// State is the upstream's own requestState, sent back as it was.
	State string `json:"s,omitempty"`
	// Round counts the upstream's input_required answers to this call so
	// far (see maxRounds).
	Round int `json:"r"`
}

// askVia is how the caller of a tools/call can be asked for input.
type askVia int

const (
	// askNobody: no client can be asked (a call made inside agents-mcp).
	askNobody askVia = iota
	// askSession: a session of a revision before 2026-07-28, asked with
	// server-to-client requests.
	askSession
	// askRequest: a request of 2026-07-28, which gets input_required.
	askRequest
)

// rounds is the multi round-trip state of one tools/call.
type rounds struct {
	u    *upstream
	tool string // the upstream's name of the tool
	via  askVia
	// session is the caller to ask (askSession).
	session *mcp.ServerSession
	// caps is what the caller declared it can answer; nil for nothing.
	caps *mcp.ClientCapabilities
	// nobody says why no client can be asked (askNobody).
	nobody string
	// principal is the digest of the caller's principal (askRequest).
	principal string
	// round counts the upstream's input_required answers to this call,
	// those to the caller's earlier retries included.
	round int
	// state and responses go with the first request: a 2026-07-28
	// caller's retry.
	state     string
	responses mcp.InputResponseMap
}

// newRounds works out how the caller of req is asked for input, and, for
// the retry of a 2026-07-28 caller, opens and checks its requestState: a
// state that was not sealed here, was changed, has expired, or was issued
// for another tool or to another caller is refused with -32602.
func (u *upstream) newRounds(ctx context.Context, req *mcp.CallToolRequest, tool string) (*rounds, error) {
	r := &rounds{u: u, tool: tool}
	caps := mcpwire.CallCapabilities(ctx, req)
	switch {
	case caps.Channel() == mcpwire.ChannelInputRequired:
		r.via = askRequest
		r.caps = caps.Declared()
		r.principal = seal.Digest(agentsmcp.PrincipalIDFrom(ctx))
		r.responses = req.Params.InputResponses
		if req.Params.RequestState != "" {
			if err := r.open(req.Params.RequestState); err != nil {
				return nil, err
			}
		}
	case caps.Channel() == mcpwire.ChannelSession && req.Session != nil:
		r.via = askSession
		r.session = req.Session
		r.caps = caps.Declared()
	case caps.Sessionless():
		// An executor step of a task that a 2026-07-28 request started:
		// its session exists but cannot receive requests.
		r.nobody = "the call was made inside agents-mcp (a task step) for a client of MCP " + mcpwire.ProtocolSessionless + ", which cannot be asked in the middle of a call"
	default:
		r.nobody = "the call was made inside agents-mcp (a task step), with no client to ask"
	}
	return r, nil
}

// open checks a 2026-07-28 caller's requestState and keeps what it says.
func (r *rounds) open(token string) error {
	var st upstreamState
	expires, err := r.u.pool.states.Open(upstreamStateLabel, token, &st)
	switch {
	case errors.Is(err, seal.ErrForged):
		return invalidState("requestState failed verification: it was not issued by this server, or was changed")
	case errors.Is(err, seal.ErrExpired):
		return invalidState(fmt.Sprintf("requestState expired at %s: call the tool again without it to start over",
			expires.UTC().Format(time.RFC3339)))
	case err != nil:
		return invalidState("requestState is malformed")
	case st.Principal != r.principal:
		return invalidState("requestState was issued to another caller")
	case st.Upstream != r.u.cfg.Name || st.Tool != r.tool:
		return invalidState("requestState was issued for another tool: retry the tool that answered input_required")
	}
	r.state, r.round = st.State, st.Round
	return nil
}

func invalidState(msg string) error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: msg}
}

// call sends params to the upstream, with the caller's capabilities that
// the pool relays, and handles input_required answers as the caller
// allows (see the top of this file).
func (r *rounds) call(ctx context.Context, cs *mcp.ClientSession, params *mcp.CallToolParams) (*mcp.CallToolResult, error) {
	if init := cs.InitializeResult(); init != nil && mcpwire.Revision(init.ProtocolVersion).Sessionless() {
		// Per request, in place of the pool client's own capabilities
		// (go-sdk keeps a key that is already set).
		meta := params.GetMeta()
		if meta == nil {
			meta = map[string]any{}
		}
		caps := relayedCapabilities(r.caps)
		if taskCaptureFrom(ctx) != nil {
			caps = withTasksExtension(caps) // the call may become a task: see tasks.go
		}
		meta[mcp.MetaKeyClientCapabilities] = caps
		params.SetMeta(meta)
	}
	params.InputResponses, params.RequestState = r.responses, r.state
	busy := 0
	for {
		res, err := r.u.callOnce(ctx, cs, params) // rawcall.go
		if err != nil || !res.NeedsInput() {
			return res, err
		}
		r.round++
		if r.round >= maxRounds {
			return r.failure(fmt.Sprintf("upstream %q still asked for input after %d rounds; agents-mcp stops at %d", r.u.cfg.Name, r.round, maxRounds)), nil
		}
		if r.via == askRequest {
			return r.passThrough(res)
		}
		var responses mcp.InputResponseMap
		if len(res.InputRequests) == 0 {
			// Busy: retry with the same state and nothing to answer.
			if busy++; busy >= maxBusyRounds {
				return r.failure(fmt.Sprintf("upstream %q is busy: it asked %d times to be called again later", r.u.cfg.Name, busy)), nil
			}
			select {
			case <-time.After(time.Duration(busy) * busyPause):
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		} else {
			var failed *mcp.CallToolResult
			responses, failed, err = r.ask(ctx, res.InputRequests)
			if err != nil || failed != nil {
				return failed, err
			}
		}
		next := *params
		next.InputResponses, next.RequestState = responses, res.RequestState
		params = &next
	}
}

// passThrough turns an upstream's input_required into the one a
// 2026-07-28 caller gets: the same input requests, and a requestState
// that seals the upstream's.
func (r *rounds) passThrough(res *mcp.CallToolResult) (*mcp.CallToolResult, error) {
	if missing := r.unanswerable(res.InputRequests); len(missing) > 0 {
		// A conforming upstream asks only what the caps it was sent allow.
		return r.failure(fmt.Sprintf("upstream %q asked for input that the client did not declare it can give: %s", r.u.cfg.Name, strings.Join(missing, "; "))), nil
	}
	token, err := r.u.pool.states.Seal(upstreamStateLabel, upstreamState{
		Upstream: r.u.cfg.Name, Tool: r.tool, Principal: r.principal, State: res.RequestState, Round: r.round,
	}, r.u.pool.opts.StateTTL)
	if err != nil {
		return nil, agentsmcp.Errorf(agentsmcp.EINTERNAL, "seal the requestState of upstream %q: %v", r.u.cfg.Name, err)
	}
	return &mcp.CallToolResult{InputRequests: res.InputRequests, RequestState: token}, nil
}

// ask gets the answers to an upstream's input requests from the caller's
// session, one request at a time, in key order. When the caller cannot
// answer every request, nothing is asked and failed says what was asked
// and why. err is set only when ctx ended.
func (r *rounds) ask(ctx context.Context, requests mcp.InputRequestMap) (responses mcp.InputResponseMap, failed *mcp.CallToolResult, err error) {
	keys := slices.Sorted(maps.Keys(requests))
	if r.via == askNobody {
		asked := make([]string, len(keys))
		for i, k := range keys {
			asked[i] = describeInput(k, requests[k])
		}
		return nil, r.failure(fmt.Sprintf("upstream %q asked for input (%s), but %s", r.u.cfg.Name, strings.Join(asked, "; "), r.nobody)), nil
	}
	if missing := r.unanswerable(requests); len(missing) > 0 {
		return nil, r.failure(fmt.Sprintf("upstream %q asked for input that the client cannot give: %s", r.u.cfg.Name, strings.Join(missing, "; "))), nil
	}
	responses = make(mcp.InputResponseMap, len(requests))
	for _, k := range keys {
		var res mcp.InputResponse
		var err error
		switch p := requests[k].(type) {
		case *mcp.ElicitParams:
			res, err = r.session.Elicit(ctx, p)
		case *mcp.CreateMessageWithToolsParams:
			res, err = r.session.CreateMessageWithTools(ctx, p)
		case *mcp.CreateMessageParams:
			res, err = r.session.CreateMessage(ctx, p)
		case *mcp.ListRootsParams:
			res, err = r.session.ListRoots(ctx, p)
		}
		if err != nil {
			if ctx.Err() != nil {
				return nil, nil, ctx.Err()
			}
			return nil, r.failure(fmt.Sprintf("upstream %q asked for input (%s), and the client did not answer: %s", r.u.cfg.Name, describeInput(k, requests[k]), storedform.TruncateUTF8(err.Error(), 300))), nil
		}
		responses[k] = res
	}
	return responses, nil, nil
}

// unanswerable describes each of requests that the caller's capabilities
// do not cover, with what it lacks.
func (r *rounds) unanswerable(requests mcp.InputRequestMap) []string {
	var out []string
	for _, k := range slices.Sorted(maps.Keys(requests)) {
		if need := capabilityNeeded(r.caps, requests[k]); need != "" {
			out = append(out, fmt.Sprintf("%s needs the %s capability, which the client did not declare", describeInput(k, requests[k]), need))
		}
	}
	return out
}

// capabilityNeeded is the client capability that ir needs and caps lacks,
// or "".
func capabilityNeeded(caps *mcp.ClientCapabilities, ir mcp.InputRequest) string {
	if caps == nil {
		caps = &mcp.ClientCapabilities{}
	}
	switch p := ir.(type) {
	case *mcp.ElicitParams:
		e := caps.Elicitation
		url := p.Mode == "url" || (p.Mode == "" && (p.URL != "" || p.ElicitationID != ""))
		switch {
		case e == nil:
			return "elicitation"
		case url && e.URL == nil:
			return "elicitation.url"
		case !url && e.Form == nil && e.URL != nil: // {} means form
			return "elicitation.form"
		}
	case *mcp.CreateMessageWithToolsParams:
		if caps.Sampling == nil {
			return "sampling"
		}
		if len(p.Tools) > 0 && caps.Sampling.Tools == nil {
			return "sampling.tools"
		}
	case *mcp.CreateMessageParams:
		if caps.Sampling == nil {
			return "sampling"
		}
	case *mcp.ListRootsParams:
		if caps.RootsV2 == nil {
			return "roots"
		}
	default:
		return fmt.Sprintf("unknown (%T)", ir)
	}
	return ""
}

// describeInput names an input request for a message: its method, key
// and, for an elicitation, its message.
func describeInput(key string, ir mcp.InputRequest) string {
	switch p := ir.(type) {
	case *mcp.ElicitParams:
		if p.Message != "" {
			return fmt.Sprintf("elicitation/create %q: %q", key, storedform.TruncateUTF8(p.Message, 200))
		}
		return fmt.Sprintf("elicitation/create %q", key)
	case *mcp.CreateMessageWithToolsParams, *mcp.CreateMessageParams:
		return fmt.Sprintf("sampling/createMessage %q", key)
	case *mcp.ListRootsParams:
		return fmt.Sprintf("roots/list %q", key)
	}
	return fmt.Sprintf("%q", key)
}

// failure is the isError result of a call whose input the pool could not
// get or relay.
func (r *rounds) failure(msg string) *mcp.CallToolResult {
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: msg}}}
}

// relayedCapabilities is the per-request clientCapabilities sent to a
// 2026-07-28 upstream: of what the caller declared, what the pool relays
// (elicitation, sampling, roots). Extensions and experimental
// capabilities are the caller's business with agents-mcp, not with the
// upstream.
func relayedCapabilities(caps *mcp.ClientCapabilities) map[string]any {
	out := map[string]any{}
	if caps == nil {
		return out
	}
	if caps.Elicitation != nil {
		out["elicitation"] = caps.Elicitation
	}
	if caps.Sampling != nil {
		out["sampling"] = caps.Sampling
	}
	if caps.RootsV2 != nil {
		out["roots"] = caps.RootsV2
	}
	return out
}

// inputNotRelayed is the error of a prompts/get or resources/read that an
// upstream answered with input_required: the pool relays multi round-trip
// input for tools/call only.
func inputNotRelayed(upstream, method string, requests mcp.InputRequestMap) error {
	asked := make([]string, 0, len(requests))
	for _, k := range slices.Sorted(maps.Keys(requests)) {
		asked = append(asked, describeInput(k, requests[k]))
	}
	return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf(
		"upstream %q answered %s with input_required (%s); agents-mcp relays such questions for tools/call only", upstream, method, strings.Join(asked, "; "))}
}
