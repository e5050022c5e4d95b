package router

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The middleware chain. A request reaches the router through one of these
// entry points:
//
//   - go-sdk's sessions: streamable HTTP, legacy SSE and stdio, whose
//     receiving middleware go-sdk composes;
//   - the tools/call fast paths of streamable HTTP and legacy SSE
//     (router/transport/mcphttp), which run the same chain outside
//     go-sdk's session, through [transportSide.CallTool];
//   - the entry points without an MCP session, which call a tool directly:
//     the REST bridge (router/transport/rest, through
//     [Router.callWithoutSession]) and in-process calls
//     ([Router.CallTool]).
//
// Every receiving middleware is added through [Router.use], which hands
// it to go-sdk and records it for the others, so that no entry point can
// miss one: the MCP server is not handed out with its
// AddReceivingMiddleware (see [Server]). A group added with
// [Router.Use] runs on every entry point. The router's own groups (the
// revision, drain, access, log-level and tasks middleware) are of
// sessions only: the entry points without a session do what they need of
// them themselves (the REST bridge checks the allowlist, the rate limit
// and draining before it calls) or are exempt by design (in-process calls
// belong to work already running, see [Router.CallTool]).

// middlewareGroup is what one [Router.use] added.
type middlewareGroup struct {
	mw []mcp.Middleware
	// everyEntry: the entry points without a session run it too.
	everyEntry bool
}

// Use adds receiving middleware that every entry point runs: go-sdk's
// sessions over streamable HTTP, legacy SSE and stdio, the tools/call fast
// paths, the REST bridge and in-process calls ([Router.CallTool]). As with
// [mcp.Server.AddReceivingMiddleware], each call wraps what came before,
// and within one call the first middleware is outermost. A panic under
// the group is contained to its request (recover.go).
//
// The entry points without a session give the middleware a tools/call
// whose request has no session: the REST bridge's carries the HTTP
// request's headers and token in [mcp.RequestExtra], an in-process call's
// is the caller's request. For them an error the middleware returns is
// the call's failure (the REST bridge answers 500 unless it is a JSON-RPC
// error, 502; an in-process caller gets it as [Router.CallTool] reports a
// provider's error).
func (r *Router) Use(mw ...mcp.Middleware) { r.use(true, mw...) }

// use adds receiving middleware to the server, as
// [mcp.Server.AddReceivingMiddleware] does, and records it for the
// tools/call fast path, which runs the same chain outside go-sdk's session
// (router/transport/mcphttp), and, if everyEntry, for the entry points without a
// session. Every receiving middleware of the router's server is added
// through use.
//
// Each group starts with [capabilitiesMiddleware], so that whichever
// group go-sdk runs first computes the request's protocol capabilities
// for all of them, and is wrapped in [Router.recoverMiddleware],
// outermost, so that
// the outermost middleware of the chain contains panics whatever group
// is added last (recover.go); the inner ones cost a deferred call each.
func (r *Router) use(everyEntry bool, mw ...mcp.Middleware) {
	mw = append([]mcp.Middleware{capabilitiesMiddleware}, mw...)
	r.server.AddReceivingMiddleware(append([]mcp.Middleware{r.recoverMiddleware}, mw...)...)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.middleware = append(r.middleware, middlewareGroup{mw: mw, everyEntry: everyEntry})
}

// chain wraps h in the groups, as go-sdk composes them: each group wraps
// what came before, and within one the first is outermost; recoverMW
// wraps each group, outermost in it, as [Router.use] has go-sdk do.
func chain(h mcp.MethodHandler, groups []middlewareGroup, recoverMW mcp.Middleware) mcp.MethodHandler {
	for _, g := range groups {
		for _, m := range slices.Backward(g.mw) {
			h = m(h)
		}
		h = recoverMW(h)
	}
	return h
}

// fastHandler is the router's receiving middleware around its tools/call
// handler, composed as go-sdk composes it (see [chain]).
func (r *Router) fastHandler() mcp.MethodHandler {
	r.mu.RLock()
	c := r.fastChain
	n := len(r.middleware)
	r.mu.RUnlock()
	if c.handler != nil && c.n == n {
		return c.handler
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	h := chain(r.callToolAsSDK, r.middleware, r.recoverMiddleware)
	r.fastChain = fastChain{n: len(r.middleware), handler: h}
	return h
}

// fastChain caches [Router.fastHandler] for a count of use calls.
type fastChain struct {
	n       int
	handler mcp.MethodHandler
}

// dispatchDirect is [Router.dispatch] for the entry points without a
// session (the REST bridge, in-process calls), under the groups that
// every entry point runs. Without such groups it is dispatch itself.
func (r *Router) dispatchDirect(ctx context.Context, e *toolEntry, req *mcp.CallToolRequest) (*mcp.CallToolResult, *refusal, error) {
	r.mu.RLock()
	var groups []middlewareGroup
	for _, g := range r.middleware {
		if g.everyEntry {
			groups = append(groups, g)
		}
	}
	r.mu.RUnlock()
	if len(groups) == 0 {
		return r.dispatch(ctx, e, req)
	}
	var refused *refusal
	h := chain(func(ctx context.Context, _ string, mreq mcp.Request) (mcp.Result, error) {
		call, ok := mreq.(*mcp.CallToolRequest)
		if !ok || call.Params == nil {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "a middleware replaced the tools/call request"}
		}
		res, ref, err := r.dispatch(ctx, e, call)
		if ref != nil {
			refused = ref
			return nil, errRefused
		}
		if err != nil {
			return nil, err
		}
		return res, nil
	}, groups, r.recoverDirect)
	res, err := h(ctx, "tools/call", req)
	if refused != nil && errors.Is(err, errRefused) {
		return nil, refused, nil
	}
	if err != nil {
		return nil, nil, err
	}
	out, ok := res.(*mcp.CallToolResult)
	if !ok || out == nil {
		return nil, nil, fmt.Errorf("a middleware answered tools/call with %T", res)
	}
	return out, nil, nil
}

// recoverDirect is [Router.recoverMiddleware] for the entry points
// without a session: a panic is the call's [*panicError], which they
// report as an internal error (the REST bridge 500, an in-process caller
// EINTERNAL).
func (r *Router) recoverDirect(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (res mcp.Result, err error) {
		defer func() {
			if v := recover(); v != nil {
				pe := recovered(v)
				logPanic(r.logger, pe, "method", method, "in", "middleware")
				res, err = nil, pe
			}
		}()
		return next(ctx, method, req)
	}
}

// errRefused is what the middleware of an entry point without a session
// sees of a call refused for its arguments; the entry point reports the
// refusal itself.
var errRefused = &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "invalid arguments"}
