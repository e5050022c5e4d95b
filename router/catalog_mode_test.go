package router_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/localtools"
	"github.com/agents-mcp/agents-mcp/router"
	"github.com/agents-mcp/agents-mcp/router/toolsearch"
)

// discoveryFixture is a router with upstream-like tools up__a and up__b,
// the discovery meta-tools, search_tools and a local tool "ask" that sends
// progress and asks the caller (input_required) before it answers.
type discoveryFixture struct {
	router *router.Router
	mu     sync.Mutex
	calls  []router.ToolCallRecord
	lists  []router.ToolsListRecord
}

func newDiscoveryFixture(t *testing.T, access router.AccessOptions, catalog router.CatalogOptions) *discoveryFixture {
	t.Helper()
	f := &discoveryFixture{}
	catalog.MetaTools = append(catalog.MetaTools, toolsearch.FindToolName)
	f.router = router.New(router.Options{Version: "test", Access: access, Catalog: catalog,
		OnToolCall: func(c router.ToolCallRecord) {
			f.mu.Lock()
			f.calls = append(f.calls, c)
			f.mu.Unlock()
		},
		OnToolsList: func(r router.ToolsListRecord) {
			f.mu.Lock()
			f.lists = append(f.lists, r)
			f.mu.Unlock()
		}})
	up := &staticProvider{name: "up", tools: []*mcp.Tool{
		{Name: "up__a", Description: "Look up the weather forecast for a city", InputSchema: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`)},
		{Name: "up__b", Description: "Send an email message", InputSchema: json.RawMessage(`{"type":"object"}`)},
	}}
	local := localtools.New()
	index := toolsearch.NewIndex(f.router, toolsearch.Options{})
	t.Cleanup(func() { _ = index.Close() })
	if err := toolsearch.AddSearchTools(local, index); err != nil {
		t.Fatal(err)
	}
	if err := toolsearch.AddFindTools(local, &toolsearch.Finder{Registry: f.router, Ranker: index, Skip: []string{router.CallToolName}}); err != nil {
		t.Fatal(err)
	}
	if err := f.router.AddCallTool(local); err != nil {
		t.Fatal(err)
	}
	type askArgs struct {
		Action string `json:"action"`
	}
	if err := localtools.Add(local, &mcp.Tool{Name: "ask", Description: "Confirm an action with the user"},
		func(ctx context.Context, req *mcp.CallToolRequest, in askArgs) (*mcp.CallToolResult, any, error) {
			if tok := req.Params.GetProgressToken(); tok != nil && req.Session != nil {
				_ = req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: tok, Progress: 1, Total: 2, Message: "asking"})
			}
			resp, ok := req.Params.InputResponses["confirm"]
			if !ok {
				return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{"confirm": &mcp.ElicitParams{
					Message:         "Really " + in.Action + "?",
					RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{"ok": map[string]any{"type": "boolean"}}},
				}}}, nil, nil
			}
			er, _ := resp.(*mcp.ElicitResult)
			if er == nil || er.Action != "accept" {
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "not confirmed"}}}, nil, nil
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "confirmed: " + in.Action}}}, nil, nil
		}); err != nil {
		t.Fatal(err)
	}
	for _, p := range []agentsmcp.ToolProvider{up, local} {
		if err := f.router.AddProvider(context.Background(), p); err != nil {
			t.Fatal(err)
		}
	}
	return f
}

func (f *discoveryFixture) records() []router.ToolCallRecord {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.calls)
}

func principal(id string, mode agentsmcp.CatalogMode, tools ...string) *agentsmcp.Principal {
	return &agentsmcp.Principal{ID: id, Scopes: []string{agentsmcp.ScopeMCP}, Tools: tools, CatalogMode: mode}
}

func TestDiscoveryModeListsTheMetaToolsAndPinnedTools(t *testing.T) {
	for _, tt := range []struct {
		name    string
		catalog router.CatalogOptions
		caller  *agentsmcp.Principal
		want    []string
	}{
		{"server default discovery", router.CatalogOptions{Mode: agentsmcp.CatalogDiscovery, Pinned: []string{"up__b"}},
			principal("key:a", ""), []string{"call_tool", "find_tools", "up__b"}},
		{"the key chooses discovery", router.CatalogOptions{Mode: agentsmcp.CatalogFull},
			principal("key:a", agentsmcp.CatalogDiscovery), []string{"call_tool", "find_tools"}},
		{"the key chooses full", router.CatalogOptions{Mode: agentsmcp.CatalogDiscovery},
			principal("key:a", agentsmcp.CatalogFull), []string{"ask", "call_tool", "find_tools", "search_tools", "up__a", "up__b"}},
		// The meta-tools are every caller's in discovery mode; a pinned
		// tool only for a caller its allowlist admits.
		{"an allowlist", router.CatalogOptions{Mode: agentsmcp.CatalogDiscovery, Pinned: []string{"up__*"}},
			principal("key:a", "", "up__a"), []string{"call_tool", "find_tools", "up__a"}},
		{"an allowlist in full mode", router.CatalogOptions{},
			principal("key:a", "", "up__a"), []string{"up__a"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := newDiscoveryFixture(t, router.AccessOptions{Default: tt.caller}, tt.catalog)
			if got := toolNames(t, connect(t, f.router, nil)); !slices.Equal(got, tt.want) {
				t.Errorf("tools/list = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestDiscoveryModeStillCallsUnlistedTools(t *testing.T) {
	f := newDiscoveryFixture(t, router.AccessOptions{Default: principal("key:a", agentsmcp.CatalogDiscovery, "up__a")}, router.CatalogOptions{})
	cs := connect(t, f.router, nil)
	ctx := context.Background()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "up__a", Arguments: map[string]any{"city": "Lima"}})
	if err != nil || res.IsError || textOf(res) != "up ran up__a" {
		t.Fatalf("a direct call of an unlisted tool the caller may use: %v %v", textOf(res), err)
	}
	// find_tools shows only what the allowlist admits, with the schema.
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: toolsearch.FindToolName, Arguments: map[string]any{"need": "send an email or the weather"}})
	if err != nil || res.IsError {
		t.Fatalf("find_tools: %v %v", textOf(res), err)
	}
	var found toolsearch.FindResult
	b, _ := json.Marshal(res.StructuredContent)
	if err := json.Unmarshal(b, &found); err != nil {
		t.Fatal(err)
	}
	if len(found.Tools) != 1 || found.Tools[0].Name != "up__a" || !strings.Contains(string(found.Tools[0].InputSchema), `"city"`) ||
		found.Tools[0].Source != "up" || found.NextOffset != nil {
		t.Errorf("find_tools for a caller allowed up__a only = %s", b)
	}
}

func TestCallToolRunsTheRealToolThroughTheSamePipeline(t *testing.T) {
	f := newDiscoveryFixture(t, router.AccessOptions{Default: principal("key:a", agentsmcp.CatalogDiscovery, "up__a", "ask")}, router.CatalogOptions{})
	cs := connect(t, f.router, nil)
	ctx := context.Background()
	call := func(args map[string]any) (*mcp.CallToolResult, error) {
		return cs.CallTool(ctx, &mcp.CallToolParams{Name: router.CallToolName, Arguments: args})
	}

	res, err := call(map[string]any{"name": "up__a", "arguments": map[string]any{"city": "Lima"}})
	if err != nil || res.IsError || textOf(res) != "up ran up__a" {
		t.Fatalf("call_tool up__a: %v %v", textOf(res), err)
	}
	// Validation: the real tool's schema, the same error result as a
	// direct call.
	viaMeta, err := call(map[string]any{"name": "up__a", "arguments": map[string]any{"city": 5}})
	if err != nil {
		t.Fatal(err)
	}
	direct, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "up__a", Arguments: map[string]any{"city": 5}})
	if err != nil {
		t.Fatal(err)
	}
	if !viaMeta.IsError || textOf(viaMeta) != textOf(direct) {
		t.Errorf("invalid arguments through call_tool: %q; directly: %q", textOf(viaMeta), textOf(direct))
	}

	// The allowlist: a tool the caller may not use is refused exactly as
	// one that does not exist.
	_, errHidden := call(map[string]any{"name": "up__b"})
	_, errUnknown := call(map[string]any{"name": "no_such"})
	var hidden, unknown *jsonrpc.Error
	if !errors.As(errHidden, &hidden) || !errors.As(errUnknown, &unknown) {
		t.Fatalf("call_tool of a hidden tool: %v; of an unknown one: %v; want protocol errors", errHidden, errUnknown)
	}
	if hidden.Code != unknown.Code || strings.ReplaceAll(hidden.Message, "up__b", "X") != strings.ReplaceAll(unknown.Message, "no_such", "X") {
		t.Errorf("hidden tool: %d %q; unknown tool: %d %q; want the same answer", hidden.Code, hidden.Message, unknown.Code, unknown.Message)
	}
	// …and the answer of a tool that does not exist at all (go-sdk's).
	if hidden.Code != jsonrpc.CodeInvalidParams || hidden.Message != `unknown tool "up__b"` {
		t.Errorf("hidden tool: %d %q; want go-sdk's unknown tool error", hidden.Code, hidden.Message)
	}

	// The audit sees the real tool, never call_tool.
	var tools []string
	for _, r := range f.records() {
		tools = append(tools, r.Tool+"/"+r.Refused)
		if r.Tool == router.CallToolName {
			t.Errorf("call_tool itself was recorded: %+v", r)
		}
	}
	// (A restricted caller's call of a name its allowlist does not admit
	// is refused as "not allowed" whether or not the tool exists, as on a
	// direct call.)
	want := []string{"up__a/", "up__a/invalid arguments: ", "up__a/invalid arguments: ", "up__b/not allowed", "no_such/not allowed"}
	if len(tools) != len(want) {
		t.Fatalf("records %v, want %v", tools, want)
	}
	for i := range want {
		if !strings.HasPrefix(tools[i], want[i]) {
			t.Errorf("record %d = %q, want %q…", i, tools[i], want[i])
		}
	}
}

func TestCallToolCarriesElicitationAndProgress(t *testing.T) {
	f := newDiscoveryFixture(t, router.AccessOptions{Default: principal("key:a", agentsmcp.CatalogDiscovery)}, router.CatalogOptions{})
	var mu sync.Mutex
	var asked []string
	var progress []string
	cs := connect(t, f.router, &mcp.ClientOptions{
		ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			mu.Lock()
			asked = append(asked, req.Params.Message)
			mu.Unlock()
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"ok": true}}, nil
		},
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			mu.Lock()
			progress = append(progress, req.Params.Message+"@"+toString(req.Params.ProgressToken))
			mu.Unlock()
		},
	})
	params := &mcp.CallToolParams{Name: router.CallToolName, Arguments: map[string]any{"name": "ask", "arguments": map[string]any{"action": "deploy"}}}
	params.SetProgressToken("tok-1")
	res, err := cs.CallTool(context.Background(), params)
	if err != nil || res.IsError || textOf(res) != "confirmed: deploy" {
		t.Fatalf("call_tool ask: %q %v", textOf(res), err)
	}
	mu.Lock()
	defer mu.Unlock()
	if !slices.Equal(asked, []string{"Really deploy?"}) {
		t.Errorf("the client was asked %q, want the real tool's question once", asked)
	}
	if len(progress) == 0 || progress[0] != "asking@tok-1" {
		t.Errorf("progress %q, want the real tool's progress under the caller's token", progress)
	}
	for _, r := range f.records() {
		if r.Tool != "ask" {
			t.Errorf("recorded %q, want only the real tool", r.Tool)
		}
	}
}

func toString(v any) string {
	b, _ := json.Marshal(v)
	return strings.Trim(string(b), `"`)
}

func TestToolsListCostIsCountedPerMode(t *testing.T) {
	f := newDiscoveryFixture(t, router.AccessOptions{Default: principal("key:a", agentsmcp.CatalogDiscovery)}, router.CatalogOptions{})
	toolNames(t, connect(t, f.router, nil))
	full := f.router.ListingCost(nil, agentsmcp.CatalogFull)
	disc := f.router.ListingCost(nil, agentsmcp.CatalogDiscovery)
	f.mu.Lock()
	lists := slices.Clone(f.lists)
	f.mu.Unlock()
	if len(lists) != 1 || lists[0].Mode != agentsmcp.CatalogDiscovery || lists[0].Tools != 2 || lists[0] != disc {
		t.Errorf("tools/list counted as %+v; ListingCost(discovery) = %+v", lists, disc)
	}
	if full.Tools != 6 || full.Bytes <= disc.Bytes || full.Tokens != router.ApproxTokens(full.Bytes) {
		t.Errorf("ListingCost(full) = %+v, discovery %+v", full, disc)
	}
}
