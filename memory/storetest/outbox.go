package storetest

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	agentsmcp "github.com/agents-mcp/agents-mcp"
)

func init() {
	suite["Outbox/WritesEnqueueTheirIndexChanges"] = testOutboxWritesEnqueue
	suite["Outbox/EnqueueIsIdempotentAndValidated"] = testOutboxEnqueueIdempotent
	suite["Outbox/ClaimLeasesAndExpires"] = testOutboxClaimLeases
	suite["Outbox/RetryDefersAndRecordsTheError"] = testOutboxRetry
	suite["Outbox/ConcurrentClaimersShareNothing"] = testOutboxConcurrentClaims
	suite["Outbox/ListDocumentIDsPagesInIDOrder"] = testOutboxListDocumentIDs
}

// drainOutbox claims and acknowledges everything due, returning the keys in
// claim order.
func drainOutbox(t *testing.T, s Services) []string {
	t.Helper()
	ctx := t.Context()
	var keys []string
	for {
		es, err := s.Outbox.ClaimOutbox(ctx, "drain", 50, time.Minute)
		if err != nil {
			t.Fatalf("ClaimOutbox: %v", err)
		}
		if len(es) == 0 {
			return keys
		}
		for _, e := range es {
			keys = append(keys, e.Key())
			if err := s.Outbox.AckOutbox(ctx, e.Key()); err != nil {
				t.Fatalf("AckOutbox: %v", err)
			}
		}
	}
}

func backlog(t *testing.T, s Services) int64 {
	t.Helper()
	n, _, err := s.Outbox.OutboxBacklog(t.Context())
	if err != nil {
		t.Fatalf("OutboxBacklog: %v", err)
	}
	return n
}

func testOutboxWritesEnqueue(t *testing.T, s Services) {
	ctx := t.Context()
	if n := backlog(t, s); n != 0 {
		t.Fatalf("empty store has backlog %d", n)
	}
	l := &agentsmcp.Learning{Query: "weekly report", Outcome: agentsmcp.OutcomeSuccess, CreatedAt: at(1)}
	if err := s.Learnings.CreateLearning(ctx, l); err != nil {
		t.Fatal(err)
	}
	in := &agentsmcp.Insight{Text: "prefer list first", Type: agentsmcp.InsightBestPractice, Confidence: 0.5, CreatedAt: at(2)}
	if err := s.Insights.CreateInsight(ctx, in); err != nil {
		t.Fatal(err)
	}
	p, err := s.Patterns.RecordPatternUse(ctx, "", "summarise files", []string{"files__list", "files__read"}, true, at(3))
	if err != nil {
		t.Fatal(err)
	}
	before := time.Now()
	n, oldest, err := s.Outbox.OutboxBacklog(ctx)
	if err != nil || n != 3 {
		t.Fatalf("backlog after three writes = %d, %v; want 3", n, err)
	}
	// Entries are stamped with the time they were enqueued, not the
	// document's (possibly historical) CreatedAt.
	if oldest.Before(before.Add(-time.Minute)) || oldest.After(before.Add(time.Second)) || oldest.Location() != time.UTC {
		t.Errorf("oldest entry created at %v, want about %v in UTC", oldest, before)
	}
	got := drainOutbox(t, s)
	slices.Sort(got)
	want := []string{
		agentsmcp.NamespaceInsights + "/upsert/" + in.ID,
		agentsmcp.NamespaceLearnings + "/upsert/" + l.ID,
		agentsmcp.NamespacePatterns + "/upsert/" + p.ID,
	}
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("claimed %v, want %v", got, want)
	}

	// A pattern is indexed at its first use only: goal and steps never
	// change.
	if _, err := s.Patterns.RecordPatternUse(ctx, "", "summarise files", []string{"files__list", "files__read"}, false, at(4)); err != nil {
		t.Fatal(err)
	}
	if n := backlog(t, s); n != 0 {
		t.Errorf("second use of a pattern enqueued %d entries, want 0", n)
	}
	// Deleting an insight enqueues the removal of its vector; a failed
	// delete enqueues nothing.
	if err := s.Insights.DeleteInsight(ctx, in.ID); err != nil {
		t.Fatal(err)
	}
	if err := s.Insights.DeleteInsight(ctx, "ins_01JZZZZZZZZZZZZZZZZZZZZZZZ"); agentsmcp.ErrorCode(err) != agentsmcp.ENOTFOUND {
		t.Fatalf("delete unknown insight: %v", err)
	}
	if got := drainOutbox(t, s); !slices.Equal(got, []string{agentsmcp.NamespaceInsights + "/delete/" + in.ID}) {
		t.Errorf("after delete claimed %v, want the insight's delete only", got)
	}
	// A write that fails its validation enqueues nothing.
	if err := s.Learnings.CreateLearning(ctx, &agentsmcp.Learning{Outcome: agentsmcp.OutcomeSuccess}); agentsmcp.ErrorCode(err) != agentsmcp.EINVALID {
		t.Fatalf("invalid learning: %v", err)
	}
	if n := backlog(t, s); n != 0 {
		t.Errorf("an invalid write left %d entries", n)
	}
}

