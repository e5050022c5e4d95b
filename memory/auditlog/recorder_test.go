package auditlog_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/internal/testutil"
	"github.com/agents-mcp/agents-mcp/memory/auditlog"
	"github.com/agents-mcp/agents-mcp/memory/sqlite"
)

// openStore opens a real SQLite store on a fresh file, closed when t ends.
func openStore(t *testing.T) *sqlite.DB {
	t.Helper()
	db, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "audit.db"))
	if err != nil {
		t.Fatalf("sqlite.Open: %v", err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// start runs rec until the returned stop is called (or t ends); stop
// waits for Run to return, final flush included.
func start(t *testing.T, rec *auditlog.Recorder) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		rec.Run(ctx)
	}()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			select {
			case <-done:
			case <-time.After(10 * time.Second):
				t.Fatal("Run did not return within 10 s of its context ending")
			}
		})
	}
	t.Cleanup(stop)
	return stop
}

// stored returns every entry in store, newest first.
func stored(t *testing.T, store agentsmcp.AuditService) []*agentsmcp.AuditEntry {
	t.Helper()
	var all []*agentsmcp.AuditEntry
	f := agentsmcp.AuditFilter{Limit: agentsmcp.MaxPageSize}
	for {
		items, next, err := store.FindAuditEntries(context.Background(), f)
		if err != nil {
			t.Fatalf("FindAuditEntries: %v", err)
		}
		all = append(all, items...)
		if next == "" {
			return all
		}
		f.Cursor = next
	}
}

func toolCall(target string) *agentsmcp.AuditEntry {
	return &agentsmcp.AuditEntry{Principal: "key:0123456789ab", Kind: agentsmcp.AuditToolCall, Target: target,
		Transport: "streamable", Outcome: agentsmcp.AuditOK, Latency: 3 * time.Millisecond}
}

func TestRecordWritesRedactedEntries(t *testing.T) {
	db := openStore(t)
	rec := auditlog.New(db, auditlog.Options{FlushInterval: 10 * time.Millisecond})
	start(t, rec)

	call := toolCall("files__read_file")
	call.RequestID = "req-1"
	call.Arguments = json.RawMessage(`{"path":"/tmp/x","api_key":"sk-live-secret-value-123456","note":"Bearer abc.def-123"}`)
	call.Latency = -time.Second
	denied := &agentsmcp.AuditEntry{
		Principal: "presented ghp_0123456789abcdefghijABCDEFGHIJ \xff" + strings.Repeat("p", 600),
		Kind:      agentsmcp.AuditAuthFailure, Target: "POST /mcp", Outcome: agentsmcp.AuditDenied,
		Error: "unauthorized: bad token for https://u:hunter2@example.com",
	}
	write := &agentsmcp.AuditEntry{Principal: "jwt:alice", Kind: agentsmcp.AuditAdminWrite, Target: "PUT /admin/upstreams/{name}",
		Transport: "admin", Arguments: json.RawMessage(`{"name":"files", "env": {"GITHUB_TOKEN": "x"`), Outcome: agentsmcp.AuditError}
	for _, e := range []*agentsmcp.AuditEntry{call, denied, write} {
		rec.Record(e)
	}
	// Written counts a batch a moment before Pending lets it go.
	testutil.Eventually(t, 5*time.Second, "3 entries written", func() bool { return rec.Written() == 3 && rec.Pending() == 0 })
	if rec.Pending() != 0 || rec.Dropped() != 0 {
		t.Errorf("Pending %d, Dropped %d; want 0, 0", rec.Pending(), rec.Dropped())
	}

	got := stored(t, db)
	if len(got) != 3 {
		t.Fatalf("%d entries stored, want 3", len(got))
	}
	byTarget := map[string]*agentsmcp.AuditEntry{}
	for _, e := range got {
		byTarget[e.Target] = e
		if !agentsmcp.IDPattern.MatchString(e.ID) || e.At.IsZero() || time.Since(e.At) > time.Minute {
			t.Errorf("entry %s: id %q, at %v; want an assigned id and the time of the call", e.Target, e.ID, e.At)
		}
		all, _ := json.Marshal(e)
		for _, secret := range []string{"sk-live-secret", "abc.def-123", "ghp_0123", "hunter2", `"x"`} {
			if bytes.Contains(all, []byte(secret)) {
				t.Errorf("entry %s keeps the secret %q: %s", e.Target, secret, all)
			}
		}
	}
	if e := byTarget["files__read_file"]; e == nil || e.RequestID != "req-1" || e.Latency != 0 ||
		string(e.Arguments) != `{"path":"/tmp/x","api_key":"[redacted]","note":"Bearer [redacted]"}` {
		t.Errorf("tool call stored as %+v (arguments %s)", e, e.Arguments)
	}
	if e := byTarget["POST /mcp"]; e == nil || len(e.Principal) > agentsmcp.MaxAuditFieldBytes ||
		!strings.HasPrefix(e.Principal, "presented [redacted] \uFFFDppp") || !strings.Contains(e.Error, "https://u:xxxxx@example.com") {
		t.Errorf("auth failure stored as %+v", e)
	}
	if e := byTarget["PUT /admin/upstreams/{name}"]; e == nil || !strings.HasPrefix(string(e.Arguments), `"[not valid JSON`) {
		t.Errorf("admin write stored as %+v (arguments %s)", e, e.Arguments)
	}
}

