// Package session keeps the sessions of the HTTP transports (stateful
// streamable /mcp and legacy /sse): who owns each, how many each
// principal holds, whether each finished the initialize handshake and
// set a log level, and the idle timer of streamable sessions. It is the
// one place that knows which sessions are open, so that the transports'
// session rules (per-principal limits, the reaper of unfinished
// sessions, the owner check of every request, the fast path's view of a
// session) read one record.
//
// The router tells a [Table] what happens inside go-sdk's sessions
// through [Table.MarkInitialized] and [Table.MarkLogs]; the transports
// call the rest. The record lives in this replica's memory: a store
// shared by replicas, or a session state sealed into the id, would
// stand behind the same methods.
package session

import (
	"context"
	"log/slog"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agents-mcp/agents-mcp/router/internal/rpcerror"
)

// This file bounds what one caller can hold open: the sessions of the HTTP
// transports (streamable /mcp and legacy /sse), each owned by the
// principal that opened it.

// Session limits of [Limits].
const (
	// DefaultMaxPerPrincipal bounds the sessions one principal
	// holds open at once. An agent client keeps one or two; a busy
	// multi-agent host a few dozen.
	DefaultMaxPerPrincipal = 256
	// DefaultInitTimeout is how long a new session may take to
	// complete the initialize handshake (notifications/initialized, or
	// any request after initialize) before it is closed. Real clients
	// send it at once.
	DefaultInitTimeout = 10 * time.Second
)

// Table knows the owner of each open HTTP session, how many each
// owner holds, and closes the sessions that never finish initializing.
// Owners are the UserID of the request's auth.TokenInfo (the principal
// ID), "" when the request carried none.
type Table struct {
	mu       sync.Mutex
	byID     map[string]*sessionEntry
	perOwner map[string]int // open sessions and reservations
}

type sessionEntry struct {
	owner       string
	initialized bool
	reaper      *time.Timer

	// The session itself, for the tools/call fast path (router/transport/mcphttp),
	// which also needs to know whether the client set a log level, and
	// whether it is a legacy SSE session (legacy). The idle timeout is
	// kept here rather than by go-sdk so that POSTs the fast path answers
	// count as activity too.
	ss      *mcp.ServerSession
	legacy  bool
	logs    bool
	ended   context.Context // done when ss has ended
	end     context.CancelFunc
	idle    time.Duration // zero: no idle timeout
	posts   int           // POSTs being served; the idle timer runs at zero
	idleEnd *time.Timer   // nil once the session has ended
	live    liveness      // liveness.go
}

func NewTable() *Table {
	return &Table{byID: make(map[string]*sessionEntry), perOwner: make(map[string]int)}
}

// reserve takes one of owner's max session slots for a session about to be
// opened; false when all are taken. Each true must be followed by opened
// or cancel.
func (t *Table) reserve(owner string, max int) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.perOwner[owner] >= max {
		return false
	}
	t.perOwner[owner]++
	return true
}

// cancel gives back a reservation whose session was not opened.
func (t *Table) cancel(owner string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.release(owner)
}

func (t *Table) release(owner string) {
	if t.perOwner[owner]--; t.perOwner[owner] <= 0 {
		delete(t.perOwner, owner)
	}
}

// opened records the legacy SSE session ss, for which owner reserved a
// slot. Unless the session has initialized within initTimeout, it is
// closed then. The slot is given back when ss ends, whoever ends it: a
// goroutine waits for that, so it lives exactly as long as the session.
// Its liveness is [Limits]' (see liveness.go).
func (t *Table) opened(ss *mcp.ServerSession, owner string, l Limits) {
	e := &sessionEntry{owner: owner, ss: ss, legacy: true}
	t.open(ss, e, l)
}

// OpenedStreamable is opened for a session of the stateful streamable
// transport, called while the POST that opens it is being served (it
// counts as one in [Table.StartPOST]'s sense: the caller ends it
// with endPOST).
func (t *Table) OpenedStreamable(ss *mcp.ServerSession, owner string, l Limits) {
	t.open(ss, &sessionEntry{owner: owner, ss: ss, posts: 1}, l)
}

