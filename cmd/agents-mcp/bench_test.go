package main

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/cmd/agents-mcp/internal/config"
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
// ready, with n learnings stored and indexed: opening the SQLite store and
// starting the memory layer's work (openMemory, memory.run). From then on
// the server answers, /readyz included, and searches answer from the store's
// word filter while the saved HNSW index loads in the background
// (embeddedIndex). ready-s is that time, the goal's measure; indexed-s is
// the time until the index is loaded and reconciled with the store (every
// id listed on both sides), when semantic search takes over. The baseline,
// in the same run, is the same start-up on an empty data dir.
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
	var ready, indexed []time.Duration
	for b.Loop() {
		start := time.Now()
		ctx, cancel := context.WithCancel(context.Background())
		m, err := openMemory(ctx, cfg, logger)
		if err != nil {
			b.Fatal(err)
		}
		var wg sync.WaitGroup
		m.run(ctx, &wg, logger)
		if _, err := m.storeCheck(ctx); err != nil {
			b.Fatal(err)
		}
		ready = append(ready, time.Since(start))
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
		indexed = append(indexed, time.Since(start))
		if got := m.embedded.Len(agentsmcp.NamespaceLearnings); got != want {
			b.Fatalf("index holds %d learnings, want %d", got, want)
		}
		b.StopTimer()
		cancel()
		wg.Wait()
		_ = m.close(context.Background())
		b.StartTimer()
	}
	slices.Sort(ready)
	slices.Sort(indexed)
	b.ReportMetric(ready[len(ready)/2].Seconds(), "ready-s")
	b.ReportMetric(indexed[len(indexed)/2].Seconds(), "indexed-s")
}

var startupDirs sync.Map // n → dir, built once per process

// startupFixtureVersion names the layout of the cached start-up fixture:
// bump it when the fixture's rows or the index file change meaning.
const startupFixtureVersion = 2

// buildStartupDir returns a data dir with n learnings stored and indexed
// by the default embedder, as a server that ran a long time leaves it. It
// is built once and kept under the temporary dir between runs (its name
// says n, the insert beam and the fixture's version; a complete one holds
// the file "complete"), because at 1M the build takes many minutes: the
// rows go in as one INSERT … SELECT over a counter (one transaction,
// the store's own triggers keeping its full-text index), and the index
// is built the way start-up rebuilds a lost one (vectorsync.Reconcile).
// STARTUP_BENCH_REBUILD=1 builds afresh.
func buildStartupDir(b *testing.B, n int) string {
	if d, ok := startupDirs.Load(n); ok {
		return d.(string)
	}
	cfg := config.Default()
	dir := filepath.Join(os.TempDir(), fmt.Sprintf("agents-mcp-startup-bench-%s-n%d-efc%d-v%d", cfg.Embedder, n, startupBuildEfC(), startupFixtureVersion))
	stamp := filepath.Join(dir, "complete")
	if _, err := os.Stat(stamp); err == nil && os.Getenv("STARTUP_BENCH_REBUILD") != "1" {
		startupDirs.Store(n, dir)
		return dir
	}
	if err := os.RemoveAll(dir); err != nil {
		b.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	start := time.Now()
	db, err := sqlite.Open(ctx, filepath.Join(dir, SQLiteFile))
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	if err := fillLearnings(ctx, filepath.Join(dir, SQLiteFile), n); err != nil {
		b.Fatal(err)
	}
	fmt.Fprintf(os.Stderr, "start-up fixture: %d learnings stored in %v\n", n, time.Since(start).Round(time.Second))
	embedder, _, err := newEmbedder(ctx, cfg)
	if err != nil {
		b.Fatal(err)
	}
	d, _, err := vectors.OpenDurable(dir, embedder.ID(), embedder.Dimensions(), vectors.HNSWOptions{EfConstruction: startupBuildEfC()})
	if err != nil {
		b.Fatal(err)
	}
	s, err := vectorsync.New(vectorsync.Config{Outbox: db, Index: d, Embedder: embedder,
		Sources: []vectorsync.Source{vectorsync.Learnings(db)}, Batch: 1024})
	if err != nil {
		b.Fatal(err)
	}
	last := time.Now()
	if err := s.Reconcile(ctx, false, func(p vectorsync.Progress) {
		if time.Since(last) > time.Minute {
			last = time.Now()
			// To stderr as it happens: a benchmark's log is shown only
			// when it ends, and a 1M build runs for most of an hour.
			fmt.Fprintf(os.Stderr, "start-up fixture: %d of %d indexed after %v\n", p.Done, p.Total, time.Since(start).Round(time.Second))
		}
	}); err != nil {
		b.Fatal(err)
	}
	if err := d.Save(); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(stamp, nil, 0o600); err != nil {
		b.Fatal(err)
	}
	b.Logf("start-up fixture: built in %v under %s (kept for the next run)", time.Since(start).Round(time.Second), dir)
	startupDirs.Store(n, dir)
	return dir
}

// fillLearnings stores n successful learnings in the migrated SQLite
// store at path in one statement: ids lrn_ followed by 26 digits (a valid
// stored id), ten topics in turn, one tool each, written as
// CreateLearning writes them. Minutes faster at 1M than n CreateLearning
// calls, each its own transaction.
func fillLearnings(ctx context.Context, path string, n int) error {
	raw, err := sql.Open("sqlite", path)
	if err != nil {
		return err
	}
	defer raw.Close()
	tx, err := raw.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	created := time.Now().Add(-time.Duration(n) * time.Millisecond).UnixMilli()
	if _, err := tx.ExecContext(ctx, `INSERT INTO learnings
		(id, task_id, plan_id, query, goal, steps, tools, upstreams, outcome, duration_ns, errors, retries, principal, created_at)
		WITH RECURSIVE c(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM c WHERE i + 1 < ?),
		topics(k, t) AS (VALUES (0, 'deploy'), (1, 'billing'), (2, 'report'), (3, 'backup'), (4, 'search'),
			(5, 'invoice'), (6, 'upstream'), (7, 'schema'), (8, 'cache'), (9, 'release'))
		SELECT printf('lrn_%026d', i), '', '', printf('run the %s job for customer %d', t, i), t || ' job',
			'[]', json_array(t || '__run'), '[]', 'success', 0, '[]', 0, 'anonymous', ? + i
		FROM c JOIN topics ON k = i % 10`, n, created); err != nil {
		return fmt.Errorf("insert learnings: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO learning_tools (tool, created_at, learning_id, learning_pk)
		SELECT json_extract(tools, '$[0]'), created_at, id, pk FROM learnings`); err != nil {
		return fmt.Errorf("insert learning tools: %w", err)
	}
	return tx.Commit()
}