// countingStore is the real store, with the sizes of the batches it was
// given.
type countingStore struct {
	agentsmcp.AuditService
	mu    sync.Mutex
	sizes []int
}

func (s *countingStore) CreateAuditEntries(ctx context.Context, entries []*agentsmcp.AuditEntry) error {
	s.mu.Lock()
	s.sizes = append(s.sizes, len(entries))
	s.mu.Unlock()
	return s.AuditService.CreateAuditEntries(ctx, entries)
}

func (s *countingStore) batches() []int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]int(nil), s.sizes...)
}

func TestBatchesAndFlushOnStop(t *testing.T) {
	db := openStore(t)
	store := &countingStore{AuditService: db}
	rec := auditlog.New(store, auditlog.Options{BatchSize: 10, FlushInterval: time.Hour})
	for i := range 35 {
		rec.Record(toolCall("t" + string(rune('a'+i%26))))
	}
	if rec.Pending() != 35 {
		t.Fatalf("Pending %d before Run, want 35", rec.Pending())
	}
	stop := start(t, rec)
	// Only full batches are written while the flush interval (an hour) has
	// not passed.
	testutil.Eventually(t, 5*time.Second, "3 full batches", func() bool { return rec.Written() == 30 })
	time.Sleep(50 * time.Millisecond)
	if got := store.batches(); len(got) != 3 || got[0] != 10 || got[1] != 10 || got[2] != 10 {
		t.Fatalf("batches %v, want [10 10 10]", got)
	}
	if rec.Pending() != 5 {
		t.Errorf("Pending %d, want the 5 of the unfinished batch", rec.Pending())
	}
	stop() // the final flush writes the rest
	if got := store.batches(); len(got) != 4 || got[3] != 5 {
		t.Errorf("batches %v, want [10 10 10 5]", got)
	}
	if n := len(stored(t, db)); n != 35 || rec.Written() != 35 || rec.Pending() != 0 || rec.Dropped() != 0 {
		t.Errorf("stored %d, Written %d, Pending %d, Dropped %d; want 35, 35, 0, 0", n, rec.Written(), rec.Pending(), rec.Dropped())
	}
	rec.Record(toolCall("late"))
	if rec.Dropped() != 1 || rec.Pending() != 0 {
		t.Errorf("after Run returned: Dropped %d, Pending %d; want 1, 0", rec.Dropped(), rec.Pending())
	}
}

