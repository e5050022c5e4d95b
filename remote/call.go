package remote

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/sony/gobreaker/v2"

	agentsmcp "github.com/agents-mcp/agents-mcp"
)

// errCallTimeout is the cause of a call's context when the upstream's own
// timeout ran out (rather than the caller cancelling).
var errCallTimeout = errors.New("upstream call timeout")

// CallTool implements agentsmcp.ToolProvider. The call waits for a ready
// session and a concurrency slot, passes the circuit breaker and is bounded
// by the upstream's timeout as a whole. Tool failures come back as results
// with IsError; a JSON-RPC error from the upstream is returned as is (the
// router relays it as a protocol error); everything else is an EUNAVAILABLE
// error that says what went wrong.
func (u *upstream) CallTool(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	u.mu.Lock()
	name, ok := u.original[req.Params.Name]
	u.mu.Unlock()
	if !ok {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("unknown tool %q", req.Params.Name)}
	}
	ctx, cancel := context.WithTimeoutCause(ctx, u.cfg.Timeout, errCallTimeout)
	defer cancel()

	select {
	case u.slots <- struct{}{}:
		defer func() { <-u.slots }()
	case <-ctx.Done():
		return nil, u.contextError(ctx, fmt.Sprintf("waiting for one of its %d call slots", u.cfg.MaxConcurrency))
	}
	res, err := u.cb.Execute(func() (*mcp.CallToolResult, error) { return u.call(ctx, req, name) })
	if errors.Is(err, gobreaker.ErrOpenState) || errors.Is(err, gobreaker.ErrTooManyRequests) {
		u.mu.Lock()
		last := u.st.LastError
		u.mu.Unlock()
		return nil, agentsmcp.Errorf(agentsmcp.EUNAVAILABLE, "upstream %q is failing (last error: %s); calls are refused for up to %s before it is tried again", u.cfg.Name, last, u.pool.opts.BreakerCooldown)
	}
	return res, err
}

// breakerSuccess tells the circuit breaker which outcomes show a healthy
// upstream: answers of any kind, JSON-RPC errors included, and calls the
// caller cancelled. Timeouts and transport failures count against it.
func breakerSuccess(err error) bool {
	if err == nil {
		return true
	}
	var rpcErr *jsonrpc.Error
	if errors.As(err, &rpcErr) {
		return true
	}
	return errors.Is(err, context.Canceled)
}

func (u *upstream) call(ctx context.Context, req *mcp.CallToolRequest, name string) (*mcp.CallToolResult, error) {
	for attempt := 0; ; attempt++ {
		cs, err := u.waitSession(ctx)
		if err != nil {
			return nil, err
		}
		c := u.calls.begin(ctx, req)
		params := &mcp.CallToolParams{Name: name, Arguments: req.Params.Arguments}
		if c.upstreamToken != "" {
			params.SetProgressToken(c.upstreamToken)
		}
		res, err := cs.CallTool(ctx, params)
		u.calls.end(c)
		if err == nil {
			return res, nil
		}
		var rpcErr *jsonrpc.Error
		if errors.As(err, &rpcErr) {
			return nil, rpcErr
		}
		if ctx.Err() != nil {
			return nil, u.contextError(ctx, "waiting for the answer")
		}
		if errors.Is(err, mcp.ErrSessionMissing) && attempt == 0 {
			// The upstream forgot the session (HTTP 404) and never saw
			// this call: reconnect and send it once more.
			u.log.Info("upstream session expired; re-initializing", "tool", name)
			u.sessionGone(cs, err)
			continue
		}
		signal(u.probe)
		return nil, agentsmcp.Errorf(agentsmcp.EUNAVAILABLE, "upstream %q: %s", u.cfg.Name, agentsmcp.TruncateUTF8(err.Error(), 500))
	}
}

// contextError explains a call whose context ended: the upstream's timeout
// (while doing what) or the caller's cancellation.
func (u *upstream) contextError(ctx context.Context, doing string) error {
	if errors.Is(context.Cause(ctx), errCallTimeout) {
		signal(u.probe)
		return agentsmcp.Errorf(agentsmcp.EUNAVAILABLE, "upstream %q did not answer within its timeout of %s (%s)", u.cfg.Name, u.cfg.Timeout, doing)
	}
	return fmt.Errorf("call to upstream %q: %w", u.cfg.Name, ctx.Err())
}

// waitSession returns the current session, waiting (within ctx) while the
// upstream is connecting. A down upstream fails at once.
func (u *upstream) waitSession(ctx context.Context) (*mcp.ClientSession, error) {
	for {
		u.mu.Lock()
		cs, st, changed := u.session, u.st, u.changed
		u.mu.Unlock()
		if cs != nil && (st.State == StateReady || st.State == StateDegraded) {
			return cs, nil
		}
		if u.ctx.Err() != nil {
			return nil, agentsmcp.Errorf(agentsmcp.EUNAVAILABLE, "upstream %q was removed", u.cfg.Name)
		}
		if st.State == StateDown {
			next := ""
			if !st.NextAttemptAt.IsZero() {
				next = fmt.Sprintf("; next connect attempt in %s", time.Until(st.NextAttemptAt).Round(100*time.Millisecond))
			}
			return nil, agentsmcp.Errorf(agentsmcp.EUNAVAILABLE, "upstream %q is down (%s)%s", u.cfg.Name, st.Reason, next)
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return nil, u.contextError(ctx, "waiting for the upstream to connect")
		}
	}
}

// sessionGone makes the supervisor replace cs, which a call found dead, and
// marks the upstream connecting so that other calls wait for the new
// session rather than use the dead one.
func (u *upstream) sessionGone(cs *mcp.ClientSession, err error) {
	u.mu.Lock()
	if u.session == cs {
		u.session = nil
		u.recordErrorLocked(err)
		u.setStateLocked(StateConnecting, "re-initializing: the upstream no longer knows the session")
	}
	u.mu.Unlock()
	_ = cs.Close() // ends serve's wait, and the supervisor reconnects
}
