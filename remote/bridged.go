package remote

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/internal/mcpwire"
	"github.com/agents-mcp/agents-mcp/internal/seal"
	"github.com/agents-mcp/agents-mcp/internal/storedform"
)

// This file bridges a client of MCP 2026-07-28, which cannot receive
// server-to-client requests, to an upstream of an earlier revision, which
// sends elicitation/create or sampling/createMessage in the middle of a
// tools/call (ADR 0010 D4).
//
// Every such call runs in the background, held by this replica. When the
// upstream asks, the call becomes a stored task with no plan and one step
// (the format is the root's, bridged.go), leased by this replica, with the
// question as the step's question; then:
//
//   - a client that declared the Tasks extension gets a CreateTaskResult
//     for that task (tasks/get, tasks/update and tasks/cancel serve it on
//     any replica, through the agents' task backend);
//   - any other client gets input_required, whose sealed requestState
//     names the task; its retry, on any replica, stores the answer and
//     waits (at most BridgeRetryWait) for the next question or the result,
//     reading the store.
//
// The holder reads the store for answers, hands each to the blocked
// upstream request, and stores the result. A graceful stop cancels the
// call, stored failed at once; after a crash its lease expires and the
// executor's resume loop, on any replica, fails the task.

// bridgeStatePrefix starts every requestState of a bridged call, so that
// a retry is recognised as one without opening the seal, and told apart
// from the states of other uses of the key.
const bridgeStatePrefix = "brg."

// bridgeStateLabel separates a bridged call's requestState from any other
// token sealed under the same key (internal/seal).
const bridgeStateLabel = "agents-mcp bridged call v1"

const (
	// DefaultBridgeRetryWait bounds how long a retry waits for the next
	// question or the result before it answers input_required again with
	// no question (the load-shedding shape of MRTR), so that a client is
	// never held longer than an ordinary poll.
	DefaultBridgeRetryWait = 30 * time.Second
	// DefaultBridgePoll is how often the holder, and a retry that waits,
	// read the store.
	DefaultBridgePoll = 500 * time.Millisecond
	// defaultBridgeLeaseTTL is the lease of a held call when
	// Options.LeaseTTL is not set, renewed every third of it.
	defaultBridgeLeaseTTL = 30 * time.Second
)

// bridge holds the bridged calls of one pool. A nil *bridge (no
// Options.TaskStore) bridges nothing: a 2026-07-28
// caller's upstream requests are refused, as before D4.
type bridge struct {
	sealer    *seal.Sealer
	stateTTL  time.Duration
	tasks     agentsmcp.TaskService
	owner     string
	leaseTTL  time.Duration
	retryWait time.Duration
	poll      time.Duration
	log       *slog.Logger

	mu    sync.Mutex
	calls map[string]*bridgedCall // the calls held here, by task id: local wake-ups
	// wg counts the background upstream calls and their lease renewals;
	// each ends with its call (the upstream's timeout, or its removal).
	wg sync.WaitGroup
}

