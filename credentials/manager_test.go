package credentials_test

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/credentials"
	"github.com/agents-mcp/agents-mcp/internal/credapply"
	"github.com/agents-mcp/agents-mcp/internal/oauthtest"
)

// call sends a GET to the API with what the manager resolves for
// principal, and returns the status.
func call(t *testing.T, m *credentials.Manager, api *protectedAPI, integration, principal string) (int, error) {
	t.Helper()
	applied, err := m.Credentials(t.Context(), integration, principal)
	if err != nil {
		return 0, err
	}
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, api.URL+"/posts", nil)
	credapply.Apply(applied, req)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode, nil
}

func TestClientCredentials(t *testing.T) {
	as := oauthtest.StartMockAS(t)
	issuer := as.Issuer
	api := newProtectedAPI(t, as)
	store := openStore(t)
	m := credentials.New(credentials.Options{Store: store})
	c := &agentsmcp.Credential{Integration: "blog", Kind: agentsmcp.CredentialClientCredentials,
		Settings: agentsmcp.CredentialSettings{ClientID: "agents-mcp", TokenURL: issuer + "/token", Scopes: []string{"read"}},
		Secret:   &agentsmcp.CredentialSecret{ClientSecret: "s3cret"}}
	if err := store.CreateCredential(t.Context(), c); err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		status, err := call(t, m, api, "blog", "jwt:alice")
		if err != nil || status != http.StatusOK {
			t.Fatalf("call %d: status %d, %v", i, status, err)
		}
	}
	if len(api.accepted) != 2 || api.accepted[0] != api.accepted[1] {
		t.Errorf("the second call did not reuse the cached token: %d tokens", len(api.accepted))
	}
	got, err := store.FindCredentialByID(t.Context(), c.ID)
	if err != nil || got.Secret.AccessToken != api.accepted[0] || got.ExpiresAt.Before(time.Now()) {
		t.Errorf("cached token not stored: %+v, %v", got, err)
	}

	// Refused: the cached token is dropped, the next call gets a new one.
	err = m.Refused(t.Context(), "blog", "jwt:alice", http.StatusUnauthorized)
	var ar *agentsmcp.AuthorizationRequired
	if !errors.As(err, &ar) || ar.Integration != "blog" || agentsmcp.ErrorCode(err) != agentsmcp.EUNAUTHORIZED {
		t.Fatalf("Refused = %v, want AuthorizationRequired for blog", err)
	}
	if got, _ := store.FindCredentialByID(t.Context(), c.ID); got.Secret.AccessToken != "" || !got.ExpiresAt.IsZero() {
		t.Errorf("the refused token is still cached")
	}
	if status, err := call(t, m, api, "blog", "jwt:alice"); err != nil || status != http.StatusOK {
		t.Fatalf("call after refusal: %d, %v", status, err)
	}
	if got, _ := store.FindCredentialByID(t.Context(), c.ID); got.Secret.AccessToken == "" || len(api.accepted) != 3 {
		t.Errorf("no new token after the refusal")
	}

	// An integration without a credential adds nothing.
	if a, err := m.Credentials(t.Context(), "other", "jwt:alice"); a != nil || err != nil {
		t.Errorf("Credentials of an integration without one = %v, %v", a, err)
	}
	// A token endpoint that refuses is EUNAUTHORIZED, without the secret.
	bad := &agentsmcp.Credential{Integration: "bad", Kind: agentsmcp.CredentialClientCredentials,
		Settings: agentsmcp.CredentialSettings{ClientID: "x", TokenURL: api.URL + "/token"},
		Secret:   &agentsmcp.CredentialSecret{ClientSecret: "do-not-show"}}
	if err := store.CreateCredential(t.Context(), bad); err != nil {
		t.Fatal(err)
	}
	_, err = m.Credentials(t.Context(), "bad", "")
	if agentsmcp.ErrorCode(err) != agentsmcp.EUNAUTHORIZED || strings.Contains(err.Error(), "do-not-show") {
		t.Errorf("refused token request: %v", err)
	}
}

