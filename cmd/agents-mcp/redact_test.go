package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// adminWithKey sends an admin API request with key and returns the status and
// body.
func adminWithKey(t *testing.T, base, key, method, path string, body any) (int, string) {
	t.Helper()
	var r io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		r = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, base+path, r)
	req.Header.Set("Authorization", "Bearer "+key)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// dataDirHolds reports the files under dir whose bytes hold one of
// secrets, with the secret found.
func dataDirHolds(t *testing.T, dir string, secrets []string) []string {
	t.Helper()
	var found []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if errors.Is(err, fs.ErrNotExist) {
			return nil // a WAL checkpointed meanwhile
		}
		if err != nil {
			return err
		}
		for _, s := range secrets {
			if bytes.Contains(b, []byte(s)) {
				found = append(found, filepath.Base(path)+": "+s)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return found
}

// closingListener accepts connections on loopback and closes each at
// once: an API that is there but never answers. It stops with the test.
func closingListener(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			_ = c.Close()
		}
	}()
	t.Cleanup(func() { _ = ln.Close(); <-done })
	return "http://" + ln.Addr().String()
}

// refusedURL is the URL of a loopback port nobody listens on.
func refusedURL(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	return "http://" + addr
}

// TestToolErrorsNeverShowTheSharedCredentialNorAnotherCallersArguments
// performs the error-text leak against the real serve: an HTTP tool whose
// shared api_key credential goes in the query parameter "k" (a name no list
// of usual names knows) calls an API that is down, once refused and once
// closing the connection. The caller's error named the full URL with
// k=<key>; the same text was stored in tool performance and shown to every
// other principal by get_tool_performance (with the first caller's path
// and query values), and reached the audit trail and the log.
func TestToolErrorsNeverShowTheSharedCredentialNorAnotherCallersArguments(t *testing.T) {
	const (
		sharedKey    = "plainsharedkeyvalue" // no shape a pattern would catch: only its name says what it is
		alice        = "alice-key-0123456789"
		bob          = "bob-key-0123456789"
		admin        = "admin-key-0123456789"
		alicePrivate = "aliceprivatething"
		aliceNote    = "alicenotetext"
	)
	dir := t.TempDir()
	cfgFile := filepath.Join(dir, "agents-mcp.yaml")
	endpoints := `
    endpoints:
      - { name: get_item, method: GET, path: '/items/{id}', query: { note: a note } }`
	if err := os.WriteFile(cfgFile, []byte(`
auth:
  api_keys:
    - { name: alice, key: `+alice+`, scopes: [mcp] }
    - { name: bob, key: `+bob+`, scopes: [mcp] }
    - { name: admin, key: `+admin+`, scopes: ["admin:read", "admin:write"] }
http_tools:
  - name: shop
    base_url: `+closingListener(t)+endpoints+`
  - name: dead
    base_url: `+refusedURL(t)+endpoints+`
`), 0o600); err != nil {
		t.Fatal(err)
	}
	dataDir := filepath.Join(dir, "data")
	base, stop, code, logs := startServe(t, nil, "--config", cfgFile, "--data-dir", dataDir)
	for _, source := range []string{"shop", "dead"} {
		if status, body := adminWithKey(t, base, admin, http.MethodPost, "/admin/v1/credentials", map[string]any{
			"integration": source, "kind": "api_key", "query": "k", "value": sharedKey,
		}); status != http.StatusCreated {
			t.Fatalf("POST /admin/v1/credentials for %s: %d %s", source, status, body)
		}
	}

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	as, err := connectWithKey(t, base, alice)
	if err != nil {
		t.Fatal(err)
	}
	for tool, want := range map[string]string{"shop__get_item": "GET /items/{id}: ", "dead__get_item": "connection refused"} {
		res, err := as.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: map[string]any{"id": alicePrivate, "note": aliceNote}})
		if err != nil {
			t.Fatalf("%s: %v", tool, err)
		}
		text := textOf(res)
		if !res.IsError || !strings.Contains(text, want) {
			t.Errorf("%s: %v %q; want an error result with %q", tool, res.IsError, text, want)
		}
		// The caller's own error names the operation, not the URL: its
		// values are the caller's, but the URL holds the shared key.
		for _, leak := range []string{sharedKey, "k=", "?", "127.0.0.1:"} {
			if strings.Contains(text, leak) && !(leak == "127.0.0.1:" && strings.Contains(text, "dial tcp")) {
				t.Errorf("%s: the error %q holds %q", tool, text, leak)
			}
		}
	}

	// Another principal reads the shared tool performance.
	bs, err := connectWithKey(t, base, bob)
	if err != nil {
		t.Fatal(err)
	}
	res, err := bs.CallTool(ctx, &mcp.CallToolParams{Name: "get_tool_performance", Arguments: map[string]any{}})
	if err != nil || res.IsError {
		t.Fatalf("get_tool_performance: %v %s", err, textOf(res))
	}
	perf, _ := json.Marshal(res.StructuredContent)
	for _, leak := range []string{sharedKey, alicePrivate, aliceNote, "/items/"} {
		if strings.Contains(string(perf), leak) || strings.Contains(textOf(res), leak) {
			t.Errorf("bob's get_tool_performance holds %q: %s", leak, perf)
		}
	}
	var figures struct {
		Tools []struct {
			Tool         string           `json:"tool"`
			CommonErrors map[string]int64 `json:"commonErrors"`
		} `json:"tools"`
	}
	_ = json.Unmarshal(perf, &figures)
	classes := map[string]map[string]int64{}
	for _, f := range figures.Tools {
		classes[f.Tool] = f.CommonErrors
	}
	if classes["dead__get_item"]["connection refused"] != 1 || len(classes["shop__get_item"]) != 1 {
		t.Errorf("common errors %v; want one class per tool, the refused one \"connection refused\"", classes)
	}

	// The admin views, the log and the store hold the key nowhere.
	for _, path := range []string{"/admin/v1/tools/performance", "/admin/v1/audit?kind=tool_call"} {
		status, body := adminWithKey(t, base, admin, http.MethodGet, path, nil)
		if status != http.StatusOK || strings.Contains(body, sharedKey) {
			t.Errorf("GET %s: %d, holds the key: %v", path, status, strings.Contains(body, sharedKey))
		}
		if path == "/admin/v1/tools/performance" && strings.Contains(body, alicePrivate) {
			t.Errorf("GET %s holds alice's arguments: %s", path, body)
		}
	}
	if found := dataDirHolds(t, dataDir, []string{sharedKey}); len(found) > 0 {
		t.Errorf("the data dir holds the key in clear: %v", found)
	}
	stop()
	if c := <-code; c != 0 {
		t.Fatalf("serve exited %d:\n%s", c, logs.String())
	}
	if strings.Contains(logs.String(), sharedKey) {
		t.Error("the shared key reached the log")
	}
}

