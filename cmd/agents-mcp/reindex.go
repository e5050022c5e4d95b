package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/agents-mcp/agents-mcp/cmd/agents-mcp/internal/config"
	"github.com/agents-mcp/agents-mcp/memory/vectors"
	"github.com/agents-mcp/agents-mcp/memory/vectorsync"
)

// reindexCommand rebuilds the vector index from the store: every learning,
// insight and plan pattern is embedded again and written to the index
// (the embedded one is emptied first and saved at the end; Pinecone is
// upserted over). Progress goes to stderr. With the embedded index, run it
// while the server is stopped: a running server keeps its own copy in
// memory and would save it over the rebuilt file.
func reindexCommand(ctx context.Context, args []string, getenv func(string) string, stderr io.Writer) error {
	cfg, err := config.Load(args, getenv)
	if err != nil {
		return err
	}
	logger := newLogger(cfg, stderr)
	m, err := openMemory(ctx, cfg, logger)
	if err != nil {
		return err
	}
	defer m.close(context.WithoutCancel(ctx))
	var durable *vectors.Durable
	if m.embedded != nil {
		if durable, err = m.embedded.Load(logger); err != nil {
			return err
		}
		durable.Reset()
	}
	start := time.Now()
	last := time.Time{}
	err = m.syncer.Reconcile(ctx, true, func(p vectorsync.Progress) {
		if p.Done == p.Total || time.Since(last) >= time.Second {
			last = time.Now()
			pct := 100.0
			if p.Total > 0 {
				pct = 100 * float64(p.Done) / float64(p.Total)
			}
			fmt.Fprintf(stderr, "reindex %-9s %d/%d (%.0f%%)\n", p.Namespace, p.Done, p.Total, pct)
		}
	})
	if err != nil {
		return fmt.Errorf("reindex: %w", err)
	}
	if durable != nil {
		if err := durable.Save(); err != nil {
			return err
		}
	}
	fmt.Fprintf(stderr, "reindex done in %s (%s, embedder %s)\n", time.Since(start).Round(time.Millisecond), m.where, m.embedder.ID())
	return nil
}