func newBridge(opts Options) *bridge {
	if opts.TaskStore == nil {
		return nil
	}
	b := &bridge{
		sealer: &seal.Sealer{Key: opts.StateKey}, stateTTL: opts.StateTTL, tasks: opts.TaskStore, owner: opts.LeaseOwner,
		leaseTTL: opts.LeaseTTL, retryWait: opts.BridgeRetryWait, poll: opts.BridgePoll, log: opts.Logger,
		calls: map[string]*bridgedCall{},
	}
	if b.owner == "" {
		var r [6]byte
		_, _ = rand.Read(r[:])
		b.owner = "bridge-" + hex.EncodeToString(r[:])
	}
	if b.leaseTTL <= 0 {
		b.leaseTTL = defaultBridgeLeaseTTL
	}
	if b.retryWait <= 0 {
		b.retryWait = DefaultBridgeRetryWait
	}
	if b.poll <= 0 {
		b.poll = DefaultBridgePoll
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

// bridgeState is what a bridged call's requestState says: which task, on
// which upstream tool, for whom (a digest of the principal).
type bridgeState struct {
	Task      string `json:"task"`
	Upstream  string `json:"upstream"`
	Tool      string `json:"tool"`
	Principal string `json:"principal"`
}

// bridgedCall is one upstream call held here for a 2026-07-28 caller.
type bridgedCall struct {
	b         *bridge
	upstream  string
	tool      string
	principal *agentsmcp.Principal
	caps      *mcp.ClientCapabilities // what the caller declared on its request
	cancel    context.CancelFunc      // ends the background upstream call

	mu      sync.Mutex
	changed chan struct{} // closed and replaced on every change
	task    *agentsmcp.Task
	asked   int                      // questions asked so far: the n of key call.<n>
	open    *mcpwire.BridgedQuestion // the question the upstream waits on
	done    bool
	res     *mcp.CallToolResult
	err     error
	stop    chan struct{} // closed when the call ends: stops the lease renewal
}

type bridgedKey struct{}

// bridgedFrom returns the bridged call ctx belongs to, or nil.
func bridgedFrom(ctx context.Context) *bridgedCall {
	bc, _ := ctx.Value(bridgedKey{}).(*bridgedCall)
	return bc
}

// bridges reports whether req is served as a bridged call: bridging is on;
// req is not the background call of one; and it is the retry of a bridged
// call, or it comes from a 2026-07-28 client to an upstream not known to
// speak that revision (a 2026 upstream asks through input_required answers
// of its own, which are not bridged).
func (u *upstream) bridges(ctx context.Context, req *mcp.CallToolRequest) bool {
	b := u.pool.bridge
	if b == nil || bridgedFrom(ctx) != nil || req == nil || req.Session == nil || req.Params == nil {
		return false
	}
	if strings.HasPrefix(req.Params.RequestState, bridgeStatePrefix) {
		return true
	}
	if !mcpwire.CallCapabilities(ctx, req).Sessionless() {
		return false
	}
	u.mu.Lock()
	cs := u.session
	u.mu.Unlock()
	if cs != nil {
		if r := cs.InitializeResult(); r != nil && mcpwire.Revision(r.ProtocolVersion).Sessionless() {
			return false
		}
	}
	return true
}

// callBridged serves a tools/call of a 2026-07-28 caller as a bridged call:
// the first request starts it, a retry (its requestState names the task)
// answers it.
func (u *upstream) callBridged(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	b := u.pool.bridge
	if state := req.Params.RequestState; state != "" {
		return b.retry(ctx, u.cfg.Name, req)
	}
	bc := &bridgedCall{
		b: b, upstream: u.cfg.Name, tool: req.Params.Name, principal: agentsmcp.PrincipalFrom(ctx),
		caps: mcpwire.CallCapabilities(ctx, req).Declared(), changed: make(chan struct{}), stop: make(chan struct{}),
	}
	// The background call keeps the request's values (principal, trace,
	// the request id its notifications travel by) but not its end: once
	// the caller holds a question, the call must outlive the request. It
	// ends with the upstream (removed, closed) and within the upstream's
	// timeout, which callTool applies. Its task mode is cleared: the
	// bridged call answers the caller's task mode itself (first).
	bg := mcpwire.WithTaskMode(context.WithValue(context.WithoutCancel(ctx), bridgedKey{}, bc), nil)
	bg, cancel := context.WithCancel(bg)
	stop := context.AfterFunc(u.ctx, cancel)
	bc.cancel = func() { stop(); cancel() }
	b.wg.Go(func() {
		defer bc.cancel()
		res, err := u.callTool(bg, req)
		bc.finish(res, err)
	})
	return b.first(ctx, bc)
}

// first waits for what the first request is answered: the result, when
// the upstream asks nothing; else, at the first question, a
// CreateTaskResult for a caller in task mode, or input_required. A caller
// that goes away before that cancels the call, as for any call.
func (b *bridge) first(ctx context.Context, bc *bridgedCall) (*mcp.CallToolResult, error) {
	for {
		bc.mu.Lock()
		done, res, err, q, task, changed := bc.done, bc.res, bc.err, bc.open, bc.task, bc.changed
		bc.mu.Unlock()
		switch {
		case done:
			return res, err
		case q != nil:
			if mode := mcpwire.TaskModeFrom(ctx); mode != nil {
				mode.Created(task.ID)
				return &mcp.CallToolResult{}, nil // the router answers with the task
			}
			state, err := b.sealer.Seal(bridgeStateLabel, bridgeState{
				Task: task.ID, Upstream: bc.upstream, Tool: bc.tool, Principal: principalDigest(bc.principal),
			}, b.stateTTL)
			if err != nil {
				return nil, err
			}
			return inputRequired(q, bridgeStatePrefix+state)
		}
		select {
		case <-changed:
		case <-ctx.Done():
			bc.cancel()
			return nil, fmt.Errorf("bridged call to %s: %w", bc.tool, ctx.Err())
		}
	}
}

// inputRequired is the input_required answer that asks q (none: the
// load-shedding shape, ask again later) with state.
func inputRequired(q *mcpwire.BridgedQuestion, state string) (*mcp.CallToolResult, error) {
	reqs := mcp.InputRequestMap{}
	if q != nil {
		r, err := q.InputRequest()
		if err != nil {
			return nil, agentsmcp.Errorf(agentsmcp.EINTERNAL, "the stored question %s cannot be read: %v", q.Key, err)
		}
		reqs[q.Key] = r
	}
	return &mcp.CallToolResult{InputRequests: reqs, RequestState: state}, nil
}

func principalDigest(p *agentsmcp.Principal) string {
	if p == nil {
		return seal.Digest("")
	}
	return seal.Digest(p.ID)
}

// retry serves the retry of a bridged call on this replica, whichever
// holds the call: the answer it carries is stored in the task, then it
// waits, at most retryWait, reading the store, for the result or the next
// question.
func (b *bridge) retry(ctx context.Context, upstream string, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	state := req.Params.RequestState
	st, err := b.open(state, upstream, req.Params.Name, principalDigest(agentsmcp.PrincipalFrom(ctx)))
	if err != nil {
		return nil, err
	}
	t, err := b.tasks.FindTaskByID(ctx, st.Task)
	if agentsmcp.ErrorCode(err) == agentsmcp.ENOTFOUND || (err == nil && !mcpwire.IsBridgedCall(t)) {
		return nil, invalidBridgeState(fmt.Sprintf("the bridged call %s is no longer stored: call the tool again", st.Task))
	}
	if err != nil {
		return nil, err
	}
	if len(req.Params.InputResponses) > 0 {
		if t, err = b.answer(ctx, t, req.Params.InputResponses); err != nil {
			return nil, err
		}
	}
	timeout := time.NewTimer(b.retryWait)
	defer timeout.Stop()
	tick := time.NewTicker(b.poll)
	defer tick.Stop()
	for {
		if t.Status.Terminal() {
			return mcpwire.BridgedOutcome(t)
		}
		if q := mcpwire.OpenQuestion(t); q != nil {
			return inputRequired(q, state)
		}
		select {
		case <-b.wake(t.ID):
		case <-tick.C:
		case <-timeout.C:
			return inputRequired(nil, state)
		case <-ctx.Done():
			return nil, fmt.Errorf("bridged call %s: %w", t.ID, ctx.Err())
		}
		if t, err = b.tasks.FindTaskByID(ctx, t.ID); err != nil {
			return nil, err
		}
	}
}

// answer stores the answer responses hold to t's open question, retrying
// on a concurrent write, and wakes the holder when it is this replica.
// Answers to other keys are ignored, as for tasks/update.
func (b *bridge) answer(ctx context.Context, t *agentsmcp.Task, responses mcp.InputResponseMap) (*agentsmcp.Task, error) {
	for range 5 {
		changed, err := mcpwire.AnswerBridged(t, responses, time.Now())
		if err != nil || !changed {
			return t, err
		}
		err = b.tasks.UpdateTask(ctx, t)
		if err == nil {
			b.poke(t.ID)
			return t, nil
		}
		if agentsmcp.ErrorCode(err) != agentsmcp.ECONFLICT {
			return nil, err
		}
		if t, err = b.tasks.FindTaskByID(ctx, t.ID); err != nil {
			return nil, err
		}
	}
	return t, nil
}

// wake returns a channel closed at the next change of the call held here
// as task id, or nil (never ready) when it is not held here.
func (b *bridge) wake(id string) <-chan struct{} {
	b.mu.Lock()
	bc := b.calls[id]
	b.mu.Unlock()
	if bc == nil {
		return nil
	}
	bc.mu.Lock()
	defer bc.mu.Unlock()
	return bc.changed
}

// poke wakes the holder of task id when it is this replica, so that it
// reads an answer now rather than at its next poll.
func (b *bridge) poke(id string) {
	b.mu.Lock()
	bc := b.calls[id]
	b.mu.Unlock()
	if bc != nil {
		bc.mu.Lock()
		bc.broadcastLocked()
		bc.mu.Unlock()
	}
}

// open verifies a bridged call's requestState brought back by principal on
// tool of upstream. Every refusal is -32602, as for the agents' own
// requestState.
func (b *bridge) open(state, upstream, tool, principal string) (*bridgeState, error) {
	var st bridgeState
	_, err := b.sealer.Open(bridgeStateLabel, strings.TrimPrefix(state, bridgeStatePrefix), &st)
	switch {
	case errors.Is(err, seal.ErrForged):
		return nil, invalidBridgeState("requestState failed verification: it was not issued by this server, or was changed")
	case errors.Is(err, seal.ErrExpired):
		return nil, invalidBridgeState(fmt.Sprintf("requestState expired; task %s still tells how the call ended (tasks/get)", st.Task))
	case err != nil || st.Task == "":
		return nil, invalidBridgeState("requestState is malformed")
	case st.Principal != principal:
		return nil, invalidBridgeState("requestState was issued to another caller")
	case st.Upstream != upstream || st.Tool != tool:
		return nil, invalidBridgeState("requestState was issued to a call of another tool")
	}
	return &st, nil
}

func invalidBridgeState(msg string) error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: msg}
}

