package mcptools

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/agents"
	"github.com/agents-mcp/agents-mcp/internal/seal"
)

// This file is how generate_thoughts, generate_plan and run_task ask the
// model of a client of MCP 2026-07-28, which cannot be sent a sampling
// request: the call answers input_required with one sampling/createMessage
// inputRequest, and the client retries the call with its model's answer
// (ADR 0009). The call runs again from the start on each retry, and an
// mrtrLLM replays the answers recorded so far, in order, to the model
// requests that thinking and planning make again; the first request
// without an answer stops the run, and is the next inputRequest. The
// requestState records, sealed, the digest of each request asked and the
// answers so far.
//
// The executor's step repairs never ask this way: they run while no
// client waits (the task goes on in the background), so they keep the
// OpenAI endpoint or the builtin choice (LLMChooser.Model).

// MaxSamplingRounds bounds the sampling requests that one call asks a
// client of MCP 2026-07-28 through MRTR, requests asked again after a
// divergence included: thinking and planning take at most their
// attempts each (3 by default) when nothing changes between rounds.
const MaxSamplingRounds = 16

// MaxSamplingAnswerBytes bounds the text of the answers that one
// requestState carries: they go back and forth with every round.
const MaxSamplingAnswerBytes = 256 << 10

// samplingStateLabel separates a sampling requestState from the task's
// requestState (requestStateLabel) under the same key.
const samplingStateLabel = "agents-mcp sampling state v1"

// samplingKeyPrefix starts the key of a sampling inputRequest; the round
// number follows ("sample.1", "sample.2"…), so that no two rounds of a
// call share a key.
const samplingKeyPrefix = "sample."

// samplingState is what a sealed sampling requestState says.
type samplingState struct {
	// Call and Principal bind the state as in requestState.
	Call      string `json:"call"`
	Principal string `json:"principal"`
	// Started is when the first round began (Unix milliseconds): the
	// clock of the estimates the prompts show (withEstimatesAt).
	Started int64 `json:"started"`
	// Thought is the thought run_task stored once thinking was done:
	// later rounds plan from it rather than thinking again, so that one
	// call stores one thought. Asked and Answers then hold planning's
	// requests only.
	Thought string `json:"thought,omitempty"`
	// Asked identifies each model request asked (requestDigest), in
	// order; the last one waits for its answer.
	Asked []string `json:"asked"`
	// Answers are the answers to Asked, in order: one fewer than Asked.
	Answers []sampleAnswer `json:"answers,omitempty"`
	// Rounds is how many sampling requests the call asked in all; the
	// one waiting is "sample.<Rounds>".
	Rounds int `json:"rounds"`
}

// sampleAnswer is one answer of the client's model.
type sampleAnswer struct {
	Text  string `json:"text"`
	Model string `json:"model,omitempty"`
}

// requestDigest identifies a model request by what it is for (its
// purpose: "thought", "plan", "plan-repair"…); its position in the run
// is the index of Asked. The prompt itself is not part of it: it shows
// live records (success counts, latency, cool-downs) that change between
// rounds on a busy gateway, and an answer to the same question asked
// with other figures is still an answer to it. The planner checks every
// answer against the catalog as it is now.
func requestDigest(purpose string) string {
	return seal.Digest("sampling/createMessage", purpose)
}

// errSamplingStop is what an mrtrLLM returns for the first request
// without an answer: the run stops there and the call asks it. It reaches
// the client only through a bug (a caller that swallowed or wrapped it).
var errSamplingStop = errors.New("the client's model must be asked through input_required")

// mrtrLLM is the model of a client of MCP 2026-07-28 within one round of
// a call (see the top of this file). It is used by one goroutine.
type mrtrLLM struct {
	asked   []string
	answers []sampleAnswer
	next    int // the index of the next request
	// pending is the request the run stopped at; diverged says a replayed
	// request differed from the one recorded (its answer and all later
	// ones were dropped).
	pending  *mcp.CreateMessageParams
	diverged bool
}

// Name implements the backend name of reports (backendOf).
func (m *mrtrLLM) Name() string { return agents.LLMSampling }

