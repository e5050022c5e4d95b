package remote

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/sony/gobreaker/v2"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/internal/mcpwire"
	"github.com/agents-mcp/agents-mcp/internal/storedform"
	"github.com/agents-mcp/agents-mcp/internal/tracing"
)

// errCallTimeout is the cause of a call's context when the upstream's own
// timeout ran out (rather than the caller cancelling).
var errCallTimeout = errors.New("upstream call timeout")

// CallTool implements agentsmcp.ToolProvider. The call waits for a ready
// session and a concurrency slot, passes the circuit breaker and is bounded
// by the upstream's timeout as a whole. Tool failures come back as results
// with IsError; a JSON-RPC error from the upstream is returned as is (the
// router relays it as a protocol error); everything else is an EUNAVAILABLE
// error that says what went wrong. With tracing on, the call is traced as
// an "upstream call" span, whose context reaches the upstream's HTTP
// requests.
func (u *upstream) CallTool(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	ctx, span := u.startCallSpan(ctx, req)
	res, err := u.callTool(ctx, req)
	if span != nil {
		endCallSpan(span, res, err)
	}
	return res, err
}

// startCallSpan starts the "upstream call" span of req. With tracing off
// ([tracing.Off]) it starts none and returns a nil span: a no-op span would
// cost its options, attributes and a context per call for nothing, and ctx
// already carries the caller's trace context, all such a span passes on.
func (u *upstream) startCallSpan(ctx context.Context, req *mcp.CallToolRequest) (context.Context, trace.Span) {
	if tracing.Off() {
		return ctx, nil
	}
	return otel.Tracer(tracerName).Start(ctx, "upstream call", trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(
		attribute.String("agents_mcp.upstream", u.cfg.Name),
		attribute.String("agents_mcp.tool", req.Params.Name),
	))
}

// tracerName names the pool's spans. The tracer is looked up at each span
// rather than kept: a tracer kept from the global provider follows only the
// first provider ever set, which in tests need not be the current one.
const tracerName = "github.com/agents-mcp/agents-mcp/remote"

// endCallSpan records the outcome of an upstream call on its span: ok,
// tool_error (a result with IsError, the tool's answer) or error (no
// answer, or a JSON-RPC error).
func endCallSpan(span trace.Span, res *mcp.CallToolResult, err error) {
	defer span.End()
	if !span.IsRecording() {
		return
	}
	switch {
	case err != nil:
		span.SetAttributes(attribute.String("agents_mcp.outcome", "error"))
		span.RecordError(err)
		span.SetStatus(codes.Error, storedform.TruncateUTF8(agentsmcp.ErrorMessage(err), 256))
	case res != nil && res.IsError:
		span.SetAttributes(attribute.String("agents_mcp.outcome", "tool_error"))
		span.SetStatus(codes.Error, "the tool returned an error result")
	default:
		span.SetAttributes(attribute.String("agents_mcp.outcome", "ok"))
	}
}

// callTool is CallTool without its span.
func (u *upstream) callTool(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	if u.bridges(ctx, req) && !u.usesOAuth() {
		// A 2026-07-28 caller (bridged.go). Not for an OAuth upstream:
		// a bridged call runs on the pool's session, with the server's
		// authorization, not the caller's (oauth.go).
		return u.callBridged(ctx, req)
	}
	u.mu.Lock()
	name, ok := u.original[req.Params.Name]
	u.mu.Unlock()
	if !ok {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("unknown tool %q", req.Params.Name)}
	}
	rounds, err := u.newRounds(ctx, req, name) // refuses a bad requestState before any slot is taken
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeoutCause(ctx, u.cfg.Timeout, errCallTimeout)
	defer cancel()

	select {
	case u.slots <- struct{}{}:
		defer func() { <-u.slots }()
	case <-ctx.Done():
		return nil, u.contextError(ctx, fmt.Sprintf("waiting for one of its %d call slots", u.cfg.MaxConcurrency))
	}
	res, err := u.cb.Load().Execute(func() (*mcp.CallToolResult, error) { return u.call(ctx, req, name, rounds) })
	if errors.Is(err, gobreaker.ErrOpenState) || errors.Is(err, gobreaker.ErrTooManyRequests) {
		u.mu.Lock()
		last := u.st.LastError
		u.mu.Unlock()
		return nil, agentsmcp.Errorf(agentsmcp.EUNAVAILABLE, "upstream %q is failing (last error: %s); its circuit breaker is open and calls are refused for up to %s before it is tried again", u.cfg.Name, last, u.pool.opts.BreakerCooldown)
	}
	if !breakerSuccess(err) {
		// What the circuit breaker counts is what Status and the refusal
		// above report.
		u.mu.Lock()
		u.recordErrorLocked(errors.New(agentsmcp.ErrorMessage(err)))
		u.mu.Unlock()
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
	if upstreamError(err) != nil {
		return true
	}
	return errors.Is(err, context.Canceled)
}

