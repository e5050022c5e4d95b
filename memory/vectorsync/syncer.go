package vectorsync

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"time"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/internal/backoff"
)

// Config configures a [Syncer]. Outbox, Index, Embedder and Sources are
// required; zero durations and sizes select the defaults.
type Config struct {
	Outbox   agentsmcp.OutboxService
	Index    agentsmcp.VectorIndex
	Embedder agentsmcp.Embedder
	Sources  []Source

	// Owner names this worker in leases; default a random name. Replicas
	// sharing a store must use different owners.
	Owner string
	// Batch is how many entries one claim takes (default 32).
	Batch int
	// Lease is how long claimed entries stay ours (default 2 min); it must
	// exceed the time to process one batch, or another worker may process
	// the same entries too (harmless, but wasted).
	Lease time.Duration
	// Poll is how often an idle worker looks for due entries (default 1 s);
	// Notify wakes it sooner.
	Poll time.Duration
	// MinBackoff and MaxBackoff bound the delay before retrying a failed
	// entry (default 1 s and 5 min): MinBackoff·2^attempts, capped, with
	// equal jitter ([backoff.Delay]).
	MinBackoff, MaxBackoff time.Duration
	// CallTimeout bounds each embedder and index call (default 30 s).
	CallTimeout time.Duration
	// OrphanGrace is how long an upsert entry whose document is missing is
	// retried before it is dropped (default 30 s): without transactions a
	// store writes the entry just before the document.
	OrphanGrace time.Duration
	Logger      *slog.Logger
}

// Syncer drains the outbox into the index. Create it with [New], run it
// with [Syncer.Run] (one goroutine, owned by the caller's context).
type Syncer struct {
	cfg     Config
	sources map[string]Source
	wake    chan struct{}
}

// New checks cfg and fills in its defaults.
func New(cfg Config) (*Syncer, error) {
	if cfg.Outbox == nil || cfg.Index == nil || cfg.Embedder == nil || len(cfg.Sources) == 0 {
		return nil, errors.New("vectorsync: Outbox, Index, Embedder and Sources are required")
	}
	if cfg.Owner == "" {
		cfg.Owner = fmt.Sprintf("vectorsync-%016x", rand.Uint64())
	}
	setDefault(&cfg.Batch, 32)
	setDefault(&cfg.Lease, 2*time.Minute)
	setDefault(&cfg.Poll, time.Second)
	setDefault(&cfg.MinBackoff, time.Second)
	setDefault(&cfg.MaxBackoff, 5*time.Minute)
	setDefault(&cfg.CallTimeout, 30*time.Second)
	setDefault(&cfg.OrphanGrace, 30*time.Second)
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	s := &Syncer{cfg: cfg, sources: map[string]Source{}, wake: make(chan struct{}, 1)}
	for _, src := range cfg.Sources {
		s.sources[src.Namespace] = src
	}
	return s, nil
}

func setDefault[T int | time.Duration](p *T, v T) {
	if *p <= 0 {
		*p = v
	}
}

// Notify wakes the worker to look for due entries now, for example right
// after a write; it never blocks.
func (s *Syncer) Notify() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// Run processes due entries until ctx ends. Failures are logged and retried;
// Run itself never fails.
func (s *Syncer) Run(ctx context.Context) {
	t := time.NewTimer(0)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-s.wake:
		case <-t.C:
		}
		n, err := s.ProcessBatch(ctx)
		if err != nil && ctx.Err() == nil {
			s.cfg.Logger.Warn("vector outbox", "err", err)
		}
		next := s.cfg.Poll
		if n > 0 && err == nil {
			next = 0 // more may be due
		}
		t.Reset(next)
	}
}

// Drain processes batches until no entry is due, and returns how many
// entries were claimed. Entries that fail are rescheduled, not retried
// here, so Drain ends. The server never calls it ([Syncer.Run] is its
// loop): it is for tests and benchmarks (cmd/agents-mcp's learning
// benchmark among them) that need the index caught up at a point they
// choose.
func (s *Syncer) Drain(ctx context.Context) (int, error) {
	total := 0
	for {
		n, err := s.ProcessBatch(ctx)
		total += n
		if err != nil || n == 0 {
			return total, err
		}
	}
}

// ProcessBatch claims one batch of due entries and processes it: each entry
// is acknowledged when the index reflects its document, or rescheduled with
// backoff. It returns the number of entries claimed; the error is about the
// outbox itself (a store that is down), not about individual entries.
func (s *Syncer) ProcessBatch(ctx context.Context) (int, error) {
	entries, err := s.cfg.Outbox.ClaimOutbox(ctx, s.cfg.Owner, s.cfg.Batch, s.cfg.Lease)
	if err != nil || len(entries) == 0 {
		return 0, err
	}
	type group struct {
		ns      string
		op      agentsmcp.OutboxOp
		entries []*agentsmcp.OutboxEntry
	}
	var groups []*group
	byKey := map[string]*group{}
	for _, e := range entries {
		k := e.Namespace + "/" + string(e.Op)
		g := byKey[k]
		if g == nil {
			g = &group{ns: e.Namespace, op: e.Op}
			byKey[k] = g
			groups = append(groups, g)
		}
		g.entries = append(g.entries, e)
	}
	var done []string
	var errs []error
	for _, g := range groups {
		var ok []string
		var err error
		if g.op == agentsmcp.OutboxDelete {
			ok, err = s.applyDeletes(ctx, g.ns, g.entries)
		} else {
			ok, err = s.applyUpserts(ctx, g.ns, g.entries)
		}
		done = append(done, ok...)
		errs = append(errs, err)
	}
	if err := s.cfg.Outbox.AckOutbox(ctx, done...); err != nil {
		// The entries stay leased and come back when the lease expires.
		errs = append(errs, fmt.Errorf("ack: %w", err))
	}
	return len(entries), errors.Join(errs...)
}