func (t *Table) open(ss *mcp.ServerSession, e *sessionEntry, l Limits) {
	id := ss.ID()
	e.ended, e.end = context.WithCancel(context.Background())
	e.idle = l.Idle
	if e.idle > 0 {
		e.idleEnd = time.AfterFunc(e.idle, func() { _ = ss.Close() })
		if e.posts > 0 {
			e.idleEnd.Stop()
		}
	}
	e.live.lastRequest = time.Now()
	t.mu.Lock()
	t.byID[id] = e
	e.reaper = time.AfterFunc(l.InitTimeout, func() {
		t.mu.Lock()
		stale := !e.initialized
		t.mu.Unlock()
		if stale {
			_ = ss.Close()
		}
	})
	t.mu.Unlock()
	if l.KeepAlive > 0 {
		go t.keepAlive(ss, e, l)
	}
	go func() {
		_ = ss.Wait()
		e.reaper.Stop()
		t.mu.Lock()
		defer t.mu.Unlock()
		if e.idleEnd != nil {
			e.idleEnd.Stop()
			e.idleEnd = nil
		}
		e.end()
		delete(t.byID, id)
		t.release(e.owner)
	}()
}

// StartPOST and EndPOST bracket each POST served for the streamable
// session id, as go-sdk's own idle timer does: the timer is stopped while
// any runs and restarted when the last ends; both count as requests
// (liveness.go). They do nothing for other sessions.
func (t *Table) StartPOST(id string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if e := t.byID[id]; e != nil && !e.legacy {
		e.live.request()
		if e.posts == 0 && e.idleEnd != nil {
			e.idleEnd.Stop()
		}
		e.posts++
	}
}

func (t *Table) EndPOST(id string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if e := t.byID[id]; e != nil && !e.legacy {
		e.live.request()
		if e.posts--; e.posts == 0 && e.idleEnd != nil {
			e.idleEnd.Reset(e.idle)
		}
	}
}

// Streamable returns what the fast path needs of the open streamable
// session id: the session, its owner, whether it finished initializing,
// whether its client set a log level, and a context done when it ends.
func (t *Table) Streamable(id string) (ss *mcp.ServerSession, owner string, initialized, logs bool, ended context.Context) {
	t.mu.Lock()
	defer t.mu.Unlock()
	e := t.byID[id]
	if e == nil || e.ss == nil || e.legacy {
		return nil, "", false, false, nil
	}
	return e.ss, e.owner, e.initialized, e.logs, e.ended
}

// LegacySSE is [Table.Streamable] for an open legacy SSE session,
// whose end its stream handler reports.
func (t *Table) LegacySSE(id string) (ss *mcp.ServerSession, owner string, initialized, logs bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	e := t.byID[id]
	if e == nil || !e.legacy {
		return nil, "", false, false
	}
	return e.ss, e.owner, e.initialized, e.logs
}

// MarkLogs records that the client of session id asked for log messages
// (logging/setLevel).
func (t *Table) MarkLogs(id string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if e := t.byID[id]; e != nil {
		e.logs = true
	}
}

// MarkInitialized records that session id completed the handshake. The
// transports call opened before the session's id reaches the client, so
// the handshake cannot overtake it.
func (t *Table) MarkInitialized(id string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if e := t.byID[id]; e != nil {
		e.initialized = true
		e.reaper.Stop()
	}
}

// OwnerOf returns the owner of the open session id.
func (t *Table) OwnerOf(id string) (owner string, ok bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if e := t.byID[id]; e != nil {
		return e.owner, true
	}
	return "", false
}

// Owner is the owner of the sessions r may open or use.
func Owner(r *http.Request) string {
	if ti := auth.TokenInfoFromContext(r.Context()); ti != nil {
		return ti.UserID
	}
	return ""
}

// find returns the open session of server with id, or nil.
func find(server *mcp.Server, id string) *mcp.ServerSession {
	for ss := range server.Sessions() {
		if ss.ID() == id {
			return ss
		}
	}
	return nil
}

// WriteNotFound answers a request for a session that does not exist
// for its caller, whether it never existed, has ended, or belongs to
// another principal: the same answer for all three, so that a guessed or
// leaked id tells nothing. It is go-sdk's own answer to an unknown id.
func WriteNotFound(w http.ResponseWriter) {
	http.Error(w, "session not found", http.StatusNotFound)
}

// writeTooMany refuses a new session of a caller at its limit.
func writeTooMany(w http.ResponseWriter, max int) {
	w.Header().Set("Retry-After", "60")
	rpcerror.Write(w, http.StatusTooManyRequests, jsonrpc.ID{}, jsonrpc.CodeInvalidRequest,
		"too many open sessions for this credential (the limit is "+strconv.Itoa(max)+"); end unused ones or let them expire")
}

// sessionCapture hands the Mcp-Session-Id header of a response to
// onHeader as the response starts, before any of it reaches the client.
type sessionCapture struct {
	http.ResponseWriter
	onHeader func(sessionID string)
	captured bool
}

