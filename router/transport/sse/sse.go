// Package sse serves MCP sessions over the legacy HTTP+SSE transport defined
// by the [2024-11-05 version] of the MCP spec.
//
// It replaces go-sdk's [mcp.NewSSEHandler] for two reasons: that handler
// rejects JSON-RPC methods missing from the SDK's static method table (so
// methods added with [mcp.AddReceivingCustomMethod] are unreachable), and it
// never sets [jsonrpc.Request.Extra], so handlers cannot see the HTTP headers
// or the verified token of the POST that carried their request.
//
// [2024-11-05 version]: https://modelcontextprotocol.io/specification/2024-11-05/basic/transports
package sse

import (
	"bytes"
	"cmp"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"runtime/debug"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agents-mcp/agents-mcp/internal/mcpwire"
	"github.com/agents-mcp/agents-mcp/router/internal/rpcid"

	"github.com/agents-mcp/agents-mcp/router/internal/pending"
	"github.com/agents-mcp/agents-mcp/router/internal/rpcerror"
)

// Defaults applied when the corresponding [Options] field is zero.
const (
	DefaultMessagesPath        = "/messages"
	DefaultMaxRequestBodyBytes = 4 << 20
	DefaultKeepAlive           = 15 * time.Second
)

// queueSize bounds the messages accepted but not yet read by the session.
// When it is full, POSTs wait rather than drop, so a slow session applies
// back-pressure to its client instead of losing messages.
const queueSize = 64

// Options configures a [Handler]. The zero value is valid.
type Options struct {
	// MessagesPath is the path announced in the 'endpoint' event; clients POST
	// their messages to MessagesPath?sessionId=<id>. The Handler must be
	// reachable at that path. Default [DefaultMessagesPath].
	MessagesPath string

	// MessagesPathFor, if set, gives the path announced to the stream
	// opened by a GET; "" announces MessagesPath. The Handler must be
	// reachable at every path it gives.
	MessagesPathFor func(*http.Request) string

	// MaxRequestBodyBytes limits a POSTed message; larger bodies are answered
	// with 413. Zero means [DefaultMaxRequestBodyBytes]; negative disables the
	// limit.
	MaxRequestBodyBytes int64

	// KeepAlive is the interval between SSE comment lines sent on idle and busy
	// streams alike, so that proxies do not close them. Zero means
	// [DefaultKeepAlive]; negative disables them.
	KeepAlive time.Duration

	// OnSessionlessPOST, if set, serves POSTs that carry no sessionId. If nil,
	// such POSTs are answered with 400.
	OnSessionlessPOST func(http.ResponseWriter, *http.Request)

	// Sessions, if set, admits each session a GET would open and is told
	// of each one opened.
	Sessions SessionTracker

	// OnMessage, if set, is told the session id of each message POSTed
	// to a live session, before the message is served: the client is
	// active. It must not block.
	OnMessage func(sessionID string)

	// FastCall, if set, is offered each message POSTed to a live session
	// of the POST's principal, as it came (valid JSON, not a batch),
	// before it is decoded. If it reports false, having called nothing,
	// the message goes to the server as usual. If it takes the message,
	// it calls start once: start runs call in a goroutine owned by the
	// session, with a context that carries the GET's values and ends
	// with the session, and writes the message call returns (if not nil)
	// as a 'message' event; it reports false, and runs nothing, if the
	// session has ended. The POST is then answered 202, or as for an
	// unknown session. The stream handler waits for the calls before it
	// returns, and [Handler.Shutdown] waits for them as for the
	// server's.
	FastCall func(r *http.Request, sessionID string, data []byte, start func(call func(ctx context.Context) []byte) bool) (taken bool)

	// Logger receives diagnostics. Nil discards them.
	Logger *slog.Logger
}

// SessionTracker bounds and follows the sessions of each owner (the UserID
// of the request's auth.TokenInfo, "" without one).
type SessionTracker interface {
	// Reserve takes a session slot of owner for a GET about to open a
	// session; when none is left it answers the GET itself and reports
	// false.
	Reserve(w http.ResponseWriter, owner string) bool
	// Cancel gives back a slot whose session could not be opened.
	Cancel(owner string)
	// Opened is told of the session opened in a reserved slot, before
	// the client learns its id. The slot is the tracker's to give back
	// when the session ends.
	Opened(ss *mcp.ServerSession, owner string)
}

