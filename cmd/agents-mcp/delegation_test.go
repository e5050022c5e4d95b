package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/api/auth"
	"github.com/agents-mcp/agents-mcp/internal/mcpwire"
	"github.com/agents-mcp/agents-mcp/internal/oidctest"
)

// headerLog records the Authorization headers a server received.
type headerLog struct {
	mu   sync.Mutex
	seen []string
}

func (l *headerLog) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		l.mu.Lock()
		l.seen = append(l.seen, r.Header.Get("Authorization"))
		l.mu.Unlock()
		h.ServeHTTP(w, r)
	})
}

func (l *headerLog) contains(s string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, v := range l.seen {
		if strings.Contains(v, s) {
			return true
		}
	}
	return false
}

// whoAPI answers the principal that a real verifier (api/auth against the
// provider's key set, with audience) found in the request's token.
func whoAPI(t *testing.T, as *oidctest.Server, audience string, log *headerLog) string {
	t.Helper()
	verifier, err := auth.New(auth.Config{FailureRate: -1, JWT: auth.JWTConfig{JWKSURL: as.JWKSURL, Issuer: as.Issuer,
		Audience: audience, Resource: "http://127.0.0.1/api"}})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(log.wrap(verifier.Authenticate(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"caller": agentsmcp.PrincipalIDFrom(r.Context())})
	}))))
	t.Cleanup(srv.Close)
	return srv.URL
}

// TestServeDelegatedIdentity drives the real serve command with JWT
// authentication against a real OpenID provider (ADR 0012 D7b): a JWT
// caller's http_tools calls reach the API as the caller, with its own
// token (forward) or one exchanged for it (exchange), over /mcp and over
// the REST bridge alike. An API-key caller gets the actionable result. The
// caller's token never reaches a source without delegation nor an MCP
// upstream, and neither it nor the exchange's client secret is logged or
// stored.
func TestServeDelegatedIdentity(t *testing.T) {
	as := oidctest.Start(t)
	var forwardLog, exchangeLog, plainLog, upstreamLog headerLog
	mailURL := whoAPI(t, as, oidctest.CallerAudience, &forwardLog)
	crmURL := whoAPI(t, as, "https://crm.example", &exchangeLog)
	plain := httptest.NewServer(plainLog.wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"ok":true}`))
	})))
	t.Cleanup(plain.Close)
	up := mcp.NewServer(&mcp.Implementation{Name: "up", Version: "1"}, nil)
	mcp.AddTool(up, &mcp.Tool{Name: "ping"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, struct{}, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "pong"}}}, struct{}{}, nil
	})
	upstream := httptest.NewServer(upstreamLog.wrap(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return up }, nil)))
	t.Cleanup(upstream.Close)

	const secret = "exchange-s3cret"
	if secret != oidctest.ExchangeClientSecret {
		t.Fatal("the provider's exchange secret changed")
	}
	dir := t.TempDir()
	cfgFile := filepath.Join(dir, "agents-mcp.yaml")
	if err := os.WriteFile(cfgFile, fmt.Appendf(nil, `
auth:
  api_keys:
    - {name: ops, key: ops-key-0123456789, scopes: [mcp]}
  jwt:
    jwks_url: %s
    issuer: %s
    audience: %s
    resource: http://127.0.0.1/mcp
upstreams:
  - {name: up, transport: streamable, url: %s}
http_tools:
  - name: mail
    base_url: %s
    delegation: forward
    endpoints: [{name: who, method: GET, path: /me}]
  - name: crm
    base_url: %s
    delegation: exchange
    exchange:
      token_endpoint: %s
      client_id: %s
      client_secret: ${CRM_EXCHANGE_SECRET}
      audience: https://crm.example
    endpoints: [{name: who, method: GET, path: /me}]
  - name: plain
    base_url: %s
    endpoints: [{name: get, method: GET, path: /x}]
`, as.JWKSURL, as.Issuer, oidctest.CallerAudience, upstream.URL, mailURL, crmURL, as.TokenURL, oidctest.ExchangeClientID, plain.URL), 0o600); err != nil {
		t.Fatal(err)
	}
	dataDir := filepath.Join(dir, "data")
	base, stop, _, logs := startServe(t, map[string]string{"CRM_EXCHANGE_SECRET": secret}, "--config", cfgFile, "--data-dir", dataDir)
	alice := as.Token(t, "alice", "mcp")

	cs, err := connectWithKey(t, base, alice)
	if err != nil {
		t.Fatal(err)
	}
	call := func(cs *mcp.ClientSession, tool string) *mcp.CallToolResult {
		t.Helper()
		res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: tool, Arguments: map[string]any{}})
		if err != nil {
			t.Fatalf("%s: %v", tool, err)
		}
		return res
	}
	for _, tool := range []string{"mail__who", "crm__who"} {
		res := call(cs, tool)
		if res.IsError || res.StructuredContent.(map[string]any)["caller"] != "jwt:alice" {
			t.Errorf("%s over /mcp as alice: %+v", tool, res.Content)
		}
		a := bridgePost(t, base, alice, "application/json", `{"tool":"`+tool+`"}`)
		if a.status != http.StatusOK || a.IsError || !strings.Contains(string(a.Result), `"caller":"jwt:alice"`) {
			t.Errorf("%s over the REST bridge as alice: %d %s", tool, a.status, a.raw)
		}
	}
	if !forwardLog.contains(alice) || exchangeLog.contains(alice) {
		t.Error("forward must send alice's token, exchange another one")
	}
	if res := call(cs, "plain__get"); res.IsError || plainLog.contains(alice) {
		t.Errorf("a source without delegation: %+v; got alice's token: %v", res.Content, plainLog.contains(alice))
	}
	if res := call(cs, "up__ping"); res.IsError || upstreamLog.contains(alice) {
		t.Errorf("an MCP upstream: %+v; got alice's token: %v", res.Content, upstreamLog.contains(alice))
	}

	// An API key has no identity to delegate: the actionable result, over
	// /mcp and over the bridge, and the API is not called.
	ops, err := connectWithKey(t, base, "ops-key-0123456789")
	if err != nil {
		t.Fatal(err)
	}
	forwardLog.mu.Lock()
	before := len(forwardLog.seen)
	forwardLog.mu.Unlock()
	res := call(ops, "mail__who")
	if ar, ok := mcpwire.AuthorizationRequiredFrom(res); !ok || !ar.Delegated || ar.Integration != "mail" {
		t.Errorf("mail__who with an API key: %v %+v", ar, res.Content)
	}
	if a := bridgePost(t, base, "ops-key-0123456789", "application/json", `{"tool":"crm__who"}`); a.status != http.StatusOK || !a.IsError ||
		!strings.Contains(a.raw, "JWT") {
		t.Errorf("crm__who with an API key over the bridge: %d %s", a.status, a.raw)
	}
	forwardLog.mu.Lock()
	after := len(forwardLog.seen)
	forwardLog.mu.Unlock()
	if after != before {
		t.Error("the API was called for an API-key caller")
	}

	stop()
	if strings.Contains(logs.String(), alice) || strings.Contains(logs.String(), secret) {
		t.Error("the log holds alice's token or the exchange's client secret")
	}
	_ = filepath.WalkDir(dataDir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, _ := os.ReadFile(path)
		if strings.Contains(string(data), alice) || strings.Contains(string(data), secret) {
			t.Errorf("%s holds alice's token or the exchange's client secret", path)
		}
		return nil
	})
}
