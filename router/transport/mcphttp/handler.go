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
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agents-mcp/agents-mcp/internal/jsonnum"
	"github.com/agents-mcp/agents-mcp/internal/mcpwire"
	"github.com/agents-mcp/agents-mcp/router/internal/pending"
	"github.com/agents-mcp/agents-mcp/router/internal/rpcerror"
	"github.com/agents-mcp/agents-mcp/router/internal/rpcid"
	"github.com/agents-mcp/agents-mcp/router/tasks"
	"github.com/agents-mcp/agents-mcp/router/transport"
	"github.com/agents-mcp/agents-mcp/router/transport/rest"
	"github.com/agents-mcp/agents-mcp/router/transport/session"
	"github.com/agents-mcp/agents-mcp/router/transport/sse"
	"github.com/agents-mcp/agents-mcp/router/validation"
)

// DefaultMaxBodyBytes bounds one HTTP request body on every MCP endpoint.
const DefaultMaxBodyBytes = 4 << 20

// DefaultMaxBatchMessages bounds one JSON-RPC batch. Clients that batch
// (protocol 2025-03-26 and older) send a handful of messages at once; a
// bound keeps one POST from queueing thousands of calls.
const DefaultMaxBatchMessages = 32

// Liveness defaults of [Options].
const (
	// DefaultSessionTimeout is how long a session may receive no request
	// (nor answer a ping) before it is closed.
	DefaultSessionTimeout = 30 * time.Minute
	// DefaultKeepAlive is the interval of the pings to idle sessions.
	DefaultKeepAlive = 30 * time.Second
)

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
	// SessionTimeout closes stateful /mcp and legacy SSE sessions that
	// received no request, and whose client answered no ping, for this
	// long, so clients that vanish without DELETE do not leak sessions.
	// Zero means [DefaultSessionTimeout]; negative disables the timeout.
	SessionTimeout time.Duration
	// KeepAlive pings each stateful /mcp and legacy SSE session idle for
	// this long whose client has a stream for the ping, and closes it when
	// a client that answered pings stops (see package session's
	// liveness). Zero means [DefaultKeepAlive]; negative disables pings.
	KeepAlive time.Duration
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
	// AdmitVirtual, if set, reports whether the caller of an
	// authenticated request may use the virtual server name ("" is the
	// whole catalog) and whether it exists; false is answered 404. Nil
	// serves no virtual server (/mcp/<name> is 404) and the whole catalog
	// to everyone.
	AdmitVirtual func(r *http.Request, name string) bool
	// SharedSessions, if set, shares the state of stateful /mcp sessions
	// with the other replicas, so that any replica serves any session;
	// SharedEvents, if set with it, shares the events of their streams,
	// so that a stream resumes (Last-Event-ID) on any replica
	// (shared.go).
	SharedSessions session.SharedStore
	SharedEvents   transport.EventLog
	// SessionIDs is the GetSessionID of the router's server; the router
	// sets it.
	SessionIDs *session.IDMint
	// RefuseCall, if set, is asked about each POST that holds one
	// tools/call (the whole body, not a batch) before any session sees
	// it, with the tool's name as the client sent it: refused is answered
	// HTTP 429 with Retry-After (whole seconds, at least 1) and err as the
	// JSON-RPC error (call_quota.go).
	RefuseCall func(r *http.Request, tool string) (err *jsonrpc.Error, retryAfter time.Duration, refused bool)
	Logger     *slog.Logger
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
		timeout = DefaultSessionTimeout
	} else if timeout < 0 {
		timeout = 0
	}
	keepAlive := cmp.Or(opts.KeepAlive, DefaultKeepAlive)
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
		events = sharedEvents(opts, logger)
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
		KeepAlive:   keepAlive,
		Logger:      logger,
		Shared:      sharedSessions(opts, timeout, logger),
	}
	poll := cmp.Or(opts.TaskPollInterval, tasks.DefaultTaskPollInterval)
	maxIDs := cmp.Or(opts.MaxListenTaskIDsPerPrincipal, tasks.DefaultMaxListenTaskIDsPerPrincipal)
	h := &Handler{router: r, table: table, listen: tasks.NewListener(tasks.ListenerOptions{
		Hub: opts.TaskHub, Charge: opts.ChargeListen, Logger: logger,
		Poll: poll, MaxPoll: cmp.Or(opts.TaskPollMaxInterval, tasks.DefaultTaskPollMaxInterval), MaxPerPrincipal: max(maxIDs, 0),
		Draining: r.Draining, Backends: r.TaskBackends,
	})}
	guard := &JSONRPCGuard{MaxBodyBytes: maxBody, MaxBatchMessages: opts.MaxBatchMessages, ChargeBatch: opts.ChargeBatch, RefuseCall: opts.RefuseCall}
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
				recordLogLevel(limits.Shared, table, req, body)
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
		OnMessage:           table.Touch,
		FastCall:            fast.serveSSE,
		MessagesPathFor:     virtualMessagesPath,
	})

	protect := transport.RebindingProtection{AllowedHosts: opts.AllowedHosts, AllowedOrigins: opts.AllowedOrigins}
	wrap := func(h http.Handler) http.Handler {
		if opts.Authenticate != nil {
			h = opts.Authenticate(h)
		}
		return protect.Wrap(h)
	}
	mux := http.NewServeMux()
	admit := opts.AdmitVirtual
	mux.Handle("/mcp", wrap(wholeCatalog(mcpEndpoint, admit)))
	mux.Handle("/sse", wrap(wholeCatalog(sseHandler, admit)))
	mux.Handle("/messages", wrap(wholeCatalog(sseHandler, admit)))
	// The virtual servers' endpoints (virtual.go).
	mux.Handle("/mcp/{name}", wrap(virtualRoute(mcpEndpoint, "/mcp", admit)))
	mux.Handle("/sse/{name}", wrap(virtualRoute(sseHandler, "/sse", admit)))
	mux.Handle("/messages/{name}", wrap(virtualRoute(sseHandler, "/messages", admit)))
	bridge := rest.New(r, maxBody, r.Logger()) // the router's log, as for its calls
	mux.Handle(rest.Path, wrap(wholeCatalog(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		defer h.posts.Add()() // shutdown waits for its answer, as for /mcp
		bridge.ServeHTTP(w, req)
	}), admit)))
	h.mux, h.sse, h.fast = mux, sseHandler, fast
	return h
}

