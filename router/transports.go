package router

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agents-mcp/agents-mcp/internal/mcpwire"
	"github.com/agents-mcp/agents-mcp/router/internal/rpcerror"
	"github.com/agents-mcp/agents-mcp/router/tasks"
	"github.com/agents-mcp/agents-mcp/router/transport"
	"github.com/agents-mcp/agents-mcp/router/transport/mcphttp"
	"github.com/agents-mcp/agents-mcp/router/transport/rest"
	"github.com/agents-mcp/agents-mcp/router/transport/session"
)

// The transports live under router/transport: the HTTP face
// (router/transport/mcphttp, with the tools/call fast path), legacy SSE
// (router/transport/sse), the REST bridge (router/transport/rest), the
// sessions of the HTTP transports (router/transport/session) and stdio
// (router/transport). None of them imports this package: each defines
// what it needs of the router as an interface ([mcphttp.Router],
// [rest.Router]), which [transportSide] implements. This file wires them
// and gives them the names the router's API has always had.

// HTTPOptions configure [Router.HTTPHandler] (see [mcphttp.Options]).
type HTTPOptions = mcphttp.Options

// HTTPHandler serves the MCP HTTP endpoints of one [Router] (see
// [mcphttp.Handler]).
type HTTPHandler = mcphttp.Handler

// JSONRPCGuard checks POSTed JSON-RPC before go-sdk's streamable transport
// (see [mcphttp.JSONRPCGuard]).
type JSONRPCGuard = mcphttp.JSONRPCGuard

// HTTPHandler builds the HTTP face of r: /mcp, /sse and /messages, and the
// REST bridge (see [mcphttp.Handler]).
func (r *Router) HTTPHandler(opts HTTPOptions) *HTTPHandler {
	if opts.AdmitVirtual == nil {
		opts.AdmitVirtual = r.admitsVirtual
	}
	opts.SessionIDs = &r.sessionIDs
	if opts.RefuseCall == nil && r.callQuotas != nil {
		opts.RefuseCall = r.callQuotaRefusal
	}
	return mcphttp.New(transportSide{r}, opts)
}

// Bounds of the HTTP transports.
const (
	// DefaultMaxBodyBytes bounds one HTTP request body on every MCP
	// endpoint.
	DefaultMaxBodyBytes = mcphttp.DefaultMaxBodyBytes
	// DefaultMaxBatchMessages bounds one JSON-RPC batch.
	DefaultMaxBatchMessages = mcphttp.DefaultMaxBatchMessages
	// DefaultMaxSessionsPerPrincipal bounds the sessions one principal
	// holds open at once.
	DefaultMaxSessionsPerPrincipal = session.DefaultMaxPerPrincipal
	// DefaultSessionInitTimeout is how long a new session may take to
	// complete the initialize handshake before it is closed.
	DefaultSessionInitTimeout = session.DefaultInitTimeout
)

// StdioTransport serves MCP over stdin/stdout, answering what it read
// before stdin ended (see [transport.StdioTransport]).
type StdioTransport = transport.StdioTransport

// RebindingProtection rejects requests that a web page could have sent
// through DNS rebinding or cross-site (see [transport.RebindingProtection]).
type RebindingProtection = transport.RebindingProtection

// WriteJSONRPCError writes a JSON-RPC error response as an HTTP response.
// A zero id is written as null, as JSON-RPC requires when the request's id
// is unknown.
func WriteJSONRPCError(w http.ResponseWriter, status int, id jsonrpc.ID, code int, msg string) {
	rpcerror.Write(w, status, id, code, msg)
}

// The REST bridge (see package router/transport/rest).

// RESTBridgePath is where [HTTPHandler] serves the REST bridge.
const RESTBridgePath = rest.Path

type (
	// BridgeRequest is the body of POST /mcp-json.
	BridgeRequest = rest.BridgeRequest
	// BridgeResult is the answer of POST /mcp-json when the tool ran.
	BridgeResult = rest.BridgeResult
	// BridgeError is the body of every other answer of POST /mcp-json.
	BridgeError = rest.BridgeError
)