// Complete implements agentsmcp.LLM: the recorded answer of the request
// at this position, or errSamplingStop. A request for another purpose
// than the one asked at its position means the run took another path
// than in the earlier rounds (an answer that was valid then is not now,
// so a repair is asked where none was). Its recorded answer was given to
// another question, so it and all later answers are dropped and the
// request is asked again (see ADR 0009); the bound of MaxSamplingRounds
// ends a run that keeps diverging.
func (m *mrtrLLM) Complete(_ context.Context, req *agentsmcp.LLMRequest) (*agentsmcp.LLMResponse, error) {
	params := agents.CreateMessageParams(req)
	d := requestDigest(req.Purpose)
	i := m.next
	m.next++
	if i < len(m.answers) {
		if m.asked[i] == d {
			a := m.answers[i]
			return &agentsmcp.LLMResponse{Text: a.Text, Model: a.Model, Backend: agents.LLMSampling}, nil
		}
		m.diverged = true
	}
	m.asked = append(m.asked[:min(i, len(m.asked))], d)
	m.answers = m.answers[:min(i, len(m.answers))]
	m.pending = params
	return nil, errSamplingStop
}

// checkpoint forgets the requests served so far: run_task calls it once
// thinking is done and the thought is stored (samplingState.Thought).
func (m *mrtrLLM) checkpoint() {
	m.asked = m.asked[min(m.next, len(m.asked)):]
	m.answers = m.answers[min(m.next, len(m.answers)):]
	m.next = 0
}

// callModel is the model of one call that asks it while the client
// waits.
type callModel struct {
	// LLM is the model; nil means builtin, unless mrtr is set.
	LLM agentsmcp.LLM
	// mrtr and st are set instead when the model is the client's, asked
	// through MRTR.
	mrtr *mrtrLLM
	st   *samplingState
	// taskRetry is set for a retry whose requestState is not a sampling
	// state: the task's (Tools.retry).
	taskRetry bool
}

// modelFor returns the model of call req (call: callDigest of it). A
// retry is either the next round of sampling (its requestState is a
// sampling state, verified, and the answer it brings is recorded) or,
// for a state of another kind, taskRetry.
func (t *Tools) modelFor(ctx context.Context, req *mcp.CallToolRequest, call string) (*callModel, error) {
	if isRetry(req) {
		st, ok, err := t.openSampling(ctx, req, call)
		if err != nil || !ok {
			return &callModel{taskRetry: err == nil}, err
		}
		return &callModel{mrtr: &mrtrLLM{asked: st.Asked, answers: st.Answers}, st: st}, nil
	}
	llm, viaMRTR, err := t.LLM.ForCall(ctx, req, t.RequestStates != nil)
	if err != nil {
		return nil, err
	}
	if !viaMRTR {
		return &callModel{LLM: llm}, nil
	}
	now := time.Now
	if t.RequestStates.Now != nil {
		now = t.RequestStates.Now
	}
	st := &samplingState{Call: call, Principal: agentsmcp.PrincipalIDFrom(ctx), Started: now().UnixMilli()}
	return &callModel{mrtr: &mrtrLLM{}, st: st}, nil
}

// modelForOnly is modelFor for a tool that has no task to resume
// (generate_thoughts, generate_plan): a retry must carry a sampling
// state.
func (t *Tools) modelForOnly(ctx context.Context, req *mcp.CallToolRequest, call string) (*callModel, error) {
	cm, err := t.modelFor(ctx, req, call)
	if err == nil && cm.taskRetry {
		return nil, invalidState("requestState failed verification: it was not issued by this server, or was changed")
	}
	return cm, err
}

// model is the LLM to give Think and Plan.
func (cm *callModel) model() agentsmcp.LLM {
	if cm.mrtr != nil {
		return cm.mrtr
	}
	return cm.LLM
}

// context is ctx for thinking and planning: with the clock of the
// estimates pinned to the first round of an MRTR run, so that every round
// renders the same prompts from the same records. Only for them: the
// task's own work runs on the real clock.
func (cm *callModel) context(ctx context.Context) context.Context {
	if cm.st == nil {
		return ctx
	}
	return agents.WithEstimatesAt(ctx, time.UnixMilli(cm.st.Started))
}

// stopped reports whether err is the stop of an MRTR run.
func (cm *callModel) stopped(err error) bool {
	return cm.mrtr != nil && errors.Is(err, errSamplingStop)
}

// checkpointedThought returns the thought that an earlier round of
// run_task stored, or nil.
func (t *Tools) checkpointedThought(ctx context.Context, cm *callModel) (*agentsmcp.Thought, error) {
	if cm.st == nil || cm.st.Thought == "" {
		return nil, nil
	}
	th, err := t.Thoughts.FindThoughtByID(ctx, cm.st.Thought)
	if err != nil || !agentsmcp.PrincipalFrom(ctx).MaySee(th.Principal) {
		return nil, hidden(err, "thought", cm.st.Thought)
	}
	return th, nil
}

// thoughtDone records that thinking ended with th, stored: later rounds
// plan from it.
func (cm *callModel) thoughtDone(th *agentsmcp.Thought) {
	if cm.st == nil {
		return
	}
	cm.st.Thought = th.ID
	cm.mrtr.checkpoint()
}

