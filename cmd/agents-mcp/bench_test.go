package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/cmd/agents-mcp/internal/config"
	"github.com/agents-mcp/agents-mcp/memory/embed"
	"github.com/agents-mcp/agents-mcp/memory/sqlite"
	"github.com/agents-mcp/agents-mcp/memory/vectors"
	"github.com/agents-mcp/agents-mcp/memory/vectorsync"
)

// startupLearnings is the size of the startup benchmark's store;
// STARTUP_BENCH_LEARNINGS overrides it (building 100k takes about two
// minutes, once per benchmark process).
func startupLearnings() int {
	if n, err := strconv.Atoi(os.Getenv("STARTUP_BENCH_LEARNINGS")); err == nil && n > 0 {
		return n
	}
	return 100_000
}

// startupBuildEfC is the insert beam width of the startup benchmark's
// index: STARTUP_BENCH_EFC, or the default (100). Start-up reads the
// file whatever beam built it (the file's size depends on the vectors and
// M, not on the beam), so a 1M run may build with a narrower one to save
// most of the half hour a default build takes on a shared machine.
func startupBuildEfC() int {
	if n, err := strconv.Atoi(os.Getenv("STARTUP_BENCH_EFC")); err == nil && n > 0 {
		return n
	}
	return 0
}

// startupGoal is the goal for start-up to ready with a million learnings.
const startupGoal = 3 * time.Second

// BenchmarkStartup measures what `serve` spends on memory before it is
// fully ready: opening the SQLite store, loading the saved HNSW index and
// reconciling it with the store (listing every id on both sides), with n
// learnings stored and indexed. The baseline, in the same run, is the same
// start-up on an empty data dir.
func BenchmarkStartup(b *testing.B) {
	n := startupLearnings()
	full := buildStartupDir(b, n)
	empty := b.TempDir()
	b.Run(fmt.Sprintf("learnings=%d", n), func(b *testing.B) {
		benchStartup(b, full, n)
		if n >= 1_000_000 {
			b.ReportMetric(startupGoal.Seconds(), "goal-s")
		}
	})
	b.Run("empty-baseline", func(b *testing.B) { benchStartup(b, empty, 0) })
}

func benchStartup(b *testing.B, dir string, want int) {
	cfg := config.Default()
	cfg.DataDir = dir
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	for b.Loop() {
		ctx, cancel := context.WithCancel(context.Background())
		m, err := openMemory(ctx, cfg, logger)
		if err != nil {
			b.Fatal(err)
		}
		var wg sync.WaitGroup
		m.run(ctx, &wg, logger)
		for {
			m.reconcile.Lock()
			done, rerr := m.reconcile.done, m.reconcile.err
			m.reconcile.Unlock()
			if done {
				if rerr != nil {
					b.Fatal(rerr)
				}
				break
			}
			time.Sleep(time.Millisecond)
		}
		if got := m.durable.Len(agentsmcp.NamespaceLearnings); got != want {
			b.Fatalf("index holds %d learnings, want %d", got, want)
		}
		b.StopTimer()
		cancel()
		wg.Wait()
		_ = m.close(context.Background())
		b.StartTimer()
	}
}

var startupDirs sync.Map // n → dir, built once per process

func buildStartupDir(b *testing.B, n int) string {
	if d, ok := startupDirs.Load(n); ok {
		return d.(string)
	}
	dir, err := os.MkdirTemp("", "agents-mcp-startup-bench-")
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	db, err := sqlite.Open(ctx, filepath.Join(dir, SQLiteFile))
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	topics := []string{"deploy", "billing", "report", "backup", "search", "invoice", "upstream", "schema", "cache", "release"}
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for w := range 4 { // the single writer serialises; 4 feeders keep it busy
		wg.Go(func() {
			for i := w; i < n; i += 4 {
				t := topics[i%len(topics)]
				l := &agentsmcp.Learning{Query: fmt.Sprintf("run the %s job for customer %d", t, i), Goal: t + " job",
					Outcome: agentsmcp.OutcomeSuccess, Tools: []string{t + "__run"}}
				if err := db.CreateLearning(ctx, l); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		b.Fatal(err)
	}
	d, _, err := vectors.OpenDurable(dir, embed.Hash{}.ID(), embed.HashDimensions, vectors.HNSWOptions{EfConstruction: startupBuildEfC()})
	if err != nil {
		b.Fatal(err)
	}
	s, err := vectorsync.New(vectorsync.Config{Outbox: db, Index: d, Embedder: embed.Hash{},
		Sources: []vectorsync.Source{vectorsync.Learnings(db)}, Batch: 1024})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := s.Drain(ctx); err != nil {
		b.Fatal(err)
	}
	if err := d.Save(); err != nil {
		b.Fatal(err)
	}
	startupDirs.Store(n, dir) // reused by later runs in this process; TestMain removes it
	return dir
}
