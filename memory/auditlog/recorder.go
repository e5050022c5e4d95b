// Package auditlog writes the audit trail ([agentsmcp.AuditEntry]) without
// slowing down what it audits: the router records every tool call, the
// admin API every write, authentication every failure, each through
// [Recorder.Record], which queues the entry and returns; [Recorder.Run]
// writes the queue to an [agentsmcp.AuditService] in batches and deletes
// entries past their retention.
//
// The trail is best effort by design. When the store falls behind by more
// than the queue holds, entries are dropped and counted ([Recorder.Dropped])
// rather than delaying callers; a store that fails is retried with backoff,
// and the entries waiting meanwhile are kept as long as the queue has room.
//
// The trail is bounded by time (Options.Retention) and by size
// (Options.MaxEntries, the oldest entries deleted first and counted in
// [Recorder.Evicted]). The entries of tool calls that ran may go to the
// structured log instead of the store (Options.CallLog), while refusals,
// admin writes and authentication failures stay in the store.
package auditlog

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/internal/backoff"
	"github.com/agents-mcp/agents-mcp/internal/batch"
	"github.com/agents-mcp/agents-mcp/internal/redact"
	"github.com/agents-mcp/agents-mcp/internal/storedform"
	"github.com/agents-mcp/agents-mcp/internal/validate"
)

// DefaultRetention is the retention period agents-mcp recommends: 30 days.
const DefaultRetention = 30 * 24 * time.Hour

// Options configures a [Recorder]. Zero sizes and durations select the
// defaults, except Retention, where zero means no retention.
type Options struct {
	// QueueSize bounds the entries accepted and not yet written (default
	// 4096).
	QueueSize int
	// BatchSize is the most entries one store call carries (default 256,
	// at most [agentsmcp.MaxAuditBatchEntries]).
	BatchSize int
	// FlushInterval is the longest an entry waits for its batch to fill
	// (default 100 ms).
	FlushInterval time.Duration
	// EnqueueWait is how long Record waits for room in a full queue before
	// it drops the entry (default 5 ms): the most an audited request is
	// ever delayed.
	EnqueueWait time.Duration
	// WriteTimeout bounds each store call (default 10 s).
	WriteTimeout time.Duration
	// MinBackoff and MaxBackoff bound the wait before retrying a failed
	// write (default 100 ms and 30 s), doubling from one to the other,
	// with equal jitter ([backoff.Delay]).
	MinBackoff, MaxBackoff time.Duration
	// FlushTimeout bounds the final flush when Run's context ends (default
	// 5 s); what is still unwritten then is counted as dropped.
	FlushTimeout time.Duration
	// Retention is how long entries are kept: every RetentionInterval,
	// entries older than now - Retention are deleted. Zero (or negative)
	// disables retention: entries are kept forever. See DefaultRetention.
	Retention time.Duration
	// RetentionInterval is how often retention runs (default 1 h); the
	// first run is when Run starts.
	RetentionInterval time.Duration
	// RetentionTimeout bounds one retention delete, and one delete of the
	// size bound (default 5 min).
	RetentionTimeout time.Duration
	// MaxEntries bounds the entries kept: beyond it the oldest are deleted
	// ([agentsmcp.AuditService.DeleteOldestAuditEntries]) and counted in
	// [Recorder.Evicted]. The bound is checked when Run starts, after every
	// max(MaxEntries/16, BatchSize) entries written, and every
	// RetentionInterval, so the store holds at most about a sixteenth more
	// between checks. With several replicas on one store each checks it;
	// two checks at the same moment may together delete up to one check's
	// surplus more than needed. Zero (or negative) disables the bound.
	MaxEntries int64
	// CallLog, when set, receives the entries of tool calls that ran
	// (kind tool_call, outcome ok or error), redacted as in the store, as
	// one Info record "audit" each, instead of the store. Refusals (outcome
	// denied) and every other kind still go to the store. The records are
	// written by Run, in batches, off the audited call's path.
	CallLog *slog.Logger
	// LogInterval is the least time between two warnings of the same kind
	// (entries dropped, writes failing), default 1 min, so that a store
	// outage does not flood the log.
	LogInterval time.Duration
	// Logger receives the warnings; default none.
	Logger *slog.Logger
}

// Recorder is the non-blocking, batching writer of the audit trail. Create
// it with [New], start [Recorder.Run] once in a goroutine, and Record from
// any goroutine. It is safe for concurrent use.
type Recorder struct {
	store   agentsmcp.AuditService
	opts    Options
	b       *batch.Batcher[*agentsmcp.AuditEntry]
	started atomic.Bool

	// bound asks for a check of MaxEntries; sinceBound counts the entries
	// written since the last one.
	bound      chan struct{}
	sinceBound atomic.Int64

	dropped  atomic.Uint64
	written  atomic.Uint64
	logged   atomic.Uint64
	evicted  atomic.Uint64
	dropLog  batch.RateLimit
	writeLog batch.RateLimit
	boundLog batch.RateLimit
}

