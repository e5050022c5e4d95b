package router

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/internal/delegation"
	"github.com/agents-mcp/agents-mcp/internal/mcpwire"
	"github.com/agents-mcp/agents-mcp/internal/tracing"
	"github.com/agents-mcp/agents-mcp/router/validation"
)

var _ agentsmcp.ToolCaller = (*Router)(nil)

// tracerName names the router's spans. The tracer is looked up per call:
// one kept from before the server set its provider would stay a no-op.
const tracerName = "github.com/agents-mcp/agents-mcp/router"

// CallTool implements [agentsmcp.ToolCaller]: it calls a registered tool
// in-process, on the path a client's tools/call takes (argument validation,
// the provider, [Options.OnToolCall]), and reports with errors what the MCP
// path reports with error results:
//
//   - ENOTFOUND for an unknown tool;
//   - EINVALID for arguments the schema rejects (the message is the summary
//     a client gets in its error result; the provider is not called), for
//     arguments that are not JSON or hold a number beyond the bounds of
//     package internal/jsonnum, and for a JSON-RPC error of the provider
//     (its code is kept in the message);
//   - the provider's own code for an [agentsmcp.Error] (the remote pool's
//     EUNAVAILABLE for an upstream that is down, timed out or refused by its
//     circuit breaker);
//   - EUNAVAILABLE when ctx was cancelled or its deadline passed;
//   - EINTERNAL for any other provider error (also logged), and for a
//     panic of the validator or the provider (logged with its stack).
//
// A failure of the tool itself is a result with IsError set, as on the MCP
// path. Nil arguments mean {}. req is given to the provider as is, so
// req.Session (a client session or nil) and the progress token in
// req.Params.Meta reach the remote pool.
//
// In-process calls run the middleware added with [Router.Use], not the
// router's own middleware of sessions (middleware.go): they are neither
// refused by [Router.Drain] (they belong to work already running) nor
// counted among the in-flight requests it waits for; whoever runs them
// drains them. They never carry an [mcpwire.TaskMode].
func (r *Router) CallTool(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	if req == nil || req.Params == nil {
		return nil, agentsmcp.Errorf(agentsmcp.EINVALID, "tool call without params")
	}
	e, ok := r.entry(req.Params.Name)
	if !ok {
		return nil, agentsmcp.Errorf(agentsmcp.ENOTFOUND, "unknown tool %q", req.Params.Name)
	}
	// An in-process call is never a task-mode call, even with the values
	// of a request that declared the Tasks extension (an executor step of
	// a task resumed by resume_task): it must not become a task of its own.
	ctx = mcpwire.WithTaskMode(ctx, nil)
	// Nor is its answer written raw: the in-process caller reads the
	// result, and the holder it may inherit (an executor step runs with
	// the values of the run_task call that started it) belongs to that
	// outer call. A provider that set it would hand this caller an empty
	// placeholder and the outer call this step's answer.
	ctx = mcpwire.WithRawToolResult(ctx, nil)
	// In-process calls are an edge of their own: the client they can ask
	// is that of req (its session, or none), not that of the outer
	// request whose values ctx may carry.
	ctx = mcpwire.WithCapabilities(ctx, mcpwire.RequestCapabilities(req))
	ctx = withEntry(ctx, entryInProcess)
	res, refused, err := r.dispatchDirect(ctx, e, req)
	if refused != nil {
		return nil, agentsmcp.Errorf(agentsmcp.EINVALID, "%s", refused.msg)
	}
	if err != nil {
		return nil, r.callFailure(ctx, e, err)
	}
	return res, nil
}

// refusal is a call stopped before its provider because of its arguments.
type refusal struct {
	msg string // what the caller is told
	// notJSON: the arguments are not JSON or hold a number out of
	// bounds, a protocol error (-32602) on the MCP path; otherwise they
	// violate the schema, an error result there.
	notJSON bool
	// issues and missing are the schema's findings, as tools/validate
	// reports them (empty when notJSON).
	issues  []agentsmcp.ValidationIssue
	missing []string
}

