package httptools_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/httptools"
	"github.com/agents-mcp/agents-mcp/internal/toolschema"
	"github.com/agents-mcp/agents-mcp/memory/sqlite"
	"github.com/agents-mcp/agents-mcp/router"
)

// replica is one server's view: its router, its sources and the shared
// set over a store that other replicas use too.
type replica struct {
	router  *router.Router
	sources *httptools.Sources
	shared  *httptools.SharedSources
}

func newReplica(store agentsmcp.UpstreamService) *replica {
	r := router.New(router.Options{})
	s := httptools.NewSources(r, httptools.Options{})
	return &replica{router: r, sources: s, shared: httptools.NewSharedSources(s, store, nil)}
}

func (r *replica) has(tool string) bool { _, ok := r.router.ToolSource(tool); return ok }

func (r *replica) sync(t *testing.T) {
	t.Helper()
	if err := r.shared.Sync(t.Context()); err != nil {
		t.Fatalf("Sync: %v", err)
	}
}

func openStore(t *testing.T) *sqlite.DB {
	t.Helper()
	db, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "agents-mcp.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return db
}

const readPostDoc = `{"openapi":"3.0.3","info":{"title":"blog","version":"1"},"paths":{"/posts/{id}":{"get":{"operationId":"readPost",
"parameters":[{"name":"id","in":"path","required":true,"schema":{"type":"string"}}],"responses":{"200":{"description":"ok"}}}}}}`

func blogAPI(t *testing.T) string {
	t.Helper()
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]string{"path": r.URL.Path})
	}))
	t.Cleanup(hs.Close)
	return hs.URL
}

func endpointsSource(name, base string) httptools.Source {
	return httptools.Source{Name: name, BaseURL: base, Headers: map[string]string{"X-Api-Key": "k"},
		Endpoints: []httptools.Endpoint{{Name: "get_post", Method: "GET", Path: "/posts/{id}"}}}
}

// TestSharedSourcesFollowTheStore checks that a replica loads what another
// stored, loads a definition stored again under a new revision even when
// it never saw it missing, and drops what was removed.
func TestSharedSourcesFollowTheStore(t *testing.T) {
	store := openStore(t)
	base := blogAPI(t)
	a, b := newReplica(store), newReplica(store)

	if err := a.shared.Add(t.Context(), endpointsSource("blog", base)); err != nil {
		t.Fatalf("Add: %v", err)
	}
	if !a.has("blog__get_post") {
		t.Fatal("a does not serve the source it added")
	}
	if b.has("blog__get_post") {
		t.Fatal("b serves the source before its Sync")
	}
	b.sync(t)
	if !b.has("blog__get_post") {
		t.Fatal("b does not serve the stored source after Sync")
	}

	// Removed and added again with another document between two of b's
	// Syncs: only the revision tells b.
	if err := a.shared.Remove(t.Context(), "blog"); err != nil {
		t.Fatalf("Remove: %v", err)
	}
	src := httptools.Source{Name: "blog", BaseURL: base, OpenAPIDocument: readPostDoc}
	if err := a.shared.Add(t.Context(), src); err != nil {
		t.Fatalf("Add again: %v", err)
	}
	b.sync(t)
	if !b.has("blog__readPost") || b.has("blog__get_post") {
		t.Fatalf("after a new revision, b serves readPost %v and get_post %v; want the new tools only",
			b.has("blog__readPost"), b.has("blog__get_post"))
	}
	if st := b.shared.Statuses(); len(st) != 1 || st[0].Origin != httptools.OriginAPI || st[0].Kind != "openapi" || st[0].Tools != 1 {
		t.Errorf("b's statuses = %+v, want blog from the API, openapi, one tool", st)
	}

	if err := a.shared.Remove(t.Context(), "blog"); err != nil {
		t.Fatalf("Remove: %v", err)
	}
	b.sync(t)
	if b.has("blog__readPost") {
		t.Fatal("b still serves a source removed from the store")
	}
	if err := b.shared.Remove(t.Context(), "blog"); agentsmcp.ErrorCode(err) != agentsmcp.ENOTFOUND {
		t.Errorf("Remove of a removed source: %v, want ENOTFOUND", err)
	}
}

