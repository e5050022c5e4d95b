package recall_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/memory/embed"
	"github.com/agents-mcp/agents-mcp/memory/recall"
	"github.com/agents-mcp/agents-mcp/memory/sqlite"
	"github.com/agents-mcp/agents-mcp/memory/vectors"
	"github.com/agents-mcp/agents-mcp/memory/vectorsync"
)

// memoryEnv is a real SQLite store, the offline hash embedder and an exact
// index kept in step by the outbox worker: recall as the server runs it.
type memoryEnv struct {
	db     *sqlite.DB
	syncer *vectorsync.Syncer
	search *recall.Searcher
}

func newMemoryEnv(t *testing.T) *memoryEnv {
	t.Helper()
	db, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "m.db"))
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
	return &memoryEnv{db: db, syncer: syncer,
		search: &recall.Searcher{Index: index, Embedder: embed.Hash{}, Learnings: db, Insights: db, Patterns: db}}
}

// sync puts what the store holds into the index.
func (e *memoryEnv) sync(t *testing.T) {
	t.Helper()
	if _, err := e.syncer.Drain(t.Context()); err != nil {
		t.Fatal(err)
	}
}

// weatherFamily stands in for agents.FamilyOf, which cmd/agents-mcp wires
// in: every weather question is one family, except that "alert <n>" makes
// a family of its own.
func weatherFamily(request string) string {
	if _, rest, ok := strings.Cut(request, "alert "); ok {
		return "weather alert " + strings.Fields(rest)[0]
	}
	return "weather <name> <date>"
}

func familyTag(family string) string { return "family:" + family }

// identity makes the request its own family, so that patterns are
// searched by the request's words.
func identity(request string) string { return request }

// The thought agent and the planner learn from past tasks through
// AgentMemory, in the call of the principal who asked: under principal
// visibility they read that principal's learnings, insights and patterns
// only, and under shared visibility everyone's.
func TestAgentMemoryIsConfinedToThePrincipal(t *testing.T) {
	ctx := t.Context()
	e := newMemoryEnv(t)
	const alice, bob = "key:aaaaaaaaaaaa", "key:bbbbbbbbbbbb"
	const request = "export the payroll of acme from the finance vault"
	if err := e.db.CreateLearning(ctx, &agentsmcp.Learning{Query: request, Outcome: agentsmcp.OutcomeSuccess, Principal: alice}); err != nil {
		t.Fatal(err)
	}
	if err := e.db.CreateInsight(ctx, &agentsmcp.Insight{Text: "the payroll of acme is in the finance vault", Type: agentsmcp.InsightObservation,
		AppliesTo: []string{"vault__read"}, Principal: alice}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.db.RecordPatternUse(ctx, alice, "export payroll acme finance vault", []string{"vault__read"}, true, time.Time{}); err != nil {
		t.Fatal(err)
	}
	e.sync(t)

	as := func(id string) context.Context {
		return agentsmcp.WithPrincipal(ctx, &agentsmcp.Principal{ID: id, Scopes: agentsmcp.Scopes})
	}
	found := func(m *recall.AgentMemory, ctx context.Context) (learnings, insights, patterns int) {
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
		m := &recall.AgentMemory{Searcher: e.search, Visibility: tt.visibility, Family: identity, FamilyTag: familyTag}
		l, i, p := found(m, as(tt.who))
		if l != tt.want || i != tt.want || p != tt.want {
			t.Errorf("%s as %s: %d learnings, %d insights, %d patterns; want %d of each", tt.visibility, tt.who, l, i, p, tt.want)
		}
	}
}

// A tool's pitfalls in the request's own family come first, however many
// newer insights about the tool other families left.
func TestAgentMemoryPutsTheFamilysPitfallsFirst(t *testing.T) {
	ctx := t.Context()
	e := newMemoryEnv(t)
	const tool = "weather__now"
	family := familyTag(weatherFamily("What is the weather in Paris today?"))
	mine := &agentsmcp.Insight{Text: tool + ` failed with "service unavailable (<num>)"`, Type: agentsmcp.InsightPitfall, AppliesTo: []string{tool, family}}
	if err := e.db.CreateInsight(ctx, mine); err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		other := familyTag(weatherFamily(fmt.Sprintf("What is the weather alert %d in Paris today?", i)))
		if other == family {
			t.Fatalf("the stand-in family puts alert %d in the request's family", i)
		}
		if err := e.db.CreateInsight(ctx, &agentsmcp.Insight{Text: fmt.Sprintf(`%s failed with "service unavailable (<num>) %d"`, tool, i),
			Type: agentsmcp.InsightPitfall, AppliesTo: []string{tool, other}, CreatedAt: time.Now().Add(time.Duration(i+1) * time.Second)}); err != nil {
			t.Fatal(err)
		}
	}
	e.sync(t)
	m := &recall.AgentMemory{Searcher: e.search, Visibility: agentsmcp.VisibilityShared, Family: weatherFamily, FamilyTag: familyTag}
	ins, err := m.RelevantInsights(ctx, "What is the weather in Lima today?", []string{tool}, 4)
	if err != nil {
		t.Fatal(err)
	}
	if len(ins) == 0 || ins[0].ID != mine.ID {
		t.Errorf("insights %v: want the family's pitfall %s first", ins, mine.ID)
	}
	if len(ins) != 4 {
		t.Errorf("%d insights, want max = 4", len(ins))
	}
}