func TestStaticKinds(t *testing.T) {
	store := openStore(t)
	m := credentials.New(credentials.Options{Store: store})
	for _, c := range []*agentsmcp.Credential{
		{Integration: "h", Kind: agentsmcp.CredentialAPIKey, Settings: agentsmcp.CredentialSettings{Header: "X-Key"}, Secret: &agentsmcp.CredentialSecret{Value: "k1"}},
		{Integration: "q", Kind: agentsmcp.CredentialAPIKey, Settings: agentsmcp.CredentialSettings{Query: "api_key"}, Secret: &agentsmcp.CredentialSecret{Value: "k 2"}},
		{Integration: "b", Kind: agentsmcp.CredentialBearer, Secret: &agentsmcp.CredentialSecret{Value: "shared"}},
		{Integration: "b", Principal: "jwt:bob", Kind: agentsmcp.CredentialBearer, Secret: &agentsmcp.CredentialSecret{Value: "bobs"}},
		{Integration: "u", Kind: agentsmcp.CredentialBasic, Settings: agentsmcp.CredentialSettings{Username: "ann"}, Secret: &agentsmcp.CredentialSecret{Value: "pw"}},
	} {
		if err := store.CreateCredential(t.Context(), c); err != nil {
			t.Fatal(err)
		}
	}
	var seen http.Header
	var query string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen, query = r.Header.Clone(), r.URL.RawQuery
	}))
	defer srv.Close()
	do := func(integration, principal string) {
		t.Helper()
		a, err := m.Credentials(t.Context(), integration, principal)
		if err != nil {
			t.Fatal(err)
		}
		req, _ := http.NewRequest(http.MethodGet, srv.URL+"/x?a=1", nil)
		credapply.Apply(a, req)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	do("h", "p")
	if seen.Get("X-Key") != "k1" {
		t.Errorf("api_key header: %v", seen)
	}
	do("q", "p")
	if query != "a=1&api_key=k+2" {
		t.Errorf("api_key query: %q", query)
	}
	do("b", "jwt:alice")
	if seen.Get("Authorization") != "Bearer shared" {
		t.Errorf("shared bearer: %v", seen.Get("Authorization"))
	}
	do("b", "jwt:bob")
	if seen.Get("Authorization") != "Bearer bobs" {
		t.Errorf("a principal's own bearer: %v", seen.Get("Authorization"))
	}
	do("u", "")
	if u, p, ok := (&http.Request{Header: seen}).BasicAuth(); !ok || u != "ann" || p != "pw" {
		t.Errorf("basic: %v", seen)
	}
}

