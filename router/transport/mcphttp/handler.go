// Package mcphttp is the router's HTTP face: the MCP endpoints /mcp
// (streamable HTTP, stateful and stateless), /sse and /messages (legacy
// HTTP+SSE, router/transport/sse), the compatibility POST /sse, and the
// REST bridge (router/transport/rest), behind DNS-rebinding protection,
// the caller's authentication and the JSON-RPC guard; the tools/call fast
// path (ADR 0014) beside go-sdk's session for the common relayed call;
// and the sessions of those transports (router/transport/session).
//
// It reaches the router through [Router], which the router implements
// and wires (the router's HTTPHandler): it never imports the router.
package mcphttp

import (
	"cmp"
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agents-mcp/agents-mcp/router/internal/pending"
	"github.com/agents-mcp/agents-mcp/router/tasks"
	"github.com/agents-mcp/agents-mcp/router/transport"
	"github.com/agents-mcp/agents-mcp/router/transport/rest"
	"github.com/agents-mcp/agents-mcp/router/transport/session"
	"github.com/agents-mcp/agents-mcp/router/transport/sse"
)

// DefaultMaxBodyBytes bounds one HTTP request body on every MCP endpoint.
const DefaultMaxBodyBytes = 4 << 20

// DefaultMaxBatchMessages bounds one JSON-RPC batch. Clients that batch
// (protocol 2025-03-26 and older) send a handful of messages at once; a
// bound keeps one POST from queueing thousands of calls.
const DefaultMaxBatchMessages = 32

// Options configure [New].
type Options struct {
	// Stateless serves /mcp without sessions: every POST is a complete
	// exchange and server→client requests (sampling, elicitation) are
	// unavailable. Required behind a load balancer without session affinity.
	// Without it, /mcp is stateful, and requests of the sessionless protocol
	// (2026-07-28 and later) are still served statelessly.
	Stateless bool
	// MaxBodyBytes bounds request bodies; zero means [DefaultMaxBodyBytes].
	MaxBodyBytes int64
	// SessionTimeout closes stateful /mcp sessions idle for this long, so
	// clients that vanish without DELETE do not leak sessions. Zero means 30
	// minutes; negative disables the timeout.
	SessionTimeout time.Duration
	// MaxSessionsPerPrincipal bounds the sessions (streamable and legacy
	// SSE together) one principal holds open; a request that would open
	// one more is answered 429. Zero means
	// [session.DefaultMaxPerPrincipal].
	MaxSessionsPerPrincipal int
	// SessionInitTimeout closes a session that has not completed the
	// initialize handshake this long after it opened; zero means
	// [session.DefaultInitTimeout].
	SessionInitTimeout time.Duration
	// AllowedHosts and AllowedOrigins widen DNS-rebinding protection; see
	// [transport.RebindingProtection].
	AllowedHosts, AllowedOrigins []string
	// Authenticate, if set, wraps every endpoint after DNS-rebinding
	// protection (so a forged Host is refused before credentials are even
	// looked at) and before the JSON-RPC guard.
	Authenticate func(http.Handler) http.Handler
	// TaskHub, if set, wakes the subscriptions/listen streams for task ids
	// as soon as a task of this replica changes; without it they see
	// changes at their next poll only. Its owner closes it at shutdown.
	TaskHub *tasks.TaskHub
	// TaskPollInterval is how often the tasks those streams watch are
	// read (once per task, whatever the number of streams); zero means
	// [tasks.DefaultTaskPollInterval].
	TaskPollInterval time.Duration
	// TaskPollMaxInterval bounds the backoff of a watched task that waits
	// for its user (input_required); zero means
	// [tasks.DefaultTaskPollMaxInterval]. Less than TaskPollInterval means no
	// backoff.
	TaskPollMaxInterval time.Duration
	// MaxListenTaskIDsPerPrincipal bounds the distinct task ids the
	// listen streams of one principal watch at once; zero means
	// [tasks.DefaultMaxListenTaskIDsPerPrincipal], negative means no bound.
	MaxListenTaskIDsPerPrincipal int
	// ChargeListen, if set, is called for each subscriptions/listen
	// stream for task ids with the number of its ids beyond the first:
	// Authenticate's rate limit charged the request once, and each id
	// costs reads. It reports false after writing the refusal.
	ChargeListen func(w http.ResponseWriter, r *http.Request, extra int) bool
	// MaxBatchMessages bounds the messages of one JSON-RPC batch (protocol
	// versions before 2025-06-18 allow batches); zero means
	// [DefaultMaxBatchMessages].
	MaxBatchMessages int
	// ChargeBatch, if set, is called for each batch that passed the guard
	// with the number of its messages beyond the first: Authenticate's rate
	// limit charged the HTTP request once, and each message of a batch is a
	// request of its own. It reports false after writing the refusal.
	ChargeBatch func(w http.ResponseWriter, r *http.Request, extra int) bool
	Logger      *slog.Logger
}

