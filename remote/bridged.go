package remote

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/internal/seal"
)

// This file bridges a client of MCP 2026-07-28, which cannot receive
// server-to-client requests, to an upstream of an earlier revision, which
// sends elicitation/create or sampling/createMessage in the middle of a
// tools/call (ADR 0010 D4). The upstream call runs in the background, held
// by this replica; the upstream's question becomes an input_required
// answer to the client, with a sealed requestState that names the call;
// the client's retry hands its answer to the blocked upstream request and
// waits for the next question or the result.
//
// What is built is the same-replica part of D4: a bridged call lives in
// this process only. A retry that reaches another replica, or this one
// after a restart, is refused with -32602. The durable form (a stored
// planless task, answers taken on any replica, a CreateTaskResult for
// clients with the Tasks extension) is not built; see ADR 0010.

// bridgeStatePrefix starts every requestState of a bridged call, so that
// a retry is recognised as one without opening the seal, and told apart
// from the states of other uses of the key.
const bridgeStatePrefix = "brg."

// bridgeStateLabel separates a bridged call's requestState from any other
// token sealed under the same key (internal/seal).
const bridgeStateLabel = "agents-mcp bridged call v1"

// Defaults of [Options.BridgeRetryWait] and of the bridged states' life.
const (
	// DefaultBridgeRetryWait bounds how long a retry waits for the next
	// question or the result before it answers input_required again with
	// no new question (the load-shedding shape of MRTR), so that a client
	// is never held longer than an ordinary poll.
	DefaultBridgeRetryWait = 30 * time.Second
	// bridgeStateTTL is how long a bridged call's requestState is
	// accepted, and how long a result nobody collected is kept. The call
	// itself is bounded by the upstream's timeout, which is shorter.
	bridgeStateTTL = 10 * time.Minute
)

// bridge holds the bridged calls of one pool. A nil *bridge (no
// [Options.StateKey]) bridges nothing: a 2026-07-28 caller's upstream
// requests are refused, as before.
type bridge struct {
	sealer    *seal.Sealer
	retryWait time.Duration

	mu    sync.Mutex
	calls map[string]*bridgedCall
	// wg counts the background upstream calls; each ends with its call
	// (the upstream's timeout, or the upstream's removal).
	wg sync.WaitGroup
}

func newBridge(opts Options) *bridge {
	if len(opts.StateKey) == 0 {
		return nil
	}
	b := &bridge{sealer: &seal.Sealer{Key: opts.StateKey}, retryWait: opts.BridgeRetryWait, calls: map[string]*bridgedCall{}}
	if b.retryWait <= 0 {
		b.retryWait = DefaultBridgeRetryWait
	}
	return b
}

// wait returns once the background calls have ended, or ctx is done.
func (b *bridge) wait(ctx context.Context) error {
	if b == nil {
		return nil
	}
	done := make(chan struct{})
	go func() { b.wg.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("wait for bridged calls: %w", ctx.Err())
	}
}

// bridgeState is what a bridged call's requestState says: which call, on
// which upstream tool, for whom (a digest of the principal).
type bridgeState struct {
	Call      string `json:"call"`
	Upstream  string `json:"upstream"`
	Tool      string `json:"tool"`
	Principal string `json:"principal"`
}

// bridgedCall is one upstream call held for a 2026-07-28 caller.
type bridgedCall struct {
	id     string
	state  bridgeState
	caps   *mcp.ClientCapabilities // what the caller declared on its first request
	cancel context.CancelFunc      // ends the background upstream call

	mu       sync.Mutex
	changed  chan struct{} // closed and replaced on every change
	asked    int           // questions asked so far: the n of key call.<n>
	question *bridgedQuestion
	handed   bool // a question went to the caller: the call outlives the first request
	done     bool
	res      *mcp.CallToolResult
	err      error
}

// bridgedQuestion is the upstream request waiting for the caller's answer.
type bridgedQuestion struct {
	key    string
	req    mcp.InputRequest
	answer chan mcp.InputResponse // buffered: the answerer never blocks
}

type bridgedKey struct{}

// bridgedFrom returns the bridged call ctx belongs to, or nil.
func bridgedFrom(ctx context.Context) *bridgedCall {
	bc, _ := ctx.Value(bridgedKey{}).(*bridgedCall)
	return bc
}

// bridges reports whether req is served as a bridged call: the pool has a
// state key; req is not the background call of one; and it is the retry
// of a bridged call, or it comes from a 2026-07-28 client to an upstream
// not known to speak that revision (a 2026 upstream asks through
// input_required answers of its own, which are not bridged).
func (u *upstream) bridges(ctx context.Context, req *mcp.CallToolRequest) bool {
	b := u.pool.bridge
	if b == nil || bridgedFrom(ctx) != nil || req == nil || req.Session == nil || req.Params == nil {
		return false
	}
	if strings.HasPrefix(req.Params.RequestState, bridgeStatePrefix) {
		return true
	}
	if req.ProtocolVersion() < agentsmcp.ProtocolSessionless {
		return false
	}
	u.mu.Lock()
	cs := u.session
	u.mu.Unlock()
	if cs != nil {
		if r := cs.InitializeResult(); r != nil && r.ProtocolVersion >= agentsmcp.ProtocolSessionless {
			return false
		}
	}
	return true
}

