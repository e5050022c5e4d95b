// Package oidctest runs a real OpenID provider on loopback for the tests of
// delegated identity (ADR 0012 D7b): zitadel/oidc's op package, with the
// in-memory storage of its example server. It issues JWT access tokens to
// test callers (the client-credentials grant, one client per caller) and
// exchanges them for tokens of another audience (RFC 8693), which the
// oauth2-mock-server of the other tests does not implement.
//
// Only tests import it: zitadel/oidc is a test dependency of the module.
package oidctest

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/zitadel/oidc/v3/example/server/storage"
	"github.com/zitadel/oidc/v3/pkg/oidc"
	"github.com/zitadel/oidc/v3/pkg/op"
)

// CallerAudience is the aud of the tokens issued to callers: agents-mcp's
// auth.jwt.audience in the tests.
const CallerAudience = "agents-mcp"

// The client agents-mcp authenticates as to exchange tokens.
const (
	ExchangeClientID     = "agents-mcp-exchange"
	ExchangeClientSecret = "exchange-s3cret"
)

// Server is a running provider.
type Server struct {
	// Issuer is its URL (http://127.0.0.1:port), TokenURL its token
	// endpoint and JWKSURL its key set.
	Issuer, TokenURL, JWKSURL string
	// Exchanges counts the token exchanges it answered with a token.
	Exchanges atomic.Int32

	st *store
}

// Start runs a provider until the test ends.
func Start(t testing.TB) *Server {
	t.Helper()
	srv := httptest.NewUnstartedServer(nil)
	issuer := "http://" + srv.Listener.Addr().String()
	st := &store{Storage: storage.NewStorage(storage.NewUserStore(issuer)), callers: map[string]bool{}}
	provider, err := op.NewProvider(&op.Config{
		CryptoKey:                sha256.Sum256([]byte("oidctest")),
		DefaultLogoutRedirectURI: "/",
		AuthMethodPost:           true,
		SupportedUILocales:       nil,
	}, st, op.StaticIssuer(issuer), op.WithAllowInsecure())
	if err != nil {
		t.Fatal(err)
	}
	s := &Server{Issuer: issuer, st: st}
	handler := op.RegisterLegacyServer(op.NewLegacyServer(provider, provider.Endpoints()), op.AuthorizeCallbackHandler(provider))
	srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && r.URL.Path == "/oauth/token" && r.ParseForm() == nil &&
			r.PostForm.Get("grant_type") == string(oidc.GrantTypeTokenExchange) {
			rec := &statusRecorder{ResponseWriter: w}
			handler.ServeHTTP(rec, r)
			if rec.status == http.StatusOK {
				s.Exchanges.Add(1)
			}
			return
		}
		handler.ServeHTTP(w, r)
	})
	srv.Start()
	t.Cleanup(srv.Close)
	s.TokenURL = issuer + "/oauth/token"
	s.JWKSURL = issuer + "/keys"
	return s
}

type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (r *statusRecorder) WriteHeader(code int) {
	r.status = code
	r.ResponseWriter.WriteHeader(code)
}

func (r *statusRecorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	return r.ResponseWriter.Write(b)
}