// New returns a Recorder writing to store. Nothing runs until
// [Recorder.Run]; entries recorded before are queued.
func New(store agentsmcp.AuditService, opts Options) *Recorder {
	setDefault(&opts.QueueSize, 4096)
	setDefault(&opts.BatchSize, 256)
	opts.BatchSize = min(opts.BatchSize, agentsmcp.MaxAuditBatchEntries)
	setDefault(&opts.FlushInterval, 100*time.Millisecond)
	setDefault(&opts.EnqueueWait, 5*time.Millisecond)
	setDefault(&opts.WriteTimeout, 10*time.Second)
	setDefault(&opts.MinBackoff, 100*time.Millisecond)
	setDefault(&opts.MaxBackoff, 30*time.Second)
	opts.MaxBackoff = max(opts.MaxBackoff, opts.MinBackoff)
	setDefault(&opts.FlushTimeout, 5*time.Second)
	setDefault(&opts.RetentionInterval, time.Hour)
	setDefault(&opts.RetentionTimeout, 5*time.Minute)
	setDefault(&opts.LogInterval, time.Minute)
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	r := &Recorder{store: store, opts: opts, bound: make(chan struct{}, 1)}
	r.b = batch.New(batch.Options[*agentsmcp.AuditEntry]{
		QueueSize: opts.QueueSize, BatchSize: opts.BatchSize, FlushInterval: opts.FlushInterval,
		EnqueueWait: opts.EnqueueWait, FinalTimeout: opts.FlushTimeout, Write: r.flush, Drop: r.lose,
	})
	return r
}

func setDefault[T int | time.Duration](p *T, v T) {
	if *p <= 0 {
		*p = v
	}
}

// Record queues e to be written, and takes ownership of it: the caller must
// not use e afterwards. It returns at once while the queue has room, and
// after at most Options.EnqueueWait when it is full, dropping e then.
//
// Record makes e fit the invariants of [agentsmcp.AuditEntry] rather than
// lose it: e.Arguments may be the raw arguments or request body, which
// Record passes through [redact.Arguments] (redacting twice is
// harmless); e.Error, and e.Principal of an auth failure, through
// [redact.Text]; every text field is cut to its limit and made
// valid UTF-8; a negative Latency becomes 0; a zero At becomes now and an
// empty ID a new one. An entry still invalid after that (an unknown Kind
// or Outcome, no Target) is a bug of the caller: it is dropped, counted,
// and logged. After Run has returned, every entry is dropped.
//
// The redaction runs on the caller's goroutine, so that the queue holds
// only bounded entries: about 10 µs for small arguments, linear in their
// size.
func (r *Recorder) Record(e *agentsmcp.AuditEntry) {
	if e == nil {
		return
	}
	prepare(e)
	if err := validate.AuditEntry(e); err != nil {
		r.drop(1, "invalid audit entry dropped", err)
		return
	}
	r.b.Add(e)
}

// prepare makes e fit the entry invariants where that can be done without
// guessing; see Record.
func prepare(e *agentsmcp.AuditEntry) {
	if e.Kind == agentsmcp.AuditAuthFailure {
		e.Principal = redact.Text(e.Principal, agentsmcp.MaxAuditFieldBytes)
	}
	e.Principal = clip(e.Principal, agentsmcp.MaxAuditFieldBytes)
	e.Target = clip(e.Target, agentsmcp.MaxAuditFieldBytes)
	e.RequestID = clip(e.RequestID, agentsmcp.MaxAuditFieldBytes)
	e.Transport = clip(e.Transport, agentsmcp.MaxAuditFieldBytes)
	if e.Error != "" {
		e.Error = redact.Text(e.Error, agentsmcp.MaxAuditErrorBytes)
	}
	e.Arguments = redact.Arguments(e.Arguments)
	e.Latency = max(e.Latency, 0)
	if e.At.IsZero() {
		e.At = time.Now()
	}
	if e.ID == "" {
		e.ID = agentsmcp.NewID(agentsmcp.AuditIDPrefix)
	}
}

// clip makes s valid UTF-8 of at most n bytes.
func clip(s string, n int) string {
	return storedform.TruncateUTF8(strings.ToValidUTF8(s, "\uFFFD"), n)
}

// Dropped counts the entries lost: dropped because the queue was full,
// invalid, recorded after Run ended, rejected by the store, or left
// unwritten when the final flush timed out.
func (r *Recorder) Dropped() uint64 { return r.dropped.Load() }

