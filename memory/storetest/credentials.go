package storetest

import (
	"bytes"
	"crypto/rand"
	"strings"
	"testing"
	"time"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/memory/secrets"
)

func init() {
	suite["CredentialSealedAtRest"] = testCredentialSealedAtRest
	suite["CredentialScopes"] = testCredentialScopes
	suite["CredentialRefusesClearSecret"] = testCredentialRefusesClearSecret
	suite["CredentialUpdateAndDelete"] = testCredentialUpdateAndDelete
	suite["OAuthStateSingleUse"] = testOAuthStateSingleUse
}

// credentialStore returns the store's CredentialService wrapped in the
// sealing layer with a fresh key, as cmd wires it.
func credentialStore(t *testing.T, s Services) (*secrets.Credentials, agentsmcp.CredentialService) {
	t.Helper()
	if s.Credentials == nil || s.RawCredentials == nil {
		t.Fatal("Services.Credentials and RawCredentials are required")
	}
	key := make([]byte, secrets.KeySize)
	_, _ = rand.Read(key)
	sealer, err := secrets.New(key)
	if err != nil {
		t.Fatal(err)
	}
	return &secrets.Credentials{CredentialService: s.Credentials, Sealer: sealer}, s.Credentials
}

// Secrets of the test credentials: distinctive, so that finding one in
// the raw store is not a coincidence.
const (
	testAPIKey       = "sk-test-4f9a1c2e7b3d"
	testClientSecret = "cs-test-8e2d4b6a0c1f"
	testAccessToken  = "at-test-1a2b3c4d5e6f"
	testRefreshToken = "rt-test-9f8e7d6c5b4a"
	testVerifier     = "pkce-verifier-test-0123456789abcdefghijklmnopqrstuv"
)

func testCredentialSealedAtRest(t *testing.T, s Services) {
	ctx := t.Context()
	svc, _ := credentialStore(t, s)
	expiry := at(3600)
	creds := []*agentsmcp.Credential{
		{Integration: "blog", Kind: agentsmcp.CredentialAPIKey, Settings: agentsmcp.CredentialSettings{Header: "X-Api-Key"},
			Secret: &agentsmcp.CredentialSecret{Value: testAPIKey}, CreatedBy: "admin"},
		{Integration: "crm", Principal: "jwt:alice", Kind: agentsmcp.CredentialAuthorizationCode,
			Settings: agentsmcp.CredentialSettings{ClientID: "client-1", AuthURL: "http://127.0.0.1:1/authorize",
				TokenURL: "http://127.0.0.1:1/token", Scopes: []string{"read", "write"}, Issuer: "http://127.0.0.1:1"},
			Secret: &agentsmcp.CredentialSecret{ClientSecret: testClientSecret, AccessToken: testAccessToken,
				RefreshToken: testRefreshToken, Expiry: expiry},
			ExpiresAt: expiry},
	}
	for _, c := range creds {
		if err := svc.CreateCredential(ctx, c); err != nil {
			t.Fatalf("CreateCredential %s: %v", c.Integration, err)
		}
		if c.ID == "" || c.CreatedAt.IsZero() || c.Secret == nil {
			t.Fatalf("CreateCredential %s: got ID %q, CreatedAt %v, Secret %v", c.Integration, c.ID, c.CreatedAt, c.Secret)
		}
	}
	if err := svc.CreateOAuthState(ctx, &agentsmcp.OAuthState{Key: "k1", CredentialID: creds[1].ID, Principal: "jwt:alice",
		Verifier: testVerifier, ExpiresAt: time.Now().Add(time.Minute)}); err != nil {
		t.Fatalf("CreateOAuthState: %v", err)
	}

	raw, err := s.RawCredentials(ctx)
	if err != nil {
		t.Fatalf("RawCredentials: %v", err)
	}
	if !strings.Contains(raw, "client-1") || !strings.Contains(raw, "agents-mcp:sealed:v1:") {
		t.Fatalf("the raw store does not hold the credentials it was given:\n%s", raw)
	}
	for _, secret := range []string{testAPIKey, testClientSecret, testAccessToken, testRefreshToken, testVerifier} {
		if strings.Contains(raw, secret) {
			t.Errorf("the raw store holds the secret %q in clear", secret)
		}
	}

	got, err := svc.FindCredential(ctx, "crm", "jwt:alice")
	if err != nil {
		t.Fatalf("FindCredential: %v", err)
	}
	if got.Secret == nil || got.Secret.AccessToken != testAccessToken || got.Secret.RefreshToken != testRefreshToken ||
		got.Secret.ClientSecret != testClientSecret || !got.Secret.Expiry.Equal(expiry) {
		t.Fatalf("FindCredential opened secret %+v", got.Secret)
	}
	if got.Sealed != "" {
		t.Error("FindCredential through the sealing layer returned Sealed")
	}
	if got.ID != creds[1].ID || got.Settings.ClientID != "client-1" || len(got.Settings.Scopes) != 2 || got.CreatedBy != "" {
		t.Errorf("FindCredential = %+v", got)
	}
	checkTime(t, "ExpiresAt", got.ExpiresAt, expiry)
	checkTime(t, "CreatedAt", got.CreatedAt, creds[1].CreatedAt)

	// A store opened with another key cannot open it: the secret reads as
	// missing, never as garbage.
	other, _ := credentialStore(t, s)
	got, err = other.FindCredentialByID(ctx, creds[0].ID)
	if err != nil {
		t.Fatalf("FindCredentialByID with another key: %v", err)
	}
	if got.Secret != nil {
		t.Errorf("another key opened the secret: %+v", got.Secret)
	}
	if _, err := other.TakeOAuthState(ctx, "k1", time.Now()); agentsmcp.ErrorCode(err) != agentsmcp.EUNAVAILABLE {
		t.Errorf("TakeOAuthState with another key: %v, want EUNAVAILABLE", err)
	}
}

