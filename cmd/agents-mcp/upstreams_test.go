package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestAdminUpstreamsAreSharedByReplicasAndOutliveRestarts runs two `serve`
// processes on one database (embedded FerretDB), adds an upstream through
// the admin API of one, and checks that the other serves it too, that a
// removal through the other reaches the first, that a restarted process
// serves what was added before and not a config-file upstream removed
// through the API, and that the header credential given with the upstream
// shows up in no answer and no log.
func TestAdminUpstreamsAreSharedByReplicasAndOutliveRestarts(t *testing.T) {
	if testing.Short() {
		t.Skip("starts FerretDB and server processes")
	}
	mongoURI := startReplicaFerretDB(t)
	secret := fmt.Sprintf("upstream-secret-%d", time.Now().UnixNano())
	up := startHeaderCheckingUpstream(t, secret)

	configFile := filepath.Join(t.TempDir(), "agents-mcp.yaml")
	config := fmt.Sprintf("upstreams:\n  - name: fixed\n    transport: streamable\n    url: %s\n    headers: {X-Upstream-Key: %q}\n", up, secret)
	if err := os.WriteFile(configFile, []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	env := []string{
		"MONGODB_URI=" + mongoURI, "MONGODB_DATABASE=" + fmt.Sprintf("upstreams_%d", time.Now().UnixNano()),
		"AGENTS_MCP_CONFIG=" + configFile, "AGENTS_MCP_UPSTREAM_SYNC_INTERVAL=200ms",
		// The replicas share the key that seals stored header values.
		"AGENTS_MCP_SECRETS_KEY=" + testSecretsKey,
	}
	a := startServerProcess(t, t.TempDir(), env...)
	b := startServerProcess(t, t.TempDir(), env...)

	body := fmt.Sprintf(`{"name":"shared","transport":"streamable","url":%q,"headers":{"X-Upstream-Key":%q}}`, up, secret)
	if code, got := adminDo(t, a, http.MethodPost, "/upstreams", body); code != http.StatusCreated {
		t.Fatalf("POST /upstreams on a: %d %s", code, got)
	}
	waitUpstream(t, b, "shared", true)
	// b connected with the stored header: the upstream refuses calls
	// without it, and its one tool answers through b.
	if got := callTool(t, b.client(t), "shared__whoami", map[string]any{}); fmt.Sprint(got) == "" {
		t.Fatal("no answer from the shared upstream through b")
	}

	// An upstream of the (shared) config file, removed through one
	// replica, is removed from both.
	waitUpstream(t, a, "fixed", true)
	if code, got := adminDo(t, b, http.MethodDelete, "/upstreams/fixed", ""); code != http.StatusNoContent {
		t.Fatalf("DELETE of a config-file upstream: %d %s", code, got)
	}
	waitUpstream(t, a, "fixed", false)
	if code, got := adminDo(t, b, http.MethodDelete, "/upstreams/shared", ""); code != http.StatusNoContent {
		t.Fatalf("DELETE /upstreams/shared on b: %d %s", code, got)
	}
	waitUpstream(t, a, "shared", false)

	// Added again, then a restarts: the new process serves it without
	// being told.
	if code, got := adminDo(t, b, http.MethodPost, "/upstreams", body); code != http.StatusCreated {
		t.Fatalf("POST /upstreams on b: %d %s", code, got)
	}
	if err := a.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := a.cmd.Wait(); err != nil {
		t.Fatalf("a did not stop cleanly: %v", err)
	}
	restarted := startServerProcess(t, t.TempDir(), env...)
	if code, got := adminDo(t, restarted, http.MethodGet, "/upstreams/shared", ""); code != http.StatusOK || !strings.Contains(got, `"origin":"api"`) {
		t.Errorf("after a restart, GET /upstreams/shared: %d %s", code, got)
	}
	if code, got := adminDo(t, restarted, http.MethodGet, "/upstreams/fixed", ""); code != http.StatusNotFound {
		t.Errorf("after a restart, the config-file upstream removed through the API is back: %d %s", code, got)
	}

	for name, p := range map[string]*serverProcess{"b": b, "restarted": restarted} {
		for _, path := range []string{"/upstreams", "/upstreams/shared", "/audit"} {
			if _, got := adminDo(t, p, http.MethodGet, path, ""); strings.Contains(got, secret) {
				t.Errorf("replica %s shows the upstream's header value in %s", name, path)
			}
		}
	}
	for name, p := range map[string]*serverProcess{"a": a, "b": b, "restarted": restarted} {
		if strings.Contains(p.logs.String(), secret) {
			t.Errorf("replica %s logs the upstream's header value", name)
		}
	}
}

// adminDo sends one admin API request (no credentials: a loopback server
// without keys) and returns the status and body.
func adminDo(t *testing.T, p *serverProcess, method, path, body string) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, p.base+"/admin/v1"+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if method != http.MethodGet {
		req.Header.Set("Content-Type", "application/json") // every admin write, even without a body
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	got, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(got)
}

// waitUpstream waits until p serves (present) or no longer serves the
// upstream, with its tools listed when present.
func waitUpstream(t *testing.T, p *serverProcess, name string, present bool) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		code, got := adminDo(t, p, http.MethodGet, "/upstreams/"+name, "")
		var detail struct {
			State        string
			ExposedTools []json.RawMessage
		}
		_ = json.Unmarshal([]byte(got), &detail)
		switch {
		case present && code == http.StatusOK && detail.State == "ready" && len(detail.ExposedTools) > 0:
			return
		case !present && code == http.StatusNotFound:
			return
		case time.Now().After(deadline):
			t.Fatalf("upstream %s present=%v not reached: %d %s", name, present, code, got)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// startHeaderCheckingUpstream serves an MCP server over streamable HTTP
// that answers only requests carrying X-Upstream-Key: key; its endpoint is
// returned.
func startHeaderCheckingUpstream(t *testing.T, key string) string {
	t.Helper()
	srv := mcp.NewServer(&mcp.Implementation{Name: "keyed-upstream", Version: "1"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "whoami", Description: "Names this upstream."},
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "keyed-upstream"}}}, nil, nil
		})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Upstream-Key") != key {
			http.Error(w, "missing key", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(hs.Close)
	return hs.URL + "/mcp"
}