// dispatch is the path of every tool call, from a client or in-process: it
// validates req's arguments against e's input schema and, if they pass,
// calls e's provider and records the call with [Options.OnToolCall]. It
// returns a refusal when the provider was not called, and otherwise the
// provider's result (never nil on success) and error, untranslated; a
// panic of the validator or the provider is a [*panicError], already
// logged.
func (r *Router) dispatch(ctx context.Context, e *toolEntry, req *mcp.CallToolRequest) (*mcp.CallToolResult, *refusal, error) {
	issues, missing, err := validateArguments(e, req.Params.Arguments)
	if pe, ok := errors.AsType[*panicError](err); ok {
		logPanic(r.logger, pe, "tool", e.tool.Name, "in", "argument validation")
		return nil, nil, pe
	}
	if err != nil {
		if agentsmcp.ErrorCode(err) == agentsmcp.EINVALID {
			msg := agentsmcp.ErrorMessage(err)
			r.recordRefusal(ctx, e.tool.Name, req.Params.Arguments, "invalid arguments: "+msg)
			return nil, &refusal{msg: msg, notJSON: true}, nil
		}
		// An uncompilable schema must not make the tool unusable; the
		// provider (or upstream) still checks its own input.
		r.logger.Warn("input schema unusable; calling without validation", "tool", e.tool.Name, "error", err)
	} else if len(issues) > 0 {
		msg := validation.Summarize(e.tool.Name, issues)
		r.recordRefusal(ctx, e.tool.Name, req.Params.Arguments, "invalid arguments: "+msg)
		return nil, &refusal{msg: msg, issues: issues, missing: missing}, nil
	}
	if err := r.chargeCall(ctx, e, req); err != nil {
		return nil, nil, err
	}
	ctx, span := startCallSpan(ctx, e)
	if span != nil {
		defer span.End()
	}
	if !delegation.AcceptsDelegation(e.provider) && delegation.DelegatedTokenFrom(ctx) != nil {
		// The caller's own token reaches only the providers that opted in
		// (ADR 0012 D7b); never an MCP upstream.
		ctx = delegation.WithDelegatedToken(ctx, nil)
	}
	start := time.Now()
	res, err := r.callProvider(ctx, e, req)
	setCallOutcome(span, res, err)
	// The call tool's own call is not recorded: the call it dispatched
	// again is, under the real tool's name (call_tool.go).
	if r.onToolCall != nil && e.tool.Name != CallToolName {
		rec := callRecord(ctx, e.tool.Name, req.Params.Arguments)
		rec.Source, rec.Duration, rec.Error = e.provider.Name(), time.Since(start), callError(res, err)
		r.onToolCall(rec)
	}
	if err != nil {
		return nil, nil, err
	}
	if res == nil {
		res = &mcp.CallToolResult{}
	}
	return res, nil, nil
}

// callProvider calls e's provider; a panic of the provider is logged and
// returned as a [*panicError], the call's failure (recover.go).
func (r *Router) callProvider(ctx context.Context, e *toolEntry, req *mcp.CallToolRequest) (res *mcp.CallToolResult, err error) {
	defer func() {
		if v := recover(); v != nil {
			pe := recovered(v)
			logPanic(r.logger, pe, "tool", e.tool.Name, "provider", e.provider.Name())
			res, err = nil, pe
		}
	}()
	return e.provider.CallTool(ctx, req)
}

// startCallSpan starts the "tools/call <tool>" span of a call of e. With
// tracing off ([tracing.Off]) it starts none and returns a nil span: a
// no-op span would cost its options, attributes and a context per call
// for nothing, and ctx already carries the caller's trace context, which
// is all a no-op span would have passed on.
func startCallSpan(ctx context.Context, e *toolEntry) (context.Context, trace.Span) {
	if tracing.Off() {
		return ctx, nil
	}
	return otel.Tracer(tracerName).Start(ctx, "tools/call "+e.tool.Name, trace.WithAttributes(
		attribute.String("agents_mcp.tool", e.tool.Name), attribute.String("agents_mcp.source", e.provider.Name())))
}

// setCallOutcome records the outcome of a call on span; a nil span
// (tracing off) is left alone.
func setCallOutcome(span trace.Span, res *mcp.CallToolResult, err error) {
	if span == nil {
		return
	}
	switch outcome := callError(res, err); {
	case err != nil:
		span.RecordError(err)
		span.SetStatus(codes.Error, outcome)
		span.SetAttributes(attribute.String("agents_mcp.outcome", "error"))
	case outcome != "":
		span.SetAttributes(attribute.String("agents_mcp.outcome", "tool_error"))
	default:
		span.SetAttributes(attribute.String("agents_mcp.outcome", "ok"))
	}
}