func testCredentialScopes(t *testing.T, s Services) {
	ctx := t.Context()
	svc, _ := credentialStore(t, s)
	mk := func(integration, principal string) *agentsmcp.Credential {
		return &agentsmcp.Credential{Integration: integration, Principal: principal, Kind: agentsmcp.CredentialBearer,
			Secret: &agentsmcp.CredentialSecret{Value: "tok-" + integration + principal}}
	}
	for _, c := range []*agentsmcp.Credential{mk("b", ""), mk("a", "p2"), mk("a", ""), mk("a", "p1")} {
		if err := svc.CreateCredential(ctx, c); err != nil {
			t.Fatalf("CreateCredential: %v", err)
		}
	}
	wantCode(t, svc.CreateCredential(ctx, mk("a", "p1")), agentsmcp.ECONFLICT, "second credential of (a, p1)")

	got, err := svc.FindCredential(ctx, "a", "p2")
	if err != nil || got.Secret.Value != "tok-ap2" {
		t.Fatalf("FindCredential(a, p2) = %+v, %v", got, err)
	}
	got, err = svc.FindCredential(ctx, "a", "")
	if err != nil || got.Secret.Value != "tok-a" || got.Principal != "" {
		t.Fatalf("FindCredential(a, shared) = %+v, %v", got, err)
	}
	_, err = svc.FindCredential(ctx, "b", "p1")
	wantCode(t, err, agentsmcp.ENOTFOUND, "FindCredential of a principal without its own")

	list := func(f agentsmcp.CredentialFilter) string {
		t.Helper()
		items, err := svc.FindCredentials(ctx, f)
		if err != nil {
			t.Fatalf("FindCredentials: %v", err)
		}
		var b strings.Builder
		for _, c := range items {
			if c.Secret != nil || c.Sealed != "" {
				t.Errorf("FindCredentials returned a secret for %s/%s", c.Integration, c.Principal)
			}
			b.WriteString(c.Integration + "/" + c.Principal + " ")
		}
		return b.String()
	}
	shared := ""
	for _, tc := range []struct {
		f    agentsmcp.CredentialFilter
		want string
	}{
		{agentsmcp.CredentialFilter{}, "a/ a/p1 a/p2 b/ "},
		{agentsmcp.CredentialFilter{Integration: "a"}, "a/ a/p1 a/p2 "},
		{agentsmcp.CredentialFilter{Principal: &shared}, "a/ b/ "},
	} {
		if got := list(tc.f); got != tc.want {
			t.Errorf("FindCredentials(%+v) = %q, want %q", tc.f, got, tc.want)
		}
	}
}