// Written counts the entries the store accepted.
func (r *Recorder) Written() uint64 { return r.written.Load() }

// Logged counts the entries written to Options.CallLog.
func (r *Recorder) Logged() uint64 { return r.logged.Load() }

// Evicted counts the entries the size bound deleted (Options.MaxEntries),
// oldest first.
func (r *Recorder) Evicted() uint64 { return r.evicted.Load() }

// Flush returns once every entry recorded before it is written (or
// dropped), so that a reader of the store sees what came before its read;
// nil at once after Run has returned, whose final flush wrote them. It
// returns ctx's error when ctx ends first, which is as long as it waits
// for Run to start, or for a store that fails.
func (r *Recorder) Flush(ctx context.Context) error { return r.b.Flush(ctx) }

// ReadThrough returns store as its readers should see it: FindAuditEntries
// first flushes r (within at most wait, 2 s when zero or negative), so that a
// user reading the trail right after a call sees the call. A flush that
// does not finish in time does not fail the read, which shows what is
// stored.
func (r *Recorder) ReadThrough(store agentsmcp.AuditService, wait time.Duration) agentsmcp.AuditService {
	if wait <= 0 {
		wait = 2 * time.Second
	}
	return &readThrough{AuditService: store, r: r, wait: wait}
}

type readThrough struct {
	agentsmcp.AuditService
	r    *Recorder
	wait time.Duration
}

func (t *readThrough) FindAuditEntries(ctx context.Context, f agentsmcp.AuditFilter) ([]*agentsmcp.AuditEntry, string, error) {
	fctx, cancel := context.WithTimeout(ctx, t.wait)
	_ = t.r.Flush(fctx)
	cancel()
	return t.AuditService.FindAuditEntries(ctx, f)
}

// Pending counts the entries accepted and neither written nor dropped yet:
// queued, or in a batch being written or retried.
func (r *Recorder) Pending() int { return r.b.Pending() }

// Run writes queued entries in batches, of Options.BatchSize or whatever
// is queued when Options.FlushInterval passes, and runs retention, until
// ctx ends. A failing write is retried with backoff, holding its batch
// while later entries wait in the queue. When ctx ends, Run stops taking
// entries, writes what is queued within Options.FlushTimeout, counts the
// rest as dropped, and returns. Run is meant to be called once; further
// calls return at once.
func (r *Recorder) Run(ctx context.Context) {
	if !r.started.CompareAndSwap(false, true) {
		return
	}
	var wg sync.WaitGroup
	if r.opts.Retention > 0 || r.opts.MaxEntries > 0 {
		wg.Go(func() { r.retain(ctx) })
	}
	r.b.Run(ctx)
	wg.Wait()
}

// flush writes batch, retrying failures with backoff until it is written
// or ctx ends; it returns the entries still unwritten then, nil otherwise.
// A batch the store refuses as invalid is written entry by entry, so that
// only the entries it refuses are lost.
func (r *Recorder) flush(ctx context.Context, batch []*agentsmcp.AuditEntry) []*agentsmcp.AuditEntry {
	if batch = r.logCalls(batch); len(batch) == 0 {
		return nil
	}
	for failures := 1; ; failures++ {
		err := r.create(ctx, batch)
		switch {
		case err == nil:
			r.written.Add(uint64(len(batch)))
			r.wrote(len(batch))
			return nil
		case agentsmcp.ErrorCode(err) == agentsmcp.EINVALID && len(batch) == 1:
			r.drop(1, "audit entry rejected by the store", err)
			return nil
		case agentsmcp.ErrorCode(err) == agentsmcp.EINVALID:
			for i := range batch {
				if left := r.flush(ctx, batch[i:i+1]); left != nil {
					return batch[i:]
				}
			}
			return nil
		}
		if ctx.Err() != nil {
			return batch
		}
		if r.writeLog.Allow(r.opts.LogInterval) {
			r.opts.Logger.Warn("audit entries not written; retrying", "entries", len(batch), "pending", r.Pending(), "err", err)
		}
		t := time.NewTimer(backoff.Delay(r.opts.MinBackoff, r.opts.MaxBackoff, failures))
		select {
		case <-ctx.Done():
			t.Stop()
			return batch
		case <-t.C:
		}
	}
}

