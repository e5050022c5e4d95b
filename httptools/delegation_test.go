package httptools_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/api/auth"
	"github.com/agents-mcp/agents-mcp/httptools"
	"github.com/agents-mcp/agents-mcp/internal/delegation"
	"github.com/agents-mcp/agents-mcp/internal/mcpwire"
	"github.com/agents-mcp/agents-mcp/internal/oidctest"
)

// identityAPI is an API that accepts only JWTs of the provider with the
// given audience, checked by a real verifier (api/auth against the
// provider's key set), and answers who called: the token's subject and,
// for an exchanged token, its actor. refuse makes it answer 401 to tokens
// it would accept, as an API that revoked them would.
func identityAPI(t *testing.T, as *oidctest.Server, audience string) (url string, calls, refuse *atomic.Int32) {
	t.Helper()
	verifier, err := auth.New(auth.Config{FailureRate: -1, JWT: auth.JWTConfig{JWKSURL: as.JWKSURL, Issuer: as.Issuer,
		Audience: audience, Resource: "http://127.0.0.1/api"}})
	if err != nil {
		t.Fatal(err)
	}
	calls, refuse = new(atomic.Int32), new(atomic.Int32)
	api := httptest.NewServer(verifier.Authenticate(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		if refuse.Load() > 0 {
			refuse.Add(-1)
			http.Error(w, "token revoked", http.StatusUnauthorized)
			return
		}
		raw := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
		claims := jwt.MapClaims{}
		// Verified above; read again only for the actor claim.
		_, _, _ = jwt.NewParser().ParseUnverified(raw, claims)
		act, _ := claims["act"].(map[string]any)
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"caller": agentsmcp.PrincipalIDFrom(r.Context()), "actor": act["sub"]})
	})))
	t.Cleanup(api.Close)
	return api.URL, calls, refuse
}

// asCaller is the context of a call by the JWT caller subject (as
// api/auth and the router make it): its principal and its token.
func asCaller(ctx context.Context, subject, token string) context.Context {
	ctx = agentsmcp.WithPrincipal(ctx, &agentsmcp.Principal{ID: "jwt:" + subject})
	return delegation.WithDelegatedToken(ctx, delegation.NewDelegatedToken("jwt:"+subject, token, time.Now().Add(time.Hour)))
}

