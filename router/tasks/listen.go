package tasks

import (
	"bytes"
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

	"github.com/agents-mcp/agents-mcp/internal/mcpwire"
)

// Task status notifications (SEP-2663, ADR 0010 D5). A 2026-07-28
// subscriptions/listen whose filter names taskIds is served here, at the
// HTTP layer, and never reaches go-sdk: its handler knows a fixed filter
// (list changes and resource URIs), drops taskIds, and a ServerSession
// cannot send a custom notification. Over stdio go-sdk serves every
// listen, so task ids are never acknowledged there: stdio clients poll
// tasks/get.

const (
	// DefaultTaskPollInterval is how often the tasks that listen streams
	// watch are read, for the changes no [TaskHub] reports: those of
	// tasks run by another replica or held by an upstream. Each task is
	// read once per interval, however many streams watch it.
	DefaultTaskPollInterval = 2 * time.Second
	// DefaultTaskPollMaxInterval bounds the backoff of a watched task
	// that waits for its user (input_required): its interval doubles at
	// each read that finds it unchanged, up to this. The user's answer
	// through this replica is reported by the hub at once; through
	// another replica it is seen within this long.
	DefaultTaskPollMaxInterval = 30 * time.Second
	// MaxListenTaskIDs bounds the task ids one listen stream watches; the
	// ids past it are left out of the acknowledgement.
	MaxListenTaskIDs = 100
	// DefaultMaxListenTaskIDsPerPrincipal bounds the distinct task ids
	// the listen streams of one principal watch at once on one replica:
	// ten full streams. A stream that would go past it is refused with
	// HTTP 429 and [rpcerror.CodeQuotaExceeded] (router.CodeQuotaExceeded).
	DefaultMaxListenTaskIDsPerPrincipal = 1000

	methodListen      = "subscriptions/listen"
	notificationTasks = "notifications/tasks"
	notificationAcked = "notifications/subscriptions/acknowledged"
	// listenKeepAlive is how long a stream may stay silent before a
	// comment line is written, so that idle proxies keep it and a
	// vanished client is noticed.
	listenKeepAlive = 25 * time.Second
	// listenReadTimeout bounds one read of a watched task.
	listenReadTimeout = 10 * time.Second
)

// ListenRequest is a subscriptions/listen request for task ids, as read
// by the HTTP layer ([ParseListen]).
type ListenRequest struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params struct {
		Meta          map[string]any             `json:"_meta"`
		Notifications map[string]json.RawMessage `json:"notifications"`
	} `json:"params"`
	id jsonrpc.ID
	// caps are the protocol capabilities of the request's client, which
	// ParseListen, the edge of listen requests, computes once.
	caps mcpwire.Capabilities
}

// ParseListen returns body as a listen request for task ids of protocol
// 2026-07-28 or later, or nil: anything else goes to go-sdk.
func ParseListen(req *http.Request, body []byte) *ListenRequest {
	body = bytes.TrimSpace(body)
	if len(body) == 0 || body[0] != '{' || !bytes.Contains(body, []byte(`"taskIds"`)) || !bytes.Contains(body, []byte(`"`+methodListen+`"`)) {
		return nil
	}
	var l ListenRequest
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
	l.caps = mcpwire.MetaCapabilities(l.Params.Meta, req.Header.Get("Mcp-Protocol-Version"))
	if !l.caps.Sessionless() {
		return nil
	}
	return &l
}

// taskSignature is what makes a change worth a notification: the status,
// the status message, and the keys of the questions asked.
func taskSignature(t *mcpwire.MCPTask) string {
	keys := slices.Sorted(maps.Keys(t.InputRequests))
	return string(t.Status) + "\x00" + t.StatusMessage + "\x00" + strings.Join(keys, "\x00")
}

// Listener serves listen streams for task ids. It belongs to one of the
// router's HTTP handlers, whose Close and Shutdown end its streams
// ([Listener.Close]); its watcher reads the tasks for all of them.
type Listener struct {
	opts    ListenerOptions
	watcher *taskWatcher

	stopOnce sync.Once
	stop     chan struct{}
}

// ListenerOptions configure a [Listener].
type ListenerOptions struct {
	// Hub, if set, wakes the streams of the tasks it is told about.
	Hub *TaskHub
	// Poll and MaxPoll are the read interval of a watched task and its
	// bound under backoff ([DefaultTaskPollInterval],
	// [DefaultTaskPollMaxInterval]).
	Poll, MaxPoll time.Duration
	// MaxPerPrincipal bounds the task ids the streams of one principal
	// watch at once; zero means no bound.
	MaxPerPrincipal int
	// Charge, if set, charges a stream's task ids beyond the first to
	// its caller's rate limit (router.HTTPOptions.ChargeListen).
	Charge func(w http.ResponseWriter, r *http.Request, extra int) bool
	// Draining reports whether the server is shutting down: new streams
	// are then refused.
	Draining func() bool
	// Backends are the task backends, nil before the first.
	Backends func() *Backends
	Logger   *slog.Logger
}

