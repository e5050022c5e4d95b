package session

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// This file lets any replica serve a stateful streamable session that
// another replica opened (ADR 0016). The replica that answers initialize
// stores the session's state in a store every replica shares, before the
// answer (and so the session id) reaches the client. A replica that gets a
// request for a session id it does not hold reads that state and opens the
// session again under the same id, through go-sdk's own handler: it replays
// initialize with the stored parameters (minting the stored id), then
// notifications/initialized and the stored log level, and then serves the
// request. go-sdk offers no other way to open a session under a given id
// with its custom methods and header checks wired.

// SharedStore keeps the state of stateful sessions for every replica
// (memory/mongo implements it). GetMCPSession returns nil, nil for an id
// that is unknown or expired.
type SharedStore interface {
	PutMCPSession(ctx context.Context, id string, state []byte, expires time.Time) error
	GetMCPSession(ctx context.Context, id string) ([]byte, error)
	DeleteMCPSession(ctx context.Context, id string) error
}

// sharedStoreTimeout bounds each call to the shared store.
const sharedStoreTimeout = 5 * time.Second

// IDMint issues the ids of new stateful sessions (it is the server's
// GetSessionID): random ones, or the id of a session being opened again
// on this replica. Every request that may open a session is served under
// [IDMint.Opening], so that a restored id is never handed to another
// session.
type IDMint struct {
	opening sync.Mutex // held while a request that may open a session is served
	mu      sync.Mutex
	next    string
}

// New returns the id of the session being opened.
func (m *IDMint) New() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	if id := m.next; id != "" {
		m.next = ""
		return id
	}
	return rand.Text()
}

// Opening runs serve, which may open a session, with id as the id that
// session gets ("" for a new random one).
func (m *IDMint) Opening(id string, serve func()) {
	m.opening.Lock()
	defer m.opening.Unlock()
	m.mu.Lock()
	m.next = id
	m.mu.Unlock()
	defer func() {
		m.mu.Lock()
		m.next = ""
		m.mu.Unlock()
	}()
	serve()
}

// sharedState is what a replica needs to open a session again: whose it
// is, the client's initialize parameters (protocol version, capabilities,
// client info) and the log level it asked for. Subscriptions are not
// kept: the server acknowledges resources/subscribe and sends no update.
type sharedState struct {
	Owner      string          `json:"owner"`
	Initialize json.RawMessage `json:"initialize"`
	LogLevel   string          `json:"logLevel,omitempty"`
}

// Shared is the sharing of stateful sessions between replicas. A nil
// *Shared shares nothing.
type Shared struct {
	Store SharedStore
	Mint  *IDMint
	// TTL is how long a stored state outlives the last request that
	// refreshed it: the idle timeout of sessions.
	TTL    time.Duration
	Logger *slog.Logger

	restoring sync.Mutex // one restore at a time, so that one id is opened once
	mu        sync.Mutex
	refreshed map[string]time.Time // when this replica last extended a state
}

func (s *Shared) logger() *slog.Logger {
	if s.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return s.Logger
}

// save stores the state of the session ss of owner, which has just
// answered initialize.
func (s *Shared) save(ctx context.Context, ss *mcp.ServerSession, owner string) {
	params, err := json.Marshal(ss.InitializeParams())
	if err != nil {
		return
	}
	s.put(ctx, ss.ID(), sharedState{Owner: owner, Initialize: params})
}

func (s *Shared) put(ctx context.Context, id string, st sharedState) {
	b, err := json.Marshal(st)
	if err != nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), sharedStoreTimeout)
	defer cancel()
	if err := s.Store.PutMCPSession(ctx, id, b, time.Now().Add(s.ttl())); err != nil {
		s.logger().Warn("the session state could not be shared: another replica will answer its requests 404", "session", id, "error", err)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.refreshed == nil {
		s.refreshed = map[string]time.Time{}
	}
	s.refreshed[id] = time.Now()
}

func (s *Shared) ttl() time.Duration {
	if s.TTL > 0 {
		return s.TTL
	}
	return 24 * time.Hour // no idle timeout: a day, after which the client initializes again
}

func (s *Shared) get(ctx context.Context, id string) (sharedState, bool) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), sharedStoreTimeout)
	defer cancel()
	b, err := s.Store.GetMCPSession(ctx, id)
	if err != nil {
		s.logger().Warn("the shared session state could not be read", "session", id, "error", err)
		return sharedState{}, false
	}
	var st sharedState
	if b == nil || json.Unmarshal(b, &st) != nil {
		return sharedState{}, false
	}
	return st, true
}