// FastPathCalls reports how many tools/call requests the fast path has
// answered (ADR 0014), on stateful /mcp and on legacy SSE sessions.
func (h *Handler) FastPathCalls() uint64 { return h.fast.taken.Load() }

// ServeHTTP implements http.Handler for the paths listed on [Handler].
func (h *Handler) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	// Only the virtual servers' routes and the call-quota guard set them
	// (virtual.go).
	req.Header.Del(VirtualServerHeader)
	req.Header.Del(PrechargedHeader)
	h.mux.ServeHTTP(w, req)
}

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

// knownMethods is what a go-sdk v1.8.0 server receives (its serverMethodInfos)
// plus our custom methods, so that the guard can answer unknown ones with
// -32601 itself. A test checks each against the live server.
var knownMethods = map[string]methodKind{
	"initialize":                       callMethod,
	"ping":                             callMethod,
	"completion/complete":              callMethod,
	"server/discover":                  callMethod,
	"prompts/list":                     callMethod,
	"prompts/get":                      callMethod,
	"tools/list":                       callMethod,
	"tools/call":                       callMethod,
	"resources/list":                   callMethod,
	"resources/templates/list":         callMethod,
	"resources/read":                   callMethod,
	"resources/subscribe":              callMethod,
	"resources/unsubscribe":            callMethod,
	"subscriptions/listen":             callMethod,
	"logging/setLevel":                 callMethod,
	methodValidate:                     callMethod,
	tasks.MethodTasksGet:               callMethod,
	tasks.MethodTasksUpdate:            callMethod,
	tasks.MethodTasksCancel:            callMethod,
	"notifications/cancelled":          notificationMethod,
	"notifications/initialized":        notificationMethod,
	"notifications/roots/list_changed": notificationMethod,
	"notifications/progress":           notificationMethod,
}

// methodValidate is the router's tools/validate; the test of knownMethods
// against the live server keeps the two the same.
const methodValidate = "tools/validate"

type methodKind int