// Handler serves the MCP HTTP endpoints of one [Router]:
//
//   - /mcp: streamable HTTP (POST, GET, DELETE);
//   - /sse and /messages: legacy HTTP+SSE (GET /sse opens the stream, POSTs go
//     to /messages?sessionId=…);
//   - POST /sse without a session: one JSON-RPC request answered with a plain
//     JSON-RPC response, for clients of the original Agents MCP Server;
//   - POST /mcp-json: the REST bridge, one tool call without a session (see
//     [rest.BridgeRequest]).
//
// Every endpoint is behind DNS-rebinding protection and a body-size limit.
// On /mcp, malformed JSON-RPC is answered with proper JSON-RPC errors (see
// [JSONRPCGuard]) rather than the SDK's plain-text 400s.
type Handler struct {
	router Router
	mux    *http.ServeMux
	sse    *sse.Handler
	posts  pending.Counter // POSTs being served on /mcp and POST /sse
	// listen serves subscriptions/listen for task ids (router/tasks);
	// listens counts its streams, which are not answers Shutdown waits
	// for but streams it ends.
	listen  *tasks.Listener
	listens pending.Counter
	fast    *fastPath
	table   *session.Table
}

// New builds the HTTP face of r.
func New(r Router, opts Options) *Handler {
	logger := opts.Logger
	if logger == nil {
		logger = r.Logger()
	}
	maxBody := opts.MaxBodyBytes
	if maxBody == 0 {
		maxBody = DefaultMaxBodyBytes
	}
	timeout := opts.SessionTimeout
	if timeout == 0 {
		timeout = 30 * time.Minute
	} else if timeout < 0 {
		timeout = 0
	}
	server := r.Server()
	getServer := func(*http.Request) *mcp.Server { return server }
	table := session.NewTable()
	r.ObserveSessions(table)
	stateless := mcp.NewStreamableHTTPHandler(getServer, &mcp.StreamableHTTPOptions{
		Stateless:                  true,
		Logger:                     logger,
		MaxRequestBodyBytes:        maxBody,
		DisableLocalhostProtection: true, // RebindingProtection covers it, configurably
	})
	var main http.Handler
	var events mcp.EventStore // for stateful /mcp only
	if !opts.Stateless {
		events = transport.NewEventStore(transport.EventStoreMaxBytes, transport.EventStoreMaxStreams)
		main = mcp.NewStreamableHTTPHandler(getServer, &mcp.StreamableHTTPOptions{
			Logger:              logger,
			MaxRequestBodyBytes: maxBody,
			// The idle timeout is session.Table's (Idle below), so that
			// POSTs the fast path serves count as activity too.
			EventStore:                 events, // lets clients resume a broken stream
			DisableLocalhostProtection: true,
		})
	}
	// Stateless /mcp never reaches fast.serve; legacy SSE sessions are
	// stateful either way.
	fast := newFastPath(r, table, events)
	// The compatibility endpoint wants a plain JSON body, never a stream.
	compat := mcp.NewStreamableHTTPHandler(getServer, &mcp.StreamableHTTPOptions{
		Stateless:                  true,
		JSONResponse:               true,
		Logger:                     logger,
		MaxRequestBodyBytes:        maxBody,
		DisableLocalhostProtection: true,
	})

	limits := session.Limits{
		Table: table, Server: server,
		Max:         cmp.Or(opts.MaxSessionsPerPrincipal, session.DefaultMaxPerPrincipal),
		InitTimeout: cmp.Or(opts.SessionInitTimeout, session.DefaultInitTimeout),
		Idle:        timeout,
	}
	poll := cmp.Or(opts.TaskPollInterval, tasks.DefaultTaskPollInterval)
	maxIDs := cmp.Or(opts.MaxListenTaskIDsPerPrincipal, tasks.DefaultMaxListenTaskIDsPerPrincipal)
	h := &Handler{router: r, table: table, listen: tasks.NewListener(tasks.ListenerOptions{
		Hub: opts.TaskHub, Charge: opts.ChargeListen, Logger: logger,
		Poll: poll, MaxPoll: cmp.Or(opts.TaskPollMaxInterval, tasks.DefaultTaskPollMaxInterval), MaxPerPrincipal: max(maxIDs, 0),
		Draining: r.Draining, Backends: r.TaskBackends,
	})}
	guard := &JSONRPCGuard{MaxBodyBytes: maxBody, MaxBatchMessages: opts.MaxBatchMessages, ChargeBatch: opts.ChargeBatch}
	mcpEndpoint := guard.Wrap(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if lr := h.taskListen(req); lr != nil {
			// A stream that polls up to MaxListenTaskIDs tasks takes one
			// of its principal's session slots while it is open.
			owner := session.Owner(req)
			if !limits.Reserve(w, owner) {
				return
			}
			defer limits.Cancel(owner)
			defer h.listens.Add()()
			h.listen.Serve(w, req, lr)
			return
		}
		if req.Method == http.MethodPost {
			// A POST answers its calls in its own response: shutdown waits
			// for it to return rather than cutting the answer off.
			defer h.posts.Add()()
		}
		if opts.Stateless || usesSessionlessProtocol(req) {
			stateless.ServeHTTP(w, req)
			return
		}
		switch {
		case req.Method == http.MethodPost:
			if body, ok := guardedBodyOf(req); ok {
				if fast.serve(w, req, body) {
					return
				}
				fast.cancelFrom(req, body)
			}
		case req.Method == http.MethodGet && req.Header.Get("Last-Event-ID") != "":
			fast.awaitResumed(req)
		}
		// Only stateful streams are resumable, so only they are primed.
		limits.ServeStateful(main, transport.PrimingWriter{ResponseWriter: w}, req)
	}))
	compatEndpoint := guard.Wrap(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		// A browser sends a cross-origin POST without a preflight only as
		// a form or text/plain: from a page (it has an Origin), only JSON
		// is taken, so that another page on localhost cannot call tools.
		if req.Header.Get("Origin") != "" && !rest.IsJSON(req.Header.Get("Content-Type")) {
			WriteJSONRPCError(w, http.StatusUnsupportedMediaType, jsonrpc.ID{}, jsonrpc.CodeInvalidRequest,
				"Invalid Request: a request from a web page must be sent with Content-Type: application/json")
			return
		}
		// Clients of the original server send neither the Accept header the
		// streamable transport insists on nor, sometimes, a Content-Type.
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Content-Type", "application/json")
		defer h.posts.Add()()
		compat.ServeHTTP(w, req)
	}))
	sseHandler := sse.NewHandler(getServer, &sse.Options{
		MessagesPath:        "/messages",
		MaxRequestBodyBytes: maxBody,
		Logger:              logger,
		OnSessionlessPOST:   compatEndpoint.ServeHTTP,
		Sessions:            limits,
		FastCall:            fast.serveSSE,
	})

	protect := transport.RebindingProtection{AllowedHosts: opts.AllowedHosts, AllowedOrigins: opts.AllowedOrigins}
	wrap := func(h http.Handler) http.Handler {
		if opts.Authenticate != nil {
			h = opts.Authenticate(h)
		}
		return protect.Wrap(h)
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", wrap(mcpEndpoint))
	mux.Handle("/sse", wrap(sseHandler))
	mux.Handle("/messages", wrap(sseHandler))
	bridge := rest.New(r, maxBody, r.Logger()) // the router's log, as for its calls
	mux.Handle(rest.Path, wrap(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		defer h.posts.Add()() // shutdown waits for its answer, as for /mcp
		bridge.ServeHTTP(w, req)
	})))
	h.mux, h.sse, h.fast = mux, sseHandler, fast
	return h
}

// FastPathCalls reports how many tools/call requests the fast path has
// answered (ADR 0014), on stateful /mcp and on legacy SSE sessions.
func (h *Handler) FastPathCalls() uint64 { return h.fast.taken.Load() }

// ServeHTTP implements http.Handler for the paths listed on [Handler].
func (h *Handler) ServeHTTP(w http.ResponseWriter, req *http.Request) { h.mux.ServeHTTP(w, req) }

// Close ends every open legacy SSE stream at once and refuses new ones.
// Streamable sessions end with the router's CloseSessions.
func (h *Handler) Close() {
	h.listen.Close()
	h.sse.Close()
}

// Shutdown is the graceful Close: it waits (until ctx ends) for POSTs being
// served to write their answers and for each legacy SSE session to deliver
// the answers to calls it has received, then ends the SSE streams. Call it
// after the router's Drain and before its CloseSessions. It reports how
// many requests were cut off.
func (h *Handler) Shutdown(ctx context.Context) (cutOff int) {
	// Listen streams for task ids end now, with their final result: they
	// are not answers to wait for.
	h.listen.Close()
	_ = h.listens.Wait(ctx)
	cutOff = h.posts.Wait(ctx)
	return cutOff + h.sse.Shutdown(ctx)
}
