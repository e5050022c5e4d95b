// Package syncloop runs the loop by which a replica follows definitions
// kept in the store (the upstreams of remote.SharedUpstreams, the HTTP
// tool sources of httptools.SharedSources): one sync every interval, each
// bounded, with a failing store logged when it starts failing and when it
// recovers, not at every attempt.
package syncloop

import (
	"context"
	"log/slog"
	"time"
)

// MinInterval is the shortest interval [Run] accepts; a shorter one is
// raised to it, so that a misconfiguration cannot make a replica poll the
// store in a tight loop.
const MinInterval = 100 * time.Millisecond

// Loop describes one sync loop.
type Loop struct {
	// Sync makes the replica follow the store once; an error means the
	// store could not be read, and the replica keeps what it has.
	Sync func(ctx context.Context) error
	// Timeout bounds each Sync.
	Timeout time.Duration
	Logger  *slog.Logger
	// Failing and Recovered are the messages logged when Sync starts
	// failing (a warning, with the error) and when it succeeds again.
	Failing, Recovered string
}

// Run calls l.Sync every interval (at least [MinInterval]) until ctx is
// done; the first call is one interval after Run starts, since the caller
// syncs once at start-up itself, with a bound of its own.
func (l Loop) Run(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(max(interval, MinInterval))
	defer t.Stop()
	failing := false
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		sctx, cancel := context.WithTimeout(ctx, l.Timeout)
		err := l.Sync(sctx)
		cancel()
		switch {
		case err != nil && !failing && ctx.Err() == nil:
			l.Logger.Warn(l.Failing, "error", err)
			failing = true
		case err == nil && failing:
			l.Logger.Info(l.Recovered)
			failing = false
		}
	}
}