// KnownMethods returns the methods the guard passes on, each with its kind
// ("call" or "notification"); any other call is answered -32601 by the
// guard itself.
func KnownMethods() map[string]string {
	out := make(map[string]string, len(knownMethods))
	for m, k := range knownMethods {
		if k == callMethod {
			out[m] = "call"
		} else {
			out[m] = "notification"
		}
	}
	return out
}

const (
	callMethod methodKind = iota
	notificationMethod
)

// usesSessionlessProtocol reports whether a request speaks MCP 2026-07-28 or
// later, which has no initialize handshake and no session.
func usesSessionlessProtocol(req *http.Request) bool {
	if v := req.Header.Get("Mcp-Protocol-Version"); v != "" {
		return mcpwire.Revision(v).Sessionless()
	}
	return false
}

// JSONRPCGuard checks POSTed JSON-RPC before it reaches the SDK's streamable
// transport, which rejects malformed input with plain-text HTTP errors. It
// answers, with a JSON-RPC error body:
//
//   - a body over MaxBodyBytes: HTTP 413, -32600;
//   - an empty or non-JSON body: HTTP 400, -32700;
//   - JSON that is not a JSON-RPC 2.0 message: HTTP 400, -32600;
//   - a batch when the protocol version (MCP-Protocol-Version) is 2025-06-18
//     or later, which removed batching: HTTP 400, -32600;
//   - a batch of more than MaxBatchMessages messages: HTTP 400, -32600;
//   - a message whose id is a number but not an integer of at most 2^53
//     (JSON-RPC ids are strings or integers; 1.5 must not be answered as 1):
//     HTTP 400, -32600;
//   - a notification method sent with an id, or a request method without
//     one: HTTP 400, -32600;
//   - a tasks/* request whose Mcp-Name header is not its params.taskId:
//     HTTP 400, -32020;
//   - under MCP-Protocol-Version 2026-07-28 or later, a tools/call whose
//     arguments hold a number beyond the bounds of internal/jsonnum: HTTP
//     200, -32602, as every other path answers it;
//   - a call of an unknown method: HTTP 200 with a -32601 response, or
//     HTTP 404 with it under MCP-Protocol-Version 2026-07-28 or later.
//
// A notification of an unknown method is accepted (202) and dropped, as
// JSON-RPC requires. Anything else is passed on with its body intact,
// after ChargeBatch, if set, has admitted the messages of a batch beyond
// the first.
type JSONRPCGuard struct {
	MaxBodyBytes int64
	// MaxBatchMessages bounds a batch; zero means [DefaultMaxBatchMessages].
	MaxBatchMessages int
	// ChargeBatch is [Options.ChargeBatch].
	ChargeBatch func(w http.ResponseWriter, r *http.Request, extra int) bool
	// RefuseCall is [Options.RefuseCall].
	RefuseCall func(r *http.Request, tool string) (err *jsonrpc.Error, retryAfter time.Duration, refused bool)
}

// Wrap returns next behind the guard. Non-POST requests pass untouched.
func (g *JSONRPCGuard) Wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.Method != http.MethodPost {
			next.ServeHTTP(w, req)
			return
		}
		buf := bodyBuffers.Get().(*bytes.Buffer)
		// buf goes back to the pool when next has returned: a handler
		// may not use the request after that, and next's handlers
		// (go-sdk's) copy the body with io.ReadAll and keep no slice of
		// it, nor does the tools/call fast path (it copies the arguments,
		// which the audit trail may keep), so nothing refers to buf any
		// more.
		defer putBodyBuffer(buf)
		_, err := buf.ReadFrom(http.MaxBytesReader(w, req.Body, g.MaxBodyBytes))
		body := buf.Bytes()
		if err != nil {
			var mbe *http.MaxBytesError
			if errors.As(err, &mbe) {
				WriteJSONRPCError(w, http.StatusRequestEntityTooLarge, jsonrpc.ID{}, jsonrpc.CodeInvalidRequest,
					fmt.Sprintf("request body exceeds the limit of %d bytes", mbe.Limit))
				return
			}
			WriteJSONRPCError(w, http.StatusBadRequest, jsonrpc.ID{}, jsonrpc.CodeParseError, "failed to read request body")
			return
		}
		messages, status, id, code, msg := g.check(req, body)
		if code != 0 {
			if status == http.StatusAccepted {
				w.WriteHeader(status)
				return
			}
			WriteJSONRPCError(w, status, id, code, msg)
			return
		}
		if messages > 1 && g.ChargeBatch != nil && !g.ChargeBatch(w, req, messages-1) {
			return
		}
		if messages == 1 && g.RefuseCall != nil && refuseCall(w, req, body, g.RefuseCall) {
			return
		}
		req.Body = &guardedBody{Reader: bytes.NewReader(body), data: body}
		req.ContentLength = int64(len(body))
		next.ServeHTTP(w, req)
	})
}