// Handler is an [http.Handler] serving MCP sessions over HTTP+SSE. Mount it
// both at the SSE path (e.g. /sse) and at [Options.MessagesPath]: a GET opens a
// session and streams its server-to-client messages, and a POST with a
// sessionId delivers one client-to-server message to that session.
//
// Every JSON-RPC message POSTed to a live session reaches the [mcp.Server]
// unfiltered, whatever its method, unless [Options.FastCall] takes it;
// requests carry an [mcp.RequestExtra] with
// the POST's headers and the [auth.TokenInfo] found in its context.
type Handler struct {
	getServer func(*http.Request) *mcp.Server
	opts      Options
	log       *slog.Logger

	mu       sync.Mutex
	closed   bool
	sessions map[string]*conn
}

// NewHandler returns a Handler that connects each new stream to the server
// returned by getServer, which may be shared or per-request. If getServer
// returns nil, the GET is answered with 400. opts may be nil.
func NewHandler(getServer func(*http.Request) *mcp.Server, opts *Options) *Handler {
	h := &Handler{getServer: getServer, sessions: make(map[string]*conn)}
	if opts != nil {
		h.opts = *opts
	}
	if h.opts.MessagesPath == "" {
		h.opts.MessagesPath = DefaultMessagesPath
	}
	if h.opts.MaxRequestBodyBytes == 0 {
		h.opts.MaxRequestBodyBytes = DefaultMaxRequestBodyBytes
	}
	if h.opts.KeepAlive == 0 {
		h.opts.KeepAlive = DefaultKeepAlive
	}
	h.log = h.opts.Logger
	if h.log == nil {
		h.log = slog.New(slog.DiscardHandler)
	}
	return h
}

// ServeHTTP implements [http.Handler]. Errors on the POST path are answered
// with a JSON-RPC error object (id null) so that clients can parse them.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.Method {
	case http.MethodGet:
		h.serveStream(w, r)
	case http.MethodPost:
		h.servePost(w, r)
	default:
		w.Header().Set("Allow", "GET, POST")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
	}
}

// Close ends every open stream and session and makes later GETs fail with
// 503. It does not wait for the GET handlers to return; use
// [http.Server.Shutdown] for that. Close is safe to call more than once.
func (h *Handler) Close() {
	for _, c := range h.stopAccepting() {
		c.Close()
	}
}

// stopAccepting makes later GETs fail and returns the open sessions.
func (h *Handler) stopAccepting() []*conn {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.closed = true
	conns := make([]*conn, 0, len(h.sessions))
	for _, c := range h.sessions {
		conns = append(conns, c)
	}
	return conns
}

// Shutdown refuses new streams, lets every session deliver the answers to
// the calls it has already received (until ctx ends), then closes it. It
// reports how many calls were left unanswered. Stop new calls first (the
// router's Drain does), or a busy session may not go quiet before ctx ends.
func (h *Handler) Shutdown(ctx context.Context) (unanswered int) {
	conns := h.stopAccepting()
	for _, c := range conns {
		unanswered += c.calls.Wait(ctx) + c.fast.Wait(ctx)
	}
	// Some clients drop events they have read but not yet processed when
	// the stream ends (go-sdk v1.8.0's SSE client selects randomly between
	// its queue and end-of-stream), so the last answers get a moment to be
	// consumed before the streams close.
	if len(conns) > 0 {
		select {
		case <-time.After(shutdownLinger):
		case <-ctx.Done():
		}
	}
	for _, c := range conns {
		c.Close()
	}
	return unanswered
}

// shutdownLinger is how long Shutdown keeps streams open after their last
// answer has been written.
const shutdownLinger = 200 * time.Millisecond

// SessionCount reports the number of sessions whose stream is open.
func (h *Handler) SessionCount() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.sessions)
}

