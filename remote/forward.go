package remote

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/agents-mcp/agents-mcp/internal/mcpwire"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// callTracker knows the calls in flight to one upstream, so that messages
// the upstream sends during a call can reach the client that made it.
type callTracker struct {
	seq atomic.Uint64

	mu       sync.Mutex
	inFlight map[*inflightCall]struct{}
	byToken  map[string]*inflightCall
}

// inflightCall is one relayed tools/call.
type inflightCall struct {
	// ctx is the caller's request context: messages sent to the caller with
	// it travel on that request's stream (streamable HTTP).
	ctx     context.Context
	session *mcp.ServerSession // the caller; nil for in-process callers
	// caps are the protocol capabilities of the caller, as the edge that
	// received its request computed them.
	caps mcpwire.Capabilities
	// bridged is set when the caller is asked through input_required
	// answers instead (bridged.go).
	bridged *bridgedCall
	// callerToken is the caller's progress token; upstreamToken replaces it
	// on the upstream call, unique across all callers sharing the session.
	callerToken   any
	upstreamToken string
}

func newCallTracker() *callTracker {
	return &callTracker{inFlight: map[*inflightCall]struct{}{}, byToken: map[string]*inflightCall{}}
}

func (t *callTracker) begin(ctx context.Context, req *mcp.CallToolRequest) *inflightCall {
	c := &inflightCall{ctx: ctx, session: req.Session, caps: mcpwire.CallCapabilities(ctx, req), bridged: bridgedFrom(ctx)}
	if req.Params != nil {
		if tok := req.Params.GetProgressToken(); tok != nil {
			c.callerToken = tok
			c.upstreamToken = fmt.Sprintf("agents-mcp-%d", t.seq.Add(1))
		}
	}
	t.mu.Lock()
	t.inFlight[c] = struct{}{}
	if c.upstreamToken != "" {
		t.byToken[c.upstreamToken] = c
	}
	t.mu.Unlock()
	return c
}

func (t *callTracker) end(c *inflightCall) {
	t.mu.Lock()
	delete(t.inFlight, c)
	if c.upstreamToken != "" {
		delete(t.byToken, c.upstreamToken)
	}
	t.mu.Unlock()
}

func (t *callTracker) count() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.inFlight)
}

func (t *callTracker) byProgressToken(tok any) *inflightCall {
	s, ok := tok.(string)
	if !ok {
		return nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.byToken[s]
}

// attributable returns a call in flight whose client session is the only
// one with calls in flight (in-process callers, with no session, count as
// one more session), and how many calls are in flight. It returns nil when
// there are none, or when calls from different sessions are in flight and a
// message without a token could belong to any of them.
func (t *callTracker) attributable() (*inflightCall, int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	var found *inflightCall
	for c := range t.inFlight {
		if found != nil && found.session != c.session {
			return nil, len(t.inFlight)
		}
		found = c
	}
	return found, len(t.inFlight)
}

// callerContext is the caller's request context, also ended when the
// upstream withdraws its request (ctx).
func callerContext(ctx context.Context, c *inflightCall) (context.Context, context.CancelFunc) {
	out, cancel := context.WithCancel(c.ctx)
	stop := context.AfterFunc(ctx, cancel)
	return out, func() { stop(); cancel() }
}

// refuse is the JSON-RPC error an upstream gets for a request no caller can
// answer. It is not "method not found" (what a client without the
// capability would send): go-sdk replaces the message of every error with
// that code by a generic one, and the upstream, and through it the user,
// would never learn why.
func refuse(format string, args ...any) error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: fmt.Sprintf(format, args...)}
}

