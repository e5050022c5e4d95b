package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestAdminHTTPToolsAreSharedByReplicas runs two `serve` processes on one
// database (embedded FerretDB) and a real HTTP API on loopback. A source
// added through the admin API of one replica is served by the other (its
// tool listed and called with the stored header), a source stored again
// with another document (a new revision) replaces the old tools on the
// other replica, a restarted replica serves what is stored, a removal
// reaches the other replica, names taken by a
// config-file source, a stored source or an upstream are refused with 409,
// bad sources with 400, and the header value shows up in no answer and no
// log.
func TestAdminHTTPToolsAreSharedByReplicas(t *testing.T) {
	if testing.Short() {
		t.Skip("starts FerretDB and server processes")
	}
	mongoURI := startReplicaFerretDB(t)
	secret := fmt.Sprintf("api-secret-%d", time.Now().UnixNano())
	api := startBlogAPI(t, secret)

	configFile := filepath.Join(t.TempDir(), "agents-mcp.yaml")
	config := fmt.Sprintf("http_tools:\n  - name: fixed\n    base_url: %s\n    endpoints:\n      - {name: get_post, method: GET, path: '/posts/{id}'}\n", api)
	if err := os.WriteFile(configFile, []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	env := []string{
		"MONGODB_URI=" + mongoURI, "MONGODB_DATABASE=" + fmt.Sprintf("httptools_%d", time.Now().UnixNano()),
		"AGENTS_MCP_CONFIG=" + configFile, "AGENTS_MCP_UPSTREAM_SYNC_INTERVAL=200ms",
		// The replicas share the key that seals stored header values.
		"AGENTS_MCP_SECRETS_KEY=" + testSecretsKey,
	}
	a := startServerProcess(t, t.TempDir(), env...)
	b := startServerProcess(t, t.TempDir(), env...)
	csA, csB := a.client(t), b.client(t)

	endpoints := fmt.Sprintf(`{"name":"blog","base_url":%q,"headers":{"X-Api-Key":%q},"timeout":"5s",
		"endpoints":[{"name":"get_post","description":"One post by id","method":"GET","path":"/posts/{id}"}]}`, api, secret)
	if code, got := adminDo(t, a, http.MethodPost, "/http-tools", endpoints); code != http.StatusCreated || !strings.Contains(got, `"origin":"api"`) {
		t.Fatalf("POST /http-tools on a: %d %s", code, got)
	}
	waitTools(t, csB, "blog__get_post", true)
	// b calls the API with the header stored by a: the API refuses
	// requests without it.
	if got := callTool(t, csB, "blog__get_post", map[string]any{"id": "7"}); got["title"] != "post 7" {
		t.Fatalf("blog__get_post through b = %v, want the title of post 7", got)
	}

	for _, tt := range []struct {
		what, path, body string
		code             int
	}{
		{"a config-file source's name", "/http-tools", strings.Replace(endpoints, `"blog"`, `"fixed"`, 1), http.StatusConflict},
		{"a stored source's name, on the other replica", "/http-tools", endpoints, http.StatusConflict},
		{"an upstream named as a stored source", "/upstreams", fmt.Sprintf(`{"name":"blog","transport":"streamable","url":"%s/mcp"}`, api), http.StatusConflict},
		{"a file of the server as the document", "/http-tools", `{"name":"files","openapi":"/etc/passwd"}`, http.StatusBadRequest},
		{"neither endpoints nor a document", "/http-tools", `{"name":"empty","base_url":"` + api + `"}`, http.StatusBadRequest},
		{"an unusable inline document", "/http-tools", `{"name":"broken","openapi_document":"openapi: 3.0.0\npaths: {}\n"}`, http.StatusBadRequest},
		{"an unknown field", "/http-tools", `{"name":"odd","command":"sh"}`, http.StatusBadRequest},
	} {
		if code, got := adminDo(t, b, http.MethodPost, tt.path, tt.body); code != tt.code {
			t.Errorf("POST %s with %s: %d %s, want %d", tt.path, tt.what, code, got, tt.code)
		}
	}
	if code, got := adminDo(t, b, http.MethodDelete, "/http-tools/fixed", ""); code != http.StatusConflict {
		t.Errorf("DELETE of a config-file source: %d %s, want 409", code, got)
	}

	// Removed on b and stored again with an inline document: a serves the
	// new tools and not the old one.
	if code, got := adminDo(t, b, http.MethodDelete, "/http-tools/blog", ""); code != http.StatusNoContent {
		t.Fatalf("DELETE /http-tools/blog on b: %d %s", code, got)
	}
	doc, _ := json.Marshal(blogOpenAPI)
	inline := fmt.Sprintf(`{"name":"blog","base_url":%q,"headers":{"X-Api-Key":%q},"openapi_document":%s}`, api, secret, doc)
	if code, got := adminDo(t, b, http.MethodPost, "/http-tools", inline); code != http.StatusCreated || !strings.Contains(got, `"kind":"openapi"`) {
		t.Fatalf("POST /http-tools with an inline document on b: %d %s", code, got)
	}
	waitTools(t, csA, "blog__readPost", true)
	waitTools(t, csA, "blog__get_post", false)
	if got := callTool(t, csA, "blog__readPost", map[string]any{"id": "9"}); got["title"] != "post 9" {
		t.Fatalf("blog__readPost through a = %v, want the title of post 9", got)
	}

	// a restarts: the new process serves the stored source from its
	// start-up, without waiting for a sync interval.
	if err := a.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := a.cmd.Wait(); err != nil {
		t.Fatalf("a did not stop cleanly: %v", err)
	}
	restarted := startServerProcess(t, t.TempDir(), env...)
	if code, got := adminDo(t, restarted, http.MethodGet, "/http-tools/blog", ""); code != http.StatusOK || !strings.Contains(got, `"origin":"api"`) {
		t.Errorf("after a restart, GET /http-tools/blog: %d %s", code, got)
	}
	if got := callTool(t, restarted.client(t), "blog__readPost", map[string]any{"id": "3"}); got["title"] != "post 3" {
		t.Errorf("blog__readPost through the restarted replica = %v", got)
	}

	if code, got := adminDo(t, restarted, http.MethodDelete, "/http-tools/blog", ""); code != http.StatusNoContent {
		t.Fatalf("DELETE /http-tools/blog on the restarted replica: %d %s", code, got)
	}
	waitTools(t, csB, "blog__readPost", false)
	if code, got := adminDo(t, b, http.MethodDelete, "/http-tools/blog", ""); code != http.StatusNotFound {
		t.Errorf("DELETE of a removed source: %d %s, want 404", code, got)
	}

	for name, p := range map[string]*serverProcess{"b": b, "restarted": restarted} {
		for _, path := range []string{"/http-tools", "/audit"} {
			if _, got := adminDo(t, p, http.MethodGet, path, ""); strings.Contains(got, secret) {
				t.Errorf("replica %s shows the source's header value in %s", name, path)
			}
		}
	}
	for name, p := range map[string]*serverProcess{"a": a, "b": b, "restarted": restarted} {
		if strings.Contains(p.logs.String(), secret) {
			t.Errorf("replica %s logs the source's header value", name)
		}
	}
}

// blogOpenAPI describes the API of startBlogAPI, with another name for its
// one operation than the endpoints' get_post, so that a test can tell
// which definition a replica serves.
var blogOpenAPI = `openapi: 3.0.3
info: {title: blog, version: "1"}
paths:
  /posts/{id}:
    get:
      operationId: readPost
      parameters:
        - {name: id, in: path, required: true, schema: {type: string}}
      responses:
        "200":
          description: the post
          content:
            application/json:
              schema: {type: object, properties: {id: {type: string}, title: {type: string}}}
`

// startBlogAPI serves GET /posts/{id} on loopback, answering only requests
// that carry X-Api-Key: key; its base URL is returned.
func startBlogAPI(t *testing.T, key string) string {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("GET /posts/{id}", func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Api-Key") != key {
			http.Error(w, "missing key", http.StatusUnauthorized)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]string{"id": r.PathValue("id"), "title": "post " + r.PathValue("id")})
	})
	hs := httptest.NewServer(mux)
	t.Cleanup(hs.Close)
	return hs.URL
}

// waitTools waits until tools/list through cs lists (present) or no longer
// lists the tool named name.
func waitTools(t *testing.T, cs *mcp.ClientSession, name string, present bool) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
		res, err := cs.ListTools(ctx, nil)
		cancel()
		if err != nil {
			t.Fatalf("tools/list: %v", err)
		}
		listed := slices.ContainsFunc(res.Tools, func(tool *mcp.Tool) bool { return tool.Name == name })
		if listed == present {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("tool %s listed=%v after 15 s, want %v", name, listed, present)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
