package recall_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/memory/recall"
	"github.com/agents-mcp/agents-mcp/memory/sqlite"
)

// countingLearnings is the real SQLite store, counting its page reads of
// learnings.
type countingLearnings struct {
	*sqlite.DB
	finds int
}

func (c *countingLearnings) FindLearnings(ctx context.Context, f agentsmcp.LearningFilter) ([]*agentsmcp.Learning, string, error) {
	c.finds++
	return c.DB.FindLearnings(ctx, f)
}

// The recent learnings are read from the store once, then brought up to
// date with what was stored since: the same answer as a full read every
// time (newest first by creation, then id; the caller's own under private
// memory), without reading the whole page again.
func TestRecentLearningsFollowTheStore(t *testing.T) {
	e := newMemoryEnv(t)
	ctx := agentsmcp.WithPrincipal(t.Context(), &agentsmcp.Principal{ID: "alice"})
	store := &countingLearnings{DB: e.db}
	search := *e.search
	search.Learnings = store
	m := &recall.AgentMemory{Searcher: &search, Visibility: agentsmcp.VisibilityPrincipal, Family: identity, FamilyTag: familyTag}
	start := time.Now().Add(-time.Hour)
	add := func(i int, principal string, at time.Duration) {
		t.Helper()
		if err := e.db.CreateLearning(ctx, &agentsmcp.Learning{Query: fmt.Sprintf("weather in city %d", i), Outcome: agentsmcp.OutcomeSuccess,
			Principal: agentsmcp.MemoryOwner(principal), CreatedAt: start.Add(at)}); err != nil {
			t.Fatal(err)
		}
	}
	const size = 3
	check := func(what string) {
		t.Helper()
		got, err := m.RecentLearnings(ctx, size)
		if err != nil {
			t.Fatal(err)
		}
		want, _, err := e.db.FindLearnings(ctx, agentsmcp.LearningFilter{Principal: agentsmcp.MemoryOwner("alice"), Limit: size})
		if err != nil {
			t.Fatal(err)
		}
		if g, w := queries(got), queries(want); g != w {
			t.Fatalf("%s: recent = %s, a full read gives %s", what, g, w)
		}
	}
	add(1, "alice", time.Second)
	add(2, "alice", 2*time.Second)
	check("first read")
	check("second read")
	add(3, "alice", 3*time.Second)
	add(4, "bob", 4*time.Second)
	check("after a write of alice's and one of bob's")
	add(5, "alice", 1500*time.Millisecond) // stored late, dated between 1 and 2
	check("after a learning dated before others")
	add(6, "alice", 10*time.Second)
	check("after another")
	if store.finds != 1 {
		t.Errorf("the store's page was read %d times, want once: the writes since should be merged in", store.finds)
	}
	for i := range size + 2 { // more than a page since: read afresh
		add(10+i, "alice", time.Duration(20+i)*time.Second)
	}
	check("after more than a page of writes")
	// A caller's changes to its slice are its own.
	ls, _ := m.RecentLearnings(ctx, size)
	ls[0] = nil
	check("after a caller changed its slice")
}

func queries(ls []*agentsmcp.Learning) string {
	var out []string
	for _, l := range ls {
		out = append(out, l.Query)
	}
	return fmt.Sprint(out)
}