// logCalls writes the entries of calls that ran to Options.CallLog, when
// set, and returns the others.
func (r *Recorder) logCalls(batch []*agentsmcp.AuditEntry) []*agentsmcp.AuditEntry {
	if r.opts.CallLog == nil {
		return batch
	}
	rest := batch[:0:0]
	for _, e := range batch {
		if e.Kind != agentsmcp.AuditToolCall || e.Outcome == agentsmcp.AuditDenied {
			rest = append(rest, e)
			continue
		}
		attrs := []slog.Attr{
			slog.String("id", e.ID), slog.Time("at", e.At), slog.String("kind", string(e.Kind)),
			slog.String("principal", e.Principal), slog.String("target", e.Target),
			slog.String("outcome", string(e.Outcome)), slog.Int64("latencyNs", int64(e.Latency)),
		}
		for _, a := range []struct{ key, value string }{{"requestId", e.RequestID}, {"transport", e.Transport}, {"error", e.Error}} {
			if a.value != "" {
				attrs = append(attrs, slog.String(a.key, a.value))
			}
		}
		if len(e.Arguments) > 0 {
			attrs = append(attrs, slog.Any("arguments", e.Arguments))
		}
		r.opts.CallLog.LogAttrs(context.Background(), slog.LevelInfo, "audit", attrs...)
	}
	if n := len(batch) - len(rest); n > 0 {
		r.logged.Add(uint64(n))
	}
	return rest
}

// wrote counts n entries written towards the next check of the size
// bound, and asks for it when they reach max(MaxEntries/16, BatchSize).
func (r *Recorder) wrote(n int) {
	if r.opts.MaxEntries <= 0 {
		return
	}
	if r.sinceBound.Add(int64(n)) < max(r.opts.MaxEntries/16, int64(r.opts.BatchSize)) {
		return
	}
	select {
	case r.bound <- struct{}{}:
	default: // a check is already asked for
	}
}

// create is one store call, bounded by WriteTimeout.
func (r *Recorder) create(ctx context.Context, batch []*agentsmcp.AuditEntry) error {
	ctx, cancel := context.WithTimeout(ctx, r.opts.WriteTimeout)
	defer cancel()
	return r.store.CreateAuditEntries(ctx, batch)
}

// retain deletes the entries past retention and beyond the size bound
// now and every RetentionInterval, and beyond the size bound when the loop
// asks, until ctx ends.
func (r *Recorder) retain(ctx context.Context) {
	t := time.NewTimer(0)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-r.bound:
			r.bounded(ctx)
			continue
		case <-t.C:
		}
		t.Reset(r.opts.RetentionInterval)
		r.bounded(ctx)
		if r.opts.Retention <= 0 {
			continue
		}
		cutoff := time.Now().Add(-r.opts.Retention)
		dctx, cancel := context.WithTimeout(ctx, r.opts.RetentionTimeout)
		n, err := r.store.DeleteAuditEntriesBefore(dctx, cutoff)
		cancel()
		switch {
		case err != nil && ctx.Err() == nil:
			r.opts.Logger.Warn("audit retention failed", "before", cutoff, "deleted", n, "err", err)
		case n > 0:
			r.opts.Logger.Info("audit retention", "before", cutoff, "deleted", n)
		}
	}
}

// bounded deletes the oldest entries beyond MaxEntries, if set, counting
// them in Evicted.
func (r *Recorder) bounded(ctx context.Context) {
	if r.opts.MaxEntries <= 0 {
		return
	}
	r.sinceBound.Store(0)
	dctx, cancel := context.WithTimeout(ctx, r.opts.RetentionTimeout)
	n, err := r.store.DeleteOldestAuditEntries(dctx, r.opts.MaxEntries)
	cancel()
	total := r.evicted.Add(uint64(max(n, 0)))
	switch {
	case err != nil && ctx.Err() == nil:
		r.opts.Logger.Warn("audit size bound not enforced", "maxEntries", r.opts.MaxEntries, "deleted", n, "err", err)
	case n > 0 && r.boundLog.Allow(r.opts.LogInterval):
		r.opts.Logger.Info("audit size bound: oldest entries deleted", "maxEntries", r.opts.MaxEntries, "deleted", n, "evictedTotal", total)
	}
}

// lose is the batcher's Drop: it drops with the message of why.
func (r *Recorder) lose(n int, why batch.Reason, err error) {
	msg := "audit queue full: entries dropped"
	switch why {
	case batch.Stopped:
		msg = "audit entry recorded after the recorder stopped"
	case batch.Unwritten:
		msg = "audit entries not written before the flush timeout"
	}
	r.drop(uint64(n), msg, err)
}

// drop counts n lost entries and warns, at most once per LogInterval.
// The entries themselves are never logged.
func (r *Recorder) drop(n uint64, msg string, err error) {
	total := r.dropped.Add(n)
	if !r.dropLog.Allow(r.opts.LogInterval) {
		return
	}
	attrs := []any{"dropped", n, "droppedTotal", total}
	if err != nil {
		attrs = append(attrs, "err", err)
	}
	r.opts.Logger.Warn(msg, attrs...)
}