// TestSharedSourcesRefusals checks what Add and Remove refuse, and that a
// refused source is not stored.
func TestSharedSourcesRefusals(t *testing.T) {
	store := openStore(t)
	base := blogAPI(t)
	a, b := newReplica(store), newReplica(store)
	// b has a config-file source named fixed; a does not.
	if err := b.sources.Add(t.Context(), endpointsSource("fixed", base)); err != nil {
		t.Fatal(err)
	}

	// A valid document in a file of the server: only the rule, not the
	// file's content, refuses it.
	docFile := filepath.Join(t.TempDir(), "doc.json")
	if err := os.WriteFile(docFile, []byte(readPostDoc), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		what string
		src  httptools.Source
		code string
	}{
		{"a file of the server", httptools.Source{Name: "files", BaseURL: base, OpenAPI: docFile}, agentsmcp.EINVALID},
		{"a relative file", httptools.Source{Name: "files", BaseURL: base, OpenAPI: "doc.json"}, agentsmcp.EINVALID},
		{"a document with no operation", httptools.Source{Name: "empty", OpenAPIDocument: `{"openapi":"3.0.3","info":{"title":"x","version":"1"},"paths":{}}`}, agentsmcp.EINVALID},
		{"a document that does not parse", httptools.Source{Name: "broken", OpenAPIDocument: "{"}, agentsmcp.EINVALID},
		{"a document both inline and by URL", httptools.Source{Name: "both", OpenAPI: base + "/doc", OpenAPIDocument: readPostDoc}, agentsmcp.EINVALID},
		{"the name of a config-file source", endpointsSource("fixed", base), agentsmcp.ECONFLICT},
	} {
		if err := b.shared.Add(t.Context(), tt.src); agentsmcp.ErrorCode(err) != tt.code {
			t.Errorf("Add of %s: %v, want %s", tt.what, err, tt.code)
		}
	}
	if defs, err := store.ListUpstreamDefinitions(t.Context(), agentsmcp.UpstreamKindHTTP); err != nil || len(defs) != 0 {
		t.Fatalf("refused sources were stored: %d, %v", len(defs), err)
	}
	if err := b.shared.Remove(t.Context(), "fixed"); agentsmcp.ErrorCode(err) != agentsmcp.ECONFLICT {
		t.Errorf("Remove of a config-file source: %v, want ECONFLICT", err)
	}
	if !b.has("fixed__get_post") {
		t.Fatal("the config-file source is gone after a refused Remove")
	}

	// A stored source whose name a config-file source holds on b is left
	// aside there; b keeps its own.
	if err := a.shared.Add(t.Context(), httptools.Source{Name: "fixed", BaseURL: base, OpenAPIDocument: readPostDoc}); err != nil {
		t.Fatalf("Add on a: %v", err)
	}
	b.sync(t)
	if !b.has("fixed__get_post") || b.has("fixed__readPost") {
		t.Errorf("b serves get_post %v and readPost %v; want its config file's source only", b.has("fixed__get_post"), b.has("fixed__readPost"))
	}
	if st := b.shared.Statuses(); len(st) != 1 || st[0].Origin != httptools.OriginConfig {
		t.Errorf("b's statuses = %+v, want fixed from the config file", st)
	}
	// An MCP upstream holds the name in the store: refused.
	if err := store.CreateUpstreamDefinition(t.Context(), &agentsmcp.UpstreamDefinition{Name: "mcp-one", Config: json.RawMessage(`{"url":"https://x.example"}`)}); err != nil {
		t.Fatal(err)
	}
	if err := a.shared.Add(t.Context(), endpointsSource("mcp-one", base)); agentsmcp.ErrorCode(err) != agentsmcp.ECONFLICT {
		t.Errorf("Add of an upstream's name: %v, want ECONFLICT", err)
	}
	if a.has("mcp-one__get_post") {
		t.Error("a serves a source refused for its name")
	}
}

