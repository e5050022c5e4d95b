package router_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/localtools"
	"github.com/agents-mcp/agents-mcp/router"
	"github.com/agents-mcp/agents-mcp/router/internal/routertest"
	"github.com/agents-mcp/agents-mcp/router/toolsearch"
)

// virtualFixture is a router with upstream-like providers "gh" and "up"
// and the local search_tools, served over real HTTP with bearer tokens
// naming principals.
type virtualFixture struct {
	*accessFixture
	srv        *httptest.Server
	principals map[string]*agentsmcp.Principal
}

func taggedTool(name string, tags ...any) *mcp.Tool {
	t := rawTool(name, `{"type":"object"}`)
	t.Meta = mcp.Meta{"tags": tags}
	return t
}

func newVirtualFixture(t *testing.T, defs ...*agentsmcp.VirtualServer) *virtualFixture {
	t.Helper()
	f := &virtualFixture{accessFixture: &accessFixture{}, principals: map[string]*agentsmcp.Principal{
		"wide":  {ID: "key:wide", Scopes: []string{agentsmcp.ScopeMCP}},
		"dev":   {ID: "key:dev", Scopes: []string{agentsmcp.ScopeMCP}, VirtualServers: []string{"dev"}},
		"other": {ID: "key:other", Scopes: []string{agentsmcp.ScopeMCP}, VirtualServers: []string{"ops"}},
	}}
	f.router = router.New(router.Options{Version: "test", OnToolCall: func(c router.ToolCallRecord) {
		f.mu.Lock()
		f.calls = append(f.calls, c)
		f.mu.Unlock()
	}})
	if err := f.router.SetVirtualServers(defs); err != nil {
		t.Fatal(err)
	}
	gh := &staticProvider{name: "gh", tools: []*mcp.Tool{
		rawTool("gh__create_issue", `{"type":"object"}`),
		rawTool("gh__list_issues", `{"type":"object"}`),
		rawTool("gh__delete_repo", `{"type":"object"}`),
	}}
	up := &staticProvider{name: "up", tools: []*mcp.Tool{
		taggedTool("up__build", "dev", "ci"),
		taggedTool("up__deploy", "ops"),
		rawTool("up__echo", `{"type":"object"}`),
	}}
	local := localtools.New()
	if err := toolsearch.AddSearchTools(local, toolsearch.NewIndex(f.router, toolsearch.Options{})); err != nil {
		t.Fatal(err)
	}
	for _, p := range []agentsmcp.ToolProvider{gh, up, local} {
		if err := f.router.AddProvider(context.Background(), p); err != nil {
			t.Fatal(err)
		}
	}
	verify := func(_ context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
		p, ok := f.principals[token]
		if !ok {
			return nil, auth.ErrInvalidToken
		}
		return &auth.TokenInfo{UserID: p.ID, Scopes: p.Scopes, Expiration: time.Now().Add(time.Hour), Extra: map[string]any{agentsmcp.TokenInfoPrincipal: p}}, nil
	}
	h := f.router.HTTPHandler(router.HTTPOptions{Authenticate: auth.RequireBearerToken(verify, nil)})
	f.srv = httptest.NewServer(h)
	t.Cleanup(func() { h.Close(); f.srv.CloseClientConnections(); f.srv.Close() })
	return f
}

// dial opens a streamable session at path with token.
func (f *virtualFixture) dial(t *testing.T, token, path string) (*mcp.ClientSession, error) {
	t.Helper()
	client := &http.Client{Transport: routertest.Bearer{Token: token, Base: http.DefaultTransport}}
	c := mcp.NewClient(&mcp.Implementation{Name: "virtual-test", Version: "1"}, nil)
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: f.srv.URL + path, HTTPClient: client, MaxRetries: -1}, nil)
	if err == nil {
		t.Cleanup(func() { cs.Close() })
	}
	return cs, err
}

func devServer() *agentsmcp.VirtualServer {
	gh := "gh_"
	return &agentsmcp.VirtualServer{
		Name: "dev", Title: "Developer tools", CatalogMode: agentsmcp.CatalogFull,
		Tools: []agentsmcp.VirtualSelection{
			{Upstream: "gh", Names: []string{"gh__create_*", "gh__list_*"}, AliasPrefix: &gh},
			{Upstream: "up", Tags: []string{"dev"}},
		},
		Rename:       map[string]string{"gh__list_issues": "issues"},
		Descriptions: map[string]string{"up__build": "Build the project (curated)"},
	}
}

