package admin_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/httptools"
)

// TestHTTPToolsLifecycle adds, lists, reads and removes a source through
// the API against a loopback HTTP API, and checks that its header value
// is in no answer and no audit entry, that a document larger than the
// general body limit fits this route, and the 400, 404, 409 and 413
// answers.
func TestHTTPToolsLifecycle(t *testing.T) {
	e := newEnv(t)
	e.addFixtureUpstream("fx")
	anon := caller{id: agentsmcp.AnonymousPrincipal, scopes: agentsmcp.Scopes}
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = fmt.Fprintf(w, `{"path":%q}`, r.URL.Path)
	}))
	t.Cleanup(api.Close)
	const secret = "header-secret-value"

	// X-Tenant: a header whose name says nothing of a secret, so that only
	// the route's own scrubbing keeps its value out of the audit trail.
	src := map[string]any{"name": "blog", "base_url": api.URL, "headers": map[string]string{"X-Tenant": secret}, "timeout": "5s",
		"endpoints": []map[string]any{{"name": "get_post", "method": "GET", "path": "/posts/{id}"}}}
	r := e.do(request{method: http.MethodPost, path: "/admin/v1/http-tools", as: anon, body: src})
	if r.status != http.StatusCreated || r.header.Get("Location") != "/admin/v1/http-tools/blog" {
		t.Fatalf("POST: %d %s (Location %q)", r.status, r.body, r.header.Get("Location"))
	}
	var st httptools.Status
	r.decode(t, &st)
	if st.Name != "blog" || st.Kind != "endpoints" || st.State != "ready" || st.Tools != 1 || st.Origin != httptools.OriginAPI {
		t.Errorf("created status = %+v", st)
	}
	if _, ok := e.router.ToolSource("blog__get_post"); !ok {
		t.Error("the router does not serve blog__get_post")
	}

	// An OpenAPI document inline, larger than the 1 MiB of other writes.
	doc := `{"openapi":"3.0.3","info":{"title":"big","version":"1","description":"` + strings.Repeat("x", 1<<20+1024) + `"},` +
		`"paths":{"/posts/{id}":{"get":{"operationId":"readPost","parameters":[{"name":"id","in":"path","required":true,"schema":{"type":"string"}}],` +
		`"responses":{"200":{"description":"ok"}}}}}}`
	big := map[string]any{"name": "big", "base_url": api.URL, "openapi_document": doc}
	if r := e.do(request{method: http.MethodPost, path: "/admin/v1/http-tools", as: anon, body: big}); r.status != http.StatusCreated {
		t.Fatalf("POST of a %d-byte inline document: %d %.300s", len(doc), r.status, r.body)
	}
	huge := map[string]any{"name": "huge", "base_url": api.URL, "openapi_document": strings.Repeat("x", agentsmcp.MaxHTTPSourceConfigBytes)}
	if r := e.do(request{method: http.MethodPost, path: "/admin/v1/http-tools", as: anon, body: huge}); r.status != http.StatusRequestEntityTooLarge {
		t.Errorf("POST of a body over 4 MiB: %d %.300s, want 413", r.status, r.body)
	}

	for _, tt := range []struct {
		what   string
		body   any
		status int
		has    string
	}{
		{"a server file", map[string]any{"name": "f", "base_url": api.URL, "openapi": "/etc/passwd"}, http.StatusBadRequest, "openapi: must be an http or https URL"},
		{"a bad timeout", map[string]any{"name": "t", "base_url": api.URL, "timeout": "soon", "endpoints": src["endpoints"]}, http.StatusBadRequest, "timeout"},
		{"an inline document over 2 MiB", map[string]any{"name": "d", "openapi_document": strings.Repeat("y", httptools.MaxInlineDocumentBytes+1)}, http.StatusBadRequest, "openapi_document"},
		{"a bad name", map[string]any{"name": "a b", "base_url": api.URL, "endpoints": src["endpoints"]}, http.StatusBadRequest, "name"},
		{"a stored source's name", src, http.StatusConflict, "blog"},
		{"an upstream's name", map[string]any{"name": "fx", "base_url": api.URL, "endpoints": src["endpoints"]}, http.StatusConflict, "fx"},
	} {
		r := e.do(request{method: http.MethodPost, path: "/admin/v1/http-tools", as: anon, body: tt.body})
		if r.status != tt.status || !strings.Contains(r.errorBody(t).Message, tt.has) {
			t.Errorf("POST with %s: %d %s, want %d naming %q", tt.what, r.status, r.body, tt.status, tt.has)
		}
	}

	r = e.do(request{method: http.MethodGet, path: "/admin/v1/http-tools", as: anon})
	var page struct{ Items []httptools.Status }
	r.decode(t, &page)
	if r.status != http.StatusOK || len(page.Items) != 2 || page.Items[0].Name != "big" || page.Items[1].Name != "blog" {
		t.Errorf("GET /http-tools: %d %s", r.status, r.body)
	}
	if r := e.do(request{method: http.MethodGet, path: "/admin/v1/http-tools/blog", as: anon}); r.status != http.StatusOK {
		t.Errorf("GET /http-tools/blog: %d %s", r.status, r.body)
	}
	if r := e.do(request{method: http.MethodDelete, path: "/admin/v1/http-tools/blog", as: anon}); r.status != http.StatusNoContent {
		t.Fatalf("DELETE: %d %s", r.status, r.body)
	}
	if _, ok := e.router.ToolSource("blog__get_post"); ok {
		t.Error("the router still serves a removed source's tool")
	}
	for _, path := range []string{"/admin/v1/http-tools/blog", "/admin/v1/http-tools/nothing"} {
		if r := e.do(request{method: http.MethodDelete, path: path, as: anon}); r.status != http.StatusNotFound {
			t.Errorf("DELETE %s: %d %s, want 404", path, r.status, r.body)
		}
	}

	for _, path := range []string{"/admin/v1/http-tools", "/admin/v1/audit?limit=100"} {
		r := e.do(request{method: http.MethodGet, path: path, as: anon})
		if strings.Contains(string(r.body), secret) {
			t.Errorf("GET %s shows the header value", path)
		}
		if strings.Contains(path, "audit") && !strings.Contains(string(r.body), "/http-tools") {
			t.Errorf("the audit trail has no /http-tools write: %.500s", r.body)
		}
		if strings.Contains(path, "audit") && strings.Contains(string(r.body), strings.Repeat("x", 64)) {
			t.Error("the audit trail holds the inline document")
		}
	}
}
