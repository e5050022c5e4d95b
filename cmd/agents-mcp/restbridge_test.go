package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/memory/sqlite"
)

// bridgeAnswer is what POST /mcp-json answers, success or error.
type bridgeAnswer struct {
	status  int
	header  http.Header
	Result  json.RawMessage `json:"result"`
	IsError bool            `json:"isError"`
	Error   struct {
		// Code is a string, but for the 403 of the Host and Origin
		// checks in front of every route, which is the JSON-RPC error of
		// /mcp.
		Code    any    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
	Tools  []string                    `json:"tools"`
	Errors []agentsmcp.ValidationIssue `json:"errors"`
	raw    string
}

func bridgePost(t *testing.T, base, key, contentType, body string, headers ...string) bridgeAnswer {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, base+"/mcp-json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		if headers[i] == "Host" {
			req.Host = headers[i+1]
		} else {
			req.Header.Set(headers[i], headers[i+1])
		}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	a := bridgeAnswer{status: resp.StatusCode, header: resp.Header, raw: string(data)}
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		t.Errorf("POST /mcp-json %s: %d with Content-Type %q; every answer is JSON: %s", body, resp.StatusCode, resp.Header.Get("Content-Type"), data)
	}
	if err := json.Unmarshal(data, &a); err != nil {
		t.Errorf("POST /mcp-json %s: %d %s: not JSON: %v", body, resp.StatusCode, data, err)
	}
	return a
}

