package tasks

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/internal/mcpwire"
	"github.com/agents-mcp/agents-mcp/router/internal/rpcerror"
)

// This file is where the task listen streams of one router.HTTPHandler get
// their tasks from, so that many streams cost no more reads than one: one
// shared watcher reads each watched task once per poll, however many streams watch it, backs off
// on tasks that wait for their user, and hands what it read to every
// stream that watches the task. A stream only renders and sends.

// listenReadConcurrency bounds the task reads of one poll in flight at
// once: a backend that reads an upstream (utk_ handles) may be slow, and
// must not hold the other tasks' reads back, nor start hundreds at once.
const listenReadConcurrency = 8

// TaskHub tells the task watcher of each router.HTTPHandler of one replica
// that a task changed, so that it reads the task at once rather than at
// its next poll. [TaskHub.Notify] never blocks: it marks the id on each
// watcher that watches it and wakes the watcher. The zero value is not
// usable; a nil *TaskHub is (it reports nothing).
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
// stream or a read.
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

// Watchers counts the task watchers registered with h, by task id
// watched: one per HTTP handler and task, however many of its streams
// watch the task.
func (h *TaskHub) Watchers() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := 0
	for _, ws := range h.byID {
		n += len(ws)
	}
	return n
}

// add registers w for the changes of task id.
func (h *TaskHub) add(id string, w *taskWatch) {
	if h == nil {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.byID[id] == nil {
		h.byID[id] = map[*taskWatch]struct{}{}
	}
	h.byID[id][w] = struct{}{}
}

// remove undoes add.
func (h *TaskHub) remove(id string, w *taskWatch) {
	if h == nil {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.byID[id], w)
	if len(h.byID[id]) == 0 {
		delete(h.byID, id)
	}
}

// taskWatch is an inbox of changed ids: a set (bounded by the ids
// watched) and a wake-up.
type taskWatch struct {
	mu      sync.Mutex
	changed map[string]bool
	wake    chan struct{} // capacity 1: one pending wake-up is enough
}

func newTaskWatch() *taskWatch {
	return &taskWatch{changed: map[string]bool{}, wake: make(chan struct{}, 1)}
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

// listenSub is one stream's inbox: the newest view of each task that
// changed since the stream last looked (nil: the task is gone for the
// stream's caller), and a wake-up. Memory is bounded by the ids watched.
type listenSub struct {
	mu      sync.Mutex
	pending map[string]*mcpwire.MCPTask
	wake    chan struct{} // capacity 1
	entries []*watchEntry // what the stream watches; owned by the watcher's lock
}

func newListenSub() *listenSub {
	return &listenSub{pending: map[string]*mcpwire.MCPTask{}, wake: make(chan struct{}, 1)}
}

func (s *listenSub) put(id string, t *mcpwire.MCPTask) {
	s.mu.Lock()
	s.pending[id] = t
	s.mu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

func (s *listenSub) take() map[string]*mcpwire.MCPTask {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.pending
	s.pending = map[string]*mcpwire.MCPTask{}
	return out
}

// watchEntry is one task as one kind of caller sees it: the streams that
// watch it, what was read last, and when to read it next.
type watchEntry struct {
	id        string
	key       entryKey
	principal string // whose quota of watched ids it counts in
	// ctx carries the caller's values (principal, credentials) for the
	// reads, without the deadline of the request that opened it.
	ctx     context.Context
	backend mcpwire.TaskBackend
	subs    map[*listenSub]struct{}

	ready    chan struct{} // closed once the first read settled
	view     *mcpwire.MCPTask
	sig      string
	gone     bool // unknown or hidden: no longer read, dropped by its streams
	ended    bool // terminal: no longer read
	interval time.Duration
	due      time.Time
	reading  bool
	// again: the hub reported a change while a read was in flight, which
	// may have missed it; the task is read again at once.
	again bool
}

// entryKey names a watchEntry: the task, as a kind of caller sees it.
type entryKey struct{ visibility, id string }

// polled reports whether the watcher reads e at its due time.
func (e *watchEntry) polled() bool {
	return isClosed(e.ready) && !e.gone && !e.ended && !e.reading
}

func isClosed(c <-chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

// visibilityKey is what makes two callers see a task alike: the principal
// ID and whether it may see every principal's tasks (admin:read). Two
// streams of the same key share one read of a task.
func visibilityKey(p *agentsmcp.Principal) string {
	switch {
	case p == nil:
		return "\x00nil"
	case p.HasScope(agentsmcp.ScopeAdminRead):
		return p.ID + "\x00admin"
	}
	return p.ID + "\x00"
}

// taskWatcher reads the tasks that the listen streams of one
// router.HTTPHandler watch: each (caller kind, task) once per poll, whatever
// the number of streams; a task that waits for its user (input_required)
// less and less often, since only that user changes it, and at once when
// the [TaskHub] reports a change. Its goroutine runs while any task is
// watched and stops with close.
type taskWatcher struct {
	hub     *TaskHub
	poll    time.Duration
	maxPoll time.Duration
	// maxPerPrincipal bounds the distinct task ids one principal's
	// streams watch at once; 0 means no bound.
	maxPerPrincipal int
	logger          *slog.Logger
	inbox           *taskWatch // where the hub marks changed ids

	life     context.Context // cancelled by close: ends reads in flight
	stopLife context.CancelFunc

	mu          sync.Mutex
	entries     map[entryKey]*watchEntry
	byID        map[string]map[*watchEntry]struct{}
	byPrincipal map[string]int
	running     bool
	kick        chan struct{} // capacity 1: an entry became due sooner
	closed      bool
	done        chan struct{} // closed when the goroutine, if any, returned
}

func newTaskWatcher(hub *TaskHub, poll, maxPoll time.Duration, maxPerPrincipal int, logger *slog.Logger) *taskWatcher {
	life, stop := context.WithCancel(context.Background())
	done := make(chan struct{})
	close(done)
	return &taskWatcher{
		hub: hub, poll: poll, maxPoll: max(maxPoll, poll), maxPerPrincipal: maxPerPrincipal, logger: logger,
		inbox: newTaskWatch(), life: life, stopLife: stop,
		entries: map[entryKey]*watchEntry{}, byID: map[string]map[*watchEntry]struct{}{}, byPrincipal: map[string]int{},
		kick: make(chan struct{}, 1), done: done,
	}
}

// close stops the goroutine and waits for it; later subscribes still
// work but nothing is polled.
func (w *taskWatcher) close() {
	w.mu.Lock()
	w.closed = true
	done := w.done
	w.mu.Unlock()
	w.stopLife()
	w.wakeUp()
	<-done
}

func (w *taskWatcher) wakeUp() {
	select {
	case w.kick <- struct{}{}:
	default:
	}
}

// quotaError is the refusal of a stream that would make its principal
// watch more than maxPerPrincipal task ids.
func (w *taskWatcher) quotaError(principal string, watched, asked int) *jsonrpc.Error {
	return &jsonrpc.Error{Code: rpcerror.CodeQuotaExceeded, Message: fmt.Sprintf(
		"subscriptions/listen: the listen streams of principal %q watch %d task ids and this one names %d more; the quota of task ids watched per principal (quotas.listen_task_ids) is %d; close other listen streams, or name fewer tasks",
		principal, watched, asked, w.maxPerPrincipal)}
}

// subscribe registers sub for ids (of the backends that own them) as the
// caller of ctx, reading the tasks that nobody of the caller's kind
// watched yet, and returns the tasks the caller may see, in the order of
// ids, as they are now. The ids the caller may not see are left out and
// not watched. A *jsonrpc.Error refuses the whole stream: the principal's
// quota of watched ids would be exceeded. Call unsubscribe(sub) when the
// stream ends, whatever subscribe returned.
func (w *taskWatcher) subscribe(ctx context.Context, sub *listenSub, ids []string, backends *Backends) ([]*mcpwire.MCPTask, error) {
	p := agentsmcp.PrincipalFrom(ctx)
	vkey, principal := visibilityKey(p), ""
	if p != nil {
		principal = p.ID
	}
	var fresh []*watchEntry
	w.mu.Lock()
	added := 0
	for _, id := range ids {
		if w.entries[entryKey{vkey, id}] == nil {
			added++
		}
	}
	if watched := w.byPrincipal[principal]; w.maxPerPrincipal > 0 && added > 0 && watched+added > w.maxPerPrincipal {
		w.mu.Unlock()
		return nil, w.quotaError(principal, watched, added)
	}
	for _, id := range ids {
		b := backends.Owner(id)
		if b == nil {
			continue
		}
		e := w.entries[entryKey{vkey, id}]
		if e == nil {
			e = &watchEntry{id: id, key: entryKey{vkey, id}, principal: principal, ctx: context.WithoutCancel(ctx), backend: b,
				subs: map[*listenSub]struct{}{}, ready: make(chan struct{}), interval: w.poll}
			w.entries[e.key] = e
			w.byPrincipal[principal]++
			if w.byID[id] == nil {
				w.byID[id] = map[*watchEntry]struct{}{}
				w.hub.add(id, w.inbox)
			}
			w.byID[id][e] = struct{}{}
			fresh = append(fresh, e)
		}
		e.subs[sub] = struct{}{}
		sub.entries = append(sub.entries, e)
	}
	w.mu.Unlock()

	// The first read of a task nobody watched: in the stream's own
	// goroutine, as the acknowledgement needs it.
	for _, e := range fresh {
		t, err := w.read(ctx, e)
		w.mu.Lock()
		w.settle(e, t, err, time.Now(), false)
		close(e.ready)
		w.mu.Unlock()
	}
	for _, e := range sub.entries {
		select {
		case <-e.ready:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	var views []*mcpwire.MCPTask
	kept := sub.entries[:0]
	for _, e := range sub.entries {
		if e.gone || e.view == nil {
			w.drop(e, sub) // unknown, hidden or unreadable: left out, not refused
			continue
		}
		kept = append(kept, e)
		views = append(views, e.view)
	}
	clear(sub.entries[len(kept):])
	sub.entries = kept
	if !w.running && !w.closed {
		w.running = true
		w.done = make(chan struct{})
		go w.run(w.done) // stops when nothing is watched, or at close
	}
	w.wakeUp()
	return views, nil
}

// unsubscribe removes sub from every task it watches; a task no stream
// watches any more is forgotten.
func (w *taskWatcher) unsubscribe(sub *listenSub) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, e := range sub.entries {
		w.drop(e, sub)
	}
	sub.entries = nil
}

// drop removes sub from e, and forgets e when no stream watches it any
// more. w.mu is held.
func (w *taskWatcher) drop(e *watchEntry, sub *listenSub) {
	delete(e.subs, sub)
	if len(e.subs) > 0 || w.entries[e.key] != e {
		return
	}
	delete(w.entries, e.key)
	if w.byPrincipal[e.principal]--; w.byPrincipal[e.principal] <= 0 {
		delete(w.byPrincipal, e.principal)
	}
	delete(w.byID[e.id], e)
	if len(w.byID[e.id]) == 0 {
		delete(w.byID, e.id)
		w.hub.remove(e.id, w.inbox)
	}
}

// read is the backend's GetTask as e's caller, bounded in time, and ended
// by ctx or by close. A backend that panics fails the read, not the
// process: the watcher's goroutines serve every stream.
func (w *taskWatcher) read(ctx context.Context, e *watchEntry) (t *mcpwire.MCPTask, err error) {
	ctx, cancel := context.WithTimeout(ctx, listenReadTimeout)
	defer cancel()
	stop := context.AfterFunc(w.life, cancel)
	defer stop()
	defer func() {
		if v := recover(); v != nil {
			w.logger.Error("listen: a task backend panicked reading a task", "task", e.id, "panic", v)
			t, err = nil, agentsmcp.Errorf(agentsmcp.EINTERNAL, "reading task %s failed", e.id)
		}
	}()
	return e.backend.GetTask(ctx, e.id)
}

// settle records the outcome of a read of e at now and, when what e's
// callers see changed and tell is set, hands it to e's streams. w.mu is
// held.
func (w *taskWatcher) settle(e *watchEntry, t *mcpwire.MCPTask, err error, now time.Time, tell bool) {
	e.reading = false
	defer func() {
		if e.again {
			e.again, e.due, e.interval = false, now, w.poll
		}
	}()
	if err != nil {
		if agentsmcp.ErrorCode(err) == agentsmcp.ENOTFOUND {
			// Deleted, expired, or no longer visible: dropped silently.
			e.gone, e.view = true, nil
			if tell {
				for s := range e.subs {
					s.put(e.id, nil)
				}
			}
			return
		}
		if w.life.Err() == nil {
			w.logger.Debug("listen: reading a task failed; the next poll retries", "task", e.id, "error", err)
		}
		e.due = now.Add(e.interval)
		return
	}
	sig := taskSignature(t)
	switch {
	case sig != e.sig:
		e.interval = w.poll
		if tell {
			for s := range e.subs {
				s.put(e.id, t)
			}
		}
	case t.Status == mcpwire.MCPTaskInputRequired:
		// It waits for its user, and changes when the user answers:
		// through this replica (the hub says so at once) or another one
		// (seen by a poll that comes less and less often).
		e.interval = min(2*e.interval, w.maxPoll)
	default:
		e.interval = w.poll
	}
	e.view, e.sig, e.ended = t, sig, t.Status.Terminal()
	e.due = now.Add(e.interval)
}

// run polls the watched tasks until none is watched or close.
func (w *taskWatcher) run(done chan struct{}) {
	defer close(done)
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		w.mu.Lock()
		if w.closed || len(w.entries) == 0 {
			w.running = false
			w.mu.Unlock()
			return
		}
		now := time.Now()
		for _, id := range w.inbox.take() {
			for e := range w.byID[id] {
				if e.reading || !isClosed(e.ready) {
					e.again = true // its read in flight may not see the change
				} else {
					e.due, e.interval = now, w.poll
				}
			}
		}
		var due []*watchEntry
		next := now.Add(time.Hour)
		for _, e := range w.entries {
			if !e.polled() {
				continue
			}
			if !e.due.After(now) {
				e.reading = true
				due = append(due, e)
			} else if e.due.Before(next) {
				next = e.due
			}
		}
		w.mu.Unlock()

		if len(due) > 0 {
			w.readAll(due)
			continue
		}
		timer.Reset(time.Until(next)) // Go 1.23 timers: no stale tick survives Reset
		select {
		case <-w.life.Done():
		case <-w.kick:
		case <-w.inbox.wake:
		case <-timer.C:
		}
	}
}

// readAll reads the entries, listenReadConcurrency at a time, and settles
// each as its read ends.
func (w *taskWatcher) readAll(entries []*watchEntry) {
	sem := make(chan struct{}, listenReadConcurrency)
	var wg sync.WaitGroup
	for _, e := range entries {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			t, err := w.read(e.ctx, e)
			w.mu.Lock()
			w.settle(e, t, err, time.Now(), true)
			w.mu.Unlock()
		})
	}
	wg.Wait()
}
