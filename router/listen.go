package router

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	agentsmcp "github.com/agents-mcp/agents-mcp"
)

// Task status notifications (SEP-2663, ADR 0010 D5). A 2026-07-28
// subscriptions/listen whose filter names taskIds is served here, at the
// HTTP layer, and never reaches go-sdk: its handler knows a fixed filter
// (list changes and resource URIs), drops taskIds, and a ServerSession
// cannot send a custom notification. Over stdio go-sdk serves every
// listen, so task ids are never acknowledged there: stdio clients poll
// tasks/get.

const (
	// DefaultTaskPollInterval is how often a listen stream reads the
	// tasks it watches, for the changes no [TaskHub] reports: those of
	// tasks run by another replica or held by an upstream.
	DefaultTaskPollInterval = 2 * time.Second
	// MaxListenTaskIDs bounds the task ids one listen stream watches; the
	// ids past it are left out of the acknowledgement.
	MaxListenTaskIDs = 100

	methodListen      = "subscriptions/listen"
	notificationTasks = "notifications/tasks"
	notificationAcked = "notifications/subscriptions/acknowledged"
	// listenKeepAlive is how long a stream may stay silent before a
	// comment line is written, so that idle proxies keep it and a
	// vanished client is noticed.
	listenKeepAlive = 25 * time.Second
	// listenReadTimeout bounds one read of a task by a stream.
	listenReadTimeout = 10 * time.Second
)

// TaskHub tells the listen streams of one replica that a task changed, so
// that they read it at once rather than at their next poll. [Notify]
// never blocks: it marks the id on each stream that watches it and wakes
// the stream, which reads the task with its own caller's rights and
// sends a notification if what the caller sees changed. The zero value
// is not usable; a nil *TaskHub is (it reports nothing).
type TaskHub struct {
	mu     sync.Mutex
	byID   map[string]map[*taskWatch]struct{}
	closed bool
	done   chan struct{}
}

// NewTaskHub returns a hub; [TaskHub.Close] ends the streams that use it.
func NewTaskHub() *TaskHub {
	return &TaskHub{byID: map[string]map[*taskWatch]struct{}{}, done: make(chan struct{})}
}