// The error codes of [BridgeError].
const (
	BridgeMethodNotAllowed = rest.BridgeMethodNotAllowed
	BridgeUnsupportedType  = rest.BridgeUnsupportedType
	BridgeTooLarge         = rest.BridgeTooLarge
	BridgeMalformed        = rest.BridgeMalformed
	BridgeInvalidParams    = rest.BridgeInvalidParams
	BridgeUnknownTool      = rest.BridgeUnknownTool
	BridgeRateLimited      = rest.BridgeRateLimited
	BridgeQuotaExceeded    = rest.BridgeQuotaExceeded
	BridgeUpstreamError    = rest.BridgeUpstreamError
	BridgeUnavailable      = rest.BridgeUnavailable
	BridgeInternal         = rest.BridgeInternal
)

// transportSide is the router as its transports see it.
type transportSide struct{ r *Router }

var (
	_ mcphttp.Router = transportSide{}
	_ rest.Router    = transportSide{}
)

func (t transportSide) Server() *mcp.Server  { return t.r.server }
func (t transportSide) Logger() *slog.Logger { return t.r.logger }
func (t transportSide) Draining() bool       { return t.r.Draining() }

func (t transportSide) TaskBackends() *tasks.Backends { return t.r.taskBackendsOrNil() }

func (t transportSide) CallTool(ctx context.Context, req *mcp.CallToolRequest) (mcp.Result, error) {
	return t.r.fastHandler()(ctx, "tools/call", req)
}

func (t transportSide) QuietTool(name string) bool {
	e, ok := t.r.entry(name)
	if !ok {
		return false
	}
	q, ok := e.provider.(mcpwire.QuietCaller)
	return ok && q.QuietCall(name)
}

func (t transportSide) ObserveSessions(o mcphttp.SessionObserver) { t.r.observeSessions(o) }

func (t transportSide) CallWithoutSession(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	return t.r.callWithoutSession(ctx, req)
}

// callToolAsSDK is what go-sdk's server does for tools/call under the
// middleware: the registered handler of the tool (the router registers
// toolHandler for each entry), go-sdk's error for an unknown one, and an
// empty content list rather than null. go-sdk's handling of a result that
// asks for input (input_required, which it turns into requests to a 2025
// client) is left out: no call the fast path takes produces one, because
// the router offers authorization that way only to clients that declared
// elicitation (mcpwire.OfferAuthorization), and a quiet provider relays
// no upstream's input_required.
func (r *Router) callToolAsSDK(ctx context.Context, _ string, req mcp.Request) (mcp.Result, error) {
	call := req.(*mcp.CallToolRequest)
	e, ok := r.entry(call.Params.Name)
	if !ok {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("unknown tool %q", call.Params.Name)}
	}
	res, err := r.toolHandler(e)(ctx, call)
	if err == nil && res != nil && res.Content == nil {
		res2 := *res
		res2.Content = []mcp.Content{}
		res = &res2
	}
	return res, err
}

// sessionObservers are told what happens inside go-sdk's sessions (see
// [mcphttp.SessionObserver]); the HTTP handlers' session tables are.
type sessionObservers struct {
	list atomic.Pointer[[]mcphttp.SessionObserver] // copied on write
}

// observeSessions adds o for the router's life.
func (r *Router) observeSessions(o mcphttp.SessionObserver) {
	for {
		old := r.observers.list.Load()
		var next []mcphttp.SessionObserver
		if old != nil {
			next = append(next, *old...)
		}
		next = append(next, o)
		if r.observers.list.CompareAndSwap(old, &next) {
			return
		}
	}
}

// sessionInitialized tells the observers that session id completed the
// initialize handshake.
func (r *Router) sessionInitialized(id string) {
	if l := r.observers.list.Load(); l != nil {
		for _, o := range *l {
			o.MarkInitialized(id)
		}
	}
}

// logLevelMiddleware records, before go-sdk applies it, that a client asked
// for log messages in its session: the fast path then leaves its calls to
// go-sdk, which relays an upstream's log messages on the call's stream.
func (r *Router) logLevelMiddleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if method == "logging/setLevel" {
			if ss, ok := req.GetSession().(*mcp.ServerSession); ok && ss != nil {
				if l := r.observers.list.Load(); l != nil {
					for _, o := range *l {
						o.MarkLogs(ss.ID())
					}
				}
			}
		}
		return next(ctx, method, req)
	}
}
