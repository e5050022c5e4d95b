package vectorsync_test

import (
	"context"
	"errors"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/internal/testutil"
	"github.com/agents-mcp/agents-mcp/memory/embed"
	"github.com/agents-mcp/agents-mcp/memory/sqlite"
	"github.com/agents-mcp/agents-mcp/memory/vectors"
	"github.com/agents-mcp/agents-mcp/memory/vectorsync"
)

// flakyEmbedder is a fake remote embedder (a paid API in production): it
// fails while down is set, and otherwise embeds with the offline hash.
type flakyEmbedder struct {
	embed.Hash
	down  atomic.Bool
	calls atomic.Int32
}

func (f *flakyEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	f.calls.Add(1)
	if f.down.Load() {
		return nil, agentsmcp.Errorf(agentsmcp.EUNAVAILABLE, "embedder is down (fake)")
	}
	return f.Hash.Embed(ctx, texts)
}

type fixture struct {
	db       *sqlite.DB
	index    *vectors.Flat
	embedder *flakyEmbedder
	syncer   *vectorsync.Syncer
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	db, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "m.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	f := &fixture{db: db, index: vectors.NewFlat(embed.HashDimensions), embedder: &flakyEmbedder{}}
	f.syncer, err = vectorsync.New(vectorsync.Config{
		Outbox: db, Index: f.index, Embedder: f.embedder,
		Sources:    []vectorsync.Source{vectorsync.Learnings(db), vectorsync.Insights(db), vectorsync.Patterns(db)},
		MinBackoff: 20 * time.Millisecond, MaxBackoff: 40 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// nearest returns the id of the namespace's vector nearest to text.
func (f *fixture) nearest(t *testing.T, ns, text string) string {
	t.Helper()
	v, err := embed.Hash{}.Embed(t.Context(), []string{text})
	if err != nil {
		t.Fatal(err)
	}
	ms, err := f.index.Query(t.Context(), ns, agentsmcp.VectorQuery{Values: v[0], TopK: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) == 0 {
		return ""
	}
	return ms[0].ID
}

func TestWritesReachTheIndex(t *testing.T) {
	f := newFixture(t)
	ctx := t.Context()
	a := &agentsmcp.Learning{Query: "summarise the weekly sales report", Outcome: agentsmcp.OutcomeSuccess}
	b := &agentsmcp.Learning{Query: "restart the staging database", Outcome: agentsmcp.OutcomeFailure}
	for _, l := range []*agentsmcp.Learning{a, b} {
		if err := f.db.CreateLearning(ctx, l); err != nil {
			t.Fatal(err)
		}
	}
	in := &agentsmcp.Insight{Text: "list directories before searching them", Type: agentsmcp.InsightBestPractice}
	if err := f.db.CreateInsight(ctx, in); err != nil {
		t.Fatal(err)
	}
	if n, err := f.syncer.Drain(ctx); err != nil || n != 3 {
		t.Fatalf("Drain = %d, %v; want 3 entries", n, err)
	}
	if got := f.nearest(t, agentsmcp.NamespaceLearnings, "weekly sales summary"); got != a.ID {
		t.Errorf("nearest learning = %q, want %q", got, a.ID)
	}
	if got := f.index.Len(agentsmcp.NamespaceInsights); got != 1 {
		t.Errorf("insights indexed = %d, want 1", got)
	}
	// Metadata filters see the learning's outcome.
	v, _ := embed.Hash{}.Embed(ctx, []string{"database"})
	ms, err := f.index.Query(ctx, agentsmcp.NamespaceLearnings, agentsmcp.VectorQuery{Values: v[0], TopK: 5, Filter: map[string]string{vectorsync.MetaOutcome: "failure"}})
	if err != nil || len(ms) != 1 || ms[0].ID != b.ID {
		t.Errorf("failure-filtered query = %+v, %v; want only %s", ms, err, b.ID)
	}
	// A deleted insight leaves the index.
	if err := f.db.DeleteInsight(ctx, in.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := f.syncer.Drain(ctx); err != nil {
		t.Fatal(err)
	}
	if got := f.index.Len(agentsmcp.NamespaceInsights); got != 0 {
		t.Errorf("insights indexed after delete = %d, want 0", got)
	}
	if n, _, _ := f.db.OutboxBacklog(ctx); n != 0 {
		t.Errorf("backlog = %d after draining", n)
	}
}

func TestWordlessTextIsSkippedNotRetried(t *testing.T) {
	f := newFixture(t)
	ctx := t.Context()
	if err := f.db.CreateLearning(ctx, &agentsmcp.Learning{Query: "?!", Outcome: agentsmcp.OutcomeSuccess}); err != nil {
		t.Fatal(err)
	}
	if n, err := f.syncer.Drain(ctx); n != 1 || err != nil {
		t.Fatalf("Drain = %d, %v", n, err)
	}
	if n, _, _ := f.db.OutboxBacklog(ctx); n != 0 || f.index.Len(agentsmcp.NamespaceLearnings) != 0 {
		t.Errorf("backlog %d, indexed %d; want the entry acknowledged and nothing indexed", n, f.index.Len(agentsmcp.NamespaceLearnings))
	}
}

func TestDownEmbedderLosesNothingAndNeverBlocksTheWriter(t *testing.T) {
	f := newFixture(t)
	ctx := t.Context()
	f.embedder.down.Store(true)
	l := &agentsmcp.Learning{Query: "archive old invoices", Outcome: agentsmcp.OutcomeSuccess}
	if err := f.db.CreateLearning(ctx, l); err != nil {
		t.Fatalf("the write must not depend on the embedder: %v", err)
	}
	_, err := f.syncer.ProcessBatch(ctx)
	if agentsmcp.ErrorCode(err) != agentsmcp.EUNAVAILABLE {
		t.Fatalf("ProcessBatch with the embedder down: %v, want the EUNAVAILABLE cause", err)
	}
	n, _, _ := f.db.OutboxBacklog(ctx)
	if n != 1 || f.index.Len(agentsmcp.NamespaceLearnings) != 0 {
		t.Fatalf("backlog %d, indexed %d; want the entry kept and nothing indexed", n, f.index.Len(agentsmcp.NamespaceLearnings))
	}
	// Not due again before its backoff.
	if n, err := f.syncer.ProcessBatch(ctx); n != 0 || err != nil {
		t.Fatalf("entry retried immediately: %d, %v", n, err)
	}
	f.embedder.down.Store(false)
	testutil.Eventually(t, 5*time.Second, "the entry is retried after the embedder came back", func() bool {
		if _, err := f.syncer.Drain(ctx); err != nil {
			t.Fatal(err)
		}
		return f.index.Len(agentsmcp.NamespaceLearnings) != 0
	})
	if got := f.nearest(t, agentsmcp.NamespaceLearnings, "invoices"); got != l.ID {
		t.Errorf("nearest = %q, want %q", got, l.ID)
	}
}

func TestRunStopsWithItsContextAndWakesOnNotify(t *testing.T) {
	f := newFixture(t)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() { defer close(done); f.syncer.Run(ctx) }()
	if err := f.db.CreateInsight(t.Context(), &agentsmcp.Insight{Text: "cache upstream lists", Type: agentsmcp.InsightObservation}); err != nil {
		t.Fatal(err)
	}
	f.syncer.Notify()
	testutil.Eventually(t, 5*time.Second, "Run indexes the insight", func() bool { return f.index.Len(agentsmcp.NamespaceInsights) != 0 })
	if n := f.index.Len(agentsmcp.NamespaceInsights); n != 1 {
		t.Errorf("Run indexed %d insights, want 1", n)
	}
	cancel()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not return after its context ended")
	}
}

func TestReconcileRestoresALostIndex(t *testing.T) {
	f := newFixture(t)
	ctx := t.Context()
	for _, q := range []string{"rotate api keys", "compress build logs", "email the on-call team"} {
		l := &agentsmcp.Learning{Query: q, Outcome: agentsmcp.OutcomeSuccess}
		if err := f.db.CreateLearning(ctx, l); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := f.db.RecordPatternUse(ctx, "", "rotate credentials", []string{"vault__rotate"}, true, time.Time{}); err != nil {
		t.Fatal(err)
	}
	// The outbox was drained into an index that was then lost (a crash
	// before its save), and holds a vector whose document is gone.
	if _, err := f.syncer.Drain(ctx); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	lost, status, err := vectors.OpenDurable(dir, embed.Hash{}.ID(), embed.HashDimensions, vectors.HNSWOptions{})
	if err != nil || status != vectors.OpenedNew {
		t.Fatalf("OpenDurable = %v, %v", status, err)
	}
	stale, _ := embed.Hash{}.Embed(ctx, []string{"stale"})
	if err := lost.Upsert(ctx, agentsmcp.NamespaceLearnings, []agentsmcp.Vector{{ID: "lrn_gone", Values: stale[0]}}); err != nil {
		t.Fatal(err)
	}
	s, err := vectorsync.New(vectorsync.Config{Outbox: f.db, Index: lost, Embedder: embed.Hash{},
		Sources: []vectorsync.Source{vectorsync.Learnings(f.db), vectorsync.Insights(f.db), vectorsync.Patterns(f.db)}})
	if err != nil {
		t.Fatal(err)
	}
	var reports []vectorsync.Progress
	if err := s.Reconcile(ctx, false, func(p vectorsync.Progress) { reports = append(reports, p) }); err != nil {
		t.Fatal(err)
	}
	if got := lost.Len(agentsmcp.NamespaceLearnings); got != 3 {
		t.Errorf("learnings after reconcile = %d, want 3", got)
	}
	if got := lost.Len(agentsmcp.NamespacePatterns); got != 1 {
		t.Errorf("patterns after reconcile = %d, want 1", got)
	}
	var last vectorsync.Progress
	for _, p := range reports {
		if p.Namespace == agentsmcp.NamespaceLearnings {
			last = p
		}
	}
	if last.Done != 3 || last.Total != 3 || last.Removed != 1 {
		t.Errorf("final learnings progress = %+v, want 3/3 with 1 removed", last)
	}
	// A second reconcile has nothing to do.
	calls := 0
	if err := s.Reconcile(ctx, false, func(p vectorsync.Progress) { calls += p.Total + p.Removed }); err != nil || calls != 0 {
		t.Errorf("second reconcile did %d writes, %v; want none", calls, err)
	}
	// Saved and reopened, the index is whole.
	if err := lost.Save(); err != nil {
		t.Fatal(err)
	}
	again, status, err := vectors.OpenDurable(dir, embed.Hash{}.ID(), embed.HashDimensions, vectors.HNSWOptions{})
	if err != nil || status != vectors.OpenedExisting || again.Len(agentsmcp.NamespaceLearnings) != 3 {
		t.Fatalf("reopened: status %v, %d learnings, %v", status, again.Len(agentsmcp.NamespaceLearnings), err)
	}
}

func TestNewRequiresItsParts(t *testing.T) {
	if _, err := vectorsync.New(vectorsync.Config{}); err == nil || errors.Is(err, context.Canceled) {
		t.Fatalf("New with nothing: %v", err)
	}
}