func testOutboxEnqueueIdempotent(t *testing.T, s Services) {
	ctx := t.Context()
	for range 3 {
		if err := s.Outbox.EnqueueOutbox(ctx, "learnings", agentsmcp.OutboxUpsert, "lrn_a", "lrn_b"); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Outbox.EnqueueOutbox(ctx, "learnings", agentsmcp.OutboxDelete, "lrn_a"); err != nil {
		t.Fatal(err)
	}
	if n := backlog(t, s); n != 3 {
		t.Errorf("backlog = %d, want 3 (two upserts, one delete)", n)
	}
	for _, tc := range []struct {
		ns  string
		op  agentsmcp.OutboxOp
		ids []string
	}{
		{"", agentsmcp.OutboxUpsert, []string{"x"}},
		{"learnings", "replace", []string{"x"}},
		{"learnings", agentsmcp.OutboxUpsert, []string{"x", ""}},
	} {
		err := s.Outbox.EnqueueOutbox(ctx, tc.ns, tc.op, tc.ids...)
		wantCode(t, err, agentsmcp.EINVALID, fmt.Sprintf("enqueue %q %q %q", tc.ns, tc.op, tc.ids))
	}
	if n := backlog(t, s); n != 3 {
		t.Errorf("invalid requests changed the backlog to %d", n)
	}
	_, err := s.Outbox.ClaimOutbox(ctx, "", 1, time.Minute)
	wantCode(t, err, agentsmcp.EINVALID, "claim without owner")
	// Acknowledging an unknown key is not an error.
	if err := s.Outbox.AckOutbox(ctx, "learnings/upsert/nope"); err != nil {
		t.Errorf("ack unknown key: %v", err)
	}
}

func testOutboxClaimLeases(t *testing.T, s Services) {
	ctx := t.Context()
	if err := s.Outbox.EnqueueOutbox(ctx, "insights", agentsmcp.OutboxUpsert, "ins_1", "ins_2", "ins_3"); err != nil {
		t.Fatal(err)
	}
	first, err := s.Outbox.ClaimOutbox(ctx, "worker-a", 2, 300*time.Millisecond)
	if err != nil || len(first) != 2 {
		t.Fatalf("first claim = %d entries, %v; want 2", len(first), err)
	}
	for _, e := range first {
		if e.Namespace != "insights" || e.Op != agentsmcp.OutboxUpsert || e.Attempts != 0 || e.CreatedAt.IsZero() {
			t.Errorf("claimed entry %+v", e)
		}
	}
	rest, err := s.Outbox.ClaimOutbox(ctx, "worker-b", 10, time.Minute)
	if err != nil || len(rest) != 1 {
		t.Fatalf("second claimer got %d entries, %v; want only the unleased one", len(rest), err)
	}
	if slices.ContainsFunc(first, func(e *agentsmcp.OutboxEntry) bool { return e.Key() == rest[0].Key() }) {
		t.Fatalf("entry %s handed to two owners", rest[0].Key())
	}
	if again, err := s.Outbox.ClaimOutbox(ctx, "worker-c", 10, time.Minute); err != nil || len(again) != 0 {
		t.Fatalf("third claimer got %d entries while all are leased, %v", len(again), err)
	}
	// worker-a dies: its lease expires and the entries go to someone else.
	time.Sleep(400 * time.Millisecond)
	taken, err := s.Outbox.ClaimOutbox(ctx, "worker-c", 10, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := keysOf(taken), keysOf(first); !slices.Equal(got, want) {
		t.Fatalf("after expiry claimed %v, want worker-a's %v", got, want)
	}
	if err := s.Outbox.AckOutbox(ctx, append(keysOf(taken), rest[0].Key())...); err != nil {
		t.Fatal(err)
	}
	if n := backlog(t, s); n != 0 {
		t.Errorf("backlog after acking everything = %d", n)
	}
}

func keysOf(es []*agentsmcp.OutboxEntry) []string {
	keys := make([]string, len(es))
	for i, e := range es {
		keys[i] = e.Key()
	}
	slices.Sort(keys)
	return keys
}

func testOutboxRetry(t *testing.T, s Services) {
	ctx := t.Context()
	if err := s.Outbox.EnqueueOutbox(ctx, "learnings", agentsmcp.OutboxUpsert, "lrn_x"); err != nil {
		t.Fatal(err)
	}
	es, err := s.Outbox.ClaimOutbox(ctx, "w", 10, time.Minute)
	if err != nil || len(es) != 1 {
		t.Fatalf("claim = %d, %v", len(es), err)
	}
	key := es[0].Key()
	long := strings.Repeat("é", agentsmcp.MaxOutboxErrorBytes) // 2 bytes each
	next := time.Now().Add(400 * time.Millisecond)
	if err := s.Outbox.RetryOutbox(ctx, key, long, next); err != nil {
		t.Fatal(err)
	}
	// Not due yet, although the lease was released.
	if es, err := s.Outbox.ClaimOutbox(ctx, "w2", 10, time.Minute); err != nil || len(es) != 0 {
		t.Fatalf("claimed %d entries before their next attempt, %v", len(es), err)
	}
	time.Sleep(time.Until(next) + 50*time.Millisecond)
	es, err = s.Outbox.ClaimOutbox(ctx, "w2", 10, time.Minute)
	if err != nil || len(es) != 1 {
		t.Fatalf("claim after the retry time = %d, %v", len(es), err)
	}
	e := es[0]
	if e.Attempts != 1 {
		t.Errorf("Attempts = %d, want 1", e.Attempts)
	}
	if len(e.LastError) > agentsmcp.MaxOutboxErrorBytes || len(e.LastError) < agentsmcp.MaxOutboxErrorBytes-1 || !strings.HasPrefix(long, e.LastError) {
		t.Errorf("LastError is %d bytes, want the error cut on a character boundary at %d", len(e.LastError), agentsmcp.MaxOutboxErrorBytes)
	}
	checkTime(t, "NextAttemptAt", e.NextAttemptAt, next)
	wantCode(t, s.Outbox.RetryOutbox(ctx, "learnings/upsert/unknown", "x", time.Now()), agentsmcp.ENOTFOUND, "retry unknown key")
}

func testOutboxConcurrentClaims(t *testing.T, s Services) {
	ctx := t.Context()
	const entries, workers = 24, 4
	ids := make([]string, entries)
	for i := range ids {
		ids[i] = fmt.Sprintf("lrn_%02d", i)
	}
	if err := s.Outbox.EnqueueOutbox(ctx, "learnings", agentsmcp.OutboxUpsert, ids...); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	seen := map[string]string{}
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := range workers {
		owner := fmt.Sprintf("w%d", w)
		wg.Go(func() {
			for {
				es, err := s.Outbox.ClaimOutbox(context.WithoutCancel(ctx), owner, 3, time.Minute)
				if err != nil {
					errs <- err
					return
				}
				if len(es) == 0 {
					return
				}
				mu.Lock()
				for _, e := range es {
					if prev, ok := seen[e.Key()]; ok {
						errs <- fmt.Errorf("%s claimed by %s and %s", e.Key(), prev, owner)
					}
					seen[e.Key()] = owner
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if len(seen) != entries {
		t.Errorf("claimed %d distinct entries, want %d", len(seen), entries)
	}
}

func testOutboxListDocumentIDs(t *testing.T, s Services) {
	ctx := t.Context()
	var want []string
	for i := range 7 {
		l := &agentsmcp.Learning{Query: fmt.Sprintf("query %d", i), Outcome: agentsmcp.OutcomeSuccess, CreatedAt: at(i)}
		if err := s.Learnings.CreateLearning(ctx, l); err != nil {
			t.Fatal(err)
		}
		want = append(want, l.ID)
	}
	in := &agentsmcp.Insight{Text: "x", Type: agentsmcp.InsightObservation}
	if err := s.Insights.CreateInsight(ctx, in); err != nil {
		t.Fatal(err)
	}
	p, err := s.Patterns.RecordPatternUse(ctx, "", "goal", []string{"a"}, true, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(want)
	var got []string
	after := ""
	for {
		ids, err := s.Outbox.ListDocumentIDs(ctx, agentsmcp.NamespaceLearnings, after, 3)
		if err != nil {
			t.Fatal(err)
		}
		if len(ids) > 3 {
			t.Fatalf("page of %d ids, limit 3", len(ids))
		}
		if len(ids) == 0 {
			break
		}
		got = append(got, ids...)
		after = ids[len(ids)-1]
	}
	if !slices.Equal(got, want) {
		t.Errorf("learning ids = %v, want %v", got, want)
	}
	for ns, id := range map[string]string{agentsmcp.NamespaceInsights: in.ID, agentsmcp.NamespacePatterns: p.ID} {
		if ids, err := s.Outbox.ListDocumentIDs(ctx, ns, "", 10); err != nil || !slices.Equal(ids, []string{id}) {
			t.Errorf("%s ids = %v, %v; want [%s]", ns, ids, err, id)
		}
	}
	_, err = s.Outbox.ListDocumentIDs(ctx, "tools", "", 10)
	wantCode(t, err, agentsmcp.EINVALID, "unknown namespace")
}