// TestServeRESTBridge drives POST /mcp-json of the real serve command with
// keys of different powers: every status it answers, the allowlist, the
// rate limit, the Host check of /mcp, and the audit entry of a call.
func TestServeRESTBridge(t *testing.T) {
	dir := t.TempDir()
	cfgFile := filepath.Join(dir, "agents-mcp.yaml")
	if err := os.WriteFile(cfgFile, []byte(`
max_body_bytes: 4096
auth:
  api_keys:
    - name: full
      key: full-key-0123456789
      scopes: [mcp]
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
	const full, narrow = "full-key-0123456789", "narrow-key-0123456789"
	const storeCall = `{"tool":"store_insight","params":{"text":"bridge calls skip the session handshake","type":"best_practice"}}`

	// 200: the tool ran; the answer is the same as over /mcp.
	ok := bridgePost(t, base, narrow, "application/json", storeCall, agentsmcp.RequestIDHeader, "bridge-req-1")
	if ok.status != http.StatusOK || ok.IsError || len(ok.Result) == 0 || string(ok.Result) == "null" {
		t.Fatalf("allowed call: %d %s", ok.status, ok.raw)
	}
	cs, err := connectWithKey(t, base, full)
	if err != nil {
		t.Fatal(err)
	}
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "search_tools", Arguments: map[string]any{"query": "store an insight"}})
	if err != nil || res.IsError {
		t.Fatalf("search_tools over /mcp: %v %+v", err, res)
	}
	viaBridge := bridgePost(t, base, full, "application/json", `{"tool":"search_tools","params":{"query":"store an insight"}}`)
	var overMCP any = res.StructuredContent
	if overMCP == nil {
		overMCP = res.Content[0].(*mcp.TextContent).Text
	}
	want, _ := json.Marshal(overMCP)
	var got any
	_ = json.Unmarshal(viaBridge.Result, &got)
	gotJSON, _ := json.Marshal(got)
	if viaBridge.status != http.StatusOK || string(gotJSON) != string(want) {
		t.Errorf("search_tools over the bridge: %d %s\nover /mcp: %s", viaBridge.status, viaBridge.raw, want)
	}

	// 200 with isError: a failure of the tool itself is a tool result.
	if a := bridgePost(t, base, full, "application/json", `{"tool":"get_task","params":{"taskId":"task_does_not_exist"}}`); a.status != http.StatusOK || !a.IsError || !strings.Contains(string(a.Result), "task") {
		t.Errorf("a tool that fails: %d %s; want 200 with isError and the error text as result", a.status, a.raw)
	}

	// 404: unknown, and outside the allowlist, answer alike and list only
	// what the caller may use.
	unknown := bridgePost(t, base, narrow, "application/json", `{"tool":"no_such_tool"}`)
	hidden := bridgePost(t, base, narrow, "application/json", `{"tool":"query_memory","params":{"query":"x"}}`)
	for _, a := range []bridgeAnswer{unknown, hidden} {
		if a.status != http.StatusNotFound || a.Error.Code != "unknown_tool" || !slices.Equal(a.Tools, []string{"search_tools", "store_insight"}) {
			t.Errorf("404 for an unknown or hidden tool: %d %s; want unknown_tool with the allowed tools only", a.status, a.raw)
		}
	}
	if strings.Contains(hidden.raw, "not allowed") {
		t.Errorf("the answer for a hidden tool reveals that it exists: %s", hidden.raw)
	}
	if a := bridgePost(t, base, full, "application/json", `{"tool":"no_such_tool"}`); a.status != http.StatusNotFound || !slices.Contains(a.Tools, "query_memory") {
		t.Errorf("404 for a key without an allowlist: %d %s; want every tool listed", a.status, a.raw)
	}

	// 400: arguments the schema rejects, with the pointers of tools/validate.
	inv := bridgePost(t, base, full, "application/json", `{"tool":"store_insight","params":{"text":7}}`)
	if inv.status != http.StatusBadRequest || inv.Error.Code != "invalid_params" || !slices.ContainsFunc(inv.Errors, func(is agentsmcp.ValidationIssue) bool { return is.Path == "/text" && is.Keyword == "type" }) {
		t.Errorf("invalid params: %d %s; want 400 with a type issue at /text", inv.status, inv.raw)
	}
	// 400/413/415/405: bodies the bridge cannot take.
	for _, c := range []struct {
		name, contentType, body string
		status                  int
		code                    string
	}{
		{"not JSON", "application/json", `{"tool":`, http.StatusBadRequest, "malformed_request"},
		{"not an object", "application/json", `["store_insight"]`, http.StatusBadRequest, "malformed_request"},
		{"no tool", "application/json", `{"params":{}}`, http.StatusBadRequest, "malformed_request"},
		{"params not an object", "application/json", `{"tool":"search_tools","params":[1]}`, http.StatusBadRequest, "malformed_request"},
		{"unknown member", "application/json", `{"tool":"search_tools","arguments":{}}`, http.StatusBadRequest, "malformed_request"},
		{"text/plain", "text/plain", storeCall, http.StatusUnsupportedMediaType, "unsupported_media"},
		{"no content type", "", storeCall, http.StatusUnsupportedMediaType, "unsupported_media"},
		{"oversized", "application/json", `{"tool":"search_tools","params":{"query":"` + strings.Repeat("x", 5000) + `"}}`, http.StatusRequestEntityTooLarge, "body_too_large"},
	} {
		if a := bridgePost(t, base, full, c.contentType, c.body); a.status != c.status || a.Error.Code != c.code || a.Error.Message == "" {
			t.Errorf("%s: %d %s; want %d %s", c.name, a.status, a.raw, c.status, c.code)
		}
	}
	req, _ := http.NewRequest(http.MethodGet, base+"/mcp-json", nil)
	req.Header.Set("Authorization", "Bearer "+full)
	if resp, err := http.DefaultClient.Do(req); err != nil {
		t.Fatal(err)
	} else {
		resp.Body.Close()
		if resp.StatusCode != http.StatusMethodNotAllowed || resp.Header.Get("Allow") != http.MethodPost {
			t.Errorf("GET /mcp-json: %d Allow %q", resp.StatusCode, resp.Header.Get("Allow"))
		}
	}

	// The credentials and Host rules of /mcp.
	if a := bridgePost(t, base, "", "application/json", storeCall); a.status != http.StatusUnauthorized {
		t.Errorf("no credential: %d %s", a.status, a.raw)
	}
	if a := bridgePost(t, base, "reader-key-0123456789", "application/json", storeCall); a.status != http.StatusForbidden {
		t.Errorf("a key without scope mcp: %d %s", a.status, a.raw)
	}
	if a := bridgePost(t, base, full, "application/json", storeCall, "Host", "evil.example:80"); a.status != http.StatusForbidden {
		t.Errorf("a rebound Host: %d %s", a.status, a.raw)
	}
	if a := bridgePost(t, base, full, "application/json", storeCall, "Origin", "http://evil.example"); a.status != http.StatusForbidden {
		t.Errorf("a foreign Origin: %d %s", a.status, a.raw)
	}

	// 429: the rate limit of the key applies.
	var limited *bridgeAnswer
	for range 5 {
		a := bridgePost(t, base, "slow-key-0123456789", "application/json", `{"tool":"search_tools","params":{"query":"x"}}`)
		if a.status == http.StatusTooManyRequests {
			limited = &a
			break
		}
	}
	if limited == nil || limited.header.Get("Retry-After") == "" || limited.Error.Code != "rate_limited" {
		t.Errorf("the slow key was never limited on the bridge: %+v", limited)
	}

	stop()
	if c := <-code; c != 0 {
		t.Fatalf("serve exited %d:\n%s", c, logs.String())
	}

	// The audit trail, read from the server's own database.
	ctx := context.Background()
	db, err := sqlite.Open(ctx, filepath.Join(dataDir, "agents-mcp.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	entries, _, err := db.FindAuditEntries(ctx, agentsmcp.AuditFilter{Limit: agentsmcp.MaxPageSize})
	if err != nil {
		t.Fatal(err)
	}
	var call, denied, invalid, mcpCall *agentsmcp.AuditEntry
	for _, e := range entries {
		switch {
		case e.Kind == agentsmcp.AuditToolCall && e.Target == "search_tools" && e.Transport == "streamable":
			mcpCall = e
		case e.Kind == agentsmcp.AuditToolCall && e.Target == "store_insight" && e.Outcome == agentsmcp.AuditOK:
			call = e
		case e.Kind == agentsmcp.AuditToolCall && e.Target == "query_memory" && e.Outcome == agentsmcp.AuditDenied:
			denied = e
		case e.Kind == agentsmcp.AuditToolCall && e.Target == "store_insight" && e.Outcome == agentsmcp.AuditDenied:
			invalid = e
		}
	}
	// The client profile: the go-sdk client of connectWithKey over /mcp,
	// and the bridge, which has no MCP client.
	if mcpCall == nil || mcpCall.Client != "security-test/1" || mcpCall.ClientProfile != "standard" {
		t.Errorf("audit of the call over /mcp: %+v; want client security-test/1, profile standard", mcpCall)
	}
	if call != nil && (call.ClientProfile != "rest" || call.Client != "") {
		t.Errorf("audit of the bridge call: client %q profile %q; want profile rest", call.Client, call.ClientProfile)
	}
	if call == nil || call.Transport != "rest" || call.RequestID != "bridge-req-1" || !strings.HasPrefix(call.Principal, "key:") || !strings.Contains(string(call.Arguments), "handshake") {
		t.Errorf("audit of the bridge call: %+v", call)
	}
	if denied == nil || denied.Error != "not allowed" || denied.Transport != "rest" {
		t.Errorf("audit of the call outside the allowlist: %+v", denied)
	}
	if invalid == nil || !strings.HasPrefix(invalid.Error, "invalid arguments") {
		t.Errorf("audit of the call with invalid params: %+v", invalid)
	}
}
