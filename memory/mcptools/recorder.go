package mcptools

import (
	"context"
	"log/slog"
	"sync/atomic"
	"time"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/internal/batch"
)

// RecorderOptions configures a [Recorder]. Zero values select the defaults.
type RecorderOptions struct {
	// QueueSize bounds the calls recorded and not yet written (default
	// 4096).
	QueueSize int
	// BatchSize is the most calls one store write carries (default 256, at
	// most [agentsmcp.MaxToolCallBatch]).
	BatchSize int
	// FlushInterval is the longest a call waits for its batch to fill
	// (default 100 ms).
	FlushInterval time.Duration
	// WriteTimeout bounds each store write, and all the final ones
	// together when Run's context ends (default 5 s).
	WriteTimeout time.Duration
	// LogInterval is the least time between two warnings of the same kind
	// (calls dropped, writes failing), default 1 min.
	LogInterval time.Duration
	// Logger receives the warnings; default none.
	Logger *slog.Logger
}

// Recorder feeds tool performance from observed calls without slowing them
// down: Record queues a call and returns at once, and Run writes the queue
// to the store in batches ([agentsmcp.ToolPerformanceService.RecordToolCalls]),
// one store write per BatchSize calls or per FlushInterval, whichever
// comes first.
//
// When the store falls behind by more than the queue holds, calls are
// dropped at once rather than delaying callers: tool performance is a
// statistic, and a lost sample costs less than a slower call. A dropped
// call is never lost silently: it is counted ([Recorder.Dropped], exported
// as a metric) and logged at most once per LogInterval. A batch the store
// fails to write is dropped and counted the same way, not retried: a
// write that timed out may have been counted, and counting it twice would
// be worse than losing it.
type Recorder struct {
	store    agentsmcp.ToolPerformanceService
	opts     RecorderOptions
	b        *batch.Batcher[agentsmcp.ToolCall]
	dropped  atomic.Uint64
	written  atomic.Uint64
	dropLog  batch.RateLimit
	writeLog batch.RateLimit
}

// NewRecorder returns a recorder writing to store. Nothing is written until
// [Recorder.Run]; calls recorded before are queued.
func NewRecorder(store agentsmcp.ToolPerformanceService, opts RecorderOptions) *Recorder {
	if opts.QueueSize <= 0 {
		opts.QueueSize = 4096
	}
	if opts.BatchSize <= 0 {
		opts.BatchSize = 256
	}
	opts.BatchSize = min(opts.BatchSize, agentsmcp.MaxToolCallBatch)
	if opts.FlushInterval <= 0 {
		opts.FlushInterval = 100 * time.Millisecond
	}
	if opts.WriteTimeout <= 0 {
		opts.WriteTimeout = 5 * time.Second
	}
	if opts.LogInterval <= 0 {
		opts.LogInterval = time.Minute
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	r := &Recorder{store: store, opts: opts}
	// Writes are not cancelled with Run's context: one under way when it
	// ends finishes, bounded by WriteTimeout, and so does the final drain.
	// A full queue drops at once (no EnqueueWait).
	r.b = batch.New(batch.Options[agentsmcp.ToolCall]{
		QueueSize: opts.QueueSize, BatchSize: opts.BatchSize, FlushInterval: opts.FlushInterval,
		FinalTimeout: opts.WriteTimeout, DetachWrites: true, Write: r.write, Drop: r.drop,
	})
	return r
}

// Record queues one finished call; it never blocks. A call that finds the
// queue full, or comes after Run has returned, is dropped and counted.
func (r *Recorder) Record(tool string, d time.Duration, errText string) {
	r.b.Add(agentsmcp.ToolCall{Tool: tool, Duration: d, Error: errText, At: time.Now()})
}

// Dropped counts the calls lost: the queue was full, they came after Run
// returned, or the store failed to write their batch.
func (r *Recorder) Dropped() uint64 { return r.dropped.Load() }

// Written counts the calls the store has counted.
func (r *Recorder) Written() uint64 { return r.written.Load() }

// Flush returns once every call recorded before it is written (or
// dropped), so that a reader sees the calls that came before its read; nil
// at once after Run has returned, which wrote them. It returns ctx's error
// when ctx ends first, which is as long as it waits for Run to start.
func (r *Recorder) Flush(ctx context.Context) error { return r.b.Flush(ctx) }

// Run writes queued calls in batches until ctx ends, then stops taking
// calls and writes what is queued, within WriteTimeout. Run is meant to be
// called once; further calls return at once.
func (r *Recorder) Run(ctx context.Context) { r.b.Run(ctx) }

// write is one store write; a failed one drops its calls.
func (r *Recorder) write(ctx context.Context, calls []agentsmcp.ToolCall) []agentsmcp.ToolCall {
	wctx, cancel := context.WithTimeout(ctx, r.opts.WriteTimeout)
	defer cancel()
	if err := r.store.RecordToolCalls(wctx, calls); err != nil {
		r.dropped.Add(uint64(len(calls)))
		if r.writeLog.Allow(r.opts.LogInterval) {
			r.opts.Logger.Warn("tool performance not recorded", "calls", len(calls), "droppedTotal", r.Dropped(), "err", err)
		}
		return nil
	}
	r.written.Add(uint64(len(calls)))
	return nil
}

// drop counts n lost calls and warns, at most once per LogInterval.
func (r *Recorder) drop(n int, why batch.Reason, err error) {
	total := r.dropped.Add(uint64(n))
	if !r.dropLog.Allow(r.opts.LogInterval) {
		return
	}
	msg := "tool performance queue full: calls dropped"
	if why == batch.Stopped {
		msg = "tool call recorded after the recorder stopped"
	}
	attrs := []any{"dropped", uint64(n), "droppedTotal", total}
	if err != nil {
		attrs = append(attrs, "err", err)
	}
	r.opts.Logger.Warn(msg, attrs...)
}

// ReadThrough returns store as its readers should see it: its reads first
// flush r (within at most wait, 2 s when zero or negative), so that a
// reader right after a call sees the call. A flush that does not finish in
// time does not fail the read, which shows what is stored.
func (r *Recorder) ReadThrough(store agentsmcp.ToolPerformanceService, wait time.Duration) agentsmcp.ToolPerformanceService {
	if wait <= 0 {
		wait = 2 * time.Second
	}
	return &readThrough{ToolPerformanceService: store, r: r, wait: wait}
}

type readThrough struct {
	agentsmcp.ToolPerformanceService
	r    *Recorder
	wait time.Duration
}

func (t *readThrough) flush(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, t.wait)
	defer cancel()
	_ = t.r.Flush(ctx)
}

func (t *readThrough) FindToolPerformance(ctx context.Context, tool string) (*agentsmcp.ToolPerformance, error) {
	t.flush(ctx)
	return t.ToolPerformanceService.FindToolPerformance(ctx, tool)
}

func (t *readThrough) ListToolPerformance(ctx context.Context) ([]*agentsmcp.ToolPerformance, error) {
	t.flush(ctx)
	return t.ToolPerformanceService.ListToolPerformance(ctx)
}