func TestAuthorizationCodeWithPKCE(t *testing.T) {
	as := oauthtest.StartMockAS(t)
	issuer := as.Issuer
	api := newProtectedAPI(t, as)
	store := openStore(t)
	var m *credentials.Manager
	agents := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { m.ServeHTTP(w, r) }))
	defer agents.Close()
	m = credentials.New(credentials.Options{Store: store, BaseURL: agents.URL})
	client := &agentsmcp.Credential{Integration: "crm", Kind: agentsmcp.CredentialAuthorizationCode,
		Settings: agentsmcp.CredentialSettings{ClientID: "agents-mcp", AuthURL: issuer + "/authorize", TokenURL: issuer + "/token",
			Scopes: []string{"openid", "crm"}, Resource: api.URL}}
	if err := store.CreateCredential(t.Context(), client); err != nil {
		t.Fatal(err)
	}

	// No authorization yet: an actionable error with agents-mcp's link.
	_, err := call(t, m, api, "crm", "jwt:alice")
	var ar *agentsmcp.AuthorizationRequired
	if !errors.As(err, &ar) || ar.Integration != "crm" || !strings.HasPrefix(ar.AuthorizeURL, agents.URL+credentials.StartPath+"?flow=") {
		t.Fatalf("before authorizing: %v", err)
	}
	if !strings.Contains(ar.Message(), ar.AuthorizeURL) {
		t.Errorf("message %q does not give the link", ar.Message())
	}

	// The person opens the link and confirms: the browser is sent to the
	// authorization server with PKCE, and comes back to /oauth/callback,
	// which completes the flow.
	alice := oauthtest.NewBrowser()
	asURL := alice.Start(t, ar.AuthorizeURL, agents.URL)
	if !strings.HasPrefix(asURL, issuer+"/authorize?") {
		t.Fatalf("the link led to %s", asURL)
	}
	for _, want := range []string{"code_challenge_method=S256", "code_challenge=", "state=", "redirect_uri=", "resource="} {
		if !strings.Contains(asURL, want) {
			t.Errorf("authorization URL %s lacks %s", asURL, want)
		}
	}
	done := alice.Get(t, asURL)
	if done.Status != http.StatusOK || !strings.Contains(done.Body, "Authorized") || !strings.HasPrefix(done.URL, agents.URL+credentials.CallbackPath) {
		t.Fatalf("callback: %d %s %s", done.Status, done.URL, done.Body)
	}
	if status, err := call(t, m, api, "crm", "jwt:alice"); err != nil || status != http.StatusOK {
		t.Fatalf("alice after authorizing: %d, %v", status, err)
	}
	// The tokens are alice's: bob still has to authorize.
	if _, err := call(t, m, api, "crm", "jwt:bob"); !errors.As(err, &ar) {
		t.Fatalf("bob: %v, want AuthorizationRequired", err)
	}
	own, err := store.FindCredential(t.Context(), "crm", "jwt:alice")
	if err != nil || own.Secret.RefreshToken == "" || own.Secret.AccessToken != api.accepted[0] {
		t.Fatalf("alice's credential: %+v, %v", own, err)
	}
	if shared, _ := store.FindCredential(t.Context(), "crm", ""); shared.Secret.AccessToken != "" {
		t.Error("the shared client got alice's token")
	}

	// The callback is single use, even in the browser that started it.
	if again := alice.Get(t, done.URL); again.Status != http.StatusBadRequest {
		t.Errorf("replayed callback: %d, want 400", again.Status)
	}

	// An expired access token is refreshed with the refresh token.
	sec := *own.Secret
	sec.Expiry = time.Now().Add(-time.Minute)
	if err := store.UpdateSecret(t.Context(), own.ID, &sec); err != nil {
		t.Fatal(err)
	}
	if status, err := call(t, m, api, "crm", "jwt:alice"); err != nil || status != http.StatusOK {
		t.Fatalf("after expiry: %d, %v", status, err)
	}
	// (The mock issues the same JWT within one second, so the token
	// itself may not change: its expiry does.)
	if got, _ := store.FindCredentialByID(t.Context(), own.ID); len(api.accepted) != 2 || !got.Secret.Expiry.After(time.Now()) {
		t.Errorf("the expired token was not refreshed: %d accepted, expiry %v", len(api.accepted), got.Secret.Expiry)
	}

	// Without a refresh token, an expired authorization asks again.
	sec.RefreshToken = ""
	if err := store.UpdateSecret(t.Context(), own.ID, &sec); err != nil {
		t.Fatal(err)
	}
	if _, err := call(t, m, api, "crm", "jwt:alice"); !errors.As(err, &ar) || ar.AuthorizeURL == "" {
		t.Fatalf("expired without refresh token: %v", err)
	}
}

func TestCallbackRefusesUnknownState(t *testing.T) {
	m := credentials.New(credentials.Options{Store: openStore(t), BaseURL: "http://127.0.0.1:1"})
	for _, q := range []string{"", "?state=x", "?code=y", "?state=forged&code=y", "?error=<script>&state=s"} {
		rec := httptest.NewRecorder()
		m.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, credentials.CallbackPath+q, nil))
		if rec.Code != http.StatusBadRequest || strings.Contains(rec.Body.String(), "<script>") {
			t.Errorf("%s: %d %s", q, rec.Code, rec.Body)
		}
	}
}