// bodyBuffers hold the request bodies that [JSONRPCGuard] reads, so that
// a relayed call does not allocate its body (and, for bodies over 512
// bytes, each step of io.ReadAll's growth) again on every request.
var bodyBuffers = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// maxPooledBody bounds the buffers kept for reuse: one request with a
// large body (up to MaxBodyBytes) must not keep that much memory per
// pooled buffer afterwards.
const maxPooledBody = 64 << 10

func putBodyBuffer(b *bytes.Buffer) {
	if b.Cap() > maxPooledBody {
		return
	}
	b.Reset()
	bodyBuffers.Put(b)
}

// guardedBody is the body of a POST the guard passed on: the bytes it read,
// which the tools/call fast path takes without reading them again.
type guardedBody struct {
	*bytes.Reader
	data []byte
}

func (*guardedBody) Close() error { return nil }

// guardedBodyOf returns the body the guard read, if req passed it.
func guardedBodyOf(req *http.Request) ([]byte, bool) {
	b, ok := req.Body.(*guardedBody)
	if !ok {
		return nil, false
	}
	return b.data, true
}

// check classifies body and counts its messages; a zero code means "pass
// it on".
func (g *JSONRPCGuard) check(req *http.Request, body []byte) (messages, status int, id jsonrpc.ID, code int, msg string) {
	body = bytes.TrimSpace(body)
	if len(body) == 0 {
		return 0, http.StatusBadRequest, id, jsonrpc.CodeParseError, "Parse error: empty request body"
	}
	if !json.Valid(body) {
		return 0, http.StatusBadRequest, id, jsonrpc.CodeParseError, "Parse error: request body is not valid JSON"
	}
	if body[0] == '[' {
		if v := req.Header.Get("Mcp-Protocol-Version"); !mcpwire.Revision(v).Batches() {
			return 0, http.StatusBadRequest, id, jsonrpc.CodeInvalidRequest,
				fmt.Sprintf("Invalid Request: JSON-RPC batches are not supported in protocol version %s (removed in 2025-06-18)", v)
		}
		var elems []json.RawMessage
		if json.Unmarshal(body, &elems) != nil || len(elems) == 0 {
			return 0, http.StatusBadRequest, id, jsonrpc.CodeInvalidRequest, "Invalid Request: empty batch"
		}
		if limit := cmp.Or(g.MaxBatchMessages, DefaultMaxBatchMessages); len(elems) > limit {
			return 0, http.StatusBadRequest, id, jsonrpc.CodeInvalidRequest,
				fmt.Sprintf("Invalid Request: a batch of %d messages exceeds the limit of %d", len(elems), limit)
		}
		for _, e := range elems {
			if status, id, code, msg := g.checkMessage(e); code != 0 && status != http.StatusAccepted {
				return 0, status, id, code, msg
			}
		}
		return len(elems), 0, id, 0, ""
	}
	status, id, code, msg = g.checkMessage(body)
	if code == 0 {
		status, id, code, msg = tasks.CheckNameHeader(req, body)
	}
	if code == 0 && usesSessionlessProtocol(req) {
		status, id, code, msg = checkSessionlessArguments(body)
	}
	if code == jsonrpc.CodeMethodNotFound && usesSessionlessProtocol(req) {
		// MCP 2026-07-28 (SEP-2575) answers an unknown method with HTTP
		// 404; older revisions keep the 200 that carries the -32601.
		status = http.StatusNotFound
	}
	return 1, status, id, code, msg
}

