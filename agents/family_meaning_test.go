package agents_test

import (
	"context"
	"encoding/json"
	"path/filepath"
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

// meaningCatalog is a catalog of local tools of several needs, searched
// with the semantic embedder, as `agents-mcp serve` searches by default.
func meaningCatalog(t *testing.T) agentsmcp.ToolCatalog {
	t.Helper()
	l := localtools.New()
	for _, tool := range []struct{ name, description, param string }{
		{"fetch_weather", "current weather conditions for a city: temperature, rain, sun and wind", "city"},
		{"world_clock", "the local time in a city now", "city"},
		{"book_hotel", "book a hotel room in a city for a date", "city"},
		{"lookup_fx_rate", "exchange rate of a currency pair such as USD/EUR", "pair"},
		{"send_money", "send an amount of money to a person", "recipient"},
		{"delete_post", "delete a blog post by its id", "id"},
		{"read_file", "read the contents of a file at a path", "path"},
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
	return toolsearch.NewCatalog(r, toolsearch.NewIndex(r, toolsearch.Options{Embedder: embed.Semantic{}}), nil)
}

// TestFamilyJoinsByMeaning: labelled pairs of a past request (that
// succeeded with the tool the search ranks first for it) and a new one.
// A reworded request whose best tool is the one that served the past
// request, with the same entities and no other verb, joins its family
// ("Is it going to rain in Oslo?" joins "What is the weather in Paris
// today?"); a request of another need, or of the same words but another
// verb or other entities, does not. Precision must be 1, recall at least
// 0.8: a miss is the search's (it ranks another tool first), and costs a
// family's evidence, where a wrong join would cost a wrong plan. Through the real Gatherer, over
// SQLite, with the semantic embedder for the search and the families.
func TestFamilyJoinsByMeaning(t *testing.T) {
	if raceEnabled {
		t.Skip("a measurement: make test runs it without the race detector (make test-measures)")
	}
	catalog := meaningCatalog(t)
	pairs := []struct {
		past, request string
		same          bool
	}{
		{"What is the weather in Paris today?", "Is it going to rain in Oslo?", true},
		{"What is the weather in Paris today?", "How warm is it in Lima right now?", true},
		{"What is the weather in Paris today?", "Will it be sunny in Dakar today?", true},
		{"What is the weather in Paris today?", "Any wind in Dublin tomorrow?", true},
		{"What is the weather in Paris today?", "What time is it in Paris?", false},
		{"What is the weather in Paris today?", "Book a hotel in Paris for today", false},
		{"What is the weather in Paris today?", "Send 100 USD to Alice", false},
		{"Delete post 7", "Remove the blog post 9", true},
		{"Delete post 7", "Show post 7", false},
		{"Read the file todo.md", "Read notes.txt", true},
		{"Read the file todo.md", "Delete post 12", false},
		{"Convert 100 USD to EUR", "Send 100 USD to Alice", false},
	}
	ctx := context.Background()
	var c confusion
	for _, p := range pairs {
		db, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "agents.db"))
		if err != nil {
			t.Fatal(err)
		}
		best, err := catalog.SearchTools(ctx, p.past, 1)
		if err != nil || len(best) == 0 {
			t.Fatalf("search %q: %v", p.past, err)
		}
		if err := db.CreateLearning(ctx, &agentsmcp.Learning{Query: p.past, Goal: agents.FamilyOf(p.past), Steps: []string{best[0].Name},
			Tools: []string{best[0].Name}, Outcome: agentsmcp.OutcomeSuccess}); err != nil {
			t.Fatal(err)
		}
		g := &agents.Gatherer{Catalog: catalog, Memory: storeMemory{DB: db}, Families: &agents.Families{Embedder: embed.Semantic{}, MinSimilarity: agents.SemanticFamilySimilarity}}
		k, err := g.Gather(ctx, p.request, nil)
		if err != nil {
			t.Fatal(err)
		}
		joined := k.Family.Family == agents.FamilyOf(p.past)
		c.add(joined, p.same)
		if joined != p.same {
			top := ""
			if m := k.Candidates[k.SubGoals[0]]; len(m) > 0 {
				top = m[0].Name
			}
			report := t.Logf
			if joined {
				report = t.Errorf // a wrong join is never allowed
			}
			report("%q after %q (served by %s): joined=%v, want %v (family %+v, best tool now %s)", p.request, p.past, best[0].Name, joined, p.same, k.Family, top)
		}
		db.Close()
	}
	t.Logf("joining by meaning: %v", c)
	// Measured: recall 0.83 (5 of 6); the miss is "How warm is it in Lima
	// right now?", for which the search ranks world_clock first ("now").
	if c.recall() < 0.8 {
		t.Errorf("joining by meaning: %v; want recall >= 0.8 at precision 1", c)
	}
}
