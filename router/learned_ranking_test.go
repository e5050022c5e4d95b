package router_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/localtools"
	"github.com/agents-mcp/agents-mcp/router"
	"github.com/agents-mcp/agents-mcp/router/internal/routertest"
	"github.com/agents-mcp/agents-mcp/router/toolsearch"
)

// failingProvider serves tools worded alike; the ones in fail answer with
// an error result.
type failingProvider struct {
	name  string
	tools []*mcp.Tool
	fail  map[string]bool
}

func (p *failingProvider) Name() string                               { return p.name }
func (p *failingProvider) Tools(context.Context) ([]*mcp.Tool, error) { return p.tools, nil }
func (p *failingProvider) CallTool(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	if p.fail[req.Params.Name] {
		return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "channel service unavailable"}}}, nil
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "sent"}}}, nil
}

// TestRankingLearnsWhatWorkedForThisPrincipalOnly: two tools worded
// exactly alike rank by name until one of them fails and the other works
// for a caller; then the working one comes first, in find_tools and
// search_tools, for that caller only (memory confined to principals), and
// why says so.
func TestRankingLearnsWhatWorkedForThisPrincipalOnly(t *testing.T) {
	outcomes := &toolsearch.Outcomes{Family: strings.ToLower, Visibility: agentsmcp.VisibilityPrincipal}
	r := router.New(router.Options{Version: "test",
		Catalog: router.CatalogOptions{Mode: agentsmcp.CatalogDiscovery, MetaTools: []string{toolsearch.FindToolName}},
		OnToolCall: func(c router.ToolCallRecord) {
			if c.Refused == "" && c.Method == "" {
				outcomes.Record(c.Principal, c.Tool, c.Error != "")
			}
		}})
	desc := "Send a chat message to a channel"
	schema := json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}}}`)
	up := &failingProvider{name: "chat", fail: map[string]bool{"chat__alpha_post": true}, tools: []*mcp.Tool{
		{Name: "chat__alpha_post", Description: desc, InputSchema: schema},
		{Name: "chat__beta_post", Description: desc, InputSchema: schema},
	}}
	index := toolsearch.NewIndex(r, toolsearch.Options{})
	t.Cleanup(func() { _ = index.Close() })
	learned := &toolsearch.Learned{Inner: index, Evidence: outcomes}
	local := localtools.New()
	if err := toolsearch.AddSearchTools(local, learned); err != nil {
		t.Fatal(err)
	}
	if err := toolsearch.AddFindTools(local, &toolsearch.Finder{Registry: r, Ranker: learned, Skip: []string{router.CallToolName}, Found: outcomes.Found}); err != nil {
		t.Fatal(err)
	}
	if err := r.AddCallTool(local); err != nil {
		t.Fatal(err)
	}
	for _, p := range []agentsmcp.ToolProvider{up, local} {
		if err := r.AddProvider(context.Background(), p); err != nil {
			t.Fatal(err)
		}
	}
	principals := map[string]*agentsmcp.Principal{"ann": principal("key:ann", ""), "bob": principal("key:bob", "")}
	verify := func(_ context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
		p, ok := principals[token]
		if !ok {
			return nil, auth.ErrInvalidToken
		}
		return &auth.TokenInfo{UserID: p.ID, Expiration: time.Now().Add(time.Hour), Extra: map[string]any{agentsmcp.TokenInfoPrincipal: p}}, nil
	}
	h := r.HTTPHandler(router.HTTPOptions{Authenticate: auth.RequireBearerToken(verify, nil)})
	srv := httptest.NewServer(h)
	t.Cleanup(func() { h.Close(); srv.CloseClientConnections(); srv.Close() })
	dial := func(token string) *mcp.ClientSession {
		c := mcp.NewClient(&mcp.Implementation{Name: "learned-test", Version: "1"}, nil)
		cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: srv.URL + "/mcp",
			HTTPClient: &http.Client{Transport: routertest.Bearer{Token: token, Base: http.DefaultTransport}}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cs.Close() })
		return cs
	}
	ann, bob := dial("ann"), dial("bob")
	ctx := context.Background()
	need := "post a message to the team channel"
	find := func(cs *mcp.ClientSession) []toolsearch.FoundTool {
		t.Helper()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: toolsearch.FindToolName, Arguments: map[string]any{"need": need}})
		if err != nil || res.IsError {
			t.Fatalf("find_tools: %v %v", err, textOf(res))
		}
		var out toolsearch.FindResult
		b, _ := json.Marshal(res.StructuredContent)
		if err := json.Unmarshal(b, &out); err != nil || len(out.Tools) < 2 {
			t.Fatalf("find_tools: %s", b)
		}
		return out.Tools
	}
	search := func(cs *mcp.ClientSession) []toolsearch.Match {
		t.Helper()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: toolsearch.ToolName, Arguments: map[string]any{"query": need}})
		if err != nil || res.IsError {
			t.Fatalf("search_tools: %v %v", err, textOf(res))
		}
		var out toolsearch.Result
		b, _ := json.Marshal(res.StructuredContent)
		if err := json.Unmarshal(b, &out); err != nil || len(out.Tools) < 2 {
			t.Fatalf("search_tools: %s", b)
		}
		return out.Tools
	}
	if got := find(ann); got[0].Name != "chat__alpha_post" || got[0].Score != got[1].Score {
		t.Fatalf("before any outcome: %+v; want a tie broken by name", got)
	}
	// Ann tries alpha twice (it fails), then beta (it works).
	for _, name := range []string{"chat__alpha_post", "chat__alpha_post", "chat__beta_post"} {
		if _, err := ann.CallTool(ctx, &mcp.CallToolParams{Name: router.CallToolName,
			Arguments: map[string]any{"name": name, "arguments": map[string]any{"text": "hi"}}}); err != nil {
			t.Fatal(err)
		}
	}
	got := find(ann)
	if got[0].Name != "chat__beta_post" || !strings.Contains(got[0].Why, "learned:") || got[0].Reliability == nil ||
		got[0].Reliability.FamilySuccesses != 1 || got[0].Reliability.Scope != "yours" {
		t.Errorf("find_tools for ann after alpha failed and beta worked: %+v", got)
	}
	if !strings.Contains(got[1].Why, "cooling down") {
		t.Errorf("alpha failed twice in a row: why %q, want its cool-down", got[1].Why)
	}
	if s := search(ann); s[0].Name != "chat__beta_post" || !strings.Contains(s[0].Why, "learned:") {
		t.Errorf("search_tools for ann: %+v", s)
	}
	// Bob's ranking knows nothing of Ann's outcomes.
	if got := find(bob); got[0].Name != "chat__alpha_post" || strings.Contains(got[0].Why+got[1].Why, "learned") ||
		got[0].Reliability != nil || got[1].Reliability != nil {
		t.Errorf("find_tools for bob: %+v; want the words alone", got)
	}
	if s := search(bob); s[0].Name != "chat__alpha_post" {
		t.Errorf("search_tools for bob: %+v", s)
	}
}
