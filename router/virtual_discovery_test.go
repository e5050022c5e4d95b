package router_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/router"
	"github.com/agents-mcp/agents-mcp/router/toolsearch"
)

// weatherView is a virtual server over the discovery fixture: up__a as
// w_a with its own description, ask renamed confirm and pinned, and
// search_tools; up__b (email) is outside it.
func weatherView(mode agentsmcp.CatalogMode) *agentsmcp.VirtualServer {
	w := "w_"
	return &agentsmcp.VirtualServer{
		Name: "weather", CatalogMode: mode,
		Tools: []agentsmcp.VirtualSelection{
			{Upstream: "up", Names: []string{"up__a"}, AliasPrefix: &w},
			{Upstream: "local", Names: []string{"ask", toolsearch.ToolName}},
		},
		Rename:       map[string]string{"ask": "confirm"},
		Descriptions: map[string]string{"up__a": "Forecast for a town (curated)"},
		Pinned:       []string{"confirm"},
	}
}

// newViewFixture serves weatherView(mode) to a caller without a mode of
// its own, as stdio --server does.
func newViewFixture(t *testing.T, mode agentsmcp.CatalogMode) *discoveryFixture {
	t.Helper()
	f := newDiscoveryFixture(t, router.AccessOptions{Default: principal("key:a", ""), VirtualServer: "weather"}, router.CatalogOptions{})
	if err := f.router.SetVirtualServers([]*agentsmcp.VirtualServer{weatherView(mode)}); err != nil {
		t.Fatal(err)
	}
	return f
}

func structured[T any](t *testing.T, res *mcp.CallToolResult) T {
	t.Helper()
	var out T
	b, _ := json.Marshal(res.StructuredContent)
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatalf("structured content %s: %v", b, err)
	}
	return out
}

// TestVirtualServerInDiscoveryMode: a virtual server in discovery mode
// lists the meta-tools and its pinned tools under its names; find_tools
// searches the view alone and answers with the view's names, descriptions
// and the real schemas; call_tool calls the view's names (and only them)
// through the same pipeline, elicitation and progress included, and the
// audit records the real tools.
func TestVirtualServerInDiscoveryMode(t *testing.T) {
	f := newViewFixture(t, agentsmcp.CatalogDiscovery)
	var mu sync.Mutex
	var asked, progress []string
	cs := connect(t, f.router, &mcp.ClientOptions{
		ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			mu.Lock()
			asked = append(asked, req.Params.Message)
			mu.Unlock()
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"ok": true}}, nil
		},
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			mu.Lock()
			progress = append(progress, req.Params.Message)
			mu.Unlock()
		},
	})
	ctx := context.Background()
	if got, want := toolNames(t, cs), []string{"call_tool", "confirm", "find_tools"}; !slices.Equal(got, want) {
		t.Errorf("tools/list = %v, want %v", got, want)
	}

	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: toolsearch.FindToolName, Arguments: map[string]any{"need": "send an email or the weather forecast"}})
	if err != nil || res.IsError {
		t.Fatalf("find_tools: %q %v", textOf(res), err)
	}
	found := structured[toolsearch.FindResult](t, res)
	if len(found.Tools) != 1 || found.Tools[0].Name != "w_a" || found.Tools[0].Description != "Forecast for a town (curated)" ||
		!strings.Contains(string(found.Tools[0].InputSchema), `"city"`) || found.NextOffset != nil {
		t.Errorf("find_tools in the view = %+v, want w_a alone with the view's description and up__a's schema", found.Tools)
	}

	call := func(name string, args map[string]any) (*mcp.CallToolResult, error) {
		in := map[string]any{"name": name}
		if args != nil {
			in["arguments"] = args
		}
		params := &mcp.CallToolParams{Name: router.CallToolName, Arguments: in}
		params.SetProgressToken("tok")
		return cs.CallTool(ctx, params)
	}
	if res, err := call("w_a", map[string]any{"city": "Lima"}); err != nil || res.IsError || textOf(res) != "up ran up__a" {
		t.Errorf("call_tool w_a: %q %v", textOf(res), err)
	}
	// The registry's names are not the view's, and up__b is outside it:
	// both unknown, as a tool that does not exist.
	for _, name := range []string{"up__a", "up__b", "no_such"} {
		if _, err := call(name, nil); !isUnknownTool(err, name) {
			t.Errorf("call_tool %s in the view: %v, want unknown tool", name, err)
		}
	}
	if res, err := call("confirm", map[string]any{"action": "deploy"}); err != nil || res.IsError || textOf(res) != "confirmed: deploy" {
		t.Errorf("call_tool confirm: %q %v", textOf(res), err)
	}
	// A direct call of an unlisted tool of the view still works.
	if res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "w_a", Arguments: map[string]any{"city": "Oslo"}}); err != nil || res.IsError {
		t.Errorf("direct call of w_a: %q %v", textOf(res), err)
	}
	mu.Lock()
	if !slices.Equal(asked, []string{"Really deploy?"}) || !slices.Contains(progress, "asking") {
		t.Errorf("asked %q, progress %q; want the real tool's question and progress", asked, progress)
	}
	mu.Unlock()
	// The audit: the real tools under their registry names (ask twice: it
	// asked, then answered), never call_tool; the unknown names were
	// refused by the view before any tool.
	var audited []string
	for _, r := range f.records() {
		audited = append(audited, r.Tool+"/"+r.Refused)
	}
	if want := []string{"find_tools/", "up__a/", "ask/", "ask/", "up__a/"}; !slices.Equal(audited, want) {
		t.Errorf("audit %v, want %v", audited, want)
	}
}

