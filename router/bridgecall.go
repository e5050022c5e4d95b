package router

import (
	"context"
	"errors"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/internal/delegation"
	"github.com/agents-mcp/agents-mcp/internal/mcpwire"
	"github.com/agents-mcp/agents-mcp/router/transport/rest"
)

// callWithoutSession is the router's side of the REST bridge
// ([rest.Router.CallWithoutSession]): a client's tools/call without a
// session. The caller is found as accessMiddleware finds it for /mcp: the
// principal that authentication put in the TokenInfo, else the default
// one, which is then subject to Admit (the HTTP rate limit is in front).
// Then the caller's allowlist, the refusal while draining, argument
// validation, the middleware added with [Router.Use], the provider, and
// the record of [Options.OnToolCall] (so the audit trail) apply as they
// do on /mcp.
func (r *Router) callWithoutSession(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	tool, args := req.Params.Name, req.Params.Arguments
	p, own := r.principalOf(req)
	if p != nil {
		ctx = agentsmcp.WithPrincipal(ctx, p)
	}
	if id := requestIDOf(req); id != "" {
		ctx = agentsmcp.WithRequestID(ctx, id)
	}
	// A JWT caller's token, for the HTTP tool sources that act as the
	// caller (ADR 0012 D7b), exactly as over /mcp.
	ctx = delegation.WithDelegatedToken(ctx, delegatedTokenOf(req))
	ctx = withClientCall(ctx, clientCall{profile: restProfile})
	// No MCP client: no revision, nothing it can be asked.
	ctx = mcpwire.WithCapabilities(ctx, mcpwire.Capabilities{})
	ctx = withEntry(ctx, entryBridge)
	mode := r.catalogMode(ctx, req, p)
	ctx = agentsmcp.WithCatalogMode(ctx, mode)
	if !own && p != nil && r.access.Admit != nil && !redispatched(ctx) {
		if ok, wait := r.access.Admit(p); !ok {
			r.recordRefusal(ctx, tool, args, "rate limited")
			return nil, &rest.RateLimited{Wait: wait}
		}
	}
	e, known := r.entry(tool)
	if !known || !r.mayUseInMode(p, mode, tool) {
		if known {
			r.recordRefusal(ctx, tool, args, "not allowed")
		}
		return nil, &rest.UnknownTool{Tools: r.toolNamesFor(p)}
	}
	if !r.drain.enter() {
		return nil, rest.ErrUnavailable
	}
	defer r.drain.done()

	res, refused, err := r.dispatchDirect(ctx, e, req)
	switch {
	case refused != nil:
		return nil, &rest.InvalidArguments{Message: refused.msg, Issues: refused.issues, Missing: refused.missing}
	case isPanic(err):
		return nil, rest.ErrInternal
	case err != nil:
		if qe, ok := errors.AsType[*agentsmcp.CallQuotaError](err); ok {
			return nil, &rest.RateLimited{Wait: qe.RetryAfter}
		}
		if _, ok := errors.AsType[*jsonrpc.Error](err); ok || agentsmcp.ErrorCode(err) == agentsmcp.EQUOTA {
			return nil, err
		}
		// As on the MCP path (toolHandler): any other failure of the
		// provider is a tool-level error result.
		if ctx.Err() != nil {
			return errorResult(fmt.Sprintf("tool %q was cancelled or timed out", tool)), nil
		}
		r.logger.Warn("tool call failed", "tool", tool, "provider", e.provider.Name(), "error", err)
		return errorResult(agentsmcp.ErrorMessage(err)), nil
	}
	return res, nil
}

// toolNamesFor lists, sorted, the tools p may use.
func (r *Router) toolNamesFor(p *agentsmcp.Principal) []string {
	names := []string{}
	for _, t := range r.Tools() {
		if p.MayUseTool(t.Name) {
			names = append(names, t.Name)
		}
	}
	return names
}