func (u *upstream) call(ctx context.Context, req *mcp.CallToolRequest, name string, rounds *rounds) (*mcp.CallToolResult, error) {
	principal := agentsmcp.PrincipalIDFrom(ctx)
	for attempt := 0; ; attempt++ {
		cs, err := u.waitSession(ctx)
		if err != nil {
			return nil, err
		}
		var ps *principalSession
		if u.usesOAuth() && principal != "" {
			// The caller's own session, with its own tokens (oauth.go).
			var release func()
			ps, release, err = u.principalSession(ctx, principal)
			if ar, ok := asAuthorization(err); ok {
				return mcpwire.AuthorizationRequiredResult(ar), nil
			} else if err != nil {
				return nil, err
			}
			defer release()
			cs = ps.cs
		}
		c := u.calls.begin(ctx, req)
		start := time.Now()
		params := &mcp.CallToolParams{Name: name, Arguments: req.Params.Arguments}
		if c.upstreamToken != "" {
			params.SetProgressToken(c.upstreamToken)
		}
		if logsByRequest(cs) {
			meta := params.GetMeta()
			if meta == nil {
				meta = map[string]any{}
			}
			meta[mcp.MetaKeyLogLevel] = "debug" // as logging/setLevel in connect
			params.SetMeta(meta)
		}
		// input_required: see mrtr.go; a capture (tasks.go) when the call
		// may become a task.
		capture := u.taskCall(ctx, cs)
		res, err := rounds.call(withTaskCapture(ctx, capture), cs, params)
		if err == nil {
			u.settle(c)
		}
		u.calls.end(c)
		if capture != nil {
			capture.end()
			if err == nil {
				return u.taskCreated(ctx, capture, res)
			}
		}
		if err == nil {
			u.exposeResourceURIs(res)
			return res, nil
		}
		if ps != nil {
			if authErr := ps.tr.takeAuthErr(); authErr != nil {
				u.dropPrincipalSession(principal, ps)
				if ar, ok := asAuthorization(authErr); ok {
					return mcpwire.AuthorizationRequiredResult(ar), nil
				}
				return nil, authErr
			}
		}
		if rpcErr := upstreamError(err); rpcErr != nil {
			return nil, rpcErr
		}
		if u.tooLargeSince(start) {
			// The session's stream (legacy SSE, stdio) was cut at a
			// message over the bound, the answer to this call most
			// likely; the session is being re-established.
			return nil, streamCut(u.cfg.Name, u.maxResultBytes())
		}
		if ctx.Err() != nil {
			return nil, u.contextError(ctx, "waiting for the answer")
		}
		if errors.Is(err, mcp.ErrSessionMissing) && attempt == 0 {
			// The upstream forgot the session (HTTP 404) and never saw
			// this call: reconnect and send it once more.
			u.log.Info("upstream session expired; re-initializing", "tool", name)
			if ps != nil {
				u.dropPrincipalSession(principal, ps)
			} else {
				u.sessionGone(cs, err)
			}
			continue
		}
		signal(u.probe)
		return nil, agentsmcp.Errorf(agentsmcp.EUNAVAILABLE, "upstream %q: %s", u.cfg.Name, u.errorText(err, 500))
	}
}

// settleMax bounds how long a call's answer waits for the notifications
// read before it to be handled (see settle): a handler stuck on a slow
// caller, or a notification go-sdk dropped, must not hold the answer longer.
const settleMax = time.Second

// settle holds a call that has its answer until the progress and log
// notifications the upstream sent before that answer are handled. go-sdk
// runs notification handlers on another goroutine and may return the answer
// first; forwarded after the answer (or not at all, once the call is no
// longer in flight), a progress notification would break the protocol and a
// log message would lose its caller. The connection counts such
// notifications as it reads them (noteCountingTransport), so by the time the
// answer is here the count covers every notification sent before it: the
// call waits until that many were handled. Usually none is outstanding and
// nothing waits.
func (u *upstream) settle(c *inflightCall) {
	if c.session == nil {
		return
	}
	want := u.notesRead.Load()
	if u.notesHandled.Load() >= want {
		return
	}
	deadline := time.Now().Add(settleMax)
	for u.notesHandled.Load() < want {
		if time.Now().After(deadline) {
			// Count the missing ones as handled, so that one lost
			// notification costs one wait, not one per later call.
			for {
				got := u.notesHandled.Load()
				if got >= want || u.notesHandled.CompareAndSwap(got, want) {
					break
				}
			}
			u.log.Debug("notifications from the upstream not handled in time; answering without them")
			return
		}
		time.Sleep(100 * time.Microsecond)
	}
}

// codeRejectedByTransport is the code go-sdk gives the *jsonrpc.Error it
// returns when its own transport failed to deliver a request (connection
// refused, a dropped stream): a local failure, not the upstream's answer.
const codeRejectedByTransport = -32005

// upstreamError returns the JSON-RPC error the upstream answered with, or
// nil if err is not an answer of the upstream (a transport failure, a
// timeout, …).
func upstreamError(err error) *jsonrpc.Error {
	var rpcErr *jsonrpc.Error
	if errors.As(err, &rpcErr) && rpcErr.Code != codeRejectedByTransport {
		return rpcErr
	}
	return nil
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

// exposeResourceURIs rewrites the resource URIs in a result (resource links,
// embedded resources) to the namespaced URIs under which the caller can read
// them through agents-mcp.
func (u *upstream) exposeResourceURIs(res *mcp.CallToolResult) {
	prefix := ResourceURIPrefix(u.cfg.Name)
	for _, c := range res.Content {
		switch c := c.(type) {
		case *mcp.ResourceLink:
			if c.URI != "" {
				c.URI = prefix + c.URI
			}
		case *mcp.EmbeddedResource:
			if c.Resource != nil && c.Resource.URI != "" {
				c.Resource.URI = prefix + c.Resource.URI
			}
		}
	}
}