func (s *Syncer) applyDeletes(ctx context.Context, ns string, entries []*agentsmcp.OutboxEntry) ([]string, error) {
	ids := make([]string, len(entries))
	for i, e := range entries {
		ids[i] = e.DocID
	}
	cctx, cancel := context.WithTimeout(ctx, s.cfg.CallTimeout)
	defer cancel()
	if err := s.cfg.Index.Delete(cctx, ns, ids); err != nil {
		return nil, s.retryAll(ctx, entries, fmt.Errorf("delete from index %s: %w", ns, err))
	}
	return keys(entries), nil
}

func (s *Syncer) applyUpserts(ctx context.Context, ns string, entries []*agentsmcp.OutboxEntry) ([]string, error) {
	src, known := s.sources[ns]
	if !known {
		// Nothing can ever process it; keep it visible rather than drop it.
		return nil, s.retryAll(ctx, entries, fmt.Errorf("no source for namespace %q", ns))
	}
	var done []string
	var docs []*Document
	var pending []*agentsmcp.OutboxEntry
	var errs []error
	for _, e := range entries {
		d, err := src.Load(ctx, e.DocID)
		switch {
		case agentsmcp.ErrorCode(err) == agentsmcp.ENOTFOUND:
			if time.Since(e.CreatedAt) > s.cfg.OrphanGrace {
				done = append(done, e.Key()) // deleted, or never written
			} else {
				errs = append(errs, s.retry(ctx, e, "document not written yet", s.cfg.MinBackoff))
			}
		case err != nil:
			errs = append(errs, s.retry(ctx, e, "load: "+err.Error(), s.backoff(e.Attempts)))
		default:
			docs = append(docs, d)
			pending = append(pending, e)
		}
	}
	if len(docs) == 0 {
		return done, errors.Join(errs...)
	}
	if err := s.upsert(ctx, ns, docs); err != nil {
		return done, errors.Join(append(errs, s.retryAll(ctx, pending, err))...)
	}
	return append(done, keys(pending)...), errors.Join(errs...)
}

// upsert embeds docs and writes them to the index, each call bounded by
// CallTimeout.
func (s *Syncer) upsert(ctx context.Context, ns string, docs []*Document) error {
	texts := make([]string, len(docs))
	for i, d := range docs {
		texts[i] = d.Text
	}
	ectx, cancel := context.WithTimeout(ctx, s.cfg.CallTimeout)
	values, err := s.cfg.Embedder.Embed(ectx, texts)
	cancel()
	if err != nil {
		return fmt.Errorf("embed %d %s: %w", len(docs), ns, err)
	}
	if len(values) != len(docs) {
		return fmt.Errorf("embed %d %s: embedder returned %d vectors", len(docs), ns, len(values))
	}
	vs := make([]agentsmcp.Vector, 0, len(docs))
	for i, d := range docs {
		// A text without a word (only punctuation, say) embeds to zero,
		// which no cosine index can rank and Pinecone refuses: such a
		// document is only found by the store's filters.
		if !isZero(values[i]) {
			vs = append(vs, agentsmcp.Vector{ID: d.ID, Values: values[i], Metadata: d.Metadata})
		}
	}
	if len(vs) == 0 {
		return nil
	}
	ictx, cancel := context.WithTimeout(ctx, s.cfg.CallTimeout)
	defer cancel()
	if err := s.cfg.Index.Upsert(ictx, ns, vs); err != nil {
		return fmt.Errorf("upsert %d %s: %w", len(vs), ns, err)
	}
	return nil
}

// retryAll reschedules every entry after cause and returns cause (joined
// with any failure to reschedule).
func (s *Syncer) retryAll(ctx context.Context, entries []*agentsmcp.OutboxEntry, cause error) error {
	errs := []error{cause}
	for _, e := range entries {
		errs = append(errs, s.retry(ctx, e, cause.Error(), s.backoff(e.Attempts)))
	}
	return errors.Join(errs...)
}

func (s *Syncer) retry(ctx context.Context, e *agentsmcp.OutboxEntry, why string, after time.Duration) error {
	if err := s.cfg.Outbox.RetryOutbox(ctx, e.Key(), why, time.Now().Add(after)); err != nil {
		return fmt.Errorf("reschedule %s: %w", e.Key(), err)
	}
	return nil
}

// backoff is the delay before the next attempt of an entry that failed
// attempts times before this failure, so that replicas retrying a
// recovered service spread out.
func (s *Syncer) backoff(attempts int) time.Duration {
	return backoff.Delay(s.cfg.MinBackoff, s.cfg.MaxBackoff, attempts+1)
}

func keys(entries []*agentsmcp.OutboxEntry) []string {
	ks := make([]string, len(entries))
	for i, e := range entries {
		ks[i] = e.Key()
	}
	return ks
}

func isZero(v []float32) bool {
	for _, x := range v {
		if x != 0 {
			return false
		}
	}
	return true
}
