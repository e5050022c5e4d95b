package router

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agents-mcp/agents-mcp/internal/mcpwire"
)

// capabilitiesMiddleware is the edge of go-sdk's sessions (streamable
// HTTP, legacy SSE, stdio, sessionless requests): it computes the
// protocol capabilities of the request's client once
// ([mcpwire.RequestCapabilities]) and puts them in the context, where
// the router, its providers and the tools read them. [Router.use] puts it
// at the head of every group, since go-sdk runs the group added last
// first; the first to run computes, the others find them there. The
// entry points outside go-sdk put their own in the context before the
// chain runs: the fast paths (router/transport/mcphttp), the REST bridge
// ([Router.callWithoutSession]) and in-process calls ([Router.CallTool]).
func capabilitiesMiddleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if _, ok := mcpwire.CapabilitiesFrom(ctx); !ok {
			ctx = mcpwire.WithCapabilities(ctx, mcpwire.RequestCapabilities(req))
		}
		return next(ctx, method, req)
	}
}

// capabilitiesOf returns the protocol capabilities of the client of the
// request in ctx (see [capabilitiesMiddleware]).
func capabilitiesOf(ctx context.Context, req mcp.Request) mcpwire.Capabilities {
	return mcpwire.CallCapabilities(ctx, req)
}
