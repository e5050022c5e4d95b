package remote

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/credentials"
	"github.com/agents-mcp/agents-mcp/internal/mcpwire"
	"github.com/agents-mcp/agents-mcp/internal/oauthtest"
	"github.com/agents-mcp/agents-mcp/memory/secrets"
	"github.com/agents-mcp/agents-mcp/memory/sqlite"
)

// oauthUpstream is a go-sdk MCP server behind go-sdk's own bearer-token
// middleware (auth.RequireBearerToken, which binds each session to the
// token's user) and its protected resource metadata (RFC 9728). Tokens
// map to users; its tool whoami answers the user of the call.
type oauthUpstream struct {
	*httpUpstream
	mu     sync.Mutex
	tokens map[string]string // token → user
	seen   []string          // Authorization headers received
}

func newOAuthUpstream(t *testing.T) *oauthUpstream {
	t.Helper()
	o := &oauthUpstream{tokens: map[string]string{}}
	s := mcp.NewServer(&mcp.Implementation{Name: "protected", Version: "1.0.0"}, nil)
	s.AddTool(&mcp.Tool{Name: "whoami", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: req.Extra.TokenInfo.UserID}}}, nil
		})
	mcpH := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil)
	verify := func(_ context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
		o.mu.Lock()
		defer o.mu.Unlock()
		user, ok := o.tokens[token]
		if !ok {
			return nil, auth.ErrInvalidToken
		}
		return &auth.TokenInfo{UserID: user, Expiration: time.Now().Add(time.Hour)}, nil
	}
	o.httpUpstream = serveHTTP(t, func() http.Handler {
		// Built per request: the address is known once the server listens.
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			base := "http://" + r.Host
			if r.URL.Path == "/.well-known/oauth-protected-resource" {
				auth.ProtectedResourceMetadataHandler(&oauthex.ProtectedResourceMetadata{
					Resource: base + "/mcp", AuthorizationServers: []string{"http://127.0.0.1:9"}}).ServeHTTP(w, r)
				return
			}
			o.mu.Lock()
			o.seen = append(o.seen, r.Header.Get("Authorization"))
			o.mu.Unlock()
			auth.RequireBearerToken(verify, &auth.RequireBearerTokenOptions{
				ResourceMetadataURL: base + "/.well-known/oauth-protected-resource"})(mcpH).ServeHTTP(w, r)
		})
	})
	return o
}

func (o *oauthUpstream) setToken(token, user string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if user == "" {
		delete(o.tokens, token)
		return
	}
	o.tokens[token] = user
}

