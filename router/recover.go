package router

import (
	"context"
	"log/slog"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agents-mcp/agents-mcp/router/internal/panicerr"
)

// Panics. go-sdk runs each request's handler on a goroutine of its own, with
// no recover: a panic anywhere under a handler (a tool, a validator, our
// middleware) ended the whole process. So every goroutine that
// handles a request contains a panic to that request, which gets an
// internal error, and logs it at ERROR with its stack:
//
//   - tool calls, on every path (MCP, the fast paths, the REST bridge,
//     in-process calls): [Router.dispatch] recovers around validation and
//     the provider, and the call answers -32603 (the bridge 500, an
//     in-process caller EINTERNAL);
//   - every method on go-sdk's goroutines: [Router.use] puts
//     [Router.recoverMiddleware] outermost in each group of middleware,
//     so whatever group comes last, a panic under it answers -32603;
//   - the tools/call fast paths: the fast path (router/transport/mcphttp) answers -32603 for the
//     call's id, and the legacy SSE session's goroutine that runs it
//     (router/transport/sse) logs anything left;
//   - HTTP handlers run on net/http's goroutines, which recover a panic
//     themselves by closing the connection.

// panicError is a panic recovered while serving one request (see
// package router/internal/panicerr, which the transports share).
type panicError = panicerr.Error

// recovered wraps v, a value recover returned, with the stack of the
// panic; it must be called in the deferred function that recovered.
func recovered(v any) *panicError { return panicerr.Recovered(v) }

// logPanic logs e at ERROR, with attrs saying which request panicked.
func logPanic(logger *slog.Logger, e *panicError, attrs ...any) { panicerr.Log(logger, e, attrs...) }

// isPanic reports whether err is a recovered panic.
func isPanic(err error) bool { return panicerr.Is(err) }

// internalError is the JSON-RPC error of a request whose handler panicked.
func internalError() *jsonrpc.Error { return panicerr.Internal() }

// recoverMiddleware answers a panic under it as -32603 for that request
// (a notification gets nothing, as always) and logs it.
func (r *Router) recoverMiddleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (res mcp.Result, err error) {
		defer func() {
			if v := recover(); v != nil {
				logPanic(r.logger, recovered(v), "method", method)
				res, err = nil, internalError()
			}
		}()
		return next(ctx, method, req)
	}
}