// callFailure turns a provider's error into the error of an in-process
// call (see [Router.CallTool]).
func (r *Router) callFailure(ctx context.Context, e *toolEntry, err error) error {
	var rpcErr *jsonrpc.Error
	var appErr *agentsmcp.Error
	switch {
	case isPanic(err):
		return agentsmcp.Errorf(agentsmcp.EINTERNAL, "tool %q failed: internal error", e.tool.Name)
	case errors.As(err, &rpcErr):
		return agentsmcp.Errorf(agentsmcp.EINVALID, "tool %q: JSON-RPC error %d: %s", e.tool.Name, rpcErr.Code, rpcErr.Message)
	case errors.As(err, &appErr):
		return err
	case isCallQuotaError(err):
		// The caller's limit, not a failure of the tool: an agent's step
		// pauses on it as on any unavailable tool.
		return agentsmcp.Errorf(agentsmcp.EUNAVAILABLE, "%s", err.Error())
	case ctx.Err() != nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded):
		return agentsmcp.Errorf(agentsmcp.EUNAVAILABLE, "tool %q was cancelled or timed out", e.tool.Name)
	}
	r.logger.Warn("tool call failed", "tool", e.tool.Name, "provider", e.provider.Name(), "error", err)
	return agentsmcp.Errorf(agentsmcp.EINTERNAL, "tool %q failed: %s", e.tool.Name, agentsmcp.ErrorMessage(err))
}

// toolHandler serves tools/call for e: argument problems and tool failures
// are tool results with isError set (so a model can correct itself, as MCP
// asks); only arguments that are not JSON or hold a number out of bounds
// (-32602), *jsonrpc.Error values from a provider, and a panic (-32603,
// see recover.go) become protocol errors.
//
// A result that asks a person to authorize (see
// [mcpwire.AuthorizationRequiredFrom]) is offered to the client as a
// URL-mode elicitation when it supports them ([mcpwire.OfferAuthorization]),
// once per call: the retry that answers it is dispatched without that
// answer, which is the router's and not the provider's, and gets the
// result itself if the credential is still missing. In-process calls (the
// agents) never get the offer: they pause on the result (ADR 0012 D4).
func (r *Router) toolHandler(e *toolEntry) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		req, offered := withoutAuthorizeResponse(req)
		res, refused, err := r.dispatch(ctx, e, req)
		if refused != nil {
			if refused.notJSON {
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: refused.msg}
			}
			return errorResult(refused.msg), nil
		}
		if err != nil {
			if isPanic(err) {
				return nil, internalError()
			}
			var werr *jsonrpc.Error
			if errors.As(err, &werr) {
				return nil, werr
			}
			if qe, ok := errors.AsType[*agentsmcp.CallQuotaError](err); ok {
				return nil, callQuotaExceeded(qe)
			}
			if ctx.Err() != nil {
				return errorResult(fmt.Sprintf("tool %q was cancelled or timed out", e.tool.Name)), nil
			}
			if agentsmcp.ErrorCode(err) != agentsmcp.EQUOTA { // the caller's limit, not a failure
				r.logger.Warn("tool call failed", "tool", e.tool.Name, "provider", e.provider.Name(), "error", err)
			}
			return errorResult(agentsmcp.ErrorMessage(err)), nil
		}
		if ar, ok := mcpwire.AuthorizationRequiredFrom(res); ok && !offered {
			return mcpwire.OfferAuthorization(req, ar), nil
		}
		if c, ok := clientCallFrom(ctx); ok {
			res = shapeResult(res, c.profile)
		}
		return res, nil
	}
}

// withoutAuthorizeResponse returns req without the client's answer to an
// authorization offer (see [Router.toolHandler]), and whether it had one.
// req itself is not changed.
func withoutAuthorizeResponse(req *mcp.CallToolRequest) (*mcp.CallToolRequest, bool) {
	if req.Params == nil {
		return req, false
	}
	if _, ok := req.Params.InputResponses[mcpwire.AuthorizeInputKey]; !ok {
		return req, false
	}
	params := *req.Params
	params.InputResponses = maps.Clone(params.InputResponses)
	delete(params.InputResponses, mcpwire.AuthorizeInputKey)
	if len(params.InputResponses) == 0 {
		params.InputResponses = nil
	}
	stripped := *req
	stripped.Params = &params
	return &stripped, true
}
