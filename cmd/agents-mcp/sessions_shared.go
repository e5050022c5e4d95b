package main

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/agents-mcp/agents-mcp/cmd/agents-mcp/internal/config"
	"github.com/agents-mcp/agents-mcp/router"
	"github.com/agents-mcp/agents-mcp/router/transport"
	"github.com/agents-mcp/agents-mcp/router/transport/session"
)

// sharedSessionStore is what MongoDB (memory/mongo) offers for sharing
// MCP sessions between replicas.
type sharedSessionStore interface {
	session.SharedStore
	transport.EventLog
	PurgeMCPSessions(ctx context.Context, now time.Time) error
}

// sharedSessionsPurgeInterval is how often each replica deletes the
// expired session states and events: FerretDB has no TTL index.
const sharedSessionsPurgeInterval = time.Minute

// shareSessions sets opts to keep the state of stateful sessions and the
// events of their streams in the store (sessions.shared), and starts the
// purge of expired ones, which stops with ctx.
func shareSessions(ctx context.Context, cfg *config.Config, a *app, opts *router.HTTPOptions, logger *slog.Logger) error {
	if !cfg.SessionsShared || cfg.Stateless {
		return nil
	}
	st, ok := a.memory.store.(sharedSessionStore)
	if !ok {
		return errors.New("sessions.shared needs MONGODB_URI: replicas share sessions through MongoDB")
	}
	opts.SharedSessions, opts.SharedEvents = st, st
	go func() {
		t := time.NewTicker(sharedSessionsPurgeInterval)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case now := <-t.C:
				pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
				if err := st.PurgeMCPSessions(pctx, now); err != nil {
					logger.Warn("expired shared sessions could not be purged", "error", err)
				}
				cancel()
			}
		}
	}()
	return nil
}