// TestPasswordInARequestStaysOutOfFamiliesPlansThoughtsAndTheStore
// performs the prose-secret leak against the real serve (agents engine,
// SQLite store): "Delete post 5 password=hunter2" had the task family
// "delete post <num> password hunter2", which was the plan's goal
// (GET /admin/v1/plans/{id}), in the thought's reasoning
// (/admin/v1/thoughts/{id}) and in generate_thoughts' result, and in clear
// in the SQLite WAL. Every wording of a secret the request's own
// redaction knows must stay out of every text derived from the request.
func TestPasswordInARequestStaysOutOfFamiliesPlansThoughtsAndTheStore(t *testing.T) {
	const key = "owner-key-0123456789"
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodDelete {
			w.WriteHeader(http.StatusNoContent)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"id":"`+strings.TrimPrefix(r.URL.Path, "/posts/")+`","title":"hello"}`)
	}))
	t.Cleanup(api.Close)
	dir := t.TempDir()
	cfgFile := filepath.Join(dir, "agents-mcp.yaml")
	if err := os.WriteFile(cfgFile, []byte(`
auth:
  api_keys:
    - { name: owner, key: `+key+`, scopes: [mcp, "admin:read"] }
http_tools:
  - name: blog
    base_url: `+api.URL+`
    endpoints:
      - { name: delete_post, description: Delete a blog post by its id, method: DELETE, path: '/posts/{id}' }
      - { name: get_post, description: Get a blog post by its id, method: GET, path: '/posts/{id}' }
`), 0o600); err != nil {
		t.Fatal(err)
	}
	dataDir := filepath.Join(dir, "data")
	base, stop, code, logs := startServe(t, nil, "--config", cfgFile, "--data-dir", dataDir)
	cs, err := connectWithKey(t, base, key)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	call := func(tool string, args map[string]any) map[string]any {
		t.Helper()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
		if err != nil || res.IsError {
			t.Fatalf("%s %v: %v %s", tool, args, err, textOf(res))
		}
		out, _ := res.StructuredContent.(map[string]any)
		return out
	}
	secrets := []string{"hunter2", "tr0ub4dor", "swordfish", "opensesame", "abc123xyz", "tok3nvalue"}
	planned := []string{
		"Delete post 5 password=hunter2",
		"Delete post 6 password: tr0ub4dor",
		"Delete post 7 password swordfish",
		"Delete post 8, my password is opensesame",
	}
	var seen []string // what the tools answered and the admin API showed
	var plans, thoughts []string
	for _, request := range planned {
		th := call("generate_thoughts", map[string]any{"request": request})
		b, _ := json.Marshal(th)
		seen = append(seen, string(b))
		thought, _ := th["thought"].(map[string]any)
		thoughtID, _ := thought["id"].(string)
		reasoning, _ := thought["reasoning"].(string)
		if thoughtID == "" || !strings.Contains(reasoning, "<secret>") {
			t.Errorf("generate_thoughts(%q): thought %q, reasoning %q; want the family with <secret>", request, thoughtID, reasoning)
		}
		pl := call("generate_plan", map[string]any{"thoughtId": thoughtID})
		b, _ = json.Marshal(pl)
		seen = append(seen, string(b))
		plan, _ := pl["plan"].(map[string]any)
		planID, _ := plan["id"].(string)
		plans, thoughts = append(plans, planID), append(thoughts, thoughtID)
		if goal, _ := plan["goal"].(string); !strings.Contains(goal, "<secret>") {
			t.Errorf("generate_plan(%q): goal %q; want <secret> in it", request, goal)
		}
	}
	// Tasks that run to their end: learnings, plan patterns and insights
	// are keyed by the family.
	for _, request := range []string{"Get post 5 with api key abc123xyz", "Get post 6 token=tok3nvalue"} {
		out := call("run_task", map[string]any{"request": request})
		task, _ := out["task"].(map[string]any)
		if task["status"] == "paused" {
			// The post's id is asked for: never taken from the secret.
			out = call("resume_task", map[string]any{"taskId": task["id"], "inputs": map[string]any{"id": "5"}})
			task, _ = out["task"].(map[string]any)
			for deadline := time.Now().Add(15 * time.Second); task["status"] == "pending" || task["status"] == "running"; {
				if time.Now().After(deadline) {
					break
				}
				time.Sleep(20 * time.Millisecond)
				out = call("get_task", map[string]any{"taskId": task["id"]})
				task, _ = out["task"].(map[string]any)
			}
		}
		b, _ := json.Marshal(out)
		seen = append(seen, string(b))
		if task["status"] != "succeeded" {
			t.Errorf("run_task(%q): %s; want it to succeed", request, b)
		}
	}
	for _, id := range plans {
		_, body := adminWithKey(t, base, key, http.MethodGet, "/admin/v1/plans/"+id, nil)
		seen = append(seen, body)
		if !strings.Contains(body, `"goal":"delete post \u003cnum\u003e password \u003csecret\u003e"`) &&
			!strings.Contains(body, `"goal":"delete post <num> password <secret>"`) {
			t.Errorf("GET /admin/v1/plans/%s: %s; want the goal \"delete post <num> password <secret>\"", id, body)
		}
	}
	for _, id := range thoughts {
		_, body := adminWithKey(t, base, key, http.MethodGet, "/admin/v1/thoughts/"+id, nil)
		seen = append(seen, body)
	}
	deadline := time.Now().Add(15 * time.Second)
	for {
		_, body := adminWithKey(t, base, key, http.MethodGet, "/admin/v1/learnings", nil)
		if strings.Count(body, `"taskId"`) >= 2 {
			seen = append(seen, body)
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the two tasks were not learned within 15 s: %s", body)
		}
		time.Sleep(50 * time.Millisecond)
	}
	for _, path := range []string{"/admin/v1/tasks", "/admin/v1/patterns", "/admin/v1/insights", "/admin/v1/audit"} {
		status, body := adminWithKey(t, base, key, http.MethodGet, path, nil)
		if status != http.StatusOK {
			t.Errorf("GET %s: %d %s", path, status, body)
		}
		seen = append(seen, body)
	}
	for _, s := range secrets {
		for _, text := range seen {
			if strings.Contains(text, s) {
				t.Errorf("%q is shown: %.600s", s, text[max(strings.Index(text, s)-300, 0):])
				break
			}
		}
	}
	// The store's files while the server runs (the WAL holds the latest
	// writes), then after it stopped (checkpointed).
	if found := dataDirHolds(t, dataDir, secrets); len(found) > 0 {
		t.Errorf("the data dir holds secrets of the requests while serving: %v", found)
	}
	stop()
	if c := <-code; c != 0 {
		t.Fatalf("serve exited %d:\n%s", c, logs.String())
	}
	if found := dataDirHolds(t, dataDir, secrets); len(found) > 0 {
		t.Errorf("the data dir holds secrets of the requests: %v", found)
	}
}
