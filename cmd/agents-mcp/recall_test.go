package main

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/agents"
	"github.com/agents-mcp/agents-mcp/memory/embed"
	"github.com/agents-mcp/agents-mcp/memory/mcptools"
	"github.com/agents-mcp/agents-mcp/memory/sqlite"
	"github.com/agents-mcp/agents-mcp/memory/vectors"
	"github.com/agents-mcp/agents-mcp/memory/vectorsync"
)

// The thought agent and the planner learn from past tasks through
// recallMemory, in the call of the principal who asked: under principal
// visibility they read that principal's learnings, insights and patterns
// only, and under shared visibility everyone's.
func TestRecallMemoryIsConfinedToThePrincipal(t *testing.T) {
	ctx := t.Context()
	db, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "m.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	index := vectors.NewFlat(embed.HashDimensions)
	syncer, err := vectorsync.New(vectorsync.Config{Outbox: db, Index: index, Embedder: embed.Hash{},
		Sources: []vectorsync.Source{vectorsync.Learnings(db), vectorsync.Insights(db), vectorsync.Patterns(db)}})
	if err != nil {
		t.Fatal(err)
	}
	recall := &mcptools.Recall{Index: index, Embedder: embed.Hash{}, Learnings: db, Insights: db, Patterns: db}

	const alice, bob = "key:aaaaaaaaaaaa", "key:bbbbbbbbbbbb"
	const request = "export the payroll of acme from the finance vault"
	if err := db.CreateLearning(ctx, &agentsmcp.Learning{Query: request, Outcome: agentsmcp.OutcomeSuccess, Principal: alice}); err != nil {
		t.Fatal(err)
	}
	if err := db.CreateInsight(ctx, &agentsmcp.Insight{Text: "the payroll of acme is in the finance vault", Type: agentsmcp.InsightObservation,
		AppliesTo: []string{"vault__read"}, Principal: alice}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.RecordPatternUse(ctx, alice, "export payroll acme finance vault", []string{"vault__read"}, true, time.Time{}); err != nil {
		t.Fatal(err)
	}
	if _, err := syncer.Drain(ctx); err != nil {
		t.Fatal(err)
	}

	as := func(id string) context.Context {
		return agentsmcp.WithPrincipal(ctx, &agentsmcp.Principal{ID: id, Scopes: agentsmcp.Scopes})
	}
	found := func(m recallMemory, ctx context.Context) (learnings, insights, patterns int) {
		t.Helper()
		ls, err := m.SimilarLearnings(ctx, request, 10)
		if err != nil {
			t.Fatal(err)
		}
		ins, err := m.RelevantInsights(ctx, request, []string{"vault__read"}, 10)
		if err != nil {
			t.Fatal(err)
		}
		ps, err := m.SuccessfulPatterns(ctx, request, 10)
		if err != nil {
			t.Fatal(err)
		}
		return len(ls), len(ins), len(ps)
	}
	for _, tt := range []struct {
		visibility agentsmcp.MemoryVisibility
		who        string
		want       int
	}{
		{agentsmcp.VisibilityPrincipal, alice, 1},
		{agentsmcp.VisibilityPrincipal, bob, 0},
		{agentsmcp.VisibilityPrincipal, agentsmcp.AnonymousPrincipal, 0},
		{agentsmcp.VisibilityShared, bob, 1},
	} {
		l, i, p := found(recallMemory{recall, tt.visibility}, as(tt.who))
		if l != tt.want || i != tt.want || p != tt.want {
			t.Errorf("%s as %s: %d learnings, %d insights, %d patterns; want %d of each", tt.visibility, tt.who, l, i, p, tt.want)
		}
	}
}

// A tool's pitfalls in the request's own family come first, however many
// newer insights about the tool other families left.
func TestRecallMemoryPutsTheFamilysPitfallsFirst(t *testing.T) {
	ctx := t.Context()
	db, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "m.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	index := vectors.NewFlat(embed.HashDimensions)
	syncer, err := vectorsync.New(vectorsync.Config{Outbox: db, Index: index, Embedder: embed.Hash{},
		Sources: []vectorsync.Source{vectorsync.Insights(db)}})
	if err != nil {
		t.Fatal(err)
	}
	recall := &mcptools.Recall{Index: index, Embedder: embed.Hash{}, Learnings: db, Insights: db, Patterns: db}
	const tool = "weather__now"
	family := agents.FamilyTag(agents.FamilyOf("What is the weather in Paris today?"))
	mine := &agentsmcp.Insight{Text: tool + ` failed with "service unavailable (<num>)"`, Type: agentsmcp.InsightPitfall, AppliesTo: []string{tool, family}}
	if err := db.CreateInsight(ctx, mine); err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		other := agents.FamilyTag(agents.FamilyOf(fmt.Sprintf("What is the weather alert %d in Paris today?", i)))
		if err := db.CreateInsight(ctx, &agentsmcp.Insight{Text: fmt.Sprintf(`%s failed with "service unavailable (<num>) %d"`, tool, i),
			Type: agentsmcp.InsightPitfall, AppliesTo: []string{tool, other}, CreatedAt: time.Now().Add(time.Duration(i+1) * time.Second)}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := syncer.Drain(ctx); err != nil {
		t.Fatal(err)
	}
	ins, err := recallMemory{recall, agentsmcp.VisibilityShared}.RelevantInsights(ctx, "What is the weather in Lima today?", []string{tool}, 4)
	if err != nil {
		t.Fatal(err)
	}
	if len(ins) == 0 || ins[0].ID != mine.ID {
		t.Errorf("insights %v: want the family's pitfall %s first", ins, mine.ID)
	}
}
