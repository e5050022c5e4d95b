package router

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"slices"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/trace"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/internal/delegation"
	"github.com/agents-mcp/agents-mcp/internal/tracing"
	"github.com/agents-mcp/agents-mcp/router/internal/rpcerror"
)

// This file is who may do what over MCP. Credentials are checked in front
// of the HTTP transports (api/auth), which hands each request's
// [agentsmcp.Principal] down in its auth.TokenInfo; the router applies the
// principal's tool allowlist and, for transports with no HTTP layer
// (stdio), its rate limit.

// AccessOptions configure access control; see [Options.Access].
type AccessOptions struct {
	// Default is the principal of requests that carry none: those of stdio
	// (the key given through the environment), or every request when no
	// credentials are configured (nil: no restriction).
	Default *agentsmcp.Principal
	// Admit, if set, is asked before serving each request that carries no
	// credentials of its own (stdio): false refuses it with
	// [CodeRateLimited], saying to retry after retryAfter. HTTP requests
	// are rate limited in front of the transports instead.
	Admit func(p *agentsmcp.Principal) (ok bool, retryAfter time.Duration)
	// VirtualServer is the virtual server served to requests that come
	// through no HTTP layer (stdio's --server); "" serves the whole
	// catalog.
	VirtualServer string
}

// CodeRateLimited is the JSON-RPC error code of a request refused by a rate
// limit; its data is {"retryAfterMs": N}.
const CodeRateLimited = -32029

// CodeQuotaExceeded is the JSON-RPC error code of a request refused
// because its principal's quota is used up (the task ids its listen
// streams watch); the message names the quota and its setting. Waiting
// does not help: the principal must release some of what it holds.
const CodeQuotaExceeded = rpcerror.CodeQuotaExceeded

// principalOf returns the caller of req and whether it came with the
// request's own credentials.
func (r *Router) principalOf(req mcp.Request) (p *agentsmcp.Principal, own bool) {
	if extra := req.GetExtra(); extra != nil && extra.TokenInfo != nil {
		if p, ok := extra.TokenInfo.Extra[agentsmcp.TokenInfoPrincipal].(*agentsmcp.Principal); ok {
			return p, true
		}
	}
	return r.access.Default, false
}

// delegatedTokenOf returns the token a JWT caller authenticated req with
// (authentication hands it down in the TokenInfo; ADR 0012 D7b), or nil.
func delegatedTokenOf(req mcp.Request) *delegation.DelegatedToken {
	if extra := req.GetExtra(); extra != nil && extra.TokenInfo != nil {
		t, _ := extra.TokenInfo.Extra[delegation.TokenInfoDelegatedToken].(*delegation.DelegatedToken)
		return t
	}
	return nil
}

// requestIDOf returns the id of an HTTP request (the header set or checked
// by the HTTP layer), or "".
func requestIDOf(req mcp.Request) string {
	if extra := req.GetExtra(); extra != nil && extra.Header != nil {
		return extra.Header.Get(agentsmcp.RequestIDHeader)
	}
	return ""
}

// requestTraceContext replaces the trace context of ctx with the one in
// h, a request's headers. The handler's context may carry the span of the
// request that opened the session: this request's trace is in its own
// headers (the HTTP layer put its span there). Both steps are free when
// there is nothing to drop and nothing to extract, as with tracing off and
// callers that send no trace context (tracing.HeaderCarrier).
func requestTraceContext(ctx context.Context, h http.Header) context.Context {
	if trace.SpanContextFromContext(ctx).IsValid() {
		ctx = trace.ContextWithSpanContext(ctx, trace.SpanContext{})
	}
	return otel.GetTextMapPropagator().Extract(ctx, tracing.HeaderCarrier(h))
}

