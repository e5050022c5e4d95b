package admin_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/api/admin"
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

// TestHTTPToolsLoadingHoldsUpNothing performs the slow-document attack on the
// admin API: a source whose document is slow to fetch, then one whose
// $ref chain costs minutes of CPU, are added while another source is
// removed. The removal (and a listing) must not wait for either load, the
// chain must be refused with 400 naming the document and the budget, and
// a second add of a name being loaded is 409.
func TestHTTPToolsLoadingHoldsUpNothing(t *testing.T) {
	e := newEnv(t)
	anon := caller{id: agentsmcp.AnonymousPrincipal, scopes: agentsmcp.Scopes}
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = fmt.Fprint(w, `{}`)
	}))
	t.Cleanup(api.Close)
	endpoints := []map[string]any{{"name": "get_post", "method": "GET", "path": "/posts/{id}"}}
	for _, name := range []string{"gone", "keep"} {
		e.expect(http.StatusCreated, request{method: http.MethodPost, path: "/admin/v1/http-tools", as: anon,
			body: map[string]any{"name": name, "base_url": api.URL, "endpoints": endpoints}})
	}
	release := make(chan struct{})
	fetching := make(chan struct{}, 1)
	docs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fetching <- struct{}{}
		select {
		case <-release:
		case <-r.Context().Done():
			return
		case <-time.After(20 * time.Second): // so that a failing test ends
		}
		_, _ = fmt.Fprint(w, `{"openapi":"3.0.3","info":{"title":"slow","version":"1"},"paths":{"/x":{"get":{"operationId":"x","responses":{"200":{"description":"ok"}}}}}}`)
	}))
	t.Cleanup(docs.Close)
	released := false
	t.Cleanup(func() {
		if !released {
			close(release)
		}
	})

	// send is an admin request from another goroutine (e.do may not be).
	type answer struct {
		status int
		body   string
		took   time.Duration
	}
	send := func(method, path string, body any) <-chan answer {
		out := make(chan answer, 1)
		var raw []byte
		if body != nil {
			raw, _ = json.Marshal(body)
		}
		go func() {
			start := time.Now()
			req, _ := http.NewRequest(method, e.srv.URL+path, bytes.NewReader(raw))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set(principalHeader, anon.id)
			req.Header.Set(scopesHeader, strings.Join(anon.scopes, ","))
			resp, err := (&http.Client{Timeout: 60 * time.Second}).Do(req)
			if err != nil {
				out <- answer{status: -1, body: err.Error(), took: time.Since(start)}
				return
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			out <- answer{status: resp.StatusCode, body: string(b), took: time.Since(start)}
		}()
		return out
	}
	wait := func(what string, c <-chan answer, within time.Duration) answer {
		t.Helper()
		select {
		case a := <-c:
			return a
		case <-time.After(within):
			t.Fatalf("%s: no answer within %v", what, within)
			return answer{}
		}
	}

	slow := send(http.MethodPost, "/admin/v1/http-tools", map[string]any{"name": "slow", "base_url": api.URL, "openapi": docs.URL + "/doc.json"})
	select {
	case <-fetching:
	case <-time.After(10 * time.Second):
		t.Fatal("the slow source's document was not fetched")
	}
	// While its document is on its way: a removal, a listing and a second
	// add of the same name are answered at once (generous bounds for a
	// loaded machine; before the fix they waited for the load).
	if a := wait("DELETE gone", send(http.MethodDelete, "/admin/v1/http-tools/gone", nil), 5*time.Second); a.status != http.StatusNoContent {
		t.Errorf("DELETE during a load: %d %s", a.status, a.body)
	} else {
		t.Logf("DELETE during a load answered in %v", a.took)
	}
	if a := wait("GET list", send(http.MethodGet, "/admin/v1/http-tools", nil), 5*time.Second); a.status != http.StatusOK || strings.Contains(a.body, `"gone"`) {
		t.Errorf("GET during a load: %d %s", a.status, a.body)
	}
	if a := wait("POST slow again", send(http.MethodPost, "/admin/v1/http-tools", map[string]any{"name": "slow", "base_url": api.URL, "endpoints": endpoints}), 5*time.Second); a.status != http.StatusConflict {
		t.Errorf("a second add of a name being loaded: %d %s, want 409", a.status, a.body)
	}
	select {
	case a := <-slow:
		t.Fatalf("the slow add ended before its document came: %d %s", a.status, a.body)
	default:
	}
	close(release)
	released = true
	if a := wait("POST slow", slow, 30*time.Second); a.status != http.StatusCreated {
		t.Fatalf("the slow add: %d %s", a.status, a.body)
	}

	// The $ref chain: refused on its budget, while a removal goes ahead.
	var doc strings.Builder
	doc.WriteString(`{"openapi":"3.0.3","info":{"title":"chain","version":"1"},"paths":{`)
	for i := range 300 {
		if i > 0 {
			doc.WriteString(",")
		}
		fmt.Fprintf(&doc, `"/p%d":{"get":{"operationId":"op%d","responses":{"200":{"description":"ok","content":{"application/json":{"schema":{"$ref":"#/components/schemas/S0"}}}}}}}`, i, i)
	}
	doc.WriteString(`},"components":{"schemas":{`)
	for d := range 30 {
		if d > 0 {
			doc.WriteString(",")
		}
		next := fmt.Sprintf(`{"$ref":"#/components/schemas/S%d"}`, d+1)
		if d == 29 {
			next = `{"type":"string"}`
		}
		fmt.Fprintf(&doc, `"S%d":{"type":"object","properties":{"a":%s,"b":%s}}`, d, next, next)
	}
	doc.WriteString(`}}}`)
	chain := send(http.MethodPost, "/admin/v1/http-tools", map[string]any{"name": "chain", "base_url": api.URL, "openapi_document": doc.String()})
	time.Sleep(50 * time.Millisecond) // let the add begin
	if a := wait("DELETE keep", send(http.MethodDelete, "/admin/v1/http-tools/keep", nil), 5*time.Second); a.status != http.StatusNoContent {
		t.Errorf("DELETE during the chain's load: %d %s", a.status, a.body)
	} else {
		t.Logf("DELETE during the chain's load answered in %v", a.took)
	}
	a := wait("POST chain", chain, 60*time.Second)
	var eb struct{ Error admin.ErrorBody }
	_ = json.Unmarshal([]byte(a.body), &eb)
	if a.status != http.StatusBadRequest || eb.Error.Code != admin.CodeInvalid || !strings.Contains(eb.Error.Message, `http_tools "chain"`) ||
		!strings.Contains(eb.Error.Message, "openapi.max_schema_nodes") {
		t.Errorf("the chain: %d %s, want 400 naming the source and the budget", a.status, a.body)
	}
	t.Logf("the chain was refused in %v", a.took)
	if _, ok := e.router.ToolSource("chain__op0"); ok {
		t.Error("the router serves the chain's tools")
	}
}
