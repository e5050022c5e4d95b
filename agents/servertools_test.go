package agents_test

import (
	"context"
	"encoding/json"
	"slices"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/agents"
	"github.com/agents-mcp/agents-mcp/localtools"
	"github.com/agents-mcp/agents-mcp/memory/embed"
	"github.com/agents-mcp/agents-mcp/memory/mcptools"
	"github.com/agents-mcp/agents-mcp/router"
	"github.com/agents-mcp/agents-mcp/router/toolsearch"
)

// TestServerToolsOnlyForAGoalAboutThem: the server's own tools take any
// text, so a match by meaning alone made the builtin planner run
// get_similar_tasks for "What does ephemeral mean?" and report success.
// Listed as ServerTools, they are candidates only for a goal that shares a
// word with their name or title.
// Through the real router's semantic search.
func TestServerToolsOnlyForAGoalAboutThem(t *testing.T) {
	// The real memory tools (their handlers are never called here) and a
	// domain tool.
	l := localtools.New()
	if err := (&mcptools.MemoryTools{}).Register(l); err != nil {
		t.Fatal(err)
	}
	if err := localtools.Add(l, &mcp.Tool{Name: "book_hotel", Description: "book a hotel room in a city",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`)},
		func(context.Context, *mcp.CallToolRequest, map[string]any) (*mcp.CallToolResult, any, error) {
			return nil, nil, nil
		}); err != nil {
		t.Fatal(err)
	}
	r := router.New(router.Options{Version: "test"})
	if err := r.AddProvider(t.Context(), l); err != nil {
		t.Fatal(err)
	}
	catalog := toolsearch.NewCatalog(r, toolsearch.NewIndex(r, toolsearch.Options{Embedder: embed.Semantic{}}), nil)
	candidates := func(g *agents.Gatherer, goal string) []string {
		k, err := g.Gather(t.Context(), goal, nil)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, m := range k.Candidates[goal] {
			names = append(names, m.Name)
		}
		return names
	}
	server := []string{mcptools.QueryMemoryName, mcptools.StoreInsightName, mcptools.GetSimilarTasksName,
		mcptools.GetSuccessfulPlansName, mcptools.GetToolPerformanceName}
	isServer := func(n string) bool { return slices.Contains(server, n) }
	listed := &agents.Gatherer{Catalog: catalog, ServerTools: server}
	for _, goal := range []string{"What does ephemeral mean?", "How do you say thank you in Japanese?"} {
		// Without the list, the meaning-only match is a candidate: what
		// the planner ran before.
		if got := candidates(&agents.Gatherer{Catalog: catalog}, goal); !slices.ContainsFunc(got, isServer) {
			t.Errorf("%q: without ServerTools, candidates %v hold no server tool: the case no longer tests the rule", goal, got)
		}
		if got := candidates(listed, goal); slices.ContainsFunc(got, isServer) {
			t.Errorf("%q: candidates %v hold a server tool the goal is not about", goal, got)
		}
	}
	for goal, want := range map[string]string{
		"Show past tasks similar to the Paris weather request": "get_similar_tasks",
		"Query memory for insights about the demo folder":      "query_memory",
	} {
		if got := candidates(listed, goal); !slices.Contains(got, want) {
			t.Errorf("%q: candidates %v lack %s, which the goal is about", goal, got, want)
		}
	}
	var _ agentsmcp.ToolCatalog = catalog
}