func TestOAuthUpstreamPerPrincipalSessions(t *testing.T) {
	up := newOAuthUpstream(t)
	up.setToken("tok-server", "server")
	up.setToken("tok-alice", "alice")

	db, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "creds.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	key := make([]byte, secrets.KeySize)
	_, _ = rand.Read(key)
	sealer, _ := secrets.New(key)
	store := &secrets.Credentials{CredentialService: db, Sealer: sealer}
	manager := credentials.New(credentials.Options{Store: store, BaseURL: "http://127.0.0.1:8080"})
	settings := agentsmcp.CredentialSettings{ClientID: "agents-mcp", AuthURL: "http://127.0.0.1:9/authorize", TokenURL: "http://127.0.0.1:9/token"}
	for _, c := range []*agentsmcp.Credential{
		// The server's own authorization: the pool's session lists tools.
		{Integration: "prot", Kind: agentsmcp.CredentialAuthorizationCode, Settings: settings, Secret: &agentsmcp.CredentialSecret{AccessToken: "tok-server"}},
		{Integration: "prot", Principal: "jwt:alice", Kind: agentsmcp.CredentialAuthorizationCode, Settings: settings, Secret: &agentsmcp.CredentialSecret{AccessToken: "tok-alice"}},
	} {
		if err := store.CreateCredential(t.Context(), c); err != nil {
			t.Fatal(err)
		}
	}

	opts := fastOptions()
	opts.Credentials = manager
	e := newEnv(t, opts)
	cfg := streamableConfig("prot", up.URL())
	cfg.Auth = agentsmcp.UpstreamAuthOAuth
	// A static Authorization header must not leak past the credential.
	cfg.Headers = map[string]string{"Authorization": "Bearer static-should-not-be-sent"}
	if err := e.pool.AddFromConfig(testCtx(t, 10*time.Second), cfg); err != nil {
		t.Fatal(err)
	}
	if st := e.status("prot"); st.State != StateReady {
		t.Fatalf("upstream %s: %s", st.State, st.Reason)
	}

	callAs := func(principal string) *mcp.CallToolResult {
		t.Helper()
		ctx := agentsmcp.WithPrincipal(testCtx(t, 10*time.Second), &agentsmcp.Principal{ID: principal})
		res, err := e.router.CallTool(ctx, &mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{Name: "prot__whoami", Arguments: json.RawMessage(`{}`)}})
		if err != nil {
			t.Fatalf("call as %s: %v", principal, err)
		}
		return res
	}

	// A caller offering a raw result (a 2025-11-25 client over HTTP)
	// gets the same: its call goes with the principal's token too.
	u, _ := e.pool.get("prot")
	rawCtx := mcpwire.WithRawToolResult(agentsmcp.WithPrincipal(testCtx(t, 10*time.Second), &agentsmcp.Principal{ID: "jwt:alice"}), &mcpwire.RawToolResult{})
	if res, err := u.CallTool(rawCtx, &mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{Name: "prot__whoami", Arguments: json.RawMessage(`{}`)}}); err != nil || res.IsError || resultText(res) != "alice" {
		t.Fatalf("alice, raw result offered: %v %+v %s", err, res, resultText(res))
	}

	// Alice's calls go with her token, over her own session.
	for range 2 {
		if res := callAs("jwt:alice"); res.IsError || resultText(res) != "alice" {
			t.Fatalf("alice: %+v %s", res, resultText(res))
		}
	}
	// Bob has no authorization: an actionable result, not a failure, and
	// never the server's token.
	res := callAs("jwt:bob")
	ar, ok := mcpwire.AuthorizationRequiredFrom(res)
	if !ok || ar.Integration != "prot" || !strings.HasPrefix(ar.AuthorizeURL, "http://127.0.0.1:8080"+credentials.StartPath+"?flow=") ||
		!strings.Contains(resultText(res), ar.AuthorizeURL) {
		t.Fatalf("bob: %+v %s", res, resultText(res))
	}
	if asURL := oauthtest.StartInProcess(t, manager, ar.AuthorizeURL); !strings.HasPrefix(asURL, "http://127.0.0.1:9/authorize?") {
		t.Errorf("bob's link led to %s", asURL)
	}
	up.mu.Lock()
	for _, h := range up.seen {
		if h != "Bearer tok-server" && h != "Bearer tok-alice" {
			t.Errorf("the upstream got Authorization %q", h)
		}
	}
	up.mu.Unlock()

	// Alice's token is revoked: her next call asks her to authorize again,
	// and the refused token is no longer cached.
	up.setToken("tok-alice", "")
	res = callAs("jwt:alice")
	if ar, ok := mcpwire.AuthorizationRequiredFrom(res); !ok || ar.AuthorizeURL == "" {
		t.Fatalf("alice after revocation: %+v %s", res, resultText(res))
	}
	if own, err := store.FindCredential(t.Context(), "prot", "jwt:alice"); err != nil || own.Secret.AccessToken != "" {
		t.Errorf("the refused token is still cached: %+v, %v", own.Secret, err)
	}
	// A refusal is not a failure of the upstream: its circuit stays closed.
	if st := e.status("prot"); st.State != StateReady {
		t.Errorf("upstream state after refusals: %s (%s)", st.State, st.Reason)
	}

	// She authorizes again (the tokens land in her credential), and calls.
	own, _ := store.FindCredential(t.Context(), "prot", "jwt:alice")
	up.setToken("tok-alice-2", "alice")
	if err := store.UpdateSecret(t.Context(), own.ID, &agentsmcp.CredentialSecret{AccessToken: "tok-alice-2"}); err != nil {
		t.Fatal(err)
	}
	if res := callAs("jwt:alice"); res.IsError || resultText(res) != "alice" {
		t.Fatalf("alice after authorizing again: %+v %s", res, resultText(res))
	}
}

func TestOAuthUpstreamWithoutServerAuthorizationIsDown(t *testing.T) {
	up := newOAuthUpstream(t)
	db, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "creds.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	key := make([]byte, secrets.KeySize)
	_, _ = rand.Read(key)
	sealer, _ := secrets.New(key)
	opts := fastOptions()
	opts.Credentials = credentials.New(credentials.Options{Store: &secrets.Credentials{CredentialService: db, Sealer: sealer}})
	e := newEnv(t, opts)
	cfg := streamableConfig("prot", up.URL())
	cfg.Auth = agentsmcp.UpstreamAuthOAuth
	if err := e.pool.AddFromConfig(testCtx(t, 10*time.Second), cfg); err != nil {
		t.Fatal(err)
	}
	st := e.waitState("prot", StateDown, 10*time.Second)
	if !strings.Contains(st.Reason, "Not authorized for prot") {
		t.Errorf("reason %q does not say how to authorize", st.Reason)
	}
}
