package main

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/credentials"
	"github.com/agents-mcp/agents-mcp/httptools"
	"github.com/agents-mcp/agents-mcp/internal/mcpwire"
	"github.com/agents-mcp/agents-mcp/internal/oauthtest"
	"github.com/agents-mcp/agents-mcp/memory/secrets"
	"github.com/agents-mcp/agents-mcp/memory/sqlite"
)

// The HTTP tools get the caller's credential of the source, else the
// shared one, as headers or query parameters. A missing authorization, and
// a 401 to a request that carried a credential, are the actionable
// result (the refused token dropped, so the next call gets a new one); a
// 401 of a source without credential stays the API's own answer.
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

	// A token endpoint whose first token the API refuses.
	var issued atomic.Int32
	as := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tok := "good"
		if issued.Add(1) == 1 {
			tok = "stale"
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"access_token": tok, "token_type": "bearer", "expires_in": 3600})
	}))
	t.Cleanup(as.Close)
	var calls atomic.Int32
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		switch {
		case r.URL.Query().Get("key") == "shared-k", r.Header.Get("Authorization") == "Bearer alice-t",
			r.Header.Get("Authorization") == "Bearer good", r.Header.Get("X-Api-Key") == "good-k":
			_, _ = io.WriteString(w, `{"ok":true}`)
		default:
			http.Error(w, "denied by the API", http.StatusUnauthorized)
		}
	}))
	t.Cleanup(api.Close)

	for _, c := range []*agentsmcp.Credential{
		{Integration: "blog", Kind: agentsmcp.CredentialAPIKey, Settings: agentsmcp.CredentialSettings{Query: "key"}, Secret: &agentsmcp.CredentialSecret{Value: "shared-k"}},
		{Integration: "blog", Principal: "key:alice", Kind: agentsmcp.CredentialBearer, Secret: &agentsmcp.CredentialSecret{Value: "alice-t"}},
		{Integration: "crm", Kind: agentsmcp.CredentialAuthorizationCode, Settings: agentsmcp.CredentialSettings{ClientID: "c",
			AuthURL: "http://127.0.0.1:9/authorize", TokenURL: "http://127.0.0.1:9/token"}},
		{Integration: "cc", Kind: agentsmcp.CredentialClientCredentials, Settings: agentsmcp.CredentialSettings{ClientID: "c",
			TokenURL: as.URL + "/token"}, Secret: &agentsmcp.CredentialSecret{ClientSecret: "cs"}},
		{Integration: "keyed", Kind: agentsmcp.CredentialAPIKey, Secret: &agentsmcp.CredentialSecret{Value: "wrong-k"}},
	} {
		if err := store.CreateCredential(t.Context(), c); err != nil {
			t.Fatal(err)
		}
	}
	manager := credentials.New(credentials.Options{Store: store, BaseURL: "http://127.0.0.1:8080"})
	opts := httptools.Options{Auth: httpToolsAuth(manager)}
	call := func(principal, source string) *mcp.CallToolResult {
		t.Helper()
		p, err := httptools.Load(t.Context(), httptools.Source{Name: source, BaseURL: api.URL,
			Endpoints: []httptools.Endpoint{{Name: "get", Method: "GET", Path: "/things"}}}, opts)
		if err != nil {
			t.Fatal(err)
		}
		ctx := agentsmcp.WithPrincipal(t.Context(), &agentsmcp.Principal{ID: principal})
		res, err := p.CallTool(ctx, &mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{Name: source + "__get"}})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	text := func(res *mcp.CallToolResult) string { return res.Content[0].(*mcp.TextContent).Text }

	if res := call("key:bob", "blog"); res.IsError {
		t.Errorf("bob (shared api key in the query): %s", text(res))
	}
	if res := call("key:alice", "blog"); res.IsError {
		t.Errorf("alice (her own bearer): %s", text(res))
	}
	res := call("key:alice", "open")
	if _, ok := mcpwire.AuthorizationRequiredFrom(res); ok || !res.IsError || !strings.Contains(text(res), "HTTP 401") ||
		!strings.Contains(text(res), "denied by the API") {
		t.Errorf("a 401 of a source without credential: %+v %s", res.Meta, text(res))
	}

	before := calls.Load()
	res = call("key:alice", "crm")
	if ar, ok := mcpwire.AuthorizationRequiredFrom(res); !ok || ar.Integration != "crm" ||
		!strings.HasPrefix(ar.AuthorizeURL, "http://127.0.0.1:8080"+credentials.StartPath+"?flow=") {
		t.Errorf("crm without authorization: %v %s", ar, text(res))
	} else if asURL := oauthtest.StartInProcess(t, manager, ar.AuthorizeURL); !strings.HasPrefix(asURL, "http://127.0.0.1:9/authorize?") {
		t.Errorf("crm's link led to %s", asURL)
	}
	if calls.Load() != before {
		t.Error("a call without authorization reached the API")
	}

	// The first token is refused: dropped, and the next call fetches one.
	res = call("key:alice", "cc")
	if ar, ok := mcpwire.AuthorizationRequiredFrom(res); !ok || ar.Integration != "cc" || !strings.Contains(ar.Reason, "401") {
		t.Errorf("cc with a refused token: %v %s", ar, text(res))
	}
	if res := call("key:alice", "cc"); res.IsError || issued.Load() != 2 {
		t.Errorf("cc after the refusal (%d tokens issued): %s", issued.Load(), text(res))
	}

	// A refused api key asks an administrator; once one that works is
	// stored, the call succeeds.
	res = call("key:alice", "keyed")
	if ar, ok := mcpwire.AuthorizationRequiredFrom(res); !ok || ar.AuthorizeURL != "" || !strings.Contains(text(res), "POST /admin/v1/credentials") {
		t.Errorf("keyed with a refused key: %v %s", ar, text(res))
	}
	old, err := store.FindCredential(t.Context(), "keyed", "")
	if err != nil {
		t.Fatal(err)
	}
	if err := store.DeleteCredential(t.Context(), old.ID); err != nil {
		t.Fatal(err)
	}
	if err := store.CreateCredential(t.Context(), &agentsmcp.Credential{Integration: "keyed", Kind: agentsmcp.CredentialAPIKey,
		Secret: &agentsmcp.CredentialSecret{Value: "good-k"}}); err != nil {
		t.Fatal(err)
	}
	if res := call("key:alice", "keyed"); res.IsError {
		t.Errorf("keyed with a good key: %s", text(res))
	}
}