// Each candidate tool brings at most InsightsPerTool of its insights, so
// that one tool with a long history does not crowd out the others.
func TestAgentMemoryBoundsTheInsightsOfEachTool(t *testing.T) {
	ctx := t.Context()
	e := newMemoryEnv(t)
	for i := range recall.InsightsPerTool + 3 {
		if err := e.db.CreateInsight(ctx, &agentsmcp.Insight{Text: fmt.Sprintf("noisy pitfall number %d", i),
			Type: agentsmcp.InsightPitfall, AppliesTo: []string{"noisy__tool"}}); err != nil {
			t.Fatal(err)
		}
	}
	quiet := &agentsmcp.Insight{Text: "quiet pitfall", Type: agentsmcp.InsightPitfall, AppliesTo: []string{"quiet__tool"}}
	if err := e.db.CreateInsight(ctx, quiet); err != nil {
		t.Fatal(err)
	}
	// No index sync: the semantic part finds nothing, so what comes back
	// is the per-tool reads alone.
	m := &recall.AgentMemory{Searcher: e.search, Visibility: agentsmcp.VisibilityShared, Family: identity, FamilyTag: familyTag}
	ins, err := m.RelevantInsights(ctx, "unrelated words", []string{"noisy__tool", "quiet__tool"}, 20)
	if err != nil {
		t.Fatal(err)
	}
	if len(ins) != recall.InsightsPerTool+1 || ins[len(ins)-1].ID != quiet.ID {
		var texts []string
		for _, in := range ins {
			texts = append(texts, in.Text)
		}
		t.Errorf("insights %q: want %d of the noisy tool, then the quiet one", texts, recall.InsightsPerTool)
	}
}

// The planner reuses only patterns that succeeded at least
// MinPatternSuccessRate of the time, in semantic and lexical mode alike.
func TestAgentMemoryKeepsPatternsAboveTheSuccessFloor(t *testing.T) {
	ctx := t.Context()
	e := newMemoryEnv(t)
	record := func(goal string, successes, failures int) {
		t.Helper()
		for i := range successes + failures {
			if _, err := e.db.RecordPatternUse(ctx, "", goal, []string{"files__read"}, i < successes, time.Time{}); err != nil {
				t.Fatal(err)
			}
		}
	}
	record("summarise the files of the report", 1, 1) // exactly the floor
	record("summarise the files of the archive", 1, 2)
	record("summarise the files of the backlog", 0, 1)
	e.sync(t)
	for _, semantic := range []bool{true, false} {
		s := *e.search
		if !semantic {
			s.Embedder = failingEmbedder{}
		}
		m := &recall.AgentMemory{Searcher: &s, Visibility: agentsmcp.VisibilityShared, Family: identity, FamilyTag: familyTag}
		ps, err := m.SuccessfulPatterns(ctx, "summarise the files", 10)
		if err != nil {
			t.Fatal(err)
		}
		if len(ps) != 1 || ps[0].Goal != "summarise the files of the report" {
			var goals []string
			for _, p := range ps {
				goals = append(goals, fmt.Sprintf("%s (%.2f)", p.Goal, p.SuccessRate()))
			}
			t.Errorf("semantic %v: patterns %q, want only the one at the floor", semantic, goals)
		}
	}
}

// failingEmbedder makes every semantic search fall back to words.
type failingEmbedder struct{}

func (failingEmbedder) Embed(context.Context, []string) ([][]float32, error) {
	return nil, agentsmcp.Errorf(agentsmcp.EUNAVAILABLE, "embedder down")
}

func (failingEmbedder) ID() string { return "failing" }

func (failingEmbedder) Dimensions() int { return embed.HashDimensions }