// checkSessionlessArguments answers -32602 for a 2026-07-28 tools/call
// whose arguments hold a number beyond [jsonnum]'s bounds, as the router
// answers it on every other path (validation.DecodeArguments). go-sdk's stateless
// handler would refuse it before the router sees it, with a -32020
// "failed to extract name from parameters" (it decodes the params with
// float64 numbers to check the Mcp-Name header), which names the wrong
// problem. Only such requests pay this decoding.
func checkSessionlessArguments(body []byte) (status int, id jsonrpc.ID, code int, msg string) {
	if !bytes.Contains(body, []byte(`"tools/call"`)) {
		return 0, id, 0, ""
	}
	var m struct {
		ID     any    `json:"id"`
		Method string `json:"method"`
		Params struct {
			Arguments json.RawMessage `json:"arguments"`
		} `json:"params"`
	}
	if json.Unmarshal(body, &m) != nil || m.Method != "tools/call" || len(m.Params.Arguments) == 0 {
		return 0, id, 0, ""
	}
	if _, err := validation.DecodeArguments(m.Params.Arguments); err != nil {
		if nerr, ok := errors.AsType[*jsonnum.Error](err); ok {
			id, _ = jsonrpc.MakeID(m.ID)
			return http.StatusOK, id, jsonrpc.CodeInvalidParams, "invalid arguments: " + nerr.Error()
		}
	}
	return 0, id, 0, ""
}

func (g *JSONRPCGuard) checkMessage(data []byte) (status int, id jsonrpc.ID, code int, msg string) {
	if passesPlainly(data) {
		return 0, id, 0, ""
	}
	return checkDecoded(data)
}

// checkDecoded is checkMessage by a full decode.
func checkDecoded(data []byte) (status int, id jsonrpc.ID, code int, msg string) {
	if rpcid.Inexact(data) {
		return http.StatusBadRequest, id, jsonrpc.CodeInvalidRequest, "Invalid Request: id must be a string or an integer of at most 2^53"
	}
	m, err := jsonrpc.DecodeMessage(data)
	if err != nil {
		return http.StatusBadRequest, rawID(data), jsonrpc.CodeInvalidRequest, "Invalid Request: " + err.Error()
	}
	r, ok := m.(*jsonrpc.Request)
	if !ok {
		return 0, id, 0, "" // a response to one of our requests
	}
	if r.Method == "" {
		return http.StatusBadRequest, r.ID, jsonrpc.CodeInvalidRequest, "Invalid Request: empty method"
	}
	kind, known := knownMethods[r.Method]
	switch {
	case !known && r.IsCall():
		return http.StatusOK, r.ID, jsonrpc.CodeMethodNotFound, fmt.Sprintf("Method not found: %q", r.Method)
	case !known:
		return http.StatusAccepted, id, -1, "" // unknown notification: drop silently
	case kind == notificationMethod && r.IsCall():
		return http.StatusBadRequest, r.ID, jsonrpc.CodeInvalidRequest, fmt.Sprintf("Invalid Request: notification %q must not carry an id", r.Method)
	case kind == callMethod && !r.IsCall():
		return http.StatusBadRequest, id, jsonrpc.CodeInvalidRequest, fmt.Sprintf("Invalid Request: %q is a request and needs an id", r.Method)
	}
	return 0, id, 0, ""
}

// passesPlainly reports, without decoding, whether data (one valid JSON
// value) is a request that checkMessage certainly passes on: an object whose
// members are "jsonrpc": "2.0", a known "method" of the right kind (a call
// with an "id", a notification without), an "id" that is a string or a small
// integer, and "params", each at most once, with no escapes in those strings,
// valid UTF-8 and at most maxFastBrackets brackets (so the SDK's nesting
// limit cannot be hit). Everything else takes the full decode, which decides
// as before; this only spares the common call the SDK decoder, which
// allocates two 32 KiB buffers per message.
func passesPlainly(data []byte) bool {
	if len(data) < 2 || data[0] != '{' ||
		bytes.Count(data, []byte{'{'})+bytes.Count(data, []byte{'['}) > maxFastBrackets ||
		!utf8.Valid(data) {
		return false
	}
	const (
		hasVersion = 1 << iota
		hasMethod
		hasID
		hasParams
	)
	var seen int
	var method []byte
	i := skipJSONSpace(data, 1)
	if i < len(data) && data[i] == '}' {
		return false
	}
	for {
		key, next, ok := plainJSONString(data, i)
		if !ok {
			return false
		}
		i = skipJSONSpace(data, next)
		if i >= len(data) || data[i] != ':' {
			return false
		}
		i = skipJSONSpace(data, i+1)
		end := skipJSONValue(data, i)
		if end < 0 {
			return false
		}
		val := data[i:end]
		var member int
		switch string(key) {
		case "jsonrpc":
			member = hasVersion
			if string(val) != `"2.0"` {
				return false
			}
		case "method":
			member = hasMethod
			m, n, ok := plainJSONString(val, 0)
			if !ok || n != len(val) {
				return false
			}
			method = m
		case "id":
			member = hasID
			if !plainJSONID(val) {
				return false
			}
		case "params":
			member = hasParams
		default:
			return false
		}
		if seen&member != 0 {
			return false
		}
		seen |= member
		i = skipJSONSpace(data, end)
		if i >= len(data) {
			return false
		}
		if data[i] == '}' {
			if skipJSONSpace(data, i+1) != len(data) {
				return false
			}
			break
		}
		if data[i] != ',' {
			return false
		}
		i = skipJSONSpace(data, i+1)
	}
	if seen&(hasVersion|hasMethod) != hasVersion|hasMethod {
		return false
	}
	kind, known := knownMethods[string(method)]
	return known && (kind == callMethod) == (seen&hasID != 0)
}