// accessMiddleware puts the caller and the request id in the context of
// every request, refuses what the caller may not do, and hides from
// listings the tools, resources, resource templates and prompts its
// allowlist does not admit (see [agentsmcp.Principal]).
func (r *Router) accessMiddleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if method != "initialize" {
			// A client that works in its session has initialized it, even
			// if it never sent notifications/initialized (go-sdk serves
			// it): the reaper of unfinished sessions must leave it alone.
			if ss, ok := req.GetSession().(*mcp.ServerSession); ok && ss != nil {
				r.sessionInitialized(ss.ID())
			}
		}
		p, own := r.principalOf(req)
		if p != nil {
			ctx = agentsmcp.WithPrincipal(ctx, p)
		}
		mode := r.catalogMode(ctx, req, p)
		ctx = agentsmcp.WithCatalogMode(ctx, mode)
		if id := requestIDOf(req); id != "" {
			ctx = agentsmcp.WithRequestID(ctx, id)
		}
		if extra := req.GetExtra(); extra != nil && extra.Header != nil {
			ctx = requestTraceContext(ctx, extra.Header)
		}
		if !own && p != nil && r.access.Admit != nil && !isNotification(method) && !redispatched(ctx) {
			if ok, wait := r.access.Admit(p); !ok {
				if call, isCall := req.(*mcp.CallToolRequest); isCall && call.Params != nil {
					r.recordRefusal(ctx, call.Params.Name, call.Params.Arguments, "rate limited")
				}
				return nil, rateLimited(wait)
			}
		}
		// Only a tool call gets the caller's delegable token, and only the
		// one this request came with: the handler's context may descend
		// from the request that opened the session, whose token is hidden.
		ctx = delegation.WithDelegatedToken(ctx, nil)
		switch req := req.(type) {
		case *mcp.CallToolRequest:
			ctx = delegation.WithDelegatedToken(ctx, delegatedTokenOf(req))
			// The client's profile shapes the result (toolHandler) and is
			// recorded with the call, refused or not.
			ctx = withClientCall(ctx, profileOf(ctx, req))
			if req.Params != nil && !r.mayUseInMode(p, mode, req.Params.Name) {
				r.recordRefusal(ctx, req.Params.Name, req.Params.Arguments, "not allowed")
				return nil, notAllowed(req.Params.Name)
			}
		case *mcp.ListToolsRequest:
			res, err := next(ctx, method, req)
			if lr, ok := res.(*mcp.ListToolsResult); ok && err == nil && mode == agentsmcp.CatalogDiscovery {
				// go-sdk's page, for what go-sdk sets on it (the cache
				// hints of 2026-07-28), with the discovery list in one page.
				lr.Tools, lr.NextCursor = r.discoveryList(p).Tools, ""
				r.countListing(mode, lr)
				return lr, nil
			}
			if lr, ok := res.(*mcp.ListToolsResult); ok && err == nil && p.Restricted() {
				lr.Tools = visible(lr.Tools, func(t *mcp.Tool) bool { return p.MayUseTool(t.Name) })
			}
			if lr, ok := res.(*mcp.ListToolsResult); ok && err == nil {
				r.countListing(mode, lr)
			}
			return res, err
		case *mcp.ListResourcesRequest:
			res, err := next(ctx, method, req)
			if lr, ok := res.(*mcp.ListResourcesResult); ok && err == nil && p.Restricted() {
				lr.Resources = visible(lr.Resources, func(res *mcp.Resource) bool { return mayUseResource(p, res.URI) })
			}
			return res, err
		case *mcp.ListResourceTemplatesRequest:
			res, err := next(ctx, method, req)
			if lr, ok := res.(*mcp.ListResourceTemplatesResult); ok && err == nil && p.Restricted() {
				lr.ResourceTemplates = visible(lr.ResourceTemplates, func(t *mcp.ResourceTemplate) bool { return mayUseResource(p, t.URITemplate) })
			}
			return res, err
		case *mcp.ListPromptsRequest:
			res, err := next(ctx, method, req)
			if lr, ok := res.(*mcp.ListPromptsResult); ok && err == nil && p.Restricted() {
				lr.Prompts = visible(lr.Prompts, func(pr *mcp.Prompt) bool { return mayUsePrompt(p, pr.Name) })
			}
			return res, err
		case *mcp.ReadResourceRequest:
			if req.Params != nil && !mayUseResource(p, req.Params.URI) {
				r.recordDenied(ctx, method, req.Params.URI)
				// The SDK's answer for a URI it does not know.
				return nil, mcp.ResourceNotFoundError(req.Params.URI)
			}
		case *mcp.SubscribeRequest:
			if req.Params != nil && !mayUseResource(p, req.Params.URI) {
				r.recordDenied(ctx, method, req.Params.URI)
				// The SDK accepts a subscription to any URI, known or
				// not: accept this one too, but record no subscription,
				// so no update about it ever reaches the caller.
				return &emptyResult{}, nil
			}
		case *mcp.SubscriptionsListenRequest:
			// The protocol's newer subscriptions (2026-07-28): the SDK
			// subscribes to each URI listed, bypassing this middleware.
			// Keep the admitted ones; the acknowledgement lists only
			// those, and nothing about the others reaches the caller.
			if req.Params != nil && req.Params.Notifications != nil && p.Restricted() {
				want := req.Params.Notifications.ResourceSubscriptions
				var admitted []string
				for _, uri := range want {
					if mayUseResource(p, uri) {
						admitted = append(admitted, uri)
					} else {
						r.recordDenied(ctx, method, uri)
					}
				}
				if len(admitted) != len(want) {
					params, subs := *req.Params, *req.Params.Notifications
					subs.ResourceSubscriptions = admitted
					params.Notifications = &subs
					req.Params = &params
				}
			}
		case *mcp.GetPromptRequest:
			if req.Params != nil && !mayUsePrompt(p, req.Params.Name) {
				r.recordDenied(ctx, method, req.Params.Name)
				// The SDK's answer for a prompt it does not know.
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("unknown prompt %q", req.Params.Name)}
			}
		}
		// completion/complete is checked by [Router.complete], after the
		// SDK has validated its params.
		return next(ctx, method, req)
	}
}