func TestFlushInterval(t *testing.T) {
	db := openStore(t)
	rec := auditlog.New(db, auditlog.Options{BatchSize: 100, FlushInterval: 20 * time.Millisecond})
	start(t, rec)
	rec.Record(toolCall("a"))
	rec.Record(toolCall("b"))
	testutil.Eventually(t, 5*time.Second, "a partial batch written after the flush interval", func() bool { return len(stored(t, db)) == 2 })
}

// blockingStore is the real store behind a gate: writes wait until the
// gate opens (or their context ends).
type blockingStore struct {
	agentsmcp.AuditService
	gate  chan struct{}
	calls atomic.Int32
}

func (s *blockingStore) CreateAuditEntries(ctx context.Context, entries []*agentsmcp.AuditEntry) error {
	s.calls.Add(1)
	select {
	case <-s.gate:
	case <-ctx.Done():
		return ctx.Err()
	}
	return s.AuditService.CreateAuditEntries(ctx, entries)
}

// logCounter counts log records by message.
type logCounter struct {
	mu   sync.Mutex
	msgs []string
}

func (h *logCounter) Enabled(context.Context, slog.Level) bool { return true }
func (h *logCounter) Handle(_ context.Context, r slog.Record) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.msgs = append(h.msgs, r.Message)
	return nil
}
func (h *logCounter) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *logCounter) WithGroup(string) slog.Handler      { return h }
func (h *logCounter) count(substr string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := 0
	for _, m := range h.msgs {
		if strings.Contains(m, substr) {
			n++
		}
	}
	return n
}

func TestDropsWhenStoreIsBlocked(t *testing.T) {
	db := openStore(t)
	store := &blockingStore{AuditService: db, gate: make(chan struct{})}
	logs := &logCounter{}
	rec := auditlog.New(store, auditlog.Options{
		QueueSize: 8, BatchSize: 4, FlushInterval: time.Millisecond, EnqueueWait: 2 * time.Millisecond,
		WriteTimeout: time.Hour, LogInterval: time.Hour, Logger: slog.New(logs),
	})
	start(t, rec)
	rec.Record(toolCall("first")) // taken into the batch that blocks
	testutil.Eventually(t, 5*time.Second, "the first write to block", func() bool { return store.calls.Load() == 1 })

	const n = 100
	var slowest time.Duration
	for range n - 1 {
		begin := time.Now()
		rec.Record(toolCall("t"))
		slowest = max(slowest, time.Since(begin))
	}
	if slowest > 500*time.Millisecond {
		t.Errorf("Record blocked for %v with the store stuck; want about EnqueueWait (2 ms)", slowest)
	}
	dropped := rec.Dropped()
	// The blocked batch holds 1 entry and the queue 8: the rest is dropped.
	if dropped != n-1-8 || rec.Pending() != 1+8 {
		t.Errorf("Dropped %d, Pending %d; want %d and %d", dropped, rec.Pending(), n-1-8, 1+8)
	}
	if c := logs.count("queue full"); c != 1 {
		t.Errorf("%d warnings about the full queue; want exactly 1 per LogInterval", c)
	}

	close(store.gate)
	testutil.Eventually(t, 5*time.Second, "the queue to drain", func() bool { return rec.Pending() == 0 })
	if got := len(stored(t, db)); got != n-int(dropped) || rec.Written() != uint64(got) {
		t.Errorf("stored %d, Written %d; want %d (every entry not dropped)", got, rec.Written(), n-int(dropped))
	}
}