// serveStream owns the session it creates: it registers the connection,
// connects it to the server and closes both when the stream ends.
func (h *Handler) serveStream(w http.ResponseWriter, r *http.Request) {
	server := h.getServer(r)
	if server == nil {
		http.Error(w, "no server available", http.StatusBadRequest)
		return
	}
	owner := principal(r)
	if h.opts.Sessions != nil && !h.opts.Sessions.Reserve(w, owner) {
		return
	}
	opened := false
	if h.opts.Sessions != nil {
		defer func() {
			if !opened {
				h.opts.Sessions.Cancel(owner)
			}
		}()
	}
	c := &conn{
		id:       rand.Text(),
		owner:    owner,
		incoming: make(chan jsonrpc.Message, queueSize),
		done:     make(chan struct{}),
		ready:    make(chan struct{}),
		w:        w,
		rc:       http.NewResponseController(w),
	}
	// The fast calls' context carries the GET's values, as the
	// server's handlers' contexts (Connect is given the GET's) do.
	c.ended, c.end = context.WithCancel(r.Context())
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		http.Error(w, "server is shutting down", http.StatusServiceUnavailable)
		return
	}
	h.sessions[c.id] = c
	h.mu.Unlock()

	var ss *mcp.ServerSession
	defer func() {
		// Closing our side first makes Read fail, which cancels in-flight
		// handlers; only then can ss.Close, which waits for them, return.
		// Marking the writer closed keeps late Writes off a ResponseWriter
		// whose handler has returned.
		c.Close()
		// Fast calls end with the session (their context is cancelled
		// by c.done); they are waited for so that none outlives it.
		c.fastRunning.Wait()
		c.mu.Lock()
		c.wclosed = true
		c.mu.Unlock()
		if ss != nil {
			ss.Close()
		}
		h.mu.Lock()
		delete(h.sessions, c.id)
		h.mu.Unlock()
	}()

	ss, err := server.Connect(r.Context(), &transport{c: c}, nil)
	if err != nil {
		h.log.Error("sse: connect failed", "error", err)
		http.Error(w, "connection failed", http.StatusInternalServerError)
		return
	}
	if h.opts.Sessions != nil {
		h.opts.Sessions.Opened(ss, owner)
		opened = true
	}

	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	// The endpoint is announced only after Server.Connect has returned, so the
	// client cannot send anything to a half-initialized session.
	messages := h.opts.MessagesPath
	if h.opts.MessagesPathFor != nil {
		messages = cmp.Or(h.opts.MessagesPathFor(r), messages)
	}
	if err := c.writeEvent("endpoint", []byte(messages+"?sessionId="+c.id)); err != nil {
		return
	}
	close(c.ready)
	h.log.Debug("sse: session opened", "session", c.id)
	defer h.log.Debug("sse: session closed", "session", c.id)

	var tick <-chan time.Time
	if h.opts.KeepAlive > 0 {
		t := time.NewTicker(h.opts.KeepAlive)
		defer t.Stop()
		tick = t.C
	}
	for {
		select {
		case <-r.Context().Done():
			return
		case <-c.done:
			return
		case <-tick:
			if err := c.writeRaw([]byte(": keepalive\n\n")); err != nil {
				return
			}
		}
	}
}