// Token returns a JWT access token of the provider for the caller subject
// (its sub), with audience [CallerAudience] and scopes, obtained with the
// client-credentials grant over HTTP.
func (s *Server) Token(t testing.TB, subject string, scopes ...string) string {
	t.Helper()
	s.st.mu.Lock()
	s.st.callers[subject] = true
	s.st.mu.Unlock()
	resp, err := http.PostForm(s.TokenURL, url.Values{"grant_type": {"client_credentials"}, "client_id": {subject},
		"client_secret": {callerSecret(subject)}, "scope": {strings.Join(scopes, " ")}})
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body struct {
		AccessToken string `json:"access_token"`
		Error       string `json:"error"`
		Description string `json:"error_description"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil || body.AccessToken == "" {
		t.Fatalf("token for %s: %d %v %s %s", subject, resp.StatusCode, err, body.Error, body.Description)
	}
	return body.AccessToken
}

func callerSecret(subject string) string { return subject + "-secret" }

// SetClaims makes the tokens issued to the caller subject from now on
// carry claims besides the provider's own (a tools allowlist, the virtual
// servers it may use…).
func (s *Server) SetClaims(subject string, claims map[string]any) {
	s.st.mu.Lock()
	defer s.st.mu.Unlock()
	if s.st.claims == nil {
		s.st.claims = map[string]map[string]any{}
	}
	s.st.claims[subject] = claims
}

// store is the example storage with the clients of these tests: callers
// (client credentials, JWT access tokens for agents-mcp) and agents-mcp's
// exchange client. Everything else is the library's.
type store struct {
	*storage.Storage
	mu      sync.Mutex
	callers map[string]bool
	claims  map[string]map[string]any // by caller: extra claims of its tokens
}

// client is a client of these tests: JWT access tokens (an API verifies
// them with the key set), secrets sent in the form as go-sdk's oauthex
// sends them, every scope allowed.
type client struct {
	op.Client
	id     string
	grants []oidc.GrantType
}

func (c client) GetID() string                       { return c.id }
func (c client) AccessTokenType() op.AccessTokenType { return op.AccessTokenTypeJWT }
func (c client) AuthMethod() oidc.AuthMethod         { return oidc.AuthMethodPost }
func (c client) GrantTypes() []oidc.GrantType        { return c.grants }
func (c client) IsScopeAllowed(string) bool          { return true }
func (c client) RestrictAdditionalAccessTokenScopes() func([]string) []string {
	return func(s []string) []string { return s }
}

func (s *store) clientOf(id string) (op.Client, bool) {
	base := storage.WebClient(id, "unused")
	if id == ExchangeClientID {
		return client{Client: base, id: id, grants: []oidc.GrantType{oidc.GrantTypeTokenExchange}}, true
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.callers[id] {
		return client{Client: base, id: id, grants: []oidc.GrantType{oidc.GrantTypeClientCredentials}}, true
	}
	return nil, false
}

func (s *store) secretOf(id string) string {
	if id == ExchangeClientID {
		return ExchangeClientSecret
	}
	return callerSecret(id)
}

var errClient = errors.New("unknown client or wrong secret")

// GetClientByClientID knows only the clients of these tests.
func (s *store) GetClientByClientID(_ context.Context, id string) (op.Client, error) {
	if c, ok := s.clientOf(id); ok {
		return c, nil
	}
	return nil, errClient
}

// AuthorizeClientIDSecret checks a client's secret.
func (s *store) AuthorizeClientIDSecret(_ context.Context, id, secret string) error {
	if _, ok := s.clientOf(id); !ok || secret != s.secretOf(id) {
		return errClient
	}
	return nil
}

// ClientCredentials authenticates a caller.
func (s *store) ClientCredentials(ctx context.Context, id, secret string) (op.Client, error) {
	if err := s.AuthorizeClientIDSecret(ctx, id, secret); err != nil || id == ExchangeClientID {
		return nil, errClient
	}
	c, _ := s.clientOf(id)
	return c, nil
}

// ClientCredentialsTokenRequest makes the caller's token: its client id
// is its subject, and agents-mcp its audience.
func (s *store) ClientCredentialsTokenRequest(_ context.Context, id string, scopes []string) (op.TokenRequest, error) {
	return &oidc.JWTTokenRequest{Subject: id, Audience: []string{CallerAudience}, Scopes: scopes}, nil
}

// ValidateTokenExchangeRequest accepts the exchange of a caller's token
// (the library has verified it: signature, issuer, expiry) for an access
// token of the requested audience, acting for the same subject.
func (s *store) ValidateTokenExchangeRequest(_ context.Context, r op.TokenExchangeRequest) error {
	if r.GetRequestedTokenType() != oidc.AccessTokenType {
		return oidc.ErrInvalidRequest().WithDescription("only access tokens are issued")
	}
	if aud, _ := r.GetExchangeSubjectTokenClaims()["aud"].([]any); !slices.Contains(aud, any(CallerAudience)) {
		return oidc.ErrInvalidGrant().WithDescription("the subject token is not a token of agents-mcp")
	}
	if len(r.GetAudience()) == 0 {
		return oidc.ErrInvalidTarget().WithDescription("an audience is required")
	}
	r.SetCurrentScopes(r.GetScopes())
	return nil
}

// GetPrivateClaimsFromTokenExchangeRequest names the exchange client as
// the actor (RFC 8693 "act").
func (s *store) GetPrivateClaimsFromTokenExchangeRequest(_ context.Context, r op.TokenExchangeRequest) (map[string]any, error) {
	return map[string]any{"act": map[string]any{"sub": r.GetClientID()}}, nil
}

// GetPrivateClaimsFromScopes puts the granted scopes in the access token
// (RFC 9068 "scope"): agents-mcp reads its scopes from there.
func (s *store) GetPrivateClaimsFromScopes(_ context.Context, _, clientID string, scopes []string) (map[string]any, error) {
	s.mu.Lock()
	extra := s.claims[clientID]
	s.mu.Unlock()
	if len(scopes) == 0 && len(extra) == 0 {
		return nil, nil
	}
	out := make(map[string]any, len(extra)+1)
	for k, v := range extra {
		out[k] = v
	}
	if len(scopes) > 0 {
		out["scope"] = strings.Join(scopes, " ")
	}
	return out, nil
}