func TestStopGivesUpAfterFlushTimeout(t *testing.T) {
	db := openStore(t)
	store := &blockingStore{AuditService: db, gate: make(chan struct{})} // never opens
	rec := auditlog.New(store, auditlog.Options{BatchSize: 2, FlushInterval: time.Millisecond,
		FlushTimeout: 100 * time.Millisecond, MinBackoff: time.Millisecond})
	stop := start(t, rec)
	for range 5 {
		rec.Record(toolCall("t"))
	}
	testutil.Eventually(t, 5*time.Second, "a write to block", func() bool { return store.calls.Load() >= 1 })
	begin := time.Now()
	stop()
	if d := time.Since(begin); d > 2*time.Second {
		t.Errorf("stopping took %v with FlushTimeout 100 ms", d)
	}
	if rec.Dropped() != 5 || rec.Pending() != 0 || rec.Written() != 0 {
		t.Errorf("Dropped %d, Pending %d, Written %d; want 5, 0, 0", rec.Dropped(), rec.Pending(), rec.Written())
	}
}

// flakyStore is the real store that first fails a number of writes, as a
// store does while it is unreachable.
type flakyStore struct {
	agentsmcp.AuditService
	failures atomic.Int32
	calls    atomic.Int32
}

func (s *flakyStore) CreateAuditEntries(ctx context.Context, entries []*agentsmcp.AuditEntry) error {
	s.calls.Add(1)
	if s.failures.Add(-1) >= 0 {
		return agentsmcp.Errorf(agentsmcp.EUNAVAILABLE, "the memory store is unavailable")
	}
	return s.AuditService.CreateAuditEntries(ctx, entries)
}

func TestRetriesFailingStore(t *testing.T) {
	db := openStore(t)
	store := &flakyStore{AuditService: db}
	store.failures.Store(4)
	logs := &logCounter{}
	rec := auditlog.New(store, auditlog.Options{BatchSize: 5, FlushInterval: time.Millisecond,
		MinBackoff: time.Millisecond, MaxBackoff: 4 * time.Millisecond, LogInterval: time.Hour, Logger: slog.New(logs)})
	start(t, rec)
	for range 20 {
		rec.Record(toolCall("t"))
	}
	testutil.Eventually(t, 5*time.Second, "every entry written", func() bool { return rec.Written() == 20 })
	if got := len(stored(t, db)); got != 20 || rec.Dropped() != 0 {
		t.Errorf("stored %d, Dropped %d; want 20, 0", got, rec.Dropped())
	}
	if store.calls.Load() < 4+4 {
		t.Errorf("%d store calls; want the 4 failures retried", store.calls.Load())
	}
	if c := logs.count("retrying"); c != 1 {
		t.Errorf("%d warnings about failed writes; want 1 per LogInterval", c)
	}
}

// pickyStore is the real store that refuses, as invalid, any batch
// holding an entry with target "poison".
type pickyStore struct{ agentsmcp.AuditService }

func (s pickyStore) CreateAuditEntries(ctx context.Context, entries []*agentsmcp.AuditEntry) error {
	for _, e := range entries {
		if e.Target == "poison" {
			return agentsmcp.Errorf(agentsmcp.EINVALID, "poisoned")
		}
	}
	return s.AuditService.CreateAuditEntries(ctx, entries)
}

func TestRejectedEntryDoesNotSinkItsBatch(t *testing.T) {
	db := openStore(t)
	rec := auditlog.New(pickyStore{db}, auditlog.Options{BatchSize: 5, FlushInterval: time.Hour})
	for _, target := range []string{"a", "b", "poison", "c", "d"} {
		rec.Record(toolCall(target))
	}
	start(t, rec)
	testutil.Eventually(t, 5*time.Second, "the batch to be handled", func() bool { return rec.Pending() == 0 })
	if got := len(stored(t, db)); got != 4 || rec.Dropped() != 1 || rec.Written() != 4 {
		t.Errorf("stored %d, Dropped %d, Written %d; want 4, 1, 4", got, rec.Dropped(), rec.Written())
	}
}