func (h *Handler) servePost(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	id := q.Get("sessionId")
	if id == "" {
		id = q.Get("sessionid") // go-sdk's own handler announces this spelling
	}
	if id == "" {
		if h.opts.OnSessionlessPOST != nil {
			h.opts.OnSessionlessPOST(w, r)
			return
		}
		writeError(w, http.StatusBadRequest, jsonrpc.CodeInvalidRequest, "sessionId is required")
		return
	}
	h.mu.Lock()
	c := h.sessions[id]
	h.mu.Unlock()
	// A session id leaked from one principal must not let another one speak
	// in that session, nor tell it that the session exists: the answer is
	// that of an unknown id.
	if c == nil || c.owner != principal(r) {
		writeError(w, http.StatusNotFound, jsonrpc.CodeInvalidRequest, "unknown or expired session")
		return
	}

	if h.opts.MaxRequestBodyBytes > 0 {
		r.Body = http.MaxBytesReader(w, r.Body, h.opts.MaxRequestBodyBytes)
	}
	data, err := io.ReadAll(r.Body)
	if err != nil {
		if mbe, ok := errors.AsType[*http.MaxBytesError](err); ok {
			writeError(w, http.StatusRequestEntityTooLarge, jsonrpc.CodeInvalidRequest,
				fmt.Sprintf("request body exceeds %d bytes", mbe.Limit))
			return
		}
		writeError(w, http.StatusBadRequest, jsonrpc.CodeInvalidRequest, "failed to read body")
		return
	}
	data = bytes.TrimSpace(data)
	if !json.Valid(data) {
		writeError(w, http.StatusBadRequest, jsonrpc.CodeParseError, "body is not valid JSON")
		return
	}
	if data[0] == '[' {
		writeError(w, http.StatusBadRequest, jsonrpc.CodeInvalidRequest, "batches are not supported on this transport")
		return
	}
	if h.opts.OnMessage != nil {
		h.opts.OnMessage(id)
	}
	if taken, ended := c.refuseDiscover(data, h.log); taken { // discover.go
		if ended {
			writeError(w, http.StatusNotFound, jsonrpc.CodeInvalidRequest, "unknown or expired session")
			return
		}
		w.WriteHeader(http.StatusAccepted)
		return
	}
	if h.opts.FastCall != nil {
		started := false
		start := func(call func(context.Context) []byte) bool {
			started = c.startFast(call, h.log)
			return started
		}
		if h.opts.FastCall(r, id, data, start) {
			if !started {
				writeError(w, http.StatusNotFound, jsonrpc.CodeInvalidRequest, "unknown or expired session")
				return
			}
			w.WriteHeader(http.StatusAccepted)
			return
		}
	}
	if rpcid.Inexact(data) {
		writeError(w, http.StatusBadRequest, jsonrpc.CodeInvalidRequest, "id must be a string or an integer of at most 2^53")
		return
	}
	msg, err := jsonrpc.DecodeMessage(data)
	if err != nil {
		writeError(w, http.StatusBadRequest, jsonrpc.CodeInvalidRequest, "invalid JSON-RPC message: "+err.Error())
		return
	}
	if req, ok := msg.(*jsonrpc.Request); ok {
		req.Extra = &mcp.RequestExtra{
			Header:    r.Header.Clone(),
			TokenInfo: auth.TokenInfoFromContext(r.Context()),
		}
	}

	// Checked first because select picks randomly among ready cases, and a
	// closed session must not report 202 for a message nobody will read.
	select {
	case <-c.done:
		writeError(w, http.StatusNotFound, jsonrpc.CodeInvalidRequest, "unknown or expired session")
		return
	default:
	}
	select {
	case c.incoming <- msg:
		w.WriteHeader(http.StatusAccepted)
	case <-c.done:
		writeError(w, http.StatusNotFound, jsonrpc.CodeInvalidRequest, "unknown or expired session")
	case <-r.Context().Done():
		writeError(w, http.StatusServiceUnavailable, jsonrpc.CodeInternalError, "request ended while the session queue was full")
	}
}

// writeError writes a JSON-RPC error response with a null id.
func writeError(w http.ResponseWriter, status, code int, msg string) {
	rpcerror.Write(w, status, jsonrpc.ID{}, code, msg)
}

// transport hands a prepared conn to [mcp.Server.Connect].
type transport struct {
	c         *conn
	connected bool
}

// Connect implements [mcp.Transport]. It may be called once.
func (t *transport) Connect(context.Context) (mcp.Connection, error) {
	if t.connected {
		return nil, errors.New("sse: transport already connected")
	}
	t.connected = true
	return t.c, nil
}

// SupportsProtocolVersion implements [mcp.ProtocolVersionSupporter]:
// MCP 2026-07-28 defines no HTTP+SSE binding, so it is not advertised.
func (t *transport) SupportsProtocolVersion(v string) bool { return !mcpwire.Revision(v).Sessionless() }

