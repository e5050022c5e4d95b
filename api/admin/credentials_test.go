package admin_test

import (
	"crypto/rand"
	"net/http"
	"net/url"
	"strings"
	"testing"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/api/admin"
	"github.com/agents-mcp/agents-mcp/credentials"
	"github.com/agents-mcp/agents-mcp/internal/oauthtest"
	"github.com/agents-mcp/agents-mcp/memory/secrets"
)

func TestCredentials(t *testing.T) {
	key := make([]byte, secrets.KeySize)
	_, _ = rand.Read(key)
	sealer, err := secrets.New(key)
	if err != nil {
		t.Fatal(err)
	}
	var store *secrets.Credentials
	var manager *credentials.Manager
	e := newEnv(t, envOptions{edit: func(o *admin.Options) {
		store = &secrets.Credentials{CredentialService: o.Tasks.(agentsmcp.CredentialService), Sealer: sealer}
		manager = credentials.New(credentials.Options{Store: store, BaseURL: "http://127.0.0.1:8080"})
		o.Credentials, o.Authorizer = store, manager
	}})
	const secret = "sk-admin-test-5d2c9b1a"

	// Create: 201 without the secret; the secret is usable and sealed.
	r := e.do(request{method: http.MethodPost, path: admin.Prefix + "/credentials", as: writeOnly, body: map[string]any{
		"integration": "blog", "kind": "api_key", "header": "X-Api-Key", "value": secret}})
	if r.status != http.StatusCreated || strings.Contains(string(r.body), secret) {
		t.Fatalf("create: %d %s", r.status, r.body)
	}
	var created admin.CredentialView
	r.decode(t, &created)
	if created.Integration != "blog" || created.Principal != "" || created.CreatedBy != writeOnly.id || !strings.HasPrefix(created.ID, "cred_") {
		t.Errorf("created = %+v", created)
	}
	applied, err := manager.Credentials(t.Context(), "blog", "key:anyone")
	if err != nil || applied.Header.Get("X-Api-Key") != secret {
		t.Fatalf("the stored credential does not apply: %v, %v", applied, err)
	}

	// An OAuth client shared by everyone, and the flow it starts.
	r = e.do(request{method: http.MethodPost, path: admin.Prefix + "/credentials", as: adminAll, body: map[string]any{
		"integration": "crm", "kind": "oauth_authorization_code", "clientId": "agents-mcp",
		"authUrl": "http://127.0.0.1:9/authorize", "tokenUrl": "http://127.0.0.1:9/token", "scopes": []string{"crm"}}})
	if r.status != http.StatusCreated {
		t.Fatalf("create oauth client: %d %s", r.status, r.body)
	}
	r = e.do(request{method: http.MethodPost, path: admin.Prefix + "/credentials", as: adminAll, body: map[string]any{
		"integration": "blog", "kind": "bearer", "value": "x"}})
	if r.status != http.StatusConflict {
		t.Errorf("second shared credential of blog: %d %s", r.status, r.body)
	}
	for _, bad := range []map[string]any{
		{"integration": "x", "kind": "password", "value": "v"},
		{"integration": "x", "kind": "bearer"},
		{"integration": "x", "kind": "basic", "value": "v"},
		{"integration": "x", "kind": "oauth_client_credentials", "clientId": "c", "tokenUrl": "ftp://x/token", "clientSecret": "s"},
	} {
		if r := e.do(request{method: http.MethodPost, path: admin.Prefix + "/credentials", as: adminAll, body: bad}); r.status != http.StatusBadRequest {
			t.Errorf("create %v: %d %s", bad, r.status, r.body)
		}
	}
	r = e.do(request{method: http.MethodPost, path: admin.Prefix + "/credentials/authorize", as: adminAll, body: map[string]any{"integration": "crm"}})
	if r.status != http.StatusOK {
		t.Fatalf("authorize: %d %s", r.status, r.body)
	}
	var started admin.AuthorizationStarted
	r.decode(t, &started)
	// The link is agents-mcp's own; confirmed on its page, it sends the
	// browser to the authorization server.
	if !strings.HasPrefix(started.AuthorizationURL, "http://127.0.0.1:8080"+credentials.StartPath+"?flow=") || started.Principal != adminAll.id {
		t.Errorf("authorization started: %+v", started)
	}
	u, err := url.Parse(oauthtest.StartInProcess(t, manager, started.AuthorizationURL))
	if err != nil || u.Host != "127.0.0.1:9" || u.Query().Get("code_challenge_method") != "S256" ||
		u.Query().Get("redirect_uri") != "http://127.0.0.1:8080/oauth/callback" {
		t.Errorf("the link led to %v", u)
	}
	r = e.do(request{method: http.MethodPost, path: admin.Prefix + "/credentials/authorize", as: adminAll, body: map[string]any{"integration": "crm", "shared": true}})
	r.decode(t, &started)
	if r.status != http.StatusOK || started.Principal != "" {
		t.Errorf("authorize for the server itself: %d %s", r.status, r.body)
	}
	if r := e.do(request{method: http.MethodPost, path: admin.Prefix + "/credentials/authorize", as: adminAll, body: map[string]any{"integration": "blog"}}); r.status != http.StatusNotFound {
		t.Errorf("authorize an integration without an OAuth client: %d %s", r.status, r.body)
	}

	// List: no secrets; scopes are enforced.
	r = e.do(request{method: http.MethodGet, path: admin.Prefix + "/credentials", as: readOnly})
	var page admin.Page[admin.CredentialView]
	r.decode(t, &page)
	if r.status != http.StatusOK || len(page.Items) != 2 || page.Items[0].Integration != "blog" || strings.Contains(string(r.body), secret) {
		t.Errorf("list: %d %s", r.status, r.body)
	}
	if r := e.do(request{method: http.MethodGet, path: admin.Prefix + "/credentials?integration=crm&principal=", as: readOnly}); !strings.Contains(string(r.body), `"crm"`) || strings.Contains(string(r.body), `"blog"`) {
		t.Errorf("filtered list: %s", r.body)
	}
	if r := e.do(request{method: http.MethodPost, path: admin.Prefix + "/credentials", as: readOnly, body: map[string]any{"integration": "y", "kind": "bearer", "value": "v"}}); r.status != http.StatusForbidden {
		t.Errorf("create with admin:read only: %d", r.status)
	}
	if r := e.do(request{method: http.MethodGet, path: admin.Prefix + "/credentials", as: mcpOnly}); r.status != http.StatusForbidden {
		t.Errorf("list with mcp only: %d", r.status)
	}

	// Delete.
	if r := e.do(request{method: http.MethodDelete, path: admin.Prefix + "/credentials/" + created.ID, as: writeOnly}); r.status != http.StatusNoContent {
		t.Errorf("delete: %d %s", r.status, r.body)
	}
	if r := e.do(request{method: http.MethodDelete, path: admin.Prefix + "/credentials/" + created.ID, as: writeOnly}); r.status != http.StatusNotFound {
		t.Errorf("second delete: %d %s", r.status, r.body)
	}

	// The audit trail has the writes, never the secret.
	found := false
	for _, a := range e.audit.all() {
		if strings.Contains(string(a.Arguments)+a.Error, secret) {
			t.Errorf("audit entry holds the secret: %+v (arguments %s)", a, a.Arguments)
		}
		found = found || a.Target == "POST /admin/v1/credentials" && strings.Contains(string(a.Arguments), `"blog"`)
	}
	if !found {
		t.Error("the create was not audited")
	}
}