// broadcastLocked wakes every waiter; bc.mu is held.
func (bc *bridgedCall) broadcastLocked() {
	close(bc.changed)
	bc.changed = make(chan struct{})
}

// ask puts the upstream's request (method, with params; what names it in
// errors) to the caller as the call's question, stores it, and waits for
// the answer in the store, within ctx (the upstream's request, which ends
// with the call's timeout). A caller that did not declare the capability
// is not asked, as the spec requires: the upstream is refused at once.
func (bc *bridgedCall) ask(ctx context.Context, what, method string, declared bool, params any) (json.RawMessage, error) {
	if !declared {
		return nil, refuse("agents-mcp: the calling client does not support %s", what)
	}
	request, err := json.Marshal(map[string]any{"method": method, "params": params})
	if err != nil {
		return nil, err
	}
	bc.mu.Lock()
	if bc.open != nil || bc.done {
		bc.mu.Unlock()
		return nil, refuse("agents-mcp: the upstream sent a %s request while another question of the same call waits for the client, which is asked one question at a time", what)
	}
	bc.asked++
	q := &mcpwire.BridgedQuestion{Key: fmt.Sprintf("call.%d", bc.asked), Request: request}
	bc.mu.Unlock()
	id, err := bc.storeQuestion(ctx, q)
	if err != nil {
		return nil, refuse("agents-mcp: the %s request could not be stored for the client: %s", what, agentsmcp.ErrorMessage(err))
	}
	bc.mu.Lock()
	bc.open = q
	bc.broadcastLocked()
	bc.mu.Unlock()
	defer func() {
		bc.mu.Lock()
		bc.open = nil
		bc.mu.Unlock()
	}()
	tick := time.NewTicker(bc.b.poll)
	defer tick.Stop()
	for {
		bc.mu.Lock()
		changed := bc.changed
		bc.mu.Unlock()
		t, err := bc.b.tasks.FindTaskByID(ctx, id)
		if err == nil {
			bc.keep(t)
			if t.Status.Terminal() {
				// Cancelled (tasks/cancel), or failed by another
				// replica that took this one for dead.
				bc.cancel()
				return nil, refuse("agents-mcp: the call was %s: %s", t.Status, t.Error)
			}
			if raw, ok := mcpwire.BridgedAnswers(t)[q.Key]; ok {
				return raw, nil
			}
		}
		// A store error is retried at the next poll: the call's
		// timeout bounds the wait.
		select {
		case <-changed:
		case <-tick.C:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// keep records t as the latest stored state the holder knows.
func (bc *bridgedCall) keep(t *agentsmcp.Task) {
	bc.mu.Lock()
	defer bc.mu.Unlock()
	if bc.task == nil || t.Version >= bc.task.Version {
		bc.task = t
	}
}

// storeQuestion makes q the call's stored question: the first one creates
// the task, leased to this replica, and starts renewing the lease. It
// returns the task id.
func (bc *bridgedCall) storeQuestion(ctx context.Context, q *mcpwire.BridgedQuestion) (string, error) {
	b := bc.b
	out, err := json.Marshal(q)
	if err != nil {
		return "", err
	}
	now := time.Now()
	bc.mu.Lock()
	t := bc.task
	bc.mu.Unlock()
	if t == nil {
		t = &agentsmcp.Task{
			Request: storedform.TruncateUTF8(fmt.Sprintf("call %s (bridged: the upstream %s asks the client during the call)", bc.tool, bc.upstream), agentsmcp.MaxQueryTextBytes),
			Status:  agentsmcp.TaskRunning,
			Steps:   []agentsmcp.StepState{{StepID: mcpwire.BridgedStepID, Status: agentsmcp.StepWaitingInput, Attempts: 1, Output: out, StartedAt: now}},
			Lease:   agentsmcp.TaskLease{Owner: b.owner, ExpiresAt: now.Add(b.leaseTTL)},
		}
		if p := bc.principal; p != nil {
			t.Principal, t.PrincipalTools = p.ID, slices.Clone(p.Tools)
		}
		storedform.AddEvent(t, agentsmcp.TaskEvent{At: now, Type: "asked", StepID: mcpwire.BridgedStepID, Message: "the upstream asks " + q.Key})
		if err := b.tasks.CreateTask(ctx, t); err != nil {
			return "", err
		}
		bc.keep(t)
		b.mu.Lock()
		b.calls[t.ID] = bc
		b.mu.Unlock()
		b.wg.Go(func() { bc.renewLease(t.ID) })
		return t.ID, nil
	}
	for range 5 {
		if t.Status.Terminal() {
			return "", agentsmcp.Errorf(agentsmcp.ECONFLICT, "the call was %s", t.Status)
		}
		next := *t
		next.Steps = slices.Clone(t.Steps)
		next.Steps[0].Status, next.Steps[0].Output = agentsmcp.StepWaitingInput, out
		storedform.AddEvent(&next, agentsmcp.TaskEvent{At: now, Type: "asked", StepID: mcpwire.BridgedStepID, Message: "the upstream asks " + q.Key})
		err := b.tasks.UpdateTask(ctx, &next)
		if err == nil {
			bc.keep(&next)
			return next.ID, nil
		}
		if agentsmcp.ErrorCode(err) != agentsmcp.ECONFLICT {
			return "", err
		}
		if t, err = b.tasks.FindTaskByID(ctx, t.ID); err != nil {
			return "", err
		}
	}
	return "", agentsmcp.Errorf(agentsmcp.ECONFLICT, "task %s keeps changing", t.ID)
}

// renewLease keeps this replica's lease on task id while the call runs.
// Losing it means another replica took this one for dead and failed the
// task, and a task that ended was cancelled: either way the upstream call
// is cancelled, since nobody can get its result.
func (bc *bridgedCall) renewLease(id string) {
	b := bc.b
	tick := time.NewTicker(b.leaseTTL / 3)
	defer tick.Stop()
	for {
		select {
		case <-bc.stop:
			return
		case <-tick.C:
		}
		ctx, cancel := context.WithTimeout(context.Background(), b.leaseTTL/3)
		t, err := b.tasks.AcquireTaskLease(ctx, id, b.owner, b.leaseTTL)
		cancel()
		if err == nil && t.Status.Terminal() {
			// Cancelled (tasks/cancel) while the upstream works between
			// questions: stop it now rather than at its end.
			bc.cancel()
			return
		}
		if agentsmcp.ErrorCode(err) == agentsmcp.ECONFLICT {
			b.log.Warn("lost the lease of a bridged call; cancelling it", "task", id)
			bc.cancel()
			return
		} else if err != nil {
			b.log.Warn("renewing the lease of a bridged call failed", "task", id, "error", err)
		}
	}
}

// finish records the end of the upstream call: in memory for the first
// request, and in the task, when there is one, for everyone else. A task
// that ended meanwhile (cancelled) stays as it ended.
func (bc *bridgedCall) finish(res *mcp.CallToolResult, err error) {
	b := bc.b
	bc.mu.Lock()
	bc.done, bc.res, bc.err = true, res, err
	t := bc.task
	close(bc.stop)
	bc.broadcastLocked()
	bc.mu.Unlock()
	if t == nil {
		return
	}
	id := t.ID
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for range 5 {
		if t.Status.Terminal() {
			break
		}
		next := *t
		next.Steps = slices.Clone(t.Steps)
		endBridged(&next, res, err, time.Now())
		uerr := b.tasks.UpdateTask(ctx, &next)
		if uerr == nil {
			break
		}
		if agentsmcp.ErrorCode(uerr) != agentsmcp.ECONFLICT {
			b.log.Warn("storing the end of a bridged call failed", "task", t.ID, "error", uerr)
			break
		}
		if t, uerr = b.tasks.FindTaskByID(ctx, id); uerr != nil {
			b.log.Warn("storing the end of a bridged call failed", "task", id, "error", uerr)
			break
		}
	}
	if err := b.tasks.ReleaseTaskLease(ctx, id, b.owner); err != nil {
		b.log.Warn("releasing the lease of a bridged call failed", "task", id, "error", err)
	}
	b.poke(id)
	b.mu.Lock()
	delete(b.calls, id)
	b.mu.Unlock()
}

// endBridged sets t to the end of its call: succeeded with the result, or
// failed with the error (a JSON-RPC error keeps its code).
func endBridged(t *agentsmcp.Task, res *mcp.CallToolResult, err error, now time.Time) {
	s := &t.Steps[0]
	s.EndedAt, t.EndedAt = now, now
	if err == nil {
		out, merr := json.Marshal(res)
		switch {
		case merr != nil:
			err = merr
		case len(out) > agentsmcp.MaxStepOutputBytes:
			err = &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf("the upstream's result is %d bytes, more than a task keeps (%d)", len(out), agentsmcp.MaxStepOutputBytes)}
		default:
			s.Status, s.Output, s.Error = agentsmcp.StepSucceeded, out, ""
			t.Status, t.Error = agentsmcp.TaskSucceeded, ""
			storedform.AddEvent(t, agentsmcp.TaskEvent{At: now, Type: "succeeded", StepID: mcpwire.BridgedStepID})
			return
		}
	}
	msg, code := agentsmcp.ErrorMessage(err), agentsmcp.ErrorCode(err)
	if errors.Is(err, context.Canceled) {
		msg = "the upstream call was cancelled: the server holding it stopped, its upstream was removed, or the call was cancelled"
		code = agentsmcp.EUNAVAILABLE
	}
	msg = storedform.TruncateUTF8(msg, agentsmcp.MaxTaskErrorBytes)
	s.Status, s.Error, s.Output = agentsmcp.StepFailed, msg, nil
	var rpcErr *jsonrpc.Error
	if errors.As(err, &rpcErr) {
		// The code travels in the Output; ErrorCode is an application code.
		s.Output, _ = json.Marshal(mcpwire.BridgedError{Code: rpcErr.Code, Message: rpcErr.Message})
		code = ""
	}
	t.Status, t.Error, t.ErrorCode = agentsmcp.TaskFailed, msg, code
	storedform.AddEvent(t, agentsmcp.TaskEvent{At: now, Type: "failed", StepID: mcpwire.BridgedStepID, Message: msg})
}

// elicit is forwardElicitation for a bridged call.
func (bc *bridgedCall) elicit(ctx context.Context, p *mcp.ElicitParams) (*mcp.ElicitResult, error) {
	raw, err := bc.ask(ctx, "elicitation", "elicitation/create", bc.caps != nil && bc.caps.Elicitation != nil, p)
	if err != nil {
		return nil, err
	}
	var r mcp.ElicitResult
	if err := json.Unmarshal(raw, &r); err != nil {
		return nil, refuse("agents-mcp: the client's answer is not an elicitation result: %v", err)
	}
	return &r, nil
}

// sample is forwardSampling for a bridged call. An answer with several
// content blocks cannot be given to a request without tools.
func (bc *bridgedCall) sample(ctx context.Context, p *mcp.CreateMessageParams) (*mcp.CreateMessageResult, error) {
	raw, err := bc.ask(ctx, "sampling", "sampling/createMessage", bc.caps != nil && bc.caps.Sampling != nil, p)
	if err != nil {
		return nil, err
	}
	var r mcp.CreateMessageWithToolsResult
	if err := json.Unmarshal(raw, &r); err != nil {
		return nil, refuse("agents-mcp: the client's answer is not a sampling result: %v", err)
	}
	if len(r.Content) != 1 {
		return nil, refuse("agents-mcp: the client answered the sampling request with %d content blocks, where one was asked", len(r.Content))
	}
	return &mcp.CreateMessageResult{Meta: r.Meta, Content: r.Content[0], Model: r.Model, Role: r.Role, StopReason: r.StopReason}, nil
}
