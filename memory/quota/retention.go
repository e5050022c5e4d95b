package quota

import (
	"context"
	"log/slog"
	"time"

	agentsmcp "github.com/agents-mcp/agents-mcp"
)

// Bounds of the sweep interval that [InsightSweeper] derives from the
// retention: a tenth of it, so that an insight outlives its retention by
// at most a tenth, within these bounds (each sweep is a store query on
// every replica).
const (
	MinSweepInterval = time.Second
	MaxSweepInterval = time.Hour
)

// sweepTimeout bounds one sweep, so that a store that hangs does not stop
// the sweeper for good.
const sweepTimeout = 5 * time.Minute

// InsightSweeper deletes the insights created more than Retention ago,
// whoever's they are (memory.insight_retention). Every replica may run
// one: deletes are idempotent.
type InsightSweeper struct {
	Insights agentsmcp.InsightPruner
	// Retention is how long an insight is kept; it must be positive.
	Retention time.Duration
	// Interval is the time between two sweeps; zero means a tenth of
	// Retention, within [MinSweepInterval, MaxSweepInterval].
	Interval time.Duration
	Logger   *slog.Logger
}

// Run sweeps at once and then every Interval, until ctx ends: its owner
// stops it by cancelling ctx.
func (s *InsightSweeper) Run(ctx context.Context) {
	interval := s.Interval
	if interval <= 0 {
		interval = min(max(s.Retention/10, MinSweepInterval), MaxSweepInterval)
	}
	logger := s.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	t := time.NewTimer(0)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		sctx, cancel := context.WithTimeout(ctx, sweepTimeout)
		before := time.Now().Add(-s.Retention)
		n, err := s.Sweep(sctx, before)
		cancel()
		switch {
		case err != nil && ctx.Err() == nil:
			logger.Warn("insight retention failed", "createdBefore", before, "deleted", n, "error", err)
		case n > 0:
			logger.Info("insight retention", "createdBefore", before, "deleted", n)
		}
		t.Reset(interval)
	}
}

// Sweep deletes every insight created before createdBefore, one batch of
// MaxPageSize per store call so that no call holds the store for long,
// and reports how many it deleted, also when it fails part-way.
func (s *InsightSweeper) Sweep(ctx context.Context, createdBefore time.Time) (int64, error) {
	var total int64
	for {
		n, err := s.Insights.DeleteInsightsCreatedBefore(ctx, createdBefore, agentsmcp.MaxPageSize)
		total += n
		if err != nil || n < agentsmcp.MaxPageSize {
			return total, err
		}
	}
}
