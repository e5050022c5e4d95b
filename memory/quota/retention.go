package quota

import (
	"context"
	"log/slog"
	"time"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/internal/sweep"
)

// InsightSweeper deletes the insights created more than Retention ago,
// whoever's they are (memory.insight_retention). Every replica may run
// one: deletes are idempotent.
type InsightSweeper struct {
	Insights agentsmcp.InsightPruner
	// Retention is how long an insight is kept; it must be positive.
	Retention time.Duration
	// Interval is the time between two sweeps; zero means a tenth of
	// Retention, within [sweep.MinInterval, sweep.MaxInterval].
	Interval time.Duration
	Logger   *slog.Logger
}

// Run sweeps at once and then every Interval, until ctx ends: its owner
// stops it by cancelling ctx.
func (s *InsightSweeper) Run(ctx context.Context) {
	sweep.Loop{Sweep: s.Sweep, Retention: s.Retention, Interval: s.Interval, Logger: s.Logger,
		What: "insight retention", BeforeKey: "createdBefore"}.Run(ctx)
}

// Sweep deletes every insight created before createdBefore, one batch of
// MaxPageSize per store call so that no call holds the store for long,
// and reports how many it deleted, also when it fails part-way.
func (s *InsightSweeper) Sweep(ctx context.Context, createdBefore time.Time) (int64, error) {
	return sweep.InBatches(ctx, agentsmcp.MaxPageSize, func(ctx context.Context, limit int) (int64, error) {
		return s.Insights.DeleteInsightsCreatedBefore(ctx, createdBefore, limit)
	})
}