// targetFor returns the call whose client should answer a request that
// the upstream sent itself (an upstream before 2026-07-28): the call found
// by [callTracker.attributable]. (The input requests of a 2026-07-28
// upstream's input_required answer never come here: see mrtr.go.)
func (u *upstream) targetFor(what string) (*inflightCall, error) {
	c, n := u.calls.attributable()
	if c == nil {
		if n == 0 {
			return nil, refuse("agents-mcp: %s request from upstream %q outside any tool call", what, u.cfg.Name)
		}
		return nil, refuse("agents-mcp: cannot tell which of %d calls in flight to upstream %q this %s request belongs to", n, u.cfg.Name, what)
	}
	if c.session == nil {
		return nil, refuse("agents-mcp: the %s request belongs to a call made inside agents-mcp, which has no client to ask", what)
	}
	return c, nil
}

func (u *upstream) forwardSampling(ctx context.Context, req *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
	c, err := u.targetFor("sampling")
	if err != nil {
		return nil, err
	}
	if c.bridged != nil {
		return c.bridged.sample(ctx, req.Params)
	}
	if c.caps.Channel() != mcpwire.ChannelSession || !c.caps.Sampling() {
		return nil, refuse("agents-mcp: the calling client does not support sampling")
	}
	ctx, cancel := callerContext(ctx, c)
	defer cancel()
	return c.session.CreateMessage(ctx, req.Params)
}

func (u *upstream) forwardElicitation(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
	c, err := u.targetFor("elicitation")
	if err != nil {
		return nil, err
	}
	if c.bridged != nil {
		return c.bridged.elicit(ctx, req.Params)
	}
	if c.caps.Channel() != mcpwire.ChannelSession || !c.caps.Elicitation() {
		return nil, refuse("agents-mcp: the calling client does not support elicitation")
	}
	ctx, cancel := callerContext(ctx, c)
	defer cancel()
	return c.session.Elicit(ctx, req.Params)
}

func (u *upstream) forwardProgress(ctx context.Context, req *mcp.ProgressNotificationClientRequest) {
	defer u.notesHandled.Add(1)
	c := u.calls.byProgressToken(req.Params.ProgressToken)
	if c == nil || c.session == nil {
		return
	}
	p := *req.Params
	p.ProgressToken = c.callerToken
	ctx, cancel := callerContext(ctx, c)
	defer cancel()
	if err := c.session.NotifyProgress(ctx, &p); err != nil {
		u.log.Debug("forward progress", "error", err)
	}
}

// forwardLog sends an upstream log message to the calling client when it
// can be attributed (the client's logging/setLevel applies), and to the
// server log otherwise.
func (u *upstream) forwardLog(ctx context.Context, req *mcp.LoggingMessageRequest) {
	defer u.notesHandled.Add(1)
	p := *req.Params
	if p.Logger == "" {
		p.Logger = u.cfg.Name
	} else {
		p.Logger = u.cfg.Name + "/" + p.Logger
	}
	if c, _ := u.calls.attributable(); c != nil && c.session != nil {
		ctx, cancel := callerContext(ctx, c)
		defer cancel()
		if err := c.session.Log(ctx, &p); err == nil {
			return
		}
	}
	u.log.Info("upstream log message", "level", string(p.Level), "logger", p.Logger, "data", p.Data)
}

// QuietCall implements [mcpwire.QuietCaller]: a call reaches its caller
// only through the handlers above, each of which the caller turns on
// (a progress token, logging/setLevel, its sampling and elicitation
// capabilities). Not so when the upstream's session is of 2026-07-28 or
// later, whose input_required answers are put to the caller, roots
// included (mrtr.go); nor, to stay on the safe side, for an upstream with
// OAuth per principal (oauth.go), nor while there is no session (the call
// waits for one, and which version it gets is not known yet).
func (u *upstream) QuietCall(string) bool {
	if u.usesOAuth() {
		return false
	}
	u.mu.Lock()
	cs := u.session
	u.mu.Unlock()
	if cs == nil {
		return false
	}
	init := cs.InitializeResult()
	return init != nil && !mcpwire.Revision(init.ProtocolVersion).Sessionless()
}