// TestInlineDocumentReadsNoFile checks that a document given inline (as
// through the admin API) cannot make the server read its files through a
// $ref, even with allow_remote_refs, while the same document read from a
// file of the config does follow it (so the check can see a file read).
func TestInlineDocumentReadsNoFile(t *testing.T) {
	dir := t.TempDir()
	schemaFile := filepath.Join(dir, "schema.json")
	if err := os.WriteFile(schemaFile, []byte(`{"type":"object","properties":{"from_the_file":{"type":"string"}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	doc := `{"openapi":"3.0.3","info":{"title":"t","version":"1"},"paths":{"/things":{"post":{"operationId":"make",
"requestBody":{"content":{"application/json":{"schema":{"$ref":"` + schemaFile + `"}}}},"responses":{"200":{"description":"ok"}}}}}}`
	docFile := filepath.Join(dir, "doc.json")
	if err := os.WriteFile(docFile, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	base := blogAPI(t)
	for _, tt := range []struct {
		what     string
		src      httptools.Source
		readFile bool
	}{
		{"a config file's document", httptools.Source{Name: "cfg", BaseURL: base, OpenAPI: docFile, AllowRemoteRefs: true}, true},
		{"an inline document", httptools.Source{Name: "inline", BaseURL: base, OpenAPIDocument: doc, AllowRemoteRefs: true}, false},
	} {
		p, err := httptools.Load(t.Context(), tt.src, httptools.Options{})
		if err != nil {
			t.Fatalf("%s: Load: %v", tt.what, err)
		}
		tools, _ := p.Tools(t.Context())
		var schemas []string
		for _, tool := range tools {
			schemas = append(schemas, string(toolschema.JSON(tool.InputSchema)))
		}
		if got := strings.Contains(strings.Join(schemas, " "), "from_the_file"); got != tt.readFile {
			t.Errorf("%s: the schema file was read: %v, want %v (status %+v, schemas %s)", tt.what, got, tt.readFile, p.Status(), schemas)
		}
	}
}

// TestSharedSourcesRetryAnUnusableDocument checks that a replica whose
// fetch of a stored source's document failed loads it again at its next
// Sync, rather than serving no tool until the source is stored again.
func TestSharedSourcesRetryAnUnusableDocument(t *testing.T) {
	store := openStore(t)
	base := blogAPI(t)
	var down atomic.Bool
	docs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if down.Load() {
			http.Error(w, "down", http.StatusServiceUnavailable)
			return
		}
		_, _ = w.Write([]byte(readPostDoc))
	}))
	t.Cleanup(docs.Close)
	a, b := newReplica(store), newReplica(store)
	if err := a.shared.Add(t.Context(), httptools.Source{Name: "blog", BaseURL: base, OpenAPI: docs.URL + "/doc.json"}); err != nil {
		t.Fatalf("Add: %v", err)
	}
	down.Store(true)
	b.sync(t)
	if st := b.shared.Statuses(); len(st) != 1 || st[0].State != "failed" || b.has("blog__readPost") {
		t.Fatalf("with the document down, b's statuses = %+v", st)
	}
	down.Store(false)
	b.sync(t)
	if !b.has("blog__readPost") {
		t.Fatalf("b does not serve the source once its document answers: %+v", b.shared.Statuses())
	}
	b.sync(t) // a source that works is not loaded again
	if st := b.shared.Statuses(); len(st) != 1 || st[0].State != "ready" || st[0].Origin != httptools.OriginAPI {
		t.Errorf("b's statuses = %+v", st)
	}
}
