package mcphttp

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agents-mcp/agents-mcp/router/tasks"
	"github.com/agents-mcp/agents-mcp/router/transport/rest"
	"github.com/agents-mcp/agents-mcp/router/transport/session"
)

// Router is what the HTTP transports need of the router: the MCP server
// go-sdk's transports serve, the one middleware chain for the calls the
// fast path takes past go-sdk's session, the lookups the fast path makes,
// the session events the transports track, and draining. The router
// implements it; this package never imports the router.
type Router interface {
	// CallWithoutSession serves the REST bridge (see [rest.Router]).
	rest.Router

	// Server is the MCP server that go-sdk's transports serve; its
	// receiving middleware is the router's chain. Nothing may add
	// middleware to it here: the router's Use is the one place, so
	// that every entry point runs it.
	Server() *mcp.Server
	// Logger receives the transports' logs unless [Options.Logger] is
	// set.
	Logger() *slog.Logger

	// CallTool runs a tools/call the fast path took, as go-sdk's session
	// would: through the router's whole receiving middleware chain (the
	// middleware added with the router's Use included) around the
	// tool's handler, with go-sdk's error for an unknown tool. The
	// result is what go-sdk would encode as the answer.
	CallTool(ctx context.Context, req *mcp.CallToolRequest) (mcp.Result, error)
	// QuietTool reports whether a call of the named tool, made now by a
	// client that can receive nothing but the answer, can only produce
	// its answer: the tool is an mcpwire.QuietCaller's that reports
	// a quiet call.
	QuietTool(name string) bool

	// ObserveSessions has the router tell o, for as long as the router
	// lives, what happens inside go-sdk's sessions that only its
	// handlers see.
	ObserveSessions(o SessionObserver)

	// Draining reports whether the router refuses new requests.
	Draining() bool
	// TaskBackends are the router's task backends, nil before the first.
	TaskBackends() *tasks.Backends
}

var _ SessionObserver = (*session.Table)(nil)

// SessionObserver is told what happens inside go-sdk's sessions
// (*session.Table is one). Its methods must not block: they run on the
// request's goroutine, for ids of any handler's sessions.
type SessionObserver interface {
	// MarkInitialized: session id completed the initialize handshake
	// (notifications/initialized, or any request after initialize).
	MarkInitialized(id string)
	// MarkLogs: the client of session id asked for log messages
	// (logging/setLevel), which only go-sdk's session relays.
	MarkLogs(id string)
}

// taskListen returns the request as a listen for task ids that the router
// serves itself (see [tasks.ParseListen]), or nil. Its body is the one the
// guard read (or, for a request that did not pass the guard, read again
// from memory and put back).
func (h *Handler) taskListen(req *http.Request) *tasks.ListenRequest {
	if req.Method != http.MethodPost || h.router.TaskBackends() == nil {
		return nil // without a task backend, go-sdk answers (it acks no task ids)
	}
	if body, ok := guardedBodyOf(req); ok {
		return tasks.ParseListen(req, body)
	}
	body, err := io.ReadAll(req.Body)
	req.Body = io.NopCloser(bytes.NewReader(body))
	if err != nil {
		return nil
	}
	return tasks.ParseListen(req, body)
}