// callBridged serves a tools/call of a 2026-07-28 caller as a bridged call:
// the first request starts it, a retry (its requestState names the call)
// answers it.
func (u *upstream) callBridged(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	b := u.pool.bridge
	principal := seal.Digest(agentsmcp.PrincipalIDFrom(ctx))
	if st := req.Params.RequestState; st != "" {
		bc, err := b.open(st, u.cfg.Name, req.Params.Name, principal)
		if err != nil {
			return nil, err
		}
		bc.answer(req.Params.InputResponses)
		return b.await(ctx, bc, st, b.retryWait)
	}

	id, err := newBridgeID()
	if err != nil {
		return nil, err
	}
	bc := &bridgedCall{
		id:      id,
		state:   bridgeState{Call: id, Upstream: u.cfg.Name, Tool: req.Params.Name, Principal: principal},
		caps:    req.ClientCapabilities(),
		changed: make(chan struct{}),
	}
	// The background call keeps the request's values (principal, trace)
	// but not its end: once the caller holds a question, the call must
	// outlive the request. It ends with the upstream (removed, closed) and
	// within the upstream's timeout, which callTool applies.
	bg, cancel := context.WithCancel(context.WithValue(context.WithoutCancel(ctx), bridgedKey{}, bc))
	stop := context.AfterFunc(u.ctx, cancel)
	bc.cancel = func() { stop(); cancel() }
	b.mu.Lock()
	b.calls[id] = bc
	b.mu.Unlock()
	b.wg.Go(func() {
		defer bc.cancel()
		res, err := u.callTool(bg, req)
		bc.finish(res, err)
		// A result nobody comes back for is dropped when its state
		// would have expired anyway.
		time.AfterFunc(bridgeStateTTL, func() { b.drop(bc) })
	})

	state, err := b.sealer.Seal(bridgeStateLabel, bc.state, bridgeStateTTL)
	if err != nil {
		bc.cancel()
		b.drop(bc)
		return nil, err
	}
	return b.await(ctx, bc, bridgeStatePrefix+state, 0)
}

// await waits for what the caller of ctx is told next: the result (the
// call is then forgotten), or the open question as input_required with
// state. With bound > 0 (a retry) it waits at most that long, then answers
// input_required with no question and the same state, so that the client
// polls again. A first request (bound 0) whose caller goes away before
// any question was handed out cancels the call, as for any call.
func (b *bridge) await(ctx context.Context, bc *bridgedCall, state string, bound time.Duration) (*mcp.CallToolResult, error) {
	var timeout <-chan time.Time
	if bound > 0 {
		t := time.NewTimer(bound)
		defer t.Stop()
		timeout = t.C
	}
	for {
		bc.mu.Lock()
		done, res, err, q, changed := bc.done, bc.res, bc.err, bc.question, bc.changed
		if !done && q != nil {
			bc.handed = true
		}
		handed := bc.handed
		bc.mu.Unlock()
		switch {
		case done:
			b.drop(bc)
			return res, err
		case q != nil:
			return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{q.key: q.req}, RequestState: state}, nil
		}
		select {
		case <-changed:
		case <-timeout:
			return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{}, RequestState: state}, nil
		case <-ctx.Done():
			if !handed {
				bc.cancel()
				b.drop(bc)
			}
			return nil, fmt.Errorf("bridged call to %s: %w", bc.state.Tool, ctx.Err())
		}
	}
}

// open verifies a bridged call's requestState brought back by principal on
// tool of upstream, and returns the call it names. Every refusal is
// -32602, as for the agents' own requestState.
func (b *bridge) open(state, upstream, tool, principal string) (*bridgedCall, error) {
	var st bridgeState
	_, err := b.sealer.Open(bridgeStateLabel, strings.TrimPrefix(state, bridgeStatePrefix), &st)
	switch {
	case errors.Is(err, seal.ErrForged):
		return nil, invalidBridgeState("requestState failed verification: it was not issued by this server, or was changed")
	case errors.Is(err, seal.ErrExpired):
		return nil, invalidBridgeState("requestState expired: call the tool again")
	case err != nil || st.Call == "":
		return nil, invalidBridgeState("requestState is malformed")
	case st.Principal != principal:
		return nil, invalidBridgeState("requestState was issued to another caller")
	case st.Upstream != upstream || st.Tool != tool:
		return nil, invalidBridgeState("requestState was issued to a call of another tool")
	}
	b.mu.Lock()
	bc := b.calls[st.Call]
	b.mu.Unlock()
	if bc == nil {
		return nil, invalidBridgeState(fmt.Sprintf("the upstream call %s is not held by this server: it ended and its result was returned, "+
			"or it was started on another replica or before a restart (a bridged call is answered only where it started); call the tool again", st.Call))
	}
	return bc, nil
}

