package mcptools

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	agentsmcp "github.com/agents-mcp/agents-mcp"
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
	store agentsmcp.ToolPerformanceService
	opts  RecorderOptions
	queue chan agentsmcp.ToolCall
	// flushes carries Flush's requests to Run; each is closed when what
	// was queued before it is written.
	flushes chan chan struct{}
	// done is closed when Run returns.
	done    chan struct{}
	started atomic.Bool

	// mu is held for reading by Record while it sends to queue, and for
	// writing by Run to set stopped: after that nothing more is queued, so
	// the final write sees every call that was accepted.
	mu      sync.RWMutex
	stopped bool

	dropped  atomic.Uint64
	written  atomic.Uint64
	dropLog  rateLimit
	writeLog rateLimit
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
	return &Recorder{
		store: store, opts: opts,
		queue:   make(chan agentsmcp.ToolCall, opts.QueueSize),
		flushes: make(chan chan struct{}),
		done:    make(chan struct{}),
	}
}

// Record queues one finished call; it never blocks. A call that finds the
// queue full, or comes after Run has returned, is dropped and counted.
func (r *Recorder) Record(tool string, d time.Duration, errText string) {
	c := agentsmcp.ToolCall{Tool: tool, Duration: d, Error: errText, At: time.Now()}
	r.mu.RLock()
	defer r.mu.RUnlock()
	if r.stopped {
		r.drop(1, "tool call recorded after the recorder stopped", nil)
		return
	}
	select {
	case r.queue <- c:
	default:
		r.drop(1, "tool performance queue full: calls dropped", nil)
	}
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
func (r *Recorder) Flush(ctx context.Context) error {
	done := make(chan struct{})
	select {
	case r.flushes <- done:
	case <-r.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Run writes queued calls in batches until ctx ends, then stops taking
// calls and writes what is queued, within WriteTimeout. Run is meant to be
// called once; further calls return at once.
func (r *Recorder) Run(ctx context.Context) {
	if !r.started.CompareAndSwap(false, true) {
		return
	}
	defer close(r.done)
	ticker := time.NewTicker(r.opts.FlushInterval)
	defer ticker.Stop()
	batch := make([]agentsmcp.ToolCall, 0, r.opts.BatchSize)
	// Writes are not cancelled with ctx: one under way when it ends
	// finishes, bounded by WriteTimeout, and so does the final drain.
	wctx := context.WithoutCancel(ctx)
	for {
		select {
		case <-ctx.Done():
			r.mu.Lock()
			r.stopped = true
			r.mu.Unlock()
			final, cancel := context.WithTimeout(wctx, r.opts.WriteTimeout)
			defer cancel()
			r.drain(final, batch)
			return
		case c := <-r.queue:
			batch = append(batch, c)
			if len(batch) < r.opts.BatchSize {
				continue
			}
		case <-ticker.C:
			if len(batch) == 0 {
				continue
			}
		case done := <-r.flushes:
			r.drain(wctx, batch)
			close(done)
			batch = batch[:0]
			continue
		}
		r.write(wctx, batch)
		batch = batch[:0]
	}
}

// drain writes batch and everything queued now, in batches.
func (r *Recorder) drain(ctx context.Context, batch []agentsmcp.ToolCall) {
	for {
	fill:
		for len(batch) < r.opts.BatchSize {
			select {
			case c := <-r.queue:
				batch = append(batch, c)
			default:
				break fill
			}
		}
		if len(batch) == 0 {
			return
		}
		r.write(ctx, batch)
		batch = batch[:0]
	}
}

// write is one store write; a failed one drops its calls.
func (r *Recorder) write(ctx context.Context, batch []agentsmcp.ToolCall) {
	wctx, cancel := context.WithTimeout(ctx, r.opts.WriteTimeout)
	defer cancel()
	if err := r.store.RecordToolCalls(wctx, batch); err != nil {
		r.dropped.Add(uint64(len(batch)))
		if r.writeLog.allow(r.opts.LogInterval) {
			r.opts.Logger.Warn("tool performance not recorded", "calls", len(batch), "droppedTotal", r.Dropped(), "err", err)
		}
		return
	}
	r.written.Add(uint64(len(batch)))
}

// drop counts n lost calls and warns, at most once per LogInterval.
func (r *Recorder) drop(n uint64, msg string, err error) {
	total := r.dropped.Add(n)
	if !r.dropLog.allow(r.opts.LogInterval) {
		return
	}
	attrs := []any{"dropped", n, "droppedTotal", total}
	if err != nil {
		attrs = append(attrs, "err", err)
	}
	r.opts.Logger.Warn(msg, attrs...)
}

// rateLimit lets one log line through per interval.
type rateLimit struct{ last atomic.Int64 } // unix nanoseconds of the last line

func (l *rateLimit) allow(interval time.Duration) bool {
	now := time.Now().UnixNano()
	last := l.last.Load()
	if last != 0 && now-last < int64(interval) {
		return false
	}
	return l.last.CompareAndSwap(last, now)
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
