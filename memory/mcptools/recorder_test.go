package mcptools_test

import (
	"bytes"
	"context"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/memory/mcptools"
	"github.com/agents-mcp/agents-mcp/memory/sqlite"
)

// writeCounter is a real SQLite store that counts the batches written to
// it: each RecordToolCalls of the SQLite store is one transaction.
type writeCounter struct {
	*sqlite.DB
	mu      sync.Mutex
	batches []int // sizes, in order
}

func (w *writeCounter) RecordToolCalls(ctx context.Context, calls []agentsmcp.ToolCall) error {
	w.mu.Lock()
	w.batches = append(w.batches, len(calls))
	w.mu.Unlock()
	return w.DB.RecordToolCalls(ctx, calls)
}

func (w *writeCounter) sizes() []int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]int(nil), w.batches...)
}

func openCounter(t *testing.T) *writeCounter {
	t.Helper()
	db, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "m.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return &writeCounter{DB: db}
}

// run starts rec.Run; the returned stop ends it and waits for it.
func run(t *testing.T, rec *mcptools.Recorder) (stop func()) {
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

func calls(t *testing.T, store agentsmcp.ToolPerformanceService, tool string) int64 {
	t.Helper()
	p, err := store.FindToolPerformance(context.Background(), tool)
	if agentsmcp.ErrorCode(err) == agentsmcp.ENOTFOUND {
		return 0
	}
	if err != nil {
		t.Fatal(err)
	}
	return p.Calls
}

// TestRecorderWritesBatches: 600 calls queued before Run are written as
// full batches of 256 and the rest; Flush writes the rest without waiting
// for the (hour-long) flush interval, and a reader then sees every call.
func TestRecorderWritesBatches(t *testing.T) {
	store := openCounter(t)
	rec := mcptools.NewRecorder(store, mcptools.RecorderOptions{QueueSize: 1000, FlushInterval: time.Hour})
	for i := range 600 {
		errText := ""
		if i%3 == 0 {
			errText = "boom"
		}
		rec.Record([]string{"a", "b"}[i%2], time.Millisecond, errText)
	}
	run(t, rec)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := rec.Flush(ctx); err != nil {
		t.Fatalf("Flush: %v", err)
	}
	if got := store.sizes(); len(got) != 3 || got[0] != 256 || got[1] != 256 || got[2] != 88 {
		t.Errorf("batches written %v, want [256 256 88]: one store write per batch", got)
	}
	if a, b := calls(t, store, "a"), calls(t, store, "b"); a != 300 || b != 300 {
		t.Errorf("stored calls a=%d b=%d, want 300 each", a, b)
	}
	if rec.Written() != 600 || rec.Dropped() != 0 {
		t.Errorf("Written %d Dropped %d, want 600, 0", rec.Written(), rec.Dropped())
	}
}

// TestRecorderFlushesByTime: a lone call is written within the flush
// interval, without Flush.
func TestRecorderFlushesByTime(t *testing.T) {
	store := openCounter(t)
	rec := mcptools.NewRecorder(store, mcptools.RecorderOptions{FlushInterval: 10 * time.Millisecond})
	run(t, rec)
	rec.Record("a", time.Millisecond, "")
	deadline := time.Now().Add(5 * time.Second)
	for rec.Written() != 1 {
		if time.Now().After(deadline) {
			t.Fatal("a lone call was not written within 5 s with a 10 ms flush interval")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if got := store.sizes(); len(got) != 1 || got[0] != 1 {
		t.Errorf("batches %v, want [1]", got)
	}
}

// TestRecorderDrainsAtShutdown: what is queued when Run's context ends is
// written before Run returns; a call recorded after is dropped and
// counted.
func TestRecorderDrainsAtShutdown(t *testing.T) {
	store := openCounter(t)
	rec := mcptools.NewRecorder(store, mcptools.RecorderOptions{QueueSize: 2000, FlushInterval: time.Hour})
	stop := run(t, rec)
	for range 1000 {
		rec.Record("a", time.Millisecond, "")
	}
	stop()
	if n := calls(t, store, "a"); n != 1000 || rec.Dropped() != 0 {
		t.Errorf("after Run returned: %d calls stored, %d dropped; want 1000, 0", n, rec.Dropped())
	}
	rec.Record("a", time.Millisecond, "")
	if rec.Dropped() != 1 {
		t.Errorf("a call after Run returned: Dropped %d, want 1", rec.Dropped())
	}
	if err := rec.Flush(context.Background()); err != nil {
		t.Errorf("Flush after Run returned: %v, want nil at once", err)
	}
}

// TestRecorderFullQueueDrops: Record never waits; calls beyond the queue
// are dropped, counted, and logged once per interval.
func TestRecorderFullQueueDrops(t *testing.T) {
	store := openCounter(t)
	var logs bytes.Buffer
	var mu sync.Mutex
	logger := slog.New(slog.NewTextHandler(&lockedWriter{w: &logs, mu: &mu}, nil))
	rec := mcptools.NewRecorder(store, mcptools.RecorderOptions{QueueSize: 4, FlushInterval: time.Hour, Logger: logger})
	start := time.Now()
	for range 10 {
		rec.Record("a", time.Millisecond, "")
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("10 Records into a full queue took %v", d)
	}
	if rec.Dropped() != 6 {
		t.Errorf("Dropped %d, want 6", rec.Dropped())
	}
	mu.Lock()
	warnings := strings.Count(logs.String(), "queue full")
	mu.Unlock()
	if warnings != 1 {
		t.Errorf("%d warnings for 6 drops within one interval, want 1:\n%s", warnings, logs.String())
	}
	run(t, rec)
	if err := rec.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	if n := calls(t, store, "a"); n != 4 {
		t.Errorf("%d calls stored, want the 4 queued", n)
	}
}

// TestRecorderFailedWriteCounted: a batch the store refuses is dropped
// and counted, not lost silently.
func TestRecorderFailedWriteCounted(t *testing.T) {
	store := openCounter(t)
	rec := mcptools.NewRecorder(store, mcptools.RecorderOptions{FlushInterval: time.Hour})
	rec.Record("", time.Millisecond, "") // invalid: the store refuses the batch
	rec.Record("a", time.Millisecond, "")
	run(t, rec)
	if err := rec.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	if rec.Dropped() != 2 || rec.Written() != 0 {
		t.Errorf("Dropped %d Written %d, want 2, 0", rec.Dropped(), rec.Written())
	}
}

type lockedWriter struct {
	w  *bytes.Buffer
	mu *sync.Mutex
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// TestRecorderReadThrough: a read through ReadThrough right after Record
// sees the call, with an hour-long flush interval.
func TestRecorderReadThrough(t *testing.T) {
	store := openCounter(t)
	rec := mcptools.NewRecorder(store, mcptools.RecorderOptions{FlushInterval: time.Hour})
	run(t, rec)
	rec.Record("a", time.Millisecond, "")
	rec.Record("a", time.Millisecond, "timeout")
	p, err := rec.ReadThrough(store.DB, 0).FindToolPerformance(t.Context(), "a")
	if err != nil || p.Calls != 2 || p.Errors != 1 {
		t.Fatalf("read through: %+v, %v; want 2 calls, 1 error", p, err)
	}
	rec.Record("b", time.Millisecond, "")
	list, err := rec.ReadThrough(store.DB, 0).ListToolPerformance(t.Context())
	if err != nil || len(list) != 2 {
		t.Fatalf("list through: %d tools, %v; want 2", len(list), err)
	}
}