// Notify reports that task id changed. It is safe to call from any
// goroutine, holds a lock only while marking, and never waits for a
// stream.
func (h *TaskHub) Notify(id string) {
	if h == nil {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	for w := range h.byID[id] {
		w.mark(id)
	}
}

// Close ends every listen stream that uses h (each sends its final
// result) and makes new ones end at once. It is idempotent.
func (h *TaskHub) Close() {
	if h == nil {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.closed {
		h.closed = true
		close(h.done)
	}
}

// closing is closed by Close; nil (never ready) for a nil hub.
func (h *TaskHub) closing() <-chan struct{} {
	if h == nil {
		return nil
	}
	return h.done
}

// watch registers a stream for ids; the returned func unregisters it.
func (h *TaskHub) watch(ids []string) (*taskWatch, func()) {
	w := &taskWatch{changed: map[string]bool{}, wake: make(chan struct{}, 1)}
	if h == nil {
		return w, func() {}
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, id := range ids {
		if h.byID[id] == nil {
			h.byID[id] = map[*taskWatch]struct{}{}
		}
		h.byID[id][w] = struct{}{}
	}
	return w, func() {
		h.mu.Lock()
		defer h.mu.Unlock()
		for _, id := range ids {
			delete(h.byID[id], w)
			if len(h.byID[id]) == 0 {
				delete(h.byID, id)
			}
		}
	}
}

// taskWatch is one stream's inbox: the ids reported changed since it last
// looked (a set, so it is bounded by the ids watched) and a wake-up.
type taskWatch struct {
	mu      sync.Mutex
	changed map[string]bool
	wake    chan struct{} // capacity 1: one pending wake-up is enough
}

func (w *taskWatch) mark(id string) {
	w.mu.Lock()
	w.changed[id] = true
	w.mu.Unlock()
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

func (w *taskWatch) take() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	ids := slices.Sorted(maps.Keys(w.changed))
	clear(w.changed)
	return ids
}

// listenRequest is a subscriptions/listen request as read by the HTTP
// layer.
type listenRequest struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params struct {
		Meta          map[string]any             `json:"_meta"`
		Notifications map[string]json.RawMessage `json:"notifications"`
	} `json:"params"`
	id jsonrpc.ID
}

// taskListen returns body as a listen request for task ids of protocol
// 2026-07-28 or later, or nil: anything else goes to go-sdk.
func taskListen(req *http.Request, body []byte) *listenRequest {
	body = bytes.TrimSpace(body)
	if len(body) == 0 || body[0] != '{' || !bytes.Contains(body, []byte(`"taskIds"`)) || !bytes.Contains(body, []byte(`"`+methodListen+`"`)) {
		return nil
	}
	var l listenRequest
	if json.Unmarshal(body, &l) != nil || l.Method != methodListen || l.Params.Notifications == nil {
		return nil
	}
	if _, ok := l.Params.Notifications["taskIds"]; !ok {
		return nil
	}
	var raw any
	if json.Unmarshal(l.ID, &raw) != nil {
		return nil
	}
	id, err := jsonrpc.MakeID(raw)
	if err != nil || !id.IsValid() {
		return nil
	}
	l.id = id
	version, _ := l.Params.Meta[mcp.MetaKeyProtocolVersion].(string)
	if version == "" {
		version = req.Header.Get("Mcp-Protocol-Version")
	}
	if version < tasksProtocol {
		return nil
	}
	return &l
}

// listenState is what a stream last sent, or saw at its start, of one
// task.
type listenState struct {
	backend agentsmcp.TaskBackend
	seen    string // taskSignature of the last view
	ended   bool   // terminal: no more polls
}

// taskSignature is what makes a change worth a notification: the status,
// the status message, and the keys of the questions asked.
func taskSignature(t *agentsmcp.MCPTask) string {
	keys := slices.Sorted(maps.Keys(t.InputRequests))
	return string(t.Status) + "\x00" + t.StatusMessage + "\x00" + strings.Join(keys, "\x00")
}

// taskListener serves listen streams for task ids. It belongs to one
// [HTTPHandler], whose Close and Shutdown end its streams.
type taskListener struct {
	router *Router
	hub    *TaskHub
	poll   time.Duration
	logger *slog.Logger

	stopOnce sync.Once
	stop     chan struct{}
}

func (l *taskListener) close() { l.stopOnce.Do(func() { close(l.stop) }) }

// serve answers a listen request for task ids: HTTP 400 with -32021 when
// the request does not declare the Tasks extension, else an SSE stream
// that acknowledges the ids the caller may see (the others are left out,
// never refused), sends each of those tasks as it is, then one
// notifications/tasks per change the caller sees, until the client goes
// (the request's context ends) or the server stops (a final listen result
// is sent). Other kinds of notifications in the same filter are not
// acknowledged: a client listens for them on a second stream, which go-sdk
// serves.
func (l *taskListener) serve(w http.ResponseWriter, req *http.Request, lr *listenRequest) {
	if v := req.Header.Get("Mcp-Protocol-Version"); v >= tasksProtocol {
		// go-sdk checks this for the requests it serves (SEP-2243).
		if m := req.Header.Get("Mcp-Method"); m != methodListen {
			writeListenError(w, http.StatusBadRequest, lr.ID, &jsonrpc.Error{Code: mcp.CodeHeaderMismatch,
				Message: fmt.Sprintf("Header mismatch: Mcp-Method %q does not match the body's method %q", m, methodListen)})
			return
		}
	}
	version, _ := lr.Params.Meta[mcp.MetaKeyProtocolVersion].(string)
	if version == "" {
		version = req.Header.Get("Mcp-Protocol-Version")
	}
	if !declaresTasks(version, lr.Params.Meta) {
		writeListenError(w, http.StatusBadRequest, lr.ID, MissingTasksCapability("subscriptions/listen for taskIds"))
		return
	}
	var wanted []string
	if err := json.Unmarshal(lr.Params.Notifications["taskIds"], &wanted); err != nil {
		writeListenError(w, http.StatusBadRequest, lr.ID, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams,
			Message: "subscriptions/listen: notifications.taskIds must be an array of strings"})
		return
	}
	if l.router.Draining() {
		writeListenError(w, http.StatusServiceUnavailable, lr.ID, &jsonrpc.Error{Code: jsonrpc.CodeInternalError,
			Message: "server is shutting down; retry on another replica or after restart"})
		return
	}
	var candidates []string
	for _, id := range wanted {
		if id != "" && !slices.Contains(candidates, id) && len(candidates) < MaxListenTaskIDs {
			candidates = append(candidates, id)
		}
	}
	ctx := req.Context()
	// Watch before the first read, so that a change between the two is
	// not missed (it is compared with what the first read saw).
	watch, unwatch := l.hub.watch(candidates)
	defer unwatch()

	states := map[string]*listenState{}
	acked := []string{}
	var first []*agentsmcp.MCPTask
	tasks := l.router.taskBackendsOrNil()
	for _, id := range candidates {
		b := tasks.owner(id)
		if b == nil {
			continue
		}
		t, err := l.read(ctx, b, id)
		if err != nil {
			continue // unknown, hidden or unreadable: left out, not refused
		}
		states[id] = &listenState{backend: b, seen: taskSignature(t), ended: t.Status.Terminal()}
		acked = append(acked, id)
		first = append(first, t)
	}

	s := &sseWriter{w: w, rc: http.NewResponseController(w)}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	meta := map[string]any{mcp.MetaKeySubscriptionID: lr.ID}
	if s.send(map[string]any{"jsonrpc": "2.0", "method": notificationAcked, "params": map[string]any{
		"_meta": meta, "notifications": map[string]any{"taskIds": acked},
	}}) != nil {
		return
	}
	final := func() {
		_ = s.send(map[string]any{"jsonrpc": "2.0", "id": lr.ID, "result": map[string]any{"resultType": "complete", "_meta": meta}})
	}
	if len(acked) == 0 {
		final() // nothing to listen for, as go-sdk does for an empty filter
		return
	}
	notify := func(t *agentsmcp.MCPTask) error {
		d := renderTask(t, lr.Params.Meta)
		d.Meta = meta
		return s.send(map[string]any{"jsonrpc": "2.0", "method": notificationTasks, "params": d})
	}
	// Each task as it is now, once: a client opens its stream after the
	// CreateTaskResult, and would otherwise miss a change made in between
	// (a task that paused at once) until it polled.
	for _, t := range first {
		if notify(t) != nil {
			return
		}
	}

	check := func(id string) error {
		st := states[id]
		if st == nil {
			return nil
		}
		t, err := l.read(ctx, st.backend, id)
		if err != nil {
			if agentsmcp.ErrorCode(err) == agentsmcp.ENOTFOUND {
				delete(states, id) // deleted, expired, or no longer visible
				return nil
			}
			l.logger.Debug("listen: reading a task failed; next poll retries", "task", id, "error", err)
			return nil
		}
		sig := taskSignature(t)
		st.ended = t.Status.Terminal()
		if sig == st.seen {
			return nil
		}
		st.seen = sig
		return notify(t)
	}

	ticker := time.NewTicker(l.poll)
	defer ticker.Stop()
	for {
		var ids []string
		select {
		case <-ctx.Done():
			return // the client went: nobody to tell
		case <-l.stop:
			final()
			return
		case <-l.hub.closing():
			final()
			return
		case <-watch.wake:
			ids = watch.take()
		case <-ticker.C:
			for id, st := range states {
				if !st.ended {
					ids = append(ids, id)
				}
			}
			slices.Sort(ids)
			if len(ids) == 0 && time.Since(s.last) >= listenKeepAlive {
				if s.comment("keepalive") != nil {
					return
				}
			}
		}
		for _, id := range ids {
			select {
			case <-ctx.Done():
				return
			case <-l.stop:
				final()
				return
			default:
			}
			if err := check(id); err != nil {
				return // the stream broke
			}
		}
	}
}

// read is GetTask with the caller of ctx, bounded in time.
func (l *taskListener) read(ctx context.Context, b agentsmcp.TaskBackend, id string) (*agentsmcp.MCPTask, error) {
	ctx, cancel := context.WithTimeout(ctx, listenReadTimeout)
	defer cancel()
	return b.GetTask(ctx, id)
}

// taskBackendsOrNil is the router's task backends, or nil before the first
// AddTaskBackend.
func (r *Router) taskBackendsOrNil() *taskBackends {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.tasks
}

// sseWriter writes JSON-RPC messages as server-sent events.
type sseWriter struct {
	w    http.ResponseWriter
	rc   *http.ResponseController
	last time.Time // of the last write
}

func (s *sseWriter) send(msg any) error {
	data, err := json.Marshal(msg)
	if err != nil {
		return err
	}
	return s.write("event: message\ndata: " + string(data) + "\n\n")
}

func (s *sseWriter) comment(text string) error { return s.write(": " + text + "\n\n") }

func (s *sseWriter) write(event string) error {
	if _, err := io.WriteString(s.w, event); err != nil {
		return err
	}
	s.last = time.Now()
	return s.rc.Flush()
}

// writeListenError answers a listen request with a JSON-RPC error, whose
// id is the request's, as written.
func writeListenError(w http.ResponseWriter, status int, id json.RawMessage, e *jsonrpc.Error) {
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "error": e})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// taskListen returns the request as a listen for task ids that the router
// serves itself (see [taskListen]), or nil. Its body is the one the guard
// read (or, for a request that did not pass the guard, read again from
// memory and put back).
func (h *HTTPHandler) taskListen(req *http.Request) *listenRequest {
	if req.Method != http.MethodPost || h.listen.router.taskBackendsOrNil() == nil {
		return nil // without a task backend, go-sdk answers (it acks no task ids)
	}
	if body, ok := guardedBodyOf(req); ok {
		return taskListen(req, body)
	}
	body, err := io.ReadAll(req.Body)
	req.Body = io.NopCloser(bytes.NewReader(body))
	if err != nil {
		return nil
	}
	return taskListen(req, body)
}
