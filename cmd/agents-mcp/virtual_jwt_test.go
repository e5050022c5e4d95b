package main

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agents-mcp/agents-mcp/internal/oidctest"
)

// TestJWTVirtualServersClaim: with auth.jwt.virtual_servers_claim, a token
// of the real test issuer that names virtual servers is limited to them,
// as an API key with virtual_servers is: the whole catalog and the others
// answer the same 404 as a virtual server that does not exist; a token
// without the claim is not limited; a claim of the wrong type is refused.
// The virtual server it may use serves in discovery mode.
func TestJWTVirtualServersClaim(t *testing.T) {
	as := oidctest.Start(t)
	as.SetClaims("dev-bot", map[string]any{"vs": []any{"dev"}})
	as.SetClaims("broken", map[string]any{"vs": 5})
	cfgFile := filepath.Join(t.TempDir(), "agents-mcp.yaml")
	if err := os.WriteFile(cfgFile, fmt.Appendf(nil, `
auth:
  jwt:
    jwks_url: %s
    issuer: %s
    audience: %s
    resource: http://127.0.0.1/mcp
    virtual_servers_claim: vs
catalog:
  mode: full
virtual_servers:
  - name: dev
    catalog_mode: discovery
    tools: [{upstream: local, names: [search_tools]}]
    rename: {search_tools: lookup}
    pinned: [lookup]
  - name: ops
    tools: [{upstream: local}]
`, as.JWKSURL, as.Issuer, oidctest.CallerAudience), 0o600); err != nil {
		t.Fatal(err)
	}
	base, stop, _, logs := startServe(t, nil, "--config", cfgFile)
	defer stop()
	devBot, wide, broken := as.Token(t, "dev-bot", "mcp"), as.Token(t, "wide", "mcp"), as.Token(t, "broken", "mcp")

	post := func(token, path string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, base+path, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`))
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
	forbidden, bodyForbidden := post(devBot, "/mcp/ops")
	missing, bodyMissing := post(devBot, "/mcp/nope")
	missingWide, bodyMissingWide := post(wide, "/mcp/nope")
	if forbidden != http.StatusNotFound || missing != http.StatusNotFound || missingWide != http.StatusNotFound {
		t.Fatalf("statuses %d %d %d, want 404 for a server the token may not use and for unknown ones\n%s", forbidden, missing, missingWide, logs.String())
	}
	if strings.ReplaceAll(bodyForbidden, "ops", "nope") != bodyMissing || bodyMissing != bodyMissingWide {
		t.Errorf("a server the token may not use is told apart from an unknown one:\n%s\n%s\n%s", bodyForbidden, bodyMissing, bodyMissingWide)
	}
	if status, body := post(devBot, "/mcp"); status != http.StatusNotFound {
		t.Errorf("a token limited to virtual servers at /mcp: %d %s, want 404", status, body)
	}
	for _, path := range []string{"/mcp", "/mcp/ops", "/mcp/dev"} {
		if status, body := post(wide, path); status != http.StatusOK {
			t.Errorf("a token without the claim at %s: %d %s", path, status, body)
		}
	}
	if status, body := post(broken, "/mcp/dev"); status != http.StatusUnauthorized {
		t.Errorf("a token whose claim is a number: %d %s, want 401", status, body)
	}

	cs, err := mcp.NewClient(&mcp.Implementation{Name: "jwt-virtual", Version: "1"}, nil).Connect(t.Context(),
		&mcp.StreamableClientTransport{Endpoint: base + "/mcp/dev", HTTPClient: &http.Client{Transport: bearerTransport{devBot}}, MaxRetries: -1}, nil)
	if err != nil {
		t.Fatalf("dev-bot at /mcp/dev: %v", err)
	}
	defer cs.Close()
	res, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
	}
	if want := []string{"call_tool", "find_tools", "lookup"}; !slices.Equal(names, want) {
		t.Errorf("/mcp/dev in discovery mode lists %v, want %v", names, want)
	}
	found, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "find_tools", Arguments: map[string]any{"need": "search for a tool"}})
	if err != nil || found.IsError {
		t.Fatalf("find_tools at /mcp/dev: %v %v", err, found)
	}
	if text := found.Content[0].(*mcp.TextContent).Text; !strings.Contains(text, "lookup") || strings.Contains(text, "search_tools") {
		t.Errorf("find_tools at /mcp/dev answered %q, want the view's name lookup only", text)
	}
}