// NewListener returns a listener; [Listener.Close] stops it.
func NewListener(opts ListenerOptions) *Listener {
	return &Listener{
		opts: opts, stop: make(chan struct{}),
		watcher: newTaskWatcher(opts.Hub, opts.Poll, opts.MaxPoll, opts.MaxPerPrincipal, opts.Logger),
	}
}

// Close ends the listener's streams, each with a final listen result, and
// stops its watcher.
func (l *Listener) Close() {
	l.stopOnce.Do(func() {
		close(l.stop)
		l.watcher.close()
	})
}

// Serve answers a listen request for task ids: HTTP 400 with -32021 when
// the request does not declare the Tasks extension, HTTP 429 when its
// task ids cost more than the caller's rate limit allows or would make
// its principal watch more than its quota of task ids, else an SSE stream
// that acknowledges the ids the caller may see (the others are left out,
// never refused), sends each of those tasks as it is, then one
// notifications/tasks per change the caller sees, until the client goes
// (the request's context ends) or the server stops (a final listen result
// is sent). Other kinds of notifications in the same filter are not
// acknowledged: a client listens for them on a second stream, which go-sdk
// serves.
func (l *Listener) Serve(w http.ResponseWriter, req *http.Request, lr *ListenRequest) {
	if v := req.Header.Get("Mcp-Protocol-Version"); mcpwire.Revision(v).Sessionless() {
		// go-sdk checks this for the requests it serves (SEP-2243).
		if m := req.Header.Get("Mcp-Method"); m != methodListen {
			writeListenError(w, http.StatusBadRequest, lr.ID, &jsonrpc.Error{Code: mcp.CodeHeaderMismatch,
				Message: fmt.Sprintf("Header mismatch: Mcp-Method %q does not match the body's method %q", m, methodListen)})
			return
		}
	}
	if !lr.caps.Tasks() {
		writeListenError(w, http.StatusBadRequest, lr.ID, MissingTasksCapability("subscriptions/listen for taskIds"))
		return
	}
	var wanted []string
	if err := json.Unmarshal(lr.Params.Notifications["taskIds"], &wanted); err != nil {
		writeListenError(w, http.StatusBadRequest, lr.ID, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams,
			Message: "subscriptions/listen: notifications.taskIds must be an array of strings"})
		return
	}
	if l.opts.Draining != nil && l.opts.Draining() {
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
	// Each task id is a request's worth of work (at least its first
	// read): the stream was charged one request in front, as a POST; its
	// other ids are charged here, as the messages of a batch are.
	if l.opts.Charge != nil && len(candidates) > 1 && !l.opts.Charge(w, req, len(candidates)-1) {
		return
	}
	ctx := req.Context()
	sub := newListenSub()
	defer l.watcher.unsubscribe(sub)
	first, err := l.watcher.subscribe(ctx, sub, candidates, l.opts.Backends())
	if err != nil {
		if je, ok := err.(*jsonrpc.Error); ok {
			writeListenError(w, http.StatusTooManyRequests, lr.ID, je)
		}
		return // else the client went
	}
	seen := map[string]string{} // id → taskSignature of the last view sent
	acked := []string{}
	for _, t := range first {
		seen[t.ID] = taskSignature(t)
		acked = append(acked, t.ID)
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
	notify := func(t *mcpwire.MCPTask) error {
		d := detailedTaskFor(t, lr.caps)
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

	keepAlive := time.NewTicker(listenKeepAlive / 5)
	defer keepAlive.Stop()
	for {
		select {
		case <-ctx.Done():
			return // the client went: nobody to tell
		case <-l.stop:
			final()
			return
		case <-l.opts.Hub.closing():
			final()
			return
		case <-keepAlive.C:
			if time.Since(s.last) >= listenKeepAlive && s.comment("keepalive") != nil {
				return
			}
			continue
		case <-sub.wake:
		}
		changed := sub.take()
		for _, id := range slices.Sorted(maps.Keys(changed)) {
			last, watched := seen[id]
			t := changed[id]
			switch {
			case !watched:
			case t == nil:
				delete(seen, id) // deleted, expired, or no longer visible
			case taskSignature(t) != last:
				seen[id] = taskSignature(t)
				if notify(t) != nil {
					return // the stream broke
				}
			}
		}
	}
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