// visible returns the items of a listing that allowed admits.
func visible[T any](items []*T, allowed func(*T) bool) []*T {
	return slices.DeleteFunc(slices.Clone(items), func(item *T) bool { return !allowed(item) })
}

// emptyResult is the result of a method that returns nothing.
type emptyResult struct{ mcp.ResultBase }

// notAllowed is the error of a call to a tool outside the caller's
// allowlist: "invalid params", as for an unknown tool, since the tool does
// not exist for this caller.
func notAllowed(tool string) error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("tool %q is not allowed for this credential", tool)}
}

func rateLimited(wait time.Duration) error {
	ms := int64(math.Ceil(float64(wait) / float64(time.Millisecond)))
	data, _ := json.Marshal(map[string]int64{"retryAfterMs": ms})
	return &jsonrpc.Error{Code: CodeRateLimited, Message: fmt.Sprintf("rate limit exceeded; retry after %s", wait.Round(time.Millisecond)), Data: data}
}

// recordRefusal tells [Options.OnToolCall] about a call refused before its
// provider.
func (r *Router) recordRefusal(ctx context.Context, tool string, args json.RawMessage, why string) {
	if r.onToolCall == nil {
		return
	}
	rec := callRecord(ctx, tool, args)
	rec.Refused = why
	r.onToolCall(rec)
}

// recordDenied tells [Options.OnToolCall] about a request for a resource,
// resource template or prompt that the caller's allowlist does not admit:
// method is the request's method, target the URI or prompt name.
func (r *Router) recordDenied(ctx context.Context, method, target string) {
	if r.onToolCall == nil {
		return
	}
	rec := callRecord(ctx, target, nil)
	rec.Method = method
	rec.Refused = "not allowed"
	r.onToolCall(rec)
}

// callRecord starts the record of a call from what ctx says of its caller.
func callRecord(ctx context.Context, tool string, args json.RawMessage) ToolCallRecord {
	rec := ToolCallRecord{
		Tool: tool, Arguments: args, Principal: agentsmcp.PrincipalIDFrom(ctx),
		RequestID: agentsmcp.RequestIDFrom(ctx), Transport: agentsmcp.TransportFrom(ctx),
	}
	if c, ok := clientCallFrom(ctx); ok {
		rec.Client, rec.ClientVersion, rec.ClientProfile = c.name, c.version, c.profile.ID
	}
	return rec
}

// mayUse reports whether the caller in ctx may see and call tool.
func mayUse(ctx context.Context, tool string) bool {
	return agentsmcp.PrincipalFrom(ctx).MayUseTool(tool)
}
