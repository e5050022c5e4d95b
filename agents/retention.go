package agents

import (
	"context"
	"log/slog"
	"time"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/internal/sweep"
)

// TaskSweeper deletes the tasks that ended more than Retention ago (the
// tasks.retention setting; ADR 0010, A8). Tasks that have not ended are
// never deleted, whatever their age: the store's DeleteEndedTasks
// guarantees it. Every replica may run one: deletes are idempotent, and
// two sweepers at once only delete the same batch twice, the second time
// finding nothing.
//
// The learnings and plans of a deleted task stay. The planner then finds
// the plan through the learning's PlanID (Planner.pastPlans), which is set
// only for a task that ran its plan unrepaired: the plans of repaired
// tasks, and of tasks learnt before PlanID existed, are no longer reused.
type TaskSweeper struct {
	Tasks agentsmcp.TaskService
	// Retention is how long an ended task is kept; it must be positive.
	Retention time.Duration
	// Interval is the time between two sweeps; zero means
	// a tenth of Retention, within [sweep.MinInterval, sweep.MaxInterval].
	Interval time.Duration
	Logger   *slog.Logger
}

// Run sweeps at once and then every Interval, until ctx ends: its owner
// stops it by cancelling ctx.
func (s *TaskSweeper) Run(ctx context.Context) {
	sweep.Loop{Sweep: s.Sweep, Retention: s.Retention, Interval: s.Interval, Logger: s.Logger,
		What: "task retention", BeforeKey: "endedBefore"}.Run(ctx)
}

// Sweep deletes every task that ended before endedBefore, one batch of
// MaxPageSize per store call so that no call holds the store for long,
// and reports how many it deleted, also when it fails part-way.
func (s *TaskSweeper) Sweep(ctx context.Context, endedBefore time.Time) (int64, error) {
	return sweep.InBatches(ctx, agentsmcp.MaxPageSize, func(ctx context.Context, limit int) (int64, error) {
		return s.Tasks.DeleteEndedTasks(ctx, endedBefore, limit)
	})
}
