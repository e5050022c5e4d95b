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

// TestToolThatReplacedACandidateIsACandidate: a past task planned on
// geocode_address, which failed, and succeeded on place_position (its
// learning lists both tools, and place_position as the step). A later
// request worded so that the search finds geocode_address and not
// place_position gets place_position as a candidate, with why, scored
// just below the tool it replaced; without that past task it does not,
// and a failed task, or one that left no tool, is no such evidence.
func TestToolThatReplacedACandidateIsACandidate(t *testing.T) {
	ctx := context.Background()
	l := localtools.New()
	for _, tool := range []struct{ name, description, param string }{
		{"geocode_address", "coordinates of a street address", "address"},
		{"place_position", "latitude and longitude of a place", "place"},
		{"stock_level", "how many units of an item the warehouse holds", "item"},
	} {
		schema := []byte(`{"type":"object","properties":{"` + tool.param + `":{"type":"string","description":"the ` + tool.param + `"}},"required":["` + tool.param + `"]}`)
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
	catalog := toolsearch.NewCatalog(r, nil, nil) // by words: the request shares "street" with geocode_address alone
	const request = "Where exactly on the map is 221B Baker Street, London?"
	for _, tc := range []struct {
		name string
		past *agentsmcp.Learning
		want bool
	}{
		{"repaired onto place_position", &agentsmcp.Learning{Query: "Geocode 10 Downing Street, London", Steps: []string{"place_position"},
			Tools: []string{"place_position", "geocode_address"}, Outcome: agentsmcp.OutcomeSuccess}, true},
		{"no past task", nil, false},
		{"the repaired task failed", &agentsmcp.Learning{Query: "Geocode 10 Downing Street, London", Steps: []string{"place_position"},
			Tools: []string{"place_position", "geocode_address"}, Outcome: agentsmcp.OutcomeFailure}, false},
		{"no tool left", &agentsmcp.Learning{Query: "Latitude and longitude of Paris", Steps: []string{"place_position"},
			Tools: []string{"place_position"}, Outcome: agentsmcp.OutcomeSuccess}, false},
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
			i := slices.IndexFunc(cands, func(m *agentsmcp.ToolMatch) bool { return m.Name == "place_position" })
			j := slices.IndexFunc(cands, func(m *agentsmcp.ToolMatch) bool { return m.Name == "geocode_address" })
			if j < 0 {
				t.Fatalf("geocode_address is no candidate of %q (the test's premise)", request)
			}
			if got := i >= 0; got != tc.want {
				t.Fatalf("place_position a candidate = %v, want %v (candidates %v)", got, tc.want, names(cands))
			}
			if !tc.want {
				return
			}
			if m := cands[i]; !strings.Contains(m.Why, "in place of geocode_address") || m.Score >= cands[j].Score || m.Score <= 0 {
				t.Errorf("place_position: score %.3f (geocode_address %.3f), why %q; want just below it, saying whose place it took", m.Score, cands[j].Score, m.Why)
			}
			if k.Tools["place_position"] == nil {
				t.Errorf("place_position has no facts")
			}
		})
	}
}

func names(ms []*agentsmcp.ToolMatch) []string {
	var out []string
	for _, m := range ms {
		out = append(out, m.Name)
	}
	return out
}