func isUnknownTool(err error, name string) bool {
	var rpcErr *jsonrpc.Error
	return errors.As(err, &rpcErr) && rpcErr.Code == jsonrpc.CodeInvalidParams && rpcErr.Message == `unknown tool "`+name+`"`
}

// TestVirtualServerSelectsRenamesAndOverrides: /mcp/dev lists what its
// selections admit, under their aliases and descriptions; calls by alias
// reach the real tool, and the audit records the real tool; a tool it does
// not select is unknown there, exactly as one that does not exist; /mcp
// stays the whole catalog.
func TestVirtualServerSelectsRenamesAndOverrides(t *testing.T) {
	f := newVirtualFixture(t, devServer())
	ctx := context.Background()
	cs, err := f.dial(t, "wide", "/mcp/dev")
	if err != nil {
		t.Fatal(err)
	}
	res, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
		if tool.Name == "up__build" && tool.Description != "Build the project (curated)" {
			t.Errorf("up__build's description %q, want the override", tool.Description)
		}
	}
	slices.Sort(names)
	if want := []string{"gh_create_issue", "issues", "up__build"}; !slices.Equal(names, want) {
		t.Errorf("/mcp/dev lists %v, want %v", names, want)
	}
	out, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "gh_create_issue", Arguments: map[string]any{}})
	if err != nil || textOf(out) != "gh ran gh__create_issue" {
		t.Fatalf("call by alias: %v %v", textOf(out), err)
	}
	if out, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "issues", Arguments: map[string]any{}}); err != nil || textOf(out) != "gh ran gh__list_issues" {
		t.Fatalf("call by rename: %v %v", out, err)
	}
	var recorded []string
	for _, rec := range f.records() {
		recorded = append(recorded, rec.Tool)
	}
	if !slices.Equal(recorded, []string{"gh__create_issue", "gh__list_issues"}) {
		t.Errorf("the audit recorded %v, want the real tools", recorded)
	}
	for _, name := range []string{"gh__create_issue", "gh__delete_repo", "up__deploy", "no_such_tool"} {
		if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: map[string]any{}}); !isUnknownTool(err, name) {
			t.Errorf("call of %s through /mcp/dev: %v; want exactly go-sdk's unknown tool", name, err)
		}
	}
	whole, err := f.dial(t, "wide", "/mcp")
	if err != nil {
		t.Fatal(err)
	}
	if got := toolNames(t, whole); len(got) != 7 {
		t.Errorf("/mcp lists %v, want the whole catalog of 7", got)
	}
	// Legacy SSE at /sse/dev: its messages path keeps the view.
	client := &http.Client{Transport: routertest.Bearer{Token: "wide", Base: http.DefaultTransport}}
	sc, err := mcp.NewClient(&mcp.Implementation{Name: "virtual-sse", Version: "1"}, nil).Connect(ctx, &mcp.SSEClientTransport{Endpoint: f.srv.URL + "/sse/dev", HTTPClient: client}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer sc.Close()
	sseNames := toolNames(t, sc)
	slices.Sort(sseNames)
	if !slices.Equal(sseNames, []string{"gh_create_issue", "issues", "up__build"}) {
		t.Errorf("/sse/dev lists %v", sseNames)
	}
}