// conn is the [mcp.Connection] of one session: Read takes messages POSTed to
// the session, Write sends 'message' events on the session's GET stream.
type conn struct {
	calls    pending.Calls // calls read and not yet answered, for Shutdown
	id       string
	owner    string               // auth UserID of the GET that opened the stream; "" without auth
	incoming chan jsonrpc.Message // never closed; done signals the end
	done     chan struct{}        // closed by Close
	once     sync.Once
	ready    chan struct{} // closed once the endpoint event is written

	// fast counts the FastCall calls running, for Shutdown;
	// fastRunning is their goroutines, which the stream handler waits
	// for. fastMu orders startFast against the session's end, so that
	// no call starts once the stream handler waits.
	fast        pending.Counter
	ended       context.Context // the fast calls' context, cancelled by Close
	end         context.CancelFunc
	fastMu      sync.Mutex
	fastEnded   bool
	fastRunning sync.WaitGroup

	mu      sync.Mutex // serializes writes to w and guards wclosed
	wclosed bool       // set before the GET handler returns; w is then dead
	w       http.ResponseWriter
	rc      *http.ResponseController
}

// SessionID implements [mcp.Connection].
func (c *conn) SessionID() string { return c.id }

// Read implements [mcp.Connection]. It returns io.EOF once the connection is
// closed.
func (c *conn) Read(ctx context.Context) (jsonrpc.Message, error) {
	// Checked first because select picks randomly among ready cases.
	select {
	case <-c.done:
		return nil, io.EOF
	default:
	}
	select {
	case msg := <-c.incoming:
		c.calls.Received(msg)
		return msg, nil
	case <-c.done:
		return nil, io.EOF
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// Write implements [mcp.Connection]. Messages written before the endpoint
// event has been sent wait for it, so that it stays the first event.
func (c *conn) Write(ctx context.Context, msg jsonrpc.Message) error {
	select {
	case <-c.ready:
	case <-c.done:
		return mcp.ErrConnectionClosed
	case <-ctx.Done():
		return ctx.Err()
	}
	data, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return err
	}
	err = c.writeEvent("message", data)
	c.calls.Sent(msg)
	return err
}

// Close implements [mcp.Connection]. It is idempotent, never blocks, and ends
// the GET stream.
func (c *conn) Close() error {
	c.once.Do(func() {
		c.fastMu.Lock()
		c.fastEnded = true
		c.fastMu.Unlock()
		if c.end != nil {
			c.end()
		}
		close(c.done)
	})
	return nil
}

// startFast runs call (see [Options.FastCall]) in a goroutine owned by the
// session: its context ends with the session, whose stream handler waits
// for it. It reports false, and runs nothing, if the session has ended.
// The call runs outside the POST that carried it because an HTTP/1.1
// connection serves its next request only after the handler of the last
// has returned: a client would wait for the answer to one call before it
// could send the next one, or the notifications/cancelled for it.
//
// A panic of call is logged to log, with its stack, and ends only that
// call: the goroutine is ours, and an unrecovered panic on it would end
// the process. (The router's call answers its own panics with -32603;
// this is the last resort.)
func (c *conn) startFast(call func(ctx context.Context) []byte, log *slog.Logger) bool {
	c.fastMu.Lock()
	defer c.fastMu.Unlock()
	if c.fastEnded {
		return false
	}
	done := c.fast.Add()
	c.fastRunning.Go(func() {
		defer done()
		defer func() {
			if v := recover(); v != nil {
				log.Error("a legacy SSE call panicked", "session", c.id, "panic", fmt.Sprint(v), "stack", string(debug.Stack()))
			}
		}()
		if data := call(c.ended); data != nil {
			select {
			case <-c.ready:
				_ = c.writeEvent("message", data)
			case <-c.done:
			}
		}
	})
	return true
}

func (c *conn) writeEvent(name string, data []byte) error {
	var buf bytes.Buffer
	buf.WriteString("event: " + name + "\n")
	// SSE ends a field at a newline, so multi-line data needs one field per
	// line; encoded JSON normally has none, but passthrough payloads might.
	for line := range bytes.SplitSeq(data, []byte("\n")) {
		buf.WriteString("data: ")
		buf.Write(line)
		buf.WriteByte('\n')
	}
	buf.WriteByte('\n')
	return c.writeRaw(buf.Bytes())
}

func (c *conn) writeRaw(p []byte) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.wclosed {
		return mcp.ErrConnectionClosed
	}
	if _, err := c.w.Write(p); err != nil {
		return err
	}
	return c.rc.Flush()
}

// principal is the authenticated user of a request, "" when unauthenticated.
func principal(r *http.Request) string {
	if ti := auth.TokenInfoFromContext(r.Context()); ti != nil {
		return ti.UserID
	}
	return ""
}
