package registry_test

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
	"github.com/agents-mcp/agents-mcp/api/registry"
	"github.com/agents-mcp/agents-mcp/router"
)

// upstream is a tool provider standing for a connected upstream.
type upstream struct{ name string }

func (u upstream) Name() string { return u.name }
func (u upstream) Tools(context.Context) ([]*mcp.Tool, error) {
	return []*mcp.Tool{{Name: u.name + "__create_issue", Description: "Create an issue", InputSchema: json.RawMessage(`{"type":"object"}`)}}, nil
}
func (u upstream) CallTool(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	return &mcp.CallToolResult{}, nil
}

// TestPublishedUpstreamsFollowTheRegistryOpenAPI: the upstreams the
// catalog publishes (catalog.publish_upstreams) are listed by the registry
// routes of a real router, in the registry's OpenAPI shape, with the
// gateway's endpoints for them as remotes and nothing of the upstream but
// its name; the others are not listed; each has a Server Card.
func TestPublishedUpstreamsFollowTheRegistryOpenAPI(t *testing.T) {
	r := router.New(router.Options{Version: "test", Catalog: router.CatalogOptions{PublishUpstreams: []string{"git*"}}})
	for _, name := range []string{"github", "internal"} {
		if err := r.AddProvider(context.Background(), upstream{name}); err != nil {
			t.Fatal(err)
		}
	}
	h := registry.New(registry.Options{Servers: r, Tools: func(name string) []*mcp.Tool {
		tools, _, _ := r.VirtualServerTools(name)
		return tools
	}})
	verify := func(context.Context, string, *http.Request) (*auth.TokenInfo, error) {
		return &auth.TokenInfo{UserID: "key:wide", Expiration: time.Now().Add(time.Hour), Extra: map[string]any{agentsmcp.TokenInfoPrincipal: &agentsmcp.Principal{ID: "key:wide"}}}, nil
	}
	srv := httptest.NewServer(auth.RequireBearerToken(verify, nil)(h))
	defer srv.Close()
	v := registryValidator(t)
	status, list := get(t, srv, v, "wide", "/v0.1/servers")
	if status != http.StatusOK {
		t.Fatalf("list: %d %v", status, list)
	}
	entries := list["servers"].([]any)
	if len(entries) != 1 {
		t.Fatalf("list %v, want github alone (internal is not published)", list)
	}
	server := entries[0].(map[string]any)["server"].(map[string]any)
	if !strings.HasSuffix(server["name"].(string), "/github") {
		t.Errorf("entry %v, want the name …/github", server)
	}
	b, _ := json.Marshal(server)
	for _, remote := range server["remotes"].([]any) {
		if u := remote.(map[string]any)["url"].(string); u != srv.URL+"/mcp/github" && u != srv.URL+"/sse/github" {
			t.Errorf("remote %s, want the gateway's own endpoints", u)
		}
	}
	if strings.Contains(string(b), "internal") {
		t.Errorf("the entry names an unpublished upstream: %s", b)
	}
	status, card := get(t, srv, nil, "wide", "/.well-known/mcp-server-card/github")
	if tools, _ := card["tools"].([]any); status != http.StatusOK || len(tools) != 1 || tools[0].(map[string]any)["name"] != "github__create_issue" {
		t.Errorf("card: %d %v", status, card)
	}
	if status, _ := get(t, srv, nil, "wide", "/.well-known/mcp-server-card/internal"); status != http.StatusNotFound {
		t.Errorf("card of an unpublished upstream: %d", status)
	}
}