func (c *sessionCapture) capture() {
	if !c.captured {
		c.captured = true
		c.onHeader(c.Header().Get("Mcp-Session-Id"))
	}
}

func (c *sessionCapture) WriteHeader(code int) {
	c.capture()
	c.ResponseWriter.WriteHeader(code)
}

func (c *sessionCapture) Write(p []byte) (int, error) {
	c.capture()
	return c.ResponseWriter.Write(p)
}

// Unwrap lets http.ResponseController (go-sdk flushes through one) reach
// the connection's writer.
func (c *sessionCapture) Unwrap() http.ResponseWriter { return c.ResponseWriter }

// Limits are the per-principal session rules of one HTTP handler.
type Limits struct {
	Table *Table
	// Server is the MCP server whose sessions the transports open.
	Server *mcp.Server
	// Max bounds the sessions one principal holds open.
	Max int
	// InitTimeout closes a session that has not initialized this long
	// after it opened.
	InitTimeout time.Duration
	// Idle closes a session (streamable or legacy SSE) that received no
	// request, and whose client answered no ping, for this long; zero
	// means never.
	Idle time.Duration
	// KeepAlive pings, at this interval, each session that has been idle
	// for as long, when its client has a stream that carries the ping
	// (see liveness.go); zero or negative: no pings.
	KeepAlive time.Duration
	// Logger receives the reason a session is closed for its client's
	// silence; nil discards it.
	Logger *slog.Logger
	// Shared, if set, shares the state of streamable sessions with the
	// other replicas, so that any of them serves any session (shared.go).
	Shared *Shared
}

// ServeStateful serves a request of the stateful streamable transport
// (next): a session id of another principal gets the answer of an unknown
// one, and a request that would open a session is refused when its
// principal holds max already; the session it opens is tracked.
func (l Limits) ServeStateful(next http.Handler, w http.ResponseWriter, req *http.Request) {
	owner := Owner(req)
	if sid := req.Header.Get("Mcp-Session-Id"); sid != "" {
		o, ok := l.Table.OwnerOf(sid)
		if ok && o != owner {
			WriteNotFound(w)
			return
		}
		if l.Shared != nil {
			if !ok && !l.Shared.restore(l, next, req, sid, owner) {
				WriteNotFound(w)
				return
			}
			if req.Method == http.MethodDelete {
				defer l.Shared.forget(req.Context(), sid)
			} else {
				l.Shared.Refresh(req.Context(), sid)
			}
		}
		switch req.Method {
		case http.MethodPost:
			l.Table.StartPOST(sid)
			defer l.Table.EndPOST(sid)
		case http.MethodGet:
			defer l.Table.streamOpen(sid)()
		}
		next.ServeHTTP(w, req)
		return
	}
	if req.Method != http.MethodPost {
		next.ServeHTTP(w, req) // go-sdk refuses it: no session
		return
	}
	if !l.Reserve(w, owner) {
		return
	}
	tracked := ""
	var opened *mcp.ServerSession
	cw := &sessionCapture{ResponseWriter: w, onHeader: func(id string) {
		if ss := find(l.Server, id); id != "" && ss != nil {
			l.Table.OpenedStreamable(ss, owner, l)
			tracked, opened = id, ss
		}
	}}
	if l.Shared != nil {
		// The state is shared before the answer to initialize reaches
		// the client, whose next request may go to another replica.
		sw := &savingWriter{ResponseWriter: cw, save: func() bool {
			if opened == nil || opened.InitializeParams() == nil {
				return false
			}
			l.Shared.save(req.Context(), opened, owner)
			return true
		}}
		l.Shared.Mint.Opening("", func() { next.ServeHTTP(sw, req) })
	} else {
		next.ServeHTTP(cw, req)
	}
	cw.capture()
	if tracked == "" {
		l.Cancel(owner)
	} else {
		l.Table.EndPOST(tracked)
	}
}

// Reserve, Cancel and Opened make Limits the sse.SessionTracker of
// the legacy SSE transport.

// Reserve takes a session slot of owner, or answers 429 and reports false.
func (l Limits) Reserve(w http.ResponseWriter, owner string) bool {
	if l.Table.reserve(owner, l.Max) {
		return true
	}
	writeTooMany(w, l.Max)
	return false
}

// Cancel gives back a slot taken by Reserve for a session not opened.
func (l Limits) Cancel(owner string) { l.Table.cancel(owner) }

// Opened tracks the session opened in a slot taken by Reserve.
func (l Limits) Opened(ss *mcp.ServerSession, owner string) {
	l.Table.opened(ss, owner, l)
}
