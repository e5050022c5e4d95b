package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agents-mcp/agents-mcp/internal/mcpwire"
	"github.com/agents-mcp/agents-mcp/internal/oauthtest"
	"github.com/agents-mcp/agents-mcp/internal/testutil"
)

// TestServeAuthorizationLinkBoundToBrowser runs the link-phishing attack
// against the real serve command, for an HTTP tool source and an upstream
// with auth: oauth alike, with a real authorization server
// (oauth2-mock-server) and each person's browser a cookie jar of its own:
// alice opens the link her call answered and hands the authorization
// server's address to bob, who completes it. The callback refuses bob's
// browser and stores nothing; alice's next call still answers a link, whose
// page, opened by bob, names alice; in her own browser it completes. The
// confirmation passes the rebinding protection from agents-mcp's own
// origin, and not from another site. The callers are go-sdk clients, which
// propose MCP 2026-07-28 to agents-mcp: their sessions with the upstream
// (which speaks 2025-11-25) still open in the upstream's version.
func TestServeAuthorizationLinkBoundToBrowser(t *testing.T) {
	as := oauthtest.StartMockAS(t)
	// The API of the HTTP tool source and the upstream accept only the
	// authorization server's tokens.
	valid := func(r *http.Request) bool {
		tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		return ok && as.Valid(tok)
	}
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !valid(r) {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"ok":true}`)
	}))
	t.Cleanup(api.Close)
	up := mcp.NewServer(&mcp.Implementation{Name: "prot", Version: "1"}, nil)
	mcp.AddTool(up, &mcp.Tool{Name: "ping"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, struct{}, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "pong"}}}, struct{}{}, nil
	})
	verify := func(_ context.Context, tok string, r *http.Request) (*auth.TokenInfo, error) {
		if !as.Valid(tok) {
			return nil, auth.ErrInvalidToken
		}
		return &auth.TokenInfo{UserID: "user", Expiration: time.Now().Add(time.Hour)}, nil
	}
	upstream := httptest.NewServer(auth.RequireBearerToken(verify, nil)(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return up }, nil)))
	t.Cleanup(upstream.Close)

	// A fixed port: the links name the public URL, which defaults to the
	// listen address.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	const adminKey, aliceKey, bobKey = "admin-key-0123456789", "alice-key-0123456789", "bob-key-0123456789"
	dir := t.TempDir()
	cfgFile := filepath.Join(dir, "agents-mcp.yaml")
	if err := os.WriteFile(cfgFile, fmt.Appendf(nil, `
auth:
  api_keys:
    - {name: admin, key: %s, scopes: [mcp, "admin:read", "admin:write"]}
    - {name: alice, key: %s, scopes: [mcp]}
    - {name: bob, key: %s, scopes: [mcp]}
upstreams:
  - {name: prot, transport: streamable, url: %s, auth: oauth, timeout: 10s, max_backoff: 500ms}
http_tools:
  - name: crm
    base_url: %s
    endpoints: [{name: get, method: GET, path: /deals}]
`, adminKey, aliceKey, bobKey, upstream.URL, api.URL), 0o600); err != nil {
		t.Fatal(err)
	}
	base, _, _, _ := startServe(t, nil, "--config", cfgFile, "--addr", addr)
	if base != "http://"+addr {
		t.Fatalf("serving at %s, want %s", base, addr)
	}
	adminAPI := func(method, path string, body any) (int, string) {
		t.Helper()
		b, _ := json.Marshal(body)
		req, _ := http.NewRequest(method, base+"/admin/v1"+path, strings.NewReader(string(b)))
		req.Header.Set("Authorization", "Bearer "+adminKey)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		got, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(got)
	}
	for _, integration := range []string{"crm", "prot"} {
		if code, got := adminAPI(http.MethodPost, "/credentials", map[string]any{"integration": integration,
			"kind": "oauth_authorization_code", "clientId": "agents-mcp", "authUrl": as.Issuer + "/authorize",
			"tokenUrl": as.Issuer + "/token", "scopes": []string{"openid"}}); code != http.StatusCreated {
			t.Fatalf("add the client of %s: %d %s", integration, code, got)
		}
	}

	// The server's own authorization of prot goes through a link too.
	code, got := adminAPI(http.MethodPost, "/credentials/authorize", map[string]any{"integration": "prot", "shared": true})
	var started struct{ AuthorizationURL string }
	_ = json.Unmarshal([]byte(got), &started)
	if code != http.StatusOK || !strings.HasPrefix(started.AuthorizationURL, base+"/oauth/start?flow=") {
		t.Fatalf("authorize prot for the server: %d %s", code, got)
	}
	if page := oauthtest.NewBrowser().Authorize(t, started.AuthorizationURL, base); page.Status != http.StatusOK {
		t.Fatalf("the server's authorization of prot: %d %s", page.Status, page.Body)
	}
	adminAPI(http.MethodPost, "/upstreams/prot/refresh", map[string]any{})
	testutil.Eventually(t, 20*time.Second, "prot ready", func() bool {
		_, got := adminAPI(http.MethodGet, "/upstreams/prot", nil)
		return strings.Contains(got, `"state":"ready"`)
	})

	session := func(key string) *mcp.ClientSession {
		cs, err := connectWithKey(t, base, key)
		if err != nil {
			t.Fatal(err)
		}
		return cs
	}
	aliceMCP, bobMCP := session(aliceKey), session(bobKey)
	// linkOf calls tool and returns the authorization link it answers,
	// or "" when the call went through.
	linkOf := func(cs *mcp.ClientSession, tool string) string {
		t.Helper()
		res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: tool, Arguments: map[string]any{}})
		if err != nil {
			t.Fatalf("%s: %v", tool, err)
		}
		ar, ok := mcpwire.AuthorizationRequiredFrom(res)
		if !ok {
			if res.IsError {
				t.Fatalf("%s: %s", tool, res.Content[0].(*mcp.TextContent).Text)
			}
			return ""
		}
		if ar.AuthorizeURL == "" {
			t.Fatalf("%s: no link: %s", tool, ar.Message())
		}
		return ar.AuthorizeURL
	}
	stored := func(integration string) string {
		_, got := adminAPI(http.MethodGet, "/credentials?integration="+integration, nil)
		return got
	}
	sum := sha256.Sum256([]byte(aliceKey))
	aliceID := "key:" + hex.EncodeToString(sum[:6])

	for _, tool := range []string{"crm__get", "prot__ping"} {
		integration, _, _ := strings.Cut(tool, "__")
		alice, bob := oauthtest.NewBrowser(), oauthtest.NewBrowser()
		link := linkOf(aliceMCP, tool)
		if !strings.HasPrefix(link, base+"/oauth/start?flow=") {
			t.Errorf("%s: alice's link %s is not agents-mcp's", tool, link)
		}
		asURL := alice.Start(t, link, base)
		page := bob.Get(t, asURL)
		if page.Status != http.StatusForbidden || !strings.Contains(page.Body, "not started in this browser") {
			t.Errorf("%s: bob completes alice's flow: %d %s", tool, page.Status, page.Body)
		}
		if got := stored(integration); strings.Contains(got, `"principal":"`+aliceID) {
			t.Errorf("%s: a token was stored after bob's session: %s", tool, got)
		}
		next := linkOf(aliceMCP, tool)
		if next == "" {
			t.Fatalf("%s: alice's call goes through with the tokens of bob's session", tool)
		}

		// Handed the link itself, bob sees whom it is for.
		page = bob.Get(t, next)
		if page.Status != http.StatusOK || !strings.Contains(page.Body, "alice ("+aliceID+")") || !strings.Contains(page.Body, integration) {
			t.Errorf("%s: alice's link in bob's browser: %d %s", tool, page.Status, page.Body)
		}
		// Another site cannot post the confirmation: the rebinding
		// protection refuses its Origin.
		action, fields, _ := page.Form()
		req, _ := http.NewRequest(http.MethodPost, action, strings.NewReader(fields.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Origin", "https://evil.example")
		if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != http.StatusForbidden {
			t.Errorf("%s: a cross-site confirmation: %v %v", tool, resp, err)
		} else {
			resp.Body.Close()
		}

		// Alice completes it in her own browser: her calls go through,
		// bob's still answer a link.
		if page := alice.Authorize(t, next, base); page.Status != http.StatusOK || !strings.Contains(page.Body, "Authorized") {
			t.Fatalf("%s: alice in her own browser: %d %s", tool, page.Status, page.Body)
		}
		if linkOf(aliceMCP, tool) != "" {
			t.Errorf("%s: alice is still asked after authorizing", tool)
		}
		if linkOf(bobMCP, tool) == "" {
			t.Errorf("%s: bob's call goes through with alice's authorization", tool)
		}
	}
}

// TestServePublicOriginPassesRebindingProtection: behind a proxy that
// rewrites Host, a browser on public_url posts the confirmation of an
// authorization link with public_url's Origin, which is agents-mcp's own:
// the Host/Origin check lets it through to the page's own checks, and
// still refuses another site's.
func TestServePublicOriginPassesRebindingProtection(t *testing.T) {
	base, _, _, _ := startServe(t, map[string]string{"AGENTS_MCP_PUBLIC_URL": "https://agents.example.test"})
	post := func(origin string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, base+"/oauth/start", strings.NewReader("flow=x&confirm=y"))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Origin", origin)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
	// The page's own refusal (no nonce cookie), in HTML: the check passed.
	if code, body := post("https://agents.example.test"); code != http.StatusForbidden || !strings.Contains(body, "<!doctype html>") {
		t.Errorf("public_url's origin: %d %s", code, body)
	}
	if code, body := post("https://evil.example"); code != http.StatusForbidden || !strings.Contains(body, "Origin") || strings.Contains(body, "<!doctype html>") {
		t.Errorf("another origin: %d %s", code, body)
	}
}