// TestVirtualServerPerKeyAccess: a key limited to virtual servers gets
// 404 on the whole catalog and on a virtual server not its own, the same
// 404 as for one that does not exist; a client cannot set the header that
// marks a virtual server's requests.
func TestVirtualServerPerKeyAccess(t *testing.T) {
	f := newVirtualFixture(t, devServer(), &agentsmcp.VirtualServer{Name: "ops", Tools: []agentsmcp.VirtualSelection{{Upstream: "up"}}})
	if _, err := f.dial(t, "dev", "/mcp/dev"); err != nil {
		t.Fatalf("a key limited to dev, at /mcp/dev: %v", err)
	}
	post := func(token, path string, header map[string]string) (int, string) {
		req, _ := http.NewRequest(http.MethodPost, f.srv.URL+path, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`))
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		for k, v := range header {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
	refusedOps, bodyOps := post("dev", "/mcp/ops", nil)
	missing, bodyMissing := post("dev", "/mcp/nope", nil)
	missingWide, bodyMissingWide := post("wide", "/mcp/nope", nil)
	if refusedOps != http.StatusNotFound || missing != http.StatusNotFound || missingWide != http.StatusNotFound {
		t.Fatalf("statuses %d %d %d, want 404 for a server the key may not use and for unknown ones", refusedOps, missing, missingWide)
	}
	if strings.ReplaceAll(bodyOps, "ops", "nope") != bodyMissing || bodyMissing != bodyMissingWide {
		t.Errorf("a server the key may not use is told apart from an unknown one:\n%s\n%s\n%s", bodyOps, bodyMissing, bodyMissingWide)
	}
	if status, body := post("dev", "/mcp", nil); status != http.StatusNotFound {
		t.Errorf("a key limited to virtual servers at /mcp: %d %s, want 404", status, body)
	}
	if status, _ := post("other", "/sse", nil); status != http.StatusNotFound {
		t.Errorf("a key limited to virtual servers at /sse: %d, want 404", status)
	}
	// The marking header sent by a client is dropped: the key stays
	// refused at /mcp.
	if status, _ := post("dev", "/mcp", map[string]string{"Agents-Mcp-Virtual-Server": "dev"}); status != http.StatusNotFound {
		t.Errorf("a client-set virtual server header was honoured: %d", status)
	}
	if status, _ := post("wide", "/mcp", nil); status != http.StatusOK {
		t.Errorf("a key without virtual servers at /mcp: %d", status)
	}
	// Nor does the header narrow /mcp to a view for anyone.
	client := &http.Client{Transport: routertest.Bearer{Token: "wide", Base: headerTransport{"Agents-Mcp-Virtual-Server", "dev"}}}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "forger", Version: "1"}, nil).Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: f.srv.URL + "/mcp", HTTPClient: client, MaxRetries: -1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if got := toolNames(t, cs); len(got) != 7 {
		t.Errorf("/mcp with a forged virtual server header lists %v, want the whole catalog", got)
	}
}

// headerTransport sets one header on every request.
type headerTransport struct{ name, value string }

func (h headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set(h.name, h.value)
	return http.DefaultTransport.RoundTrip(r)
}

// TestVirtualServerAliasesStableWhenAnUpstreamIsAdded: adding an upstream
// whose tools claim names the view already gives (a reserved rename, a
// tool's own name) leaves every exposed name on its tool.
func TestVirtualServerAliasesStableWhenAnUpstreamIsAdded(t *testing.T) {
	n, gh := "n_", "g_"
	vs := &agentsmcp.VirtualServer{
		Name: "dev",
		Tools: []agentsmcp.VirtualSelection{
			{Upstream: "new", AliasPrefix: &n},
			{Upstream: "gh", AliasPrefix: &gh},
			{Upstream: "up"},
			{Upstream: "plain"},
		},
		Rename: map[string]string{"up__echo": "n_x"},
	}
	f := newVirtualFixture(t, vs)
	// A provider of unprefixed names, as local tools are.
	if err := f.router.AddProvider(context.Background(), &staticProvider{name: "plain", tools: []*mcp.Tool{rawTool("n_y", `{"type":"object"}`)}}); err != nil {
		t.Fatal(err)
	}
	exposed := func() map[string]string {
		view, ok := f.router.VirtualView("dev")
		if !ok {
			t.Fatal("no view")
		}
		m := map[string]string{}
		for _, tool := range view.Tools() {
			real, _ := view.RealName(tool.Name)
			m[tool.Name] = real
		}
		return m
	}
	before := exposed()
	if before["n_x"] != "up__echo" || before["n_y"] != "n_y" || before["g_create_issue"] != "gh__create_issue" {
		t.Fatalf("before: %v", before)
	}
	// "new" claims n_x (reserved by rename) and n_y (a tool's own name),
	// and brings one tool of a name nobody holds.
	if err := f.router.AddProvider(context.Background(), &staticProvider{name: "new", tools: []*mcp.Tool{
		rawTool("new__x", `{"type":"object"}`), rawTool("new__y", `{"type":"object"}`), rawTool("new__z", `{"type":"object"}`),
	}}); err != nil {
		t.Fatal(err)
	}
	after := exposed()
	for name, real := range before {
		if after[name] != real {
			t.Errorf("adding an upstream moved %q from %s to %s", name, real, after[name])
		}
	}
	if after["n_z"] != "new__z" || len(after) != len(before)+1 {
		t.Errorf("after: %v; want the one new tool added as n_z", after)
	}
	view, _ := f.router.VirtualView("dev")
	if d := view.Dropped(); len(d) != 2 {
		t.Errorf("dropped %v, want new__x and new__y with why", d)
	}
}