// Refresh extends the stored state of session id, at most four times per
// TTL per replica.
func (s *Shared) Refresh(ctx context.Context, id string) {
	now := time.Now()
	s.mu.Lock()
	last, ok := s.refreshed[id]
	if ok && now.Sub(last) < s.ttl()/4 {
		s.mu.Unlock()
		return
	}
	if len(s.refreshed) > 1<<14 {
		for k, t := range s.refreshed {
			if now.Sub(t) > s.ttl() {
				delete(s.refreshed, k)
			}
		}
	}
	s.mu.Unlock()
	if st, found := s.get(ctx, id); found {
		s.put(ctx, id, st)
	}
}

// SetLogLevel records the log level the client of session id asked for.
func (s *Shared) SetLogLevel(ctx context.Context, id, level string) {
	if s == nil {
		return
	}
	if st, found := s.get(ctx, id); found && st.LogLevel != level {
		st.LogLevel = level
		s.put(ctx, id, st)
	}
}

// forget deletes the state of session id, which its client ended.
func (s *Shared) forget(ctx context.Context, id string) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), sharedStoreTimeout)
	defer cancel()
	if err := s.Store.DeleteMCPSession(ctx, id); err != nil {
		s.logger().Warn("the ended session could not be removed from the shared store", "session", id, "error", err)
	}
	s.mu.Lock()
	delete(s.refreshed, id)
	s.mu.Unlock()
}

// restore opens on this replica the session id of owner that another
// replica opened, through next (go-sdk's streamable handler), and tracks
// it in l.Table. It reports false when there is no such session for
// owner (or it could not be opened): the request then gets go-sdk's 404.
func (s *Shared) restore(l Limits, next http.Handler, req *http.Request, id, owner string) bool {
	s.restoring.Lock()
	defer s.restoring.Unlock()
	if _, ok := l.Table.OwnerOf(id); ok {
		return true // a concurrent request restored it
	}
	st, found := s.get(req.Context(), id)
	if !found || st.Owner != owner {
		return false // never existed, expired, or someone else's: the same 404
	}
	var params mcp.InitializeParams
	if json.Unmarshal(st.Initialize, &params) != nil {
		return false
	}
	if !l.Table.reserve(owner, l.Max) {
		return false
	}
	opened := false
	s.Mint.Opening(id, func() {
		replay(next, req, "", "", message("initialize", st.Initialize, true))
		if ss := find(l.Server, id); ss != nil {
			l.Table.OpenedStreamable(ss, owner, l)
			opened = true
		}
	})
	if !opened {
		l.Table.cancel(owner)
		s.logger().Warn("a shared session could not be opened on this replica", "session", id)
		return false
	}
	replay(next, req, id, params.ProtocolVersion, message("notifications/initialized", nil, false))
	l.Table.MarkInitialized(id)
	if st.LogLevel != "" {
		level, _ := json.Marshal(map[string]string{"level": st.LogLevel})
		replay(next, req, id, params.ProtocolVersion, message("logging/setLevel", level, true))
		l.Table.MarkLogs(id)
	}
	l.Table.EndPOST(id)
	s.logger().Info("opened a session of another replica", "session", id, "protocolVersion", params.ProtocolVersion)
	return true
}

// message is a JSON-RPC request (call) or notification.
func message(method string, params json.RawMessage, call bool) []byte {
	m := map[string]any{"jsonrpc": "2.0", "method": method}
	if params != nil {
		m["params"] = params
	}
	if call {
		m["id"] = "restore-" + method
	}
	b, _ := json.Marshal(m)
	return b
}

// replay serves body as a POST of the client of req (its context carries
// the caller's credential, which go-sdk binds the session to) and
// discards the answer.
func replay(next http.Handler, req *http.Request, id, version string, body []byte) {
	r, err := http.NewRequestWithContext(req.Context(), http.MethodPost, req.URL.String(), bytes.NewReader(body))
	if err != nil {
		return
	}
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Accept", "application/json, text/event-stream")
	if id != "" {
		r.Header.Set("Mcp-Session-Id", id)
	}
	if version != "" {
		r.Header.Set("Mcp-Protocol-Version", version)
	}
	r.Host = req.Host
	next.ServeHTTP(&discard{header: http.Header{}}, r)
}

// discard is a ResponseWriter that keeps nothing.
type discard struct {
	header http.Header
	code   int
}

func (d *discard) Header() http.Header         { return d.header }
func (d *discard) Write(b []byte) (int, error) { return len(b), nil }
func (d *discard) WriteHeader(code int)        { d.code = code }
func (d *discard) Flush()                      {}

// savingWriter calls save before each write of the answer that opens a
// session until save reports that it saved the session's state: go-sdk
// writes the headers (the session id) before it handles initialize, and
// the answer only after.
type savingWriter struct {
	http.ResponseWriter
	save  func() bool
	saved bool
}

func (s *savingWriter) Write(p []byte) (int, error) {
	if !s.saved {
		s.saved = s.save()
	}
	return s.ResponseWriter.Write(p)
}

// Unwrap lets http.ResponseController reach the connection's writer.
func (s *savingWriter) Unwrap() http.ResponseWriter { return s.ResponseWriter }