// TestSearchToolsInAViewAnswersWithItsNames: search_tools on a virtual
// server (full mode here) ranks the view's tools only and names them as
// the view does.
func TestSearchToolsInAViewAnswersWithItsNames(t *testing.T) {
	f := newViewFixture(t, agentsmcp.CatalogFull)
	cs := connect(t, f.router, nil)
	if got, want := toolNames(t, cs), []string{"confirm", "search_tools", "w_a"}; !slices.Equal(got, want) {
		t.Errorf("tools/list = %v, want %v", got, want)
	}
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: toolsearch.ToolName, Arguments: map[string]any{"query": "send an email or the weather forecast"}})
	if err != nil || res.IsError {
		t.Fatalf("search_tools: %q %v", textOf(res), err)
	}
	got := structured[toolsearch.Result](t, res)
	var names []string
	for _, m := range got.Tools {
		names = append(names, m.Name)
		if m.Name == "w_a" && m.Description != "Forecast for a town (curated)" {
			t.Errorf("w_a described %q, want the view's description", m.Description)
		}
	}
	if !slices.Equal(names, []string{"w_a"}) {
		t.Errorf("search_tools in the view = %v, want [w_a] (the view's name; up__b is outside it)", names)
	}
}

// TestVirtualServerModeOverridesTheCaller: a virtual server's own mode
// wins over the caller's, and "" leaves it to the caller.
func TestVirtualServerModeOverridesTheCaller(t *testing.T) {
	for _, tt := range []struct {
		vs, caller agentsmcp.CatalogMode
		want       []string
	}{
		{agentsmcp.CatalogFull, agentsmcp.CatalogDiscovery, []string{"confirm", "search_tools", "w_a"}},
		{agentsmcp.CatalogDiscovery, agentsmcp.CatalogFull, []string{"call_tool", "confirm", "find_tools"}},
		{"", agentsmcp.CatalogDiscovery, []string{"call_tool", "confirm", "find_tools"}},
		{"", "", []string{"confirm", "search_tools", "w_a"}},
	} {
		f := newDiscoveryFixture(t, router.AccessOptions{Default: principal("key:a", tt.caller), VirtualServer: "weather"}, router.CatalogOptions{})
		if err := f.router.SetVirtualServers([]*agentsmcp.VirtualServer{weatherView(tt.vs)}); err != nil {
			t.Fatal(err)
		}
		if got := toolNames(t, connect(t, f.router, nil)); !slices.Equal(got, tt.want) {
			t.Errorf("view %q, caller %q: tools/list = %v, want %v", tt.vs, tt.caller, got, tt.want)
		}
	}
}

// TestVirtualListingCost: what a virtual server's tools/list costs in each
// mode is that of the listing it serves.
func TestVirtualListingCost(t *testing.T) {
	f := newViewFixture(t, agentsmcp.CatalogDiscovery)
	full, disc, ok := f.router.VirtualListingCost("weather")
	if !ok || full.Tools != 3 || disc.Tools != 3 || full.Bytes <= 2 || disc.Bytes <= 2 || full.Tokens != router.ApproxTokens(full.Bytes) {
		t.Errorf("VirtualListingCost = %+v %+v %v, want 3 tools each ([confirm search_tools w_a], [call_tool confirm find_tools])", full, disc, ok)
	}
	if _, _, ok := f.router.VirtualListingCost("nope"); ok {
		t.Error("a virtual server that does not exist has a cost")
	}
}
