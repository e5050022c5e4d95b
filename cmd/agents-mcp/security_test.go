package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/memory/sqlite"
)

// bearerTransport adds a bearer credential to every request.
type bearerTransport struct{ token string }

func (b bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

func connectWithKey(t *testing.T, base, key string) (*mcp.ClientSession, error) {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "security-test", Version: "1"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: base + "/mcp", HTTPClient: &http.Client{Transport: bearerTransport{key}}}, nil)
	if err == nil {
		t.Cleanup(func() { cs.Close() })
	}
	return cs, err
}

// TestServeEnforcesScopesAllowlistsRateLimitsAndAudits drives the real
// serve command with keys of different powers, then reads the audit trail
// from its database.
func TestServeEnforcesScopesAllowlistsRateLimitsAndAudits(t *testing.T) {
	dir := t.TempDir()
	cfgFile := filepath.Join(dir, "agents-mcp.yaml")
	if err := os.WriteFile(cfgFile, []byte(`
auth:
  api_keys:
    - name: narrow
      key: narrow-key-0123456789
      scopes: [mcp]
      tools: ["store_insight", "search_*"]
    - name: reader
      key: reader-key-0123456789
      scopes: [admin:read]
    - name: slow
      key: slow-key-0123456789
      scopes: [mcp]
      rate_limit: 0.001
      burst: 2
`), 0o600); err != nil {
		t.Fatal(err)
	}
	dataDir := filepath.Join(dir, "data")
	base, stop, code, logs := startServe(t, nil, "--config", cfgFile, "--data-dir", dataDir)

	// No credential: 401 with a challenge and a JSON error.
	resp, err := http.Post(base+"/mcp", "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized || !strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), "Bearer") || !strings.Contains(string(body), `"unauthenticated"`) {
		t.Errorf("no credential: %d %q %s", resp.StatusCode, resp.Header.Get("WWW-Authenticate"), body)
	}
	if resp.Header.Get(agentsmcp.RequestIDHeader) == "" {
		t.Error("no request id on the answer")
	}

	// A key without scope mcp: 403.
	if _, err := connectWithKey(t, base, "reader-key-0123456789"); err == nil || !strings.Contains(err.Error(), "403") && !strings.Contains(strings.ToLower(err.Error()), "forbidden") {
		t.Errorf("admin:read key on /mcp: %v; want 403", err)
	}

	// The narrow key sees and calls only its tools.
	cs, err := connectWithKey(t, base, "narrow-key-0123456789")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	list, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range list.Tools {
		names = append(names, tool.Name)
	}
	if !slices.Equal(names, []string{"search_tools", "store_insight"}) {
		t.Errorf("narrow key lists %v", names)
	}
	secret := "sk-live-0123456789abcdefghijklmnop"
	if res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "store_insight", Arguments: map[string]any{
		"text": "deploys fail on Fridays; api_key " + secret, "type": "pitfall",
	}}); err != nil || res.IsError {
		t.Fatalf("allowed call: %v %+v", err, res)
	}
	// The call is in /admin/v1/audit and /admin/v1/tools/performance
	// right after it returned: the trail and the counters are written in
	// batches, and their reads first write what is pending.
	for _, read := range []struct{ path, want string }{
		{"/admin/v1/audit?kind=tool_call&target=store_insight", `"target":"store_insight"`},
		{"/admin/v1/tools/performance?tool=store_insight", `"calls":1`},
	} {
		req, _ := http.NewRequest(http.MethodGet, base+read.path, nil)
		req.Header.Set("Authorization", "Bearer reader-key-0123456789")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || !strings.Contains(string(b), read.want) {
			t.Errorf("GET %s right after the call: %d %s; want %s", read.path, resp.StatusCode, b, read.want)
		}
	}
	_, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "query_memory", Arguments: map[string]any{"query": "x"}})
	var rpcErr *jsonrpc.Error
	if !errors.As(err, &rpcErr) || rpcErr.Code != jsonrpc.CodeInvalidParams {
		t.Errorf("call outside the allowlist: %v", err)
	}

	// The slow key: two requests, then 429 with Retry-After.
	var got429 *http.Response
	for range 5 {
		req, _ := http.NewRequest(http.MethodPost, base+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`))
		req.Header.Set("Authorization", "Bearer slow-key-0123456789")
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode == http.StatusTooManyRequests {
			got429 = resp
			break
		}
	}
	if got429 == nil || got429.Header.Get("Retry-After") == "" {
		t.Errorf("the slow key was never limited with a Retry-After: %+v", got429)
	}

	// Metrics count the call (read with admin:read: keys are configured).
	mreq, _ := http.NewRequest(http.MethodGet, base+"/metrics", nil)
	mreq.Header.Set("Authorization", "Bearer reader-key-0123456789")
	mresp, err := http.DefaultClient.Do(mreq)
	if err != nil {
		t.Fatal(err)
	}
	metrics, _ := io.ReadAll(mresp.Body)
	mresp.Body.Close()
	if !strings.Contains(string(metrics), `agents_mcp_tool_calls_total{`) || !strings.Contains(string(metrics), `tool="store_insight"`) || !strings.Contains(string(metrics), "agents_mcp_rate_limited_requests_total") {
		t.Errorf("metrics lack the tool call or the rate limit:\n%.2000s", metrics)
	}

	// The admin API: the reader key reads, the narrow key may not.
	adminGet := func(path, key string) (int, string) {
		req, _ := http.NewRequest(http.MethodGet, base+path, nil)
		req.Header.Set("Authorization", "Bearer "+key)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if status, body := adminGet("/admin/v1/learnings?q=deploys", "reader-key-0123456789"); status != http.StatusOK || !strings.Contains(body, `"items"`) {
		t.Errorf("GET /admin/v1/learnings with admin:read: %d %s", status, body)
	}
	if status, body := adminGet("/admin/v1/learnings", "narrow-key-0123456789"); status != http.StatusForbidden {
		t.Errorf("GET /admin/v1/learnings with scope mcp only: %d %s", status, body)
	}
	// The call shows up in /admin/v1/audit, its secret redacted.
	if status, body := adminGet("/admin/v1/audit?kind=tool_call", "reader-key-0123456789"); status != http.StatusOK ||
		!strings.Contains(body, "store_insight") || strings.Contains(body, secret) {
		t.Errorf("GET /admin/v1/audit: %d %s; want the call, without the secret", status, body)
	}

	stop()
	if c := <-code; c != 0 {
		t.Fatalf("serve exited %d:\n%s", c, logs.String())
	}
	if strings.Contains(logs.String(), secret) || strings.Contains(logs.String(), "narrow-key-0123456789") {
		t.Error("a secret reached the log")
	}

	// The audit trail, read from the server's own database.
	db, err := sqlite.Open(ctx, filepath.Join(dataDir, "agents-mcp.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	entries, _, err := db.FindAuditEntries(ctx, agentsmcp.AuditFilter{Limit: agentsmcp.MaxPageSize})
	if err != nil {
		t.Fatal(err)
	}
	var call, denied, unauthenticated *agentsmcp.AuditEntry
	for _, e := range entries {
		switch {
		case e.Kind == agentsmcp.AuditToolCall && e.Target == "store_insight":
			call = e
		case e.Kind == agentsmcp.AuditToolCall && e.Target == "query_memory":
			denied = e
		case e.Kind == agentsmcp.AuditAuthFailure && strings.Contains(e.Error, "401"):
			unauthenticated = e
		}
	}
	if call == nil || !strings.HasPrefix(call.Principal, "key:") || call.Outcome != agentsmcp.AuditOK || call.RequestID == "" || !strings.Contains(string(call.Arguments), "Fridays") ||
		call.Transport != "streamable" {
		t.Errorf("audit of the call: %+v", call)
	}
	if call != nil && strings.Contains(string(call.Arguments), secret) {
		t.Errorf("the audit trail holds the secret: %s", call.Arguments)
	}
	if denied == nil || denied.Outcome != agentsmcp.AuditDenied {
		t.Errorf("audit of the refused call: %+v", denied)
	}
	if unauthenticated == nil || unauthenticated.Outcome != agentsmcp.AuditDenied {
		t.Errorf("audit of the 401: %+v", unauthenticated)
	}
	for _, e := range entries {
		b, _ := json.Marshal(e)
		if strings.Contains(string(b), "key-0123456789") {
			t.Errorf("an audit entry holds a key: %s", b)
		}
	}
}

// TestServeAuditCallsToLog: with AGENTS_MCP_AUDIT_CALLS=log, the entry of
// a call that ran is a redacted "audit" record of the JSON log and not in
// the store, while a refused call is still stored.
func TestServeAuditCallsToLog(t *testing.T) {
	dir := t.TempDir()
	cfgFile := filepath.Join(dir, "agents-mcp.yaml")
	if err := os.WriteFile(cfgFile, []byte(`
auth:
  api_keys:
    - name: narrow
      key: narrow-key-0123456789
      scopes: [mcp, admin:read]
      tools: ["store_insight"]
`), 0o600); err != nil {
		t.Fatal(err)
	}
	dataDir := filepath.Join(dir, "data")
	base, stop, code, logs := startServe(t, map[string]string{"AGENTS_MCP_AUDIT_CALLS": "log"}, "--config", cfgFile, "--data-dir", dataDir)
	cs, err := connectWithKey(t, base, "narrow-key-0123456789")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	secret := "sk-live-0123456789abcdefghijklmnop"
	if res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "store_insight", Arguments: map[string]any{
		"text": "deploys fail on Fridays; api_key " + secret, "type": "pitfall",
	}}); err != nil || res.IsError {
		t.Fatalf("allowed call: %v %+v", err, res)
	}
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "query_memory", Arguments: map[string]any{"query": "x"}}); err == nil {
		t.Fatal("a call outside the allowlist succeeded")
	}
	stop()
	if c := <-code; c != 0 {
		t.Fatalf("serve exited %d:\n%s", c, logs.String())
	}

	var logged []map[string]any
	for _, line := range strings.Split(logs.String(), "\n") {
		var rec map[string]any
		if json.Unmarshal([]byte(line), &rec) == nil && rec["msg"] == "audit" {
			logged = append(logged, rec)
		}
	}
	if len(logged) != 1 || logged[0]["target"] != "store_insight" || logged[0]["outcome"] != "ok" ||
		!strings.HasPrefix(fmt.Sprint(logged[0]["principal"]), "key:") {
		t.Errorf("audit records in the log: %v; want the one call that ran", logged)
	}
	if strings.Contains(logs.String(), secret) {
		t.Error("the secret reached the log")
	}

	db, err := sqlite.Open(ctx, filepath.Join(dataDir, "agents-mcp.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	entries, _, err := db.FindAuditEntries(ctx, agentsmcp.AuditFilter{Kind: agentsmcp.AuditToolCall})
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 || entries[0].Target != "query_memory" || entries[0].Outcome != agentsmcp.AuditDenied {
		t.Errorf("tool call entries in the store: %+v; want only the refusal", entries)
	}
}

// TestServeReadinessAndMetricsNeedCredentials drives the real serve with
// keys configured and an upstream that cannot be reached: /healthz and a
// bare /readyz status stay open for probes, but the readiness checks (the
// database path, the upstream's name and why it fails) and /metrics (every
// tool name) need admin:read, or scope metrics for /metrics. Without keys
// (loopback) everything stays open, as before.
func TestServeReadinessAndMetricsNeedCredentials(t *testing.T) {
	dir := t.TempDir()
	cfgFile := filepath.Join(dir, "agents-mcp.yaml")
	if err := os.WriteFile(cfgFile, []byte(`
upstreams:
  - name: internal-billing
    transport: streamable
    url: http://127.0.0.1:1/mcp
auth:
  api_keys:
    - {name: bot, key: bot-key-0123456789, scopes: [mcp]}
    - {name: reader, key: reader-key-0123456789, scopes: [admin:read]}
    - {name: scraper, key: scraper-key-0123456789, scopes: [metrics]}
`), 0o600); err != nil {
		t.Fatal(err)
	}
	dataDir := filepath.Join(dir, "data")
	base, _, _, _ := startServe(t, nil, "--config", cfgFile, "--data-dir", dataDir)
	get := func(path, key string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, base+path, nil)
		if key != "" {
			req.Header.Set("Authorization", "Bearer "+key)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	// The down upstream is named, with its failure, in the checks; a
	// probe learns the status and nothing else.
	internals := []string{"internal-billing", dataDir, "127.0.0.1:1", `"checks"`, "store_insight"}
	if code, body := get("/healthz", ""); code != http.StatusOK {
		t.Errorf("/healthz without a credential: %d %s", code, body)
	}
	for _, key := range []string{"", "bot-key-0123456789", "scraper-key-0123456789"} {
		code, body := get("/readyz", key)
		if code != http.StatusOK || strings.TrimSpace(body) != `{"status":"ready"}` {
			t.Errorf("/readyz with %q: %d %s, want 200 {\"status\":\"ready\"} alone", key, code, body)
		}
		for _, s := range internals {
			if strings.Contains(body, s) {
				t.Errorf("/readyz with %q shows %q: %s", key, s, body)
			}
		}
	}
	if code, body := get("/readyz", "wrong-key-0123456789"); code != http.StatusUnauthorized {
		t.Errorf("/readyz with a wrong key: %d %s, want 401", code, body)
	}
	if code, body := get("/readyz", "reader-key-0123456789"); code != http.StatusOK ||
		!strings.Contains(body, "internal-billing") || !strings.Contains(body, `"checks"`) {
		t.Errorf("/readyz with admin:read: %d %s, want 200 with the checks", code, body)
	}

	for key, want := range map[string]int{"": http.StatusUnauthorized, "wrong-key-0123456789": http.StatusUnauthorized, "bot-key-0123456789": http.StatusForbidden} {
		code, body := get("/metrics", key)
		if code != want {
			t.Errorf("/metrics with %q: %d, want %d", key, code, want)
		}
		for _, s := range internals {
			if strings.Contains(body, s) {
				t.Errorf("/metrics with %q shows %q: %s", key, s, body)
			}
		}
	}
	for _, key := range []string{"reader-key-0123456789", "scraper-key-0123456789"} {
		if code, body := get("/metrics", key); code != http.StatusOK || !strings.Contains(body, "agents_mcp_") {
			t.Errorf("/metrics with %q: %d %.300s, want 200 and the metrics", key, code, body)
		}
	}
	// A scraper's key reads /metrics and nothing more.
	if code, _ := get("/admin/v1/upstreams", "scraper-key-0123456789"); code != http.StatusForbidden {
		t.Errorf("the admin API with scope metrics: %d, want 403", code)
	}

	// Without keys, on loopback: open, with the details, as before.
	open, _, _, _ := startServe(t, nil)
	for _, path := range []string{"/readyz", "/metrics"} {
		resp, err := http.Get(open + path)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || path == "/readyz" && !strings.Contains(string(b), `"checks"`) {
			t.Errorf("%s without keys: %d %.300s, want 200 with the details", path, resp.StatusCode, b)
		}
	}
}
