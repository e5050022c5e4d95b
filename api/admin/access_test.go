package admin_test

import (
	"encoding/json"
	"net/http"
	"sort"
	"strings"
	"testing"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/api/admin"
)

// documentedOperations lists "METHOD /path" of every operation of the
// OpenAPI document, which TestRoutesMatchOpenAPIDocument holds equal to
// the routes.
func documentedOperations(t *testing.T) []string {
	t.Helper()
	var doc struct {
		Paths map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(admin.OpenAPI, &doc); err != nil {
		t.Fatal(err)
	}
	var ops []string
	for path, item := range doc.Paths {
		for method := range item {
			ops = append(ops, strings.ToUpper(method)+" "+path)
		}
	}
	sort.Strings(ops)
	return ops
}

// concretePath fills a documented path's parameters with well-formed
// values.
func concretePath(path string) string {
	prefixes := map[string]string{
		"/learnings": agentsmcp.LearningIDPrefix, "/insights": agentsmcp.InsightIDPrefix, "/tasks": agentsmcp.TaskIDPrefix,
		"/plans": agentsmcp.PlanIDPrefix, "/thoughts": agentsmcp.ThoughtIDPrefix, "/operations": admin.OperationIDPrefix,
	}
	for collection, prefix := range prefixes {
		if strings.HasPrefix(path, collection+"/{id}") {
			path = strings.Replace(path, "{id}", agentsmcp.NewID(prefix), 1)
		}
	}
	return admin.Prefix + strings.Replace(path, "{name}", "fx", 1)
}

// TestEveryRouteChecksItsScope sends every documented operation without a
// principal, with a principal of the wrong scopes, and with the right
// scope. Writes carry a body with an unknown field, so that a write that
// passes authorisation is refused by strict decoding (400) before it
// changes anything.
func TestEveryRouteChecksItsScope(t *testing.T) {
	e := newEnv(t)
	e.addFixtureUpstream("fx")
	ops := documentedOperations(t)
	if len(ops) < 20 {
		t.Fatalf("only %d documented operations", len(ops))
	}
	for _, op := range ops {
		method, path, _ := strings.Cut(op, " ")
		write := method != http.MethodGet
		url := concretePath(path)
		var body any
		if write {
			body = map[string]any{"unexpected": true}
		}
		send := func(as caller) *response {
			return e.do(request{method: method, path: url, as: as, body: body})
		}
		t.Run(op, func(t *testing.T) {
			r := send(nobody)
			if r.status != http.StatusUnauthorized || r.errorBody(t).Code != admin.CodeUnauthenticated {
				t.Errorf("without a principal: %d %s, want 401 unauthenticated", r.status, r.body)
			}
			if !strings.HasPrefix(r.header.Get("WWW-Authenticate"), "Bearer") {
				t.Errorf("401 without a Bearer challenge: %q", r.header.Get("WWW-Authenticate"))
			}
			wrong := []caller{mcpOnly, writeOnly}
			if write {
				wrong = []caller{mcpOnly, readOnly}
			}
			if op == "GET /whoami" {
				wrong = nil // any credential may ask who it is (TestWhoami)
			}
			for _, as := range wrong {
				r := send(as)
				if r.status != http.StatusForbidden || r.errorBody(t).Code != admin.CodeForbidden {
					t.Errorf("as %s: %d %s, want 403 forbidden", as.id, r.status, r.body)
				}
				if !strings.Contains(r.header.Get("WWW-Authenticate"), "insufficient_scope") {
					t.Errorf("403 without an insufficient_scope challenge: %q", r.header.Get("WWW-Authenticate"))
				}
			}
			right := readOnly
			if write {
				right = writeOnly
			}
			r = send(right)
			switch {
			case r.status == http.StatusUnauthorized || r.status == http.StatusForbidden:
				t.Errorf("as %s: %d %s, want the route to run", right.id, r.status, r.body)
			case write && (r.status != http.StatusBadRequest || !strings.Contains(r.errorBody(t).Message, "unknown field")):
				t.Errorf("write with an unknown field: %d %s, want 400 naming the field", r.status, r.body)
			case !write && r.status >= 500:
				t.Errorf("read: %d %s", r.status, r.body)
			}
			if anon := send(caller{id: agentsmcp.AnonymousPrincipal, scopes: agentsmcp.Scopes}); anon.status == http.StatusUnauthorized || anon.status == http.StatusForbidden {
				t.Errorf("the anonymous principal (every scope) was refused: %d %s", anon.status, anon.body)
			}
		})
	}

	// Every write attempt was audited, the refused ones as denied.
	denied := map[string]int{}
	for _, a := range e.audit.all() {
		if a.Kind != agentsmcp.AuditAdminWrite || a.Transport != "admin" || !strings.HasPrefix(a.Target, "POST "+admin.Prefix) && !strings.HasPrefix(a.Target, "DELETE "+admin.Prefix) {
			t.Errorf("unexpected audit entry %+v", a)
		}
		if a.Outcome == agentsmcp.AuditDenied {
			denied[a.Principal]++
			if a.Error == "" {
				t.Errorf("denied entry without error: %+v", a)
			}
		}
	}
	writes := 0
	for _, op := range ops {
		if !strings.HasPrefix(op, "GET ") {
			writes++
		}
	}
	for _, who := range []string{"", mcpOnly.id, readOnly.id} {
		if denied[who] != writes {
			t.Errorf("%d denied writes audited for principal %q, want %d (one per write route)", denied[who], who, writes)
		}
	}
}

func TestUnknownRoutesAndMethods(t *testing.T) {
	e := newEnv(t)
	e.expectError(http.StatusNotFound, admin.CodeNotFound, request{method: "GET", path: admin.Prefix + "/nope", as: adminAll})
	e.expectError(http.StatusNotFound, admin.CodeNotFound, request{method: "GET", path: "/admin/v1/nope/deeper", as: adminAll})
	r := e.expect(http.StatusMethodNotAllowed, request{method: "PUT", path: admin.Prefix + "/insights", as: adminAll})
	if r.errorBody(t).Code != admin.CodeInvalid {
		t.Fatalf("405 body: %s", r.body)
	}
	// Ids that cannot exist are not found without asking a store.
	e.expectError(http.StatusNotFound, admin.CodeNotFound, request{method: "GET", path: admin.Prefix + "/insights/lrn_01ARZ3NDEKTSV4RRFFQ69G5FAV", as: readOnly})
	e.expectError(http.StatusNotFound, admin.CodeNotFound, request{method: "GET", path: admin.Prefix + "/upstreams/Not_A_Name", as: readOnly})
}

func TestOpenAPIIsServed(t *testing.T) {
	e := newEnv(t)
	r := e.expect(http.StatusOK, request{method: "GET", path: admin.Prefix + "/openapi.json", as: readOnly})
	var doc struct {
		OpenAPI string `json:"openapi"`
		Servers []struct {
			URL string `json:"url"`
		} `json:"servers"`
	}
	r.decode(t, &doc)
	if doc.OpenAPI != "3.1.0" || len(doc.Servers) != 1 || doc.Servers[0].URL != admin.Prefix {
		t.Fatalf("served document: openapi %q servers %+v", doc.OpenAPI, doc.Servers)
	}
	if ct := r.header.Get("Content-Type"); ct != "application/json" {
		t.Fatalf("Content-Type %q", ct)
	}
}

// TestWritesRefuseWhatAWebPageCouldSend: every documented write, sent as a
// web page of another site could send it (no Content-Type, a form type, a
// foreign Origin), is refused before it runs, even by the anonymous
// principal that has every scope; with JSON and the server's own origin
// it runs (here: is refused by strict decoding, so nothing changes).
func TestWritesRefuseWhatAWebPageCouldSend(t *testing.T) {
	e := newEnv(t)
	e.addFixtureUpstream("fx")
	anon := caller{id: agentsmcp.AnonymousPrincipal, scopes: agentsmcp.Scopes}
	host := strings.TrimPrefix(e.srv.URL, "http://")
	writes := 0
	for _, op := range documentedOperations(t) {
		method, path, _ := strings.Cut(op, " ")
		if method == http.MethodGet {
			continue
		}
		writes++
		url := concretePath(path)
		t.Run(op, func(t *testing.T) {
			for _, c := range []struct {
				name        string
				contentType string
				origin      string
				body        any
				status      int
				code        string
			}{
				{"no body, no Content-Type", noContentType, "", nil, http.StatusUnsupportedMediaType, admin.CodeInvalid},
				{"form type", "application/x-www-form-urlencoded", "", "a=b", http.StatusUnsupportedMediaType, admin.CodeInvalid},
				{"text/plain", "text/plain", "", `{"unexpected":true}`, http.StatusUnsupportedMediaType, admin.CodeInvalid},
				{"foreign Origin", "", "https://evil.example", map[string]any{"unexpected": true}, http.StatusForbidden, admin.CodeForbidden},
				{"loopback Origin of another port", "", "http://127.0.0.1:1", map[string]any{"unexpected": true}, http.StatusForbidden, admin.CodeForbidden},
				{"opaque Origin", "", "null", map[string]any{"unexpected": true}, http.StatusForbidden, admin.CodeForbidden},
				{"own Origin", "", "http://" + host, map[string]any{"unexpected": true}, http.StatusBadRequest, admin.CodeInvalid},
				{"no Origin", "", "", map[string]any{"unexpected": true}, http.StatusBadRequest, admin.CodeInvalid},
			} {
				req := request{method: method, path: url, as: anon, body: c.body, contentType: c.contentType}
				if c.origin != "" {
					req.header = map[string]string{"Origin": c.origin}
				}
				r := e.do(req)
				if r.status != c.status || r.errorBody(t).Code != c.code {
					t.Errorf("%s: %d %s, want %d %s", c.name, r.status, r.body, c.status, c.code)
				}
			}
		})
	}
	if writes < 8 {
		t.Fatalf("only %d documented writes", writes)
	}
}
