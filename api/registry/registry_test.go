package registry_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/pb33f/libopenapi"
	validator "github.com/pb33f/libopenapi-validator"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/api/registry"
)

// servers is a fixed list of virtual servers.
type servers []*agentsmcp.VirtualServer

func (s servers) VirtualServers() []*agentsmcp.VirtualServer { return s }

// newServer serves the registry routes over loopback; the token names the
// principal, as the MCP endpoints' authentication hands it down.
func newServer(t *testing.T) *httptest.Server {
	t.Helper()
	long := strings.Repeat("a very long description ", 10)
	h := registry.New(registry.Options{
		Servers: servers{
			{Name: "dev", Title: "Developer tools", Description: long, Version: "1.2.0", CatalogMode: agentsmcp.CatalogFull, CreatedAt: time.Unix(1_700_000_000, 0)},
			{Name: "ops"},
		},
		Tools: func(name string) []*mcp.Tool {
			return []*mcp.Tool{{Name: "gh_create_issue", Description: "Create an issue", InputSchema: json.RawMessage(`{"type":"object"}`)}}
		},
	})
	principals := map[string]*agentsmcp.Principal{
		"wide": {ID: "key:wide"},
		"dev":  {ID: "key:dev", VirtualServers: []string{"dev"}},
	}
	verify := func(_ context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
		p, ok := principals[token]
		if !ok {
			return nil, auth.ErrInvalidToken
		}
		return &auth.TokenInfo{UserID: p.ID, Expiration: time.Now().Add(time.Hour), Extra: map[string]any{agentsmcp.TokenInfoPrincipal: p}}, nil
	}
	srv := httptest.NewServer(auth.RequireBearerToken(verify, nil)(h))
	t.Cleanup(srv.Close)
	return srv
}

// registryValidator validates against the registry project's published
// OpenAPI document (an excerpt, vendored in testdata with its licence).
func registryValidator(t *testing.T) validator.Validator {
	t.Helper()
	spec, err := os.ReadFile("testdata/openapi.yaml")
	if err != nil {
		t.Fatal(err)
	}
	doc, err := libopenapi.NewDocument(spec)
	if err != nil {
		t.Fatal(err)
	}
	v, errs := validator.NewValidator(doc)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	return v
}

func get(t *testing.T, srv *httptest.Server, v validator.Validator, token, path string) (int, map[string]any) {
	t.Helper()
	req, _ := http.NewRequestWithContext(context.Background(), http.MethodGet, srv.URL+path, nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if v != nil {
		// The validator reads the body: hand it a fresh copy.
		resp.Body = io.NopCloser(strings.NewReader(string(body)))
		vreq, _ := http.NewRequest(http.MethodGet, "https://registry.example"+path, nil)
		if ok, errs := v.ValidateHttpResponse(vreq, resp); !ok {
			for _, e := range errs {
				t.Errorf("GET %s: %s: %s", path, e.Message, e.Reason)
				for _, se := range e.SchemaValidationErrors {
					t.Logf("  %s at %s", se.Reason, se.FieldPath)
				}
			}
		}
	}
	var out map[string]any
	_ = json.Unmarshal(body, &out)
	return resp.StatusCode, out
}

// TestRegistryRoutesFollowTheRegistryOpenAPI: every read route answers in
// the shape of the registry project's OpenAPI document, listing the
// virtual servers the caller may use.
func TestRegistryRoutesFollowTheRegistryOpenAPI(t *testing.T) {
	srv, v := newServer(t), registryValidator(t)
	host := strings.TrimPrefix(srv.URL, "http://")
	ns := "1.0.0.127" // the loopback host, reversed
	if !strings.HasPrefix(host, "127.0.0.1:") {
		t.Skipf("unexpected test host %s", host)
	}
	status, list := get(t, srv, v, "wide", "/v0.1/servers")
	if status != http.StatusOK {
		t.Fatalf("list: %d %v", status, list)
	}
	entries := list["servers"].([]any)
	if len(entries) != 2 {
		t.Fatalf("list: %v", list)
	}
	dev := entries[0].(map[string]any)["server"].(map[string]any)
	if dev["name"] != ns+"/dev" || dev["version"] != "1.2.0" || dev["$schema"] != registry.ServerSchema {
		t.Errorf("dev entry %v", dev)
	}
	remotes := dev["remotes"].([]any)
	if remotes[0].(map[string]any)["url"] != srv.URL+"/mcp/dev" || remotes[1].(map[string]any)["url"] != srv.URL+"/sse/dev" {
		t.Errorf("remotes %v", remotes)
	}
	if status, page := get(t, srv, v, "wide", "/v0.1/servers?limit=1"); status != http.StatusOK || page["metadata"].(map[string]any)["nextCursor"] != ns+"/dev" {
		t.Errorf("first page: %v", page)
	} else if _, rest := get(t, srv, v, "wide", "/v0.1/servers?limit=1&cursor="+ns+"/dev"); len(rest["servers"].([]any)) != 1 {
		t.Errorf("second page: %v", rest)
	}
	for _, path := range []string{
		"/v0.1/servers/" + ns + "%2Fdev/versions",
		"/v0.1/servers/" + ns + "%2Fdev/versions/latest",
		"/v0.1/servers/" + ns + "%2Fdev/versions/1.2.0",
	} {
		if status, _ := get(t, srv, v, "wide", path); status != http.StatusOK {
			t.Errorf("GET %s: %d", path, status)
		}
	}
	for _, path := range []string{
		"/v0.1/servers/" + ns + "%2Fdev/versions/9.9.9",
		"/v0.1/servers/" + ns + "%2Fnope/versions",
		"/v0.1/servers/other.ns%2Fdev/versions/latest",
	} {
		if status, _ := get(t, srv, v, "wide", path); status != http.StatusNotFound {
			t.Errorf("GET %s: %d, want 404", path, status)
		}
	}
	// A key limited to dev sees dev only, and ops is unknown to it.
	if _, list := get(t, srv, v, "dev", "/v0.1/servers"); len(list["servers"].([]any)) != 1 {
		t.Errorf("a key limited to dev lists %v", list)
	}
	if status, _ := get(t, srv, v, "dev", "/v0.1/servers/"+ns+"%2Fops/versions/latest"); status != http.StatusNotFound {
		t.Errorf("a key limited to dev reads ops: %d", status)
	}
}

// TestServerCardPerVirtualServer: a card per virtual server at the draft
// SEP's path, with its remotes and tools, marked as following a draft.
func TestServerCardPerVirtualServer(t *testing.T) {
	srv := newServer(t)
	status, card := get(t, srv, nil, "wide", "/.well-known/mcp-server-card/dev")
	if status != http.StatusOK {
		t.Fatalf("card: %d %v", status, card)
	}
	tools, _ := card["tools"].([]any)
	meta, _ := card["_meta"].(map[string]any)[registry.MetaKey].(map[string]any)
	if card["$schema"] != registry.CardSchema || len(tools) != 1 || len(card["remotes"].([]any)) != 2 || !strings.Contains(meta["draft"].(string), "SEP-2127") {
		t.Errorf("card %v", card)
	}
	if status, _ := get(t, srv, nil, "dev", "/.well-known/mcp-server-card/ops"); status != http.StatusNotFound {
		t.Errorf("a key limited to dev reads ops's card: %d", status)
	}
	if status, _ := get(t, srv, nil, "wide", "/.well-known/mcp-server-card/nope"); status != http.StatusNotFound {
		t.Errorf("unknown card: %d", status)
	}
}