func invalidBridgeState(msg string) error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: msg}
}

func (b *bridge) drop(bc *bridgedCall) {
	b.mu.Lock()
	if b.calls[bc.id] == bc {
		delete(b.calls, bc.id)
	}
	b.mu.Unlock()
}

// newBridgeID returns an unguessable call id (128 random bits): the seal
// already binds it to its caller, the randomness keeps ids from colliding.
func newBridgeID() (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	return "brc_" + base64.RawURLEncoding.EncodeToString(b[:]), nil
}

// broadcastLocked wakes every waiter; bc.mu is held.
func (bc *bridgedCall) broadcastLocked() {
	close(bc.changed)
	bc.changed = make(chan struct{})
}

func (bc *bridgedCall) finish(res *mcp.CallToolResult, err error) {
	bc.mu.Lock()
	defer bc.mu.Unlock()
	bc.done, bc.res, bc.err, bc.question = true, res, err, nil
	bc.broadcastLocked()
}

// ask puts the upstream's request (an elicitation or sampling request,
// what is the name for errors) to the caller as the call's open question
// and waits for the answer, within ctx (the upstream's request, which ends
// with the call's timeout). A caller that did not declare the capability
// is not asked, as the spec requires; the upstream is refused at once.
func (bc *bridgedCall) ask(ctx context.Context, what string, declared bool, req mcp.InputRequest) (mcp.InputResponse, error) {
	if !declared {
		return nil, refuse("agents-mcp: the calling client does not support %s", what)
	}
	bc.mu.Lock()
	if bc.question != nil {
		bc.mu.Unlock()
		return nil, refuse("agents-mcp: the upstream sent a %s request while another question of the same call waits for the client, which is asked one question at a time", what)
	}
	bc.asked++
	q := &bridgedQuestion{key: fmt.Sprintf("call.%d", bc.asked), req: req, answer: make(chan mcp.InputResponse, 1)}
	bc.question = q
	bc.broadcastLocked()
	bc.mu.Unlock()
	select {
	case a := <-q.answer:
		return a, nil
	case <-ctx.Done():
		bc.mu.Lock()
		if bc.question == q {
			bc.question = nil
			bc.broadcastLocked()
		}
		bc.mu.Unlock()
		return nil, ctx.Err()
	}
}

// answer hands the caller's answer to the open question, when responses
// has one of the right kind under its key; other keys are ignored, as
// answers to questions no longer open.
func (bc *bridgedCall) answer(responses mcp.InputResponseMap) {
	bc.mu.Lock()
	defer bc.mu.Unlock()
	q := bc.question
	if q == nil {
		return
	}
	r, ok := responses[q.key]
	if !ok {
		return
	}
	switch q.req.(type) {
	case *mcp.ElicitParams:
		if _, ok := r.(*mcp.ElicitResult); !ok {
			return
		}
	case *mcp.CreateMessageParams:
		switch r.(type) {
		case *mcp.CreateMessageWithToolsResult, *mcp.CreateMessageResult:
		default:
			return
		}
	}
	q.answer <- r
	bc.question = nil
	bc.broadcastLocked()
}

// elicit is forwardElicitation for a bridged call.
func (bc *bridgedCall) elicit(ctx context.Context, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
	a, err := bc.ask(ctx, "elicitation", bc.caps != nil && bc.caps.Elicitation != nil, p)
	if err != nil {
		return nil, err
	}
	return a.(*mcp.ElicitResult), nil
}

// sample is forwardSampling for a bridged call. An answer with several
// content blocks cannot be given to a request without tools.
func (bc *bridgedCall) sample(ctx context.Context, p *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
	a, err := bc.ask(ctx, "sampling", bc.caps != nil && bc.caps.Sampling != nil, p)
	if err != nil {
		return nil, err
	}
	switch a := a.(type) {
	case *mcp.CreateMessageResult:
		return a, nil
	case *mcp.CreateMessageWithToolsResult:
		if len(a.Content) != 1 {
			return nil, refuse("agents-mcp: the client answered the sampling request with %d content blocks, where one was asked", len(a.Content))
		}
		return &mcp.CreateMessageResult{Meta: a.Meta, Content: a.Content[0], Model: a.Model, Role: a.Role, StopReason: a.StopReason}, nil
	}
	return nil, refuse("agents-mcp: the client's answer is not a sampling result")
}