func TestInvalidEntryIsDropped(t *testing.T) {
	db := openStore(t)
	rec := auditlog.New(db, auditlog.Options{})
	rec.Record(&agentsmcp.AuditEntry{Kind: "login", Target: "x", Outcome: agentsmcp.AuditOK})
	rec.Record(&agentsmcp.AuditEntry{Kind: agentsmcp.AuditToolCall, Outcome: agentsmcp.AuditOK}) // no target
	rec.Record(nil)
	if rec.Dropped() != 2 || rec.Pending() != 0 {
		t.Errorf("Dropped %d, Pending %d; want 2, 0", rec.Dropped(), rec.Pending())
	}
}

func TestRetention(t *testing.T) {
	db := openStore(t)
	now := time.Now()
	var old, recent []*agentsmcp.AuditEntry
	for i := range 30 {
		e := toolCall("old")
		e.At = now.Add(-48*time.Hour - time.Duration(i)*time.Minute)
		old = append(old, e)
	}
	for i := range 5 {
		e := toolCall("recent")
		e.At = now.Add(-time.Duration(i) * time.Hour)
		recent = append(recent, e)
	}
	if err := db.CreateAuditEntries(t.Context(), append(old, recent...)); err != nil {
		t.Fatal(err)
	}
	rec := auditlog.New(db, auditlog.Options{Retention: 24 * time.Hour, RetentionInterval: time.Hour})
	start(t, rec)
	testutil.Eventually(t, 5*time.Second, "retention to delete the old entries", func() bool { return len(stored(t, db)) == len(recent) })
	for _, e := range stored(t, db) {
		if e.Target != "recent" {
			t.Errorf("entry at %v survived retention", e.At)
		}
	}
}

func TestNoRetentionByDefault(t *testing.T) {
	db := openStore(t)
	old := toolCall("old")
	old.At = time.Now().Add(-365 * 24 * time.Hour)
	if err := db.CreateAuditEntries(t.Context(), []*agentsmcp.AuditEntry{old}); err != nil {
		t.Fatal(err)
	}
	rec := auditlog.New(db, auditlog.Options{FlushInterval: time.Millisecond})
	stop := start(t, rec)
	rec.Record(toolCall("new"))
	testutil.Eventually(t, 5*time.Second, "the new entry", func() bool { return rec.Written() == 1 })
	stop()
	if got := len(stored(t, db)); got != 2 {
		t.Errorf("%d entries left; with Retention 0 nothing is deleted (want 2)", got)
	}
}

func TestRunTwiceReturns(t *testing.T) {
	rec := auditlog.New(openStore(t), auditlog.Options{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan struct{}, 2)
	for range 2 {
		go func() {
			rec.Run(ctx)
			done <- struct{}{}
		}()
	}
	select {
	case <-done: // whichever came second
	case <-time.After(5 * time.Second):
		t.Fatal("a second Run did not return")
	}
	cancel()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not return after its context ended")
	}
}

// TestConcurrentRecord records from many goroutines while Run stops: every
// entry is either written or counted as dropped, never lost silently.
func TestConcurrentRecord(t *testing.T) {
	db := openStore(t)
	rec := auditlog.New(db, auditlog.Options{QueueSize: 64, BatchSize: 16, FlushInterval: time.Millisecond})
	stop := start(t, rec)
	var wg sync.WaitGroup
	const goroutines, each = 8, 50
	for range goroutines {
		wg.Go(func() {
			for range each {
				rec.Record(toolCall("t"))
			}
		})
	}
	time.Sleep(5 * time.Millisecond)
	stop()
	wg.Wait()
	if rec.Pending() != 0 {
		t.Errorf("Pending %d after Run returned", rec.Pending())
	}
	got := uint64(len(stored(t, db)))
	if got != rec.Written() || got+rec.Dropped() != goroutines*each {
		t.Errorf("stored %d, Written %d, Dropped %d; want stored = Written and Written + Dropped = %d",
			got, rec.Written(), rec.Dropped(), goroutines*each)
	}
}