func testCredentialRefusesClearSecret(t *testing.T, s Services) {
	ctx := t.Context()
	_, bare := credentialStore(t, s)
	c := &agentsmcp.Credential{Integration: "x", Kind: agentsmcp.CredentialBearer, Secret: &agentsmcp.CredentialSecret{Value: "clear"}}
	wantCode(t, bare.CreateCredential(ctx, c), agentsmcp.EINVALID, "store given a clear secret")
	c = &agentsmcp.Credential{Integration: "x", Kind: "password"}
	c.Sealed = "agents-mcp:sealed:v1:x"
	wantCode(t, bare.CreateCredential(ctx, c), agentsmcp.EINVALID, "unknown kind")
	err := bare.CreateOAuthState(ctx, &agentsmcp.OAuthState{Key: "k", CredentialID: "c", Verifier: "clear", ExpiresAt: time.Now().Add(time.Minute)})
	wantCode(t, err, agentsmcp.EINVALID, "store given a clear verifier")
	raw, err := s.RawCredentials(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(raw, "clear") {
		t.Errorf("a refused clear secret was stored:\n%s", raw)
	}
}

func testCredentialUpdateAndDelete(t *testing.T, s Services) {
	ctx := t.Context()
	svc, _ := credentialStore(t, s)
	c := &agentsmcp.Credential{Integration: "api", Kind: agentsmcp.CredentialClientCredentials,
		Settings: agentsmcp.CredentialSettings{ClientID: "c", TokenURL: "http://127.0.0.1:1/token"},
		Secret:   &agentsmcp.CredentialSecret{ClientSecret: testClientSecret}}
	if err := svc.CreateCredential(ctx, c); err != nil {
		t.Fatal(err)
	}
	expiry := at(60)
	if err := svc.UpdateSecret(ctx, c.ID, &agentsmcp.CredentialSecret{ClientSecret: testClientSecret, AccessToken: testAccessToken, Expiry: expiry}); err != nil {
		t.Fatalf("UpdateSecret: %v", err)
	}
	got, err := svc.FindCredentialByID(ctx, c.ID)
	if err != nil || got.Secret == nil || got.Secret.AccessToken != testAccessToken {
		t.Fatalf("after UpdateSecret: %+v, %v", got, err)
	}
	checkTime(t, "ExpiresAt", got.ExpiresAt, expiry)
	if raw, _ := s.RawCredentials(ctx); strings.Contains(raw, testAccessToken) {
		t.Error("the updated access token is stored in clear")
	}
	wantCode(t, svc.UpdateSecret(ctx, "cred_missing", &agentsmcp.CredentialSecret{}), agentsmcp.ENOTFOUND, "UpdateSecret of a missing credential")
	if err := svc.DeleteCredential(ctx, c.ID); err != nil {
		t.Fatalf("DeleteCredential: %v", err)
	}
	wantCode(t, svc.DeleteCredential(ctx, c.ID), agentsmcp.ENOTFOUND, "second DeleteCredential")
	_, err = svc.FindCredentialByID(ctx, c.ID)
	wantCode(t, err, agentsmcp.ENOTFOUND, "FindCredentialByID after delete")
	if raw, _ := s.RawCredentials(ctx); bytes.Contains([]byte(raw), []byte(c.ID)) {
		t.Error("a deleted credential is still stored")
	}
}

func testOAuthStateSingleUse(t *testing.T, s Services) {
	ctx := t.Context()
	svc, _ := credentialStore(t, s)
	now := time.Now()
	for _, st := range []*agentsmcp.OAuthState{
		{Key: "live", CredentialID: "cred_1", Principal: "jwt:bob", Binding: "b1", Verifier: testVerifier, ExpiresAt: now.Add(10 * time.Minute)},
		{Key: "old", CredentialID: "cred_1", Verifier: "v", ExpiresAt: now.Add(time.Second)},
	} {
		if err := svc.CreateOAuthState(ctx, st); err != nil {
			t.Fatalf("CreateOAuthState %s: %v", st.Key, err)
		}
	}
	wantCode(t, svc.CreateOAuthState(ctx, &agentsmcp.OAuthState{Key: "live", CredentialID: "c", Verifier: "v", ExpiresAt: now.Add(time.Minute)}),
		agentsmcp.ECONFLICT, "second state with the same key")
	// Found any number of times (a link's page shown again), then taken
	// once.
	for range 2 {
		got, err := svc.FindOAuthState(ctx, "live", now)
		if err != nil {
			t.Fatalf("FindOAuthState: %v", err)
		}
		if got.Verifier != testVerifier || got.Principal != "jwt:bob" || got.CredentialID != "cred_1" || got.Binding != "b1" {
			t.Errorf("FindOAuthState = %+v", got)
		}
	}
	_, err := svc.FindOAuthState(ctx, "missing", now)
	wantCode(t, err, agentsmcp.ENOTFOUND, "FindOAuthState of a missing key")
	got, err := svc.TakeOAuthState(ctx, "live", now)
	if err != nil {
		t.Fatalf("TakeOAuthState: %v", err)
	}
	if got.Verifier != testVerifier || got.Principal != "jwt:bob" || got.CredentialID != "cred_1" || got.Binding != "b1" {
		t.Errorf("TakeOAuthState = %+v", got)
	}
	_, err = svc.FindOAuthState(ctx, "live", now)
	wantCode(t, err, agentsmcp.ENOTFOUND, "FindOAuthState after TakeOAuthState")
	_, err = svc.TakeOAuthState(ctx, "live", now)
	wantCode(t, err, agentsmcp.ENOTFOUND, "second TakeOAuthState")
	// Found or taken after its expiry: not found, and then gone.
	_, err = svc.FindOAuthState(ctx, "old", now.Add(time.Minute))
	wantCode(t, err, agentsmcp.ENOTFOUND, "FindOAuthState after expiry")
	_, err = svc.TakeOAuthState(ctx, "old", now.Add(time.Minute))
	wantCode(t, err, agentsmcp.ENOTFOUND, "TakeOAuthState after expiry")
	_, err = svc.TakeOAuthState(ctx, "old", now)
	wantCode(t, err, agentsmcp.ENOTFOUND, "TakeOAuthState of a state taken after its expiry")
}