func callWho(t *testing.T, p *httptools.Provider, ctx context.Context) *mcp.CallToolResult {
	t.Helper()
	res, err := p.CallTool(ctx, &mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{Name: p.Name() + "__who", Arguments: json.RawMessage(`{}`)}})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func loadDelegating(t *testing.T, baseURL, mode string, ex *httptools.Exchange) *httptools.Provider {
	t.Helper()
	p, err := httptools.Load(t.Context(), httptools.Source{Name: "crm", BaseURL: baseURL, Delegation: mode, Exchange: ex,
		Endpoints: []httptools.Endpoint{{Name: "who", Method: "GET", Path: "/me"}}}.WithDefaults(), httptools.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !p.AcceptsDelegation() {
		t.Fatal("a source with delegation does not accept the caller's token")
	}
	return p
}

func resultText(res *mcp.CallToolResult) string {
	if len(res.Content) == 0 {
		return ""
	}
	return res.Content[0].(*mcp.TextContent).Text
}

// With delegation forward, the API gets the caller's own token and sees
// the caller; a caller without a delegable token (an API key, a step run
// outside its request, another principal's token) gets the actionable
// result and the API is not called.
func TestDelegationForward(t *testing.T) {
	as := oidctest.Start(t)
	apiURL, calls, _ := identityAPI(t, as, oidctest.CallerAudience)
	p := loadDelegating(t, apiURL, httptools.DelegationForward, nil)
	alice := as.Token(t, "alice", "mcp")

	res := callWho(t, p, asCaller(t.Context(), "alice", alice))
	if res.IsError || res.StructuredContent.(map[string]any)["caller"] != "jwt:alice" {
		t.Fatalf("forward: %s", resultText(res))
	}

	for name, ctx := range map[string]context.Context{
		"API key caller": agentsmcp.WithPrincipal(t.Context(), &agentsmcp.Principal{ID: "key:ops"}),
		"anonymous":      t.Context(),
		// A task resumed by bob runs as its creator alice: bob's token
		// must not act for her.
		"another principal's token": delegation.WithDelegatedToken(
			agentsmcp.WithPrincipal(t.Context(), &agentsmcp.Principal{ID: "jwt:alice"}),
			delegation.NewDelegatedToken("jwt:bob", as.Token(t, "bob", "mcp"), time.Now().Add(time.Hour))),
		"expired": delegation.WithDelegatedToken(
			agentsmcp.WithPrincipal(t.Context(), &agentsmcp.Principal{ID: "jwt:alice"}),
			delegation.NewDelegatedToken("jwt:alice", alice, time.Now().Add(-time.Second))),
	} {
		before := calls.Load()
		res := callWho(t, p, ctx)
		ar, ok := mcpwire.AuthorizationRequiredFrom(res)
		if !ok || !ar.Delegated || ar.Integration != "crm" || !strings.Contains(resultText(res), "authenticates to agents-mcp with a token (JWT)") {
			t.Errorf("%s: %v %s", name, ar, resultText(res))
		}
		if calls.Load() != before {
			t.Errorf("%s: the API was called", name)
		}
	}
}

// With delegation exchange, the caller's token is exchanged (RFC 8693) at
// a real authorization server for a token of the API's audience, which the
// API accepts as the caller with agents-mcp as actor. The exchanged token
// is cached per caller and dropped when the API refuses it. A wrong client
// secret is the operator's error, without the secret; a caller token the
// server will not exchange asks for a delegable identity.
func TestDelegationExchange(t *testing.T) {
	as := oidctest.Start(t)
	const audience = "https://crm.example"
	apiURL, calls, refuse := identityAPI(t, as, audience)
	ex := &httptools.Exchange{TokenEndpoint: as.TokenURL, ClientID: oidctest.ExchangeClientID,
		ClientSecret: oidctest.ExchangeClientSecret, Audience: audience, Scopes: []string{"crm.read"}}
	p := loadDelegating(t, apiURL, httptools.DelegationExchange, ex)
	alice, bob := as.Token(t, "alice", "mcp"), as.Token(t, "bob", "mcp")

	who := func(ctx context.Context) map[string]any {
		t.Helper()
		res := callWho(t, p, ctx)
		if res.IsError {
			t.Fatalf("exchange: %s", resultText(res))
		}
		return res.StructuredContent.(map[string]any)
	}
	if got := who(asCaller(t.Context(), "alice", alice)); got["caller"] != "jwt:alice" || got["actor"] != oidctest.ExchangeClientID {
		t.Fatalf("alice through the exchange: %v", got)
	}
	if got := who(asCaller(t.Context(), "alice", alice)); got["caller"] != "jwt:alice" || as.Exchanges.Load() != 1 {
		t.Errorf("second call: %v after %d exchanges, want the cached token", got, as.Exchanges.Load())
	}
	if got := who(asCaller(t.Context(), "bob", bob)); got["caller"] != "jwt:bob" || as.Exchanges.Load() != 2 {
		t.Errorf("bob: %v after %d exchanges, want his own", got, as.Exchanges.Load())
	}

	// The API refuses alice's exchanged token: dropped, and the next call
	// exchanges again.
	refuse.Store(1)
	res := callWho(t, p, asCaller(t.Context(), "alice", alice))
	if ar, ok := mcpwire.AuthorizationRequiredFrom(res); !ok || !ar.Delegated || !strings.Contains(ar.Reason, "401") {
		t.Errorf("refused exchanged token: %v %s", ar, resultText(res))
	}
	if got := who(asCaller(t.Context(), "alice", alice)); got["caller"] != "jwt:alice" || as.Exchanges.Load() != 3 {
		t.Errorf("after the refusal: %v after %d exchanges, want a new one", got, as.Exchanges.Load())
	}

	// A token of the right issuer for another audience: the server
	// refuses to exchange it (invalid_grant), the caller is asked.
	before := calls.Load()
	stranger := loadDelegating(t, apiURL, httptools.DelegationExchange, &httptools.Exchange{TokenEndpoint: as.TokenURL,
		ClientID: oidctest.ExchangeClientID, ClientSecret: oidctest.ExchangeClientSecret, Audience: audience})
	res = callWho(t, stranger, asCaller(t.Context(), "eve", "not-a-token"))
	if ar, ok := mcpwire.AuthorizationRequiredFrom(res); !ok || !ar.Delegated || !strings.Contains(ar.Reason, "refused to exchange") {
		t.Errorf("unexchangeable token: %v %s", ar, resultText(res))
	}

	wrong := *ex
	wrong.ClientSecret = "wrong-s3cret"
	res = callWho(t, loadDelegating(t, apiURL, httptools.DelegationExchange, &wrong), asCaller(t.Context(), "alice", alice))
	if _, ok := mcpwire.AuthorizationRequiredFrom(res); ok || !res.IsError || !strings.Contains(resultText(res), "token exchange was refused: invalid_client") ||
		strings.Contains(resultText(res), "s3cret") || strings.Contains(resultText(res), alice) {
		t.Errorf("wrong client secret: %s", resultText(res))
	}
	if calls.Load() != before {
		t.Error("the API was called without an exchanged token")
	}
}
