package agents_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/agents"
	"github.com/agents-mcp/agents-mcp/localtools"
	"github.com/agents-mcp/agents-mcp/memory/embed"
	"github.com/agents-mcp/agents-mcp/memory/sqlite"
	"github.com/agents-mcp/agents-mcp/router"
	"github.com/agents-mcp/agents-mcp/router/toolsearch"
)

// TestToolThatServedTheSameEntitiesIsACandidate: "What is 'see you
// tomorrow' in Korean?" shares no word with render_phrase, so the search
// by words does not find it. After a past task with the same entities (a
// quoted text and a name) succeeded on render_phrase, it is a candidate,
// with why, below the search's matches; a past task of other entities or
// a failed one is no such evidence.
func TestToolThatServedTheSameEntitiesIsACandidate(t *testing.T) {
	ctx := context.Background()
	l := localtools.New()
	for _, tool := range []struct{ name, description string }{
		{"render_phrase", "render a phrase in a chosen tongue"},
		{"lexicon_entry", "meaning and usage notes of a term"},
	} {
		schema := []byte(`{"type":"object","properties":{"text":{"type":"string","description":"the text"}},"required":["text"]}`)
		if err := localtools.Add(l, &mcp.Tool{Name: tool.name, Description: tool.description, InputSchema: json.RawMessage(schema)},
			func(context.Context, *mcp.CallToolRequest, map[string]any) (*mcp.CallToolResult, any, error) {
				return nil, nil, nil
			}); err != nil {
			t.Fatal(err)
		}
	}
	r := router.New(router.Options{Version: "test"})
	if err := r.AddProvider(t.Context(), l); err != nil {
		t.Fatal(err)
	}
	catalog := toolsearch.NewCatalog(r, nil, nil) // by words: the request shares none with render_phrase
	const request = "What is 'see you tomorrow' in Korean?"
	served := func(query string, outcome agentsmcp.Outcome) *agentsmcp.Learning {
		return &agentsmcp.Learning{Query: query, Steps: []string{"render_phrase"}, Tools: []string{"render_phrase"}, Outcome: outcome}
	}
	for _, tc := range []struct {
		name string
		past *agentsmcp.Learning
		want bool
	}{
		{"same entities", served("Render 'happy birthday' in German", agentsmcp.OutcomeSuccess), true},
		{"no past task", nil, false},
		{"other entities", served("Render the phrase of the day", agentsmcp.OutcomeSuccess), false},
		{"the task failed", served("Render 'happy birthday' in German", agentsmcp.OutcomeFailure), false},
		{"the past request sent", served("Send 'happy birthday' to Alice", agentsmcp.OutcomeSuccess), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			db, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "agents.db"))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { db.Close() })
			if tc.past != nil {
				tc.past.Goal = agents.FamilyOf(tc.past.Query)
				if err := db.CreateLearning(ctx, tc.past); err != nil {
					t.Fatal(err)
				}
			}
			g := &agents.Gatherer{Catalog: catalog, Memory: storeMemory{DB: db}, Families: &agents.Families{Embedder: embed.Semantic{}, MinSimilarity: agents.SemanticFamilySimilarity}}
			k, err := g.Gather(ctx, request, nil)
			if err != nil {
				t.Fatal(err)
			}
			cands := k.Candidates[k.SubGoals[0]]
			i := slices.IndexFunc(cands, func(m *agentsmcp.ToolMatch) bool { return m.Name == "render_phrase" })
			if got := i >= 0; got != tc.want {
				t.Fatalf("render_phrase a candidate = %v, want %v (candidates %v)", got, tc.want, names(cands))
			}
			if !tc.want {
				return
			}
			if m := cands[i]; !strings.Contains(m.Why, "same entities") || m.Score <= 0 || i > 0 && m.Score >= cands[i-1].Score {
				t.Errorf("render_phrase: score %.3f, why %q; want below the search's matches, saying why", m.Score, m.Why)
			}
			if k.Tools["render_phrase"] == nil {
				t.Errorf("render_phrase has no facts")
			}
		})
	}
}
