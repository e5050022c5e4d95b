package main

import (
	"context"
	"crypto/rand"
	"errors"
	"net/http"
	"path/filepath"
	"testing"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/credentials"
	"github.com/agents-mcp/agents-mcp/memory/secrets"
	"github.com/agents-mcp/agents-mcp/memory/sqlite"
)

// The HTTP tools get the caller's credential of the source, else the
// shared one, as headers or query parameters; a missing authorization is
// the actionable error.
func TestCredentialAuthorizer(t *testing.T) {
	db, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "agents-mcp.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	key := make([]byte, secrets.KeySize)
	_, _ = rand.Read(key)
	sealer, _ := secrets.New(key)
	store := &secrets.Credentials{CredentialService: db, Sealer: sealer}
	for _, c := range []*agentsmcp.Credential{
		{Integration: "blog", Kind: agentsmcp.CredentialAPIKey, Settings: agentsmcp.CredentialSettings{Query: "key"}, Secret: &agentsmcp.CredentialSecret{Value: "shared-k"}},
		{Integration: "blog", Principal: "key:alice", Kind: agentsmcp.CredentialBearer, Secret: &agentsmcp.CredentialSecret{Value: "alice-t"}},
		{Integration: "crm", Kind: agentsmcp.CredentialAuthorizationCode, Settings: agentsmcp.CredentialSettings{ClientID: "c",
			AuthURL: "http://127.0.0.1:9/authorize", TokenURL: "http://127.0.0.1:9/token"}},
	} {
		if err := store.CreateCredential(t.Context(), c); err != nil {
			t.Fatal(err)
		}
	}
	auth := httpToolsAuth(credentials.New(credentials.Options{Store: store, BaseURL: "http://127.0.0.1:8080"}))
	as := func(id string) context.Context {
		return agentsmcp.WithPrincipal(t.Context(), &agentsmcp.Principal{ID: id})
	}

	req, _ := http.NewRequest(http.MethodGet, "http://127.0.0.1:1/posts?a=1", nil)
	h, err := auth.Authorize(as("key:bob"), "blog", req)
	if err != nil || len(h) != 0 || req.URL.RawQuery != "a=1&key=shared-k" {
		t.Errorf("bob (shared api key in the query): %v %v %q", h, err, req.URL.RawQuery)
	}
	req, _ = http.NewRequest(http.MethodGet, "http://127.0.0.1:1/posts", nil)
	h, err = auth.Authorize(as("key:alice"), "blog", req)
	if err != nil || h.Get("Authorization") != "Bearer alice-t" || req.URL.RawQuery != "" {
		t.Errorf("alice (her own bearer): %v %v %q", h, err, req.URL.RawQuery)
	}
	if h, err := auth.Authorize(as("key:alice"), "other", req); h != nil || err != nil {
		t.Errorf("a source without credential: %v %v", h, err)
	}
	_, err = auth.Authorize(as("key:alice"), "crm", req)
	var ar *agentsmcp.AuthorizationRequired
	if !errors.As(err, &ar) || ar.AuthorizeURL == "" {
		t.Errorf("crm without authorization: %v", err)
	}
}