// maxFastBrackets bounds the brackets of a message passesPlainly accepts; it
// is at most go-sdk's nesting limit (1000), which the count bounds.
const maxFastBrackets = 1000

func skipJSONSpace(data []byte, i int) int {
	for i < len(data) && (data[i] == ' ' || data[i] == '\t' || data[i] == '\n' || data[i] == '\r') {
		i++
	}
	return i
}

// plainJSONString returns the content of the string starting at data[i] and
// the index after it; ok is false if there is none or it has escapes.
func plainJSONString(data []byte, i int) (s []byte, next int, ok bool) {
	if i >= len(data) || data[i] != '"' {
		return nil, 0, false
	}
	for j := i + 1; j < len(data); j++ {
		switch data[j] {
		case '\\':
			return nil, 0, false
		case '"':
			return data[i+1 : j], j + 1, true
		}
	}
	return nil, 0, false
}

// plainJSONID accepts the ids the SDK certainly decodes to the same ID: a
// string without escapes, or an integer of at most 15 digits (exact as the
// float64 the SDK decodes it to).
func plainJSONID(v []byte) bool {
	if _, n, ok := plainJSONString(v, 0); ok {
		return n == len(v)
	}
	digits := v
	if len(digits) > 0 && digits[0] == '-' {
		digits = digits[1:]
	}
	if len(digits) == 0 || len(digits) > 15 {
		return false
	}
	for _, c := range digits {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// skipJSONValue returns the index after the JSON value starting at data[i],
// or -1. data is known to be valid JSON, so it only finds the value's end.
func skipJSONValue(data []byte, i int) int {
	if i >= len(data) {
		return -1
	}
	switch data[i] {
	case '"':
		for j := i + 1; j < len(data); j++ {
			switch data[j] {
			case '\\':
				j++
			case '"':
				return j + 1
			}
		}
		return -1
	case '{', '[':
		depth := 0
		for j := i; j < len(data); j++ {
			switch data[j] {
			case '"':
				end := skipJSONValue(data, j)
				if end < 0 {
					return -1
				}
				j = end - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1
				}
			}
		}
		return -1
	default:
		j := i
		for j < len(data) && !strings.ContainsRune(",}] \t\n\r", rune(data[j])) {
			j++
		}
		if j == i {
			return -1
		}
		return j
	}
}

// rawID recovers the id of a message that did not decode, so the error can
// still be correlated when the id itself was fine.
func rawID(data []byte) jsonrpc.ID {
	var probe struct {
		ID any `json:"id"`
	}
	if json.Unmarshal(data, &probe) != nil {
		return jsonrpc.ID{}
	}
	id, err := jsonrpc.MakeID(probe.ID)
	if err != nil {
		return jsonrpc.ID{}
	}
	return id
}

// WriteJSONRPCError writes a JSON-RPC error response as an HTTP response.
// A zero id is written as null, as JSON-RPC requires when the request's id
// is unknown.
func WriteJSONRPCError(w http.ResponseWriter, status int, id jsonrpc.ID, code int, msg string) {
	rpcerror.Write(w, status, id, code, msg)
}