// sampleRound answers a run stopped by its mrtrLLM: input_required with
// the one request it stopped at, and the state of the next round. A run
// past MaxSamplingRounds, or whose answers outgrow MaxSamplingAnswerBytes,
// fails with a tool error that says so.
func (t *Tools) sampleRound(ctx context.Context, cm *callModel) (*mcp.CallToolResult, error) {
	st, m := cm.st, cm.mrtr
	if st.Rounds >= MaxSamplingRounds {
		return nil, agentsmcp.Errorf(agentsmcp.EUNAVAILABLE, "thinking and planning with the client's model took more than %d sampling requests (the catalog or the tools' records kept changing between rounds, or the model's answers kept being invalid); call again without requestState to start over, or choose another backend", MaxSamplingRounds)
	}
	size := 0
	for _, a := range m.answers {
		size += len(a.Text) + len(a.Model)
	}
	if size > MaxSamplingAnswerBytes {
		return nil, agentsmcp.Errorf(agentsmcp.EINVALID, "the client's model answered %d bytes in all; a call carries at most %d through its rounds", size, MaxSamplingAnswerBytes)
	}
	if m.diverged {
		// Worth knowing when runs keep needing more rounds than the
		// model's attempts.
		t.Logger.InfoContext(ctx, "sampling through MRTR: a replayed model request changed since the client answered it; asking it again",
			"round", st.Rounds+1, "answers_kept", len(m.answers))
	}
	st.Asked, st.Answers = m.asked, m.answers
	st.Rounds++
	state, err := t.RequestStates.sealer().Seal(samplingStateLabel, st, t.RequestStates.ttl())
	if err != nil {
		return nil, err
	}
	key := fmt.Sprintf("%s%d", samplingKeyPrefix, st.Rounds)
	return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{key: m.pending}, RequestState: state}, nil
}

// openSampling opens the requestState of req as a sampling state issued
// to this caller for call, with the answer the retry brings recorded. ok
// is false when the state is not a sampling state at all (another kind,
// or forged: Tools.retry says which). A retry without the answer asks
// the same request again, in a new round.
func (t *Tools) openSampling(ctx context.Context, req *mcp.CallToolRequest, call string) (*samplingState, bool, error) {
	if t.RequestStates == nil {
		return nil, false, nil
	}
	var st samplingState
	expires, err := t.RequestStates.sealer().Open(samplingStateLabel, req.Params.RequestState, &st)
	switch {
	case errors.Is(err, seal.ErrForged):
		return nil, false, nil
	case errors.Is(err, seal.ErrExpired):
		return nil, true, invalidState(fmt.Sprintf("requestState expired at %s: call again without requestState to start over", expires.UTC().Format(time.RFC3339)))
	case err != nil || len(st.Asked) != len(st.Answers)+1 || st.Rounds < 1:
		return nil, true, invalidState("requestState is malformed")
	case st.Principal != agentsmcp.PrincipalIDFrom(ctx):
		return nil, true, invalidState("requestState was issued to another caller")
	case st.Call != call:
		return nil, true, invalidState("requestState was issued to another call: retry the call with the arguments it had")
	}
	key := fmt.Sprintf("%s%d", samplingKeyPrefix, st.Rounds)
	resp, ok := req.Params.InputResponses[key]
	if !ok {
		// Not answered: the run stops at the same request and asks it
		// again.
		return &st, true, nil
	}
	a, err := sampleAnswerOf(resp)
	if err != nil {
		return nil, true, invalidState(fmt.Sprintf("inputResponses[%q]: %v", key, err))
	}
	st.Answers = append(st.Answers, a)
	return &st, true, nil
}

// sampleAnswerOf is the text of a sampling result, as go-sdk decodes it
// from the wire (CreateMessageWithToolsResult) or as a Go client builds
// it (CreateMessageResult).
func sampleAnswerOf(r mcp.InputResponse) (sampleAnswer, error) {
	var contents []mcp.Content
	var model string
	switch r := r.(type) {
	case *mcp.CreateMessageWithToolsResult:
		contents, model = r.Content, r.Model
	case *mcp.CreateMessageResult:
		contents, model = []mcp.Content{r.Content}, r.Model
	default:
		return sampleAnswer{}, fmt.Errorf("a sampling result was asked for, not %T", r)
	}
	var text []string
	for _, c := range contents {
		if tc, ok := c.(*mcp.TextContent); ok {
			text = append(text, tc.Text)
		}
	}
	if len(text) == 0 {
		return sampleAnswer{}, errors.New("the client's model answered without text")
	}
	return sampleAnswer{Text: strings.Join(text, "\n"), Model: model}, nil
}
