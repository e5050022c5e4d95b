// Package sweep runs the loop that deletes what outlived its retention
// (ended tasks, old insights): one bounded sweep at start and then one
// every interval, each logged when it deletes something or fails.
package sweep

import (
	"context"
	"log/slog"
	"time"
)

// Bounds of the interval that [Interval] derives from a retention: a tenth
// of it, so that a record outlives its retention by at most a tenth, but
// no more often than MinInterval (each sweep is a store query on every
// replica) and no less often than MaxInterval.
const (
	MinInterval = time.Second
	MaxInterval = time.Hour
)

// Timeout bounds one sweep, so that a store that hangs does not stop the
// loop for good.
const Timeout = 5 * time.Minute

// Interval is how often a loop with retention r sweeps: r/10, within
// [MinInterval, MaxInterval].
func Interval(r time.Duration) time.Duration {
	return min(max(r/10, MinInterval), MaxInterval)
}

// Loop describes one retention loop.
type Loop struct {
	// Sweep deletes what is older than before and reports how many it
	// deleted, also when it fails part-way.
	Sweep func(ctx context.Context, before time.Time) (int64, error)
	// Retention is how long a record is kept; it must be positive.
	Retention time.Duration
	// Interval is the time between two sweeps; zero means
	// Interval(Retention).
	Interval time.Duration
	// Logger receives a line per sweep that deleted something (Info) or
	// failed (Warn); nil discards them.
	Logger *slog.Logger
	// What names the records in the log lines ("task retention"), and
	// BeforeKey the log attribute that carries the cut-off ("endedBefore").
	What, BeforeKey string
}

// Run sweeps at once and then every interval, until ctx ends: its owner
// stops it by cancelling ctx.
func (l Loop) Run(ctx context.Context) {
	interval := l.Interval
	if interval <= 0 {
		interval = Interval(l.Retention)
	}
	logger := l.Logger
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
		sctx, cancel := context.WithTimeout(ctx, Timeout)
		before := time.Now().Add(-l.Retention)
		n, err := l.Sweep(sctx, before)
		cancel()
		switch {
		case err != nil && ctx.Err() == nil:
			logger.Warn(l.What+" failed", l.BeforeKey, before, "deleted", n, "error", err)
		case n > 0:
			logger.Info(l.What, l.BeforeKey, before, "deleted", n)
		}
		t.Reset(interval)
	}
}

// InBatches calls deleteBatch with limit batch until a call deletes fewer
// than batch or fails, so that no store call holds the store for long, and
// reports how many were deleted in all, also when it fails part-way.
func InBatches(ctx context.Context, batch int, deleteBatch func(ctx context.Context, limit int) (int64, error)) (int64, error) {
	var total int64
	for {
		n, err := deleteBatch(ctx, batch)
		total += n
		if err != nil || n < int64(batch) {
			return total, err
		}
	}
}
