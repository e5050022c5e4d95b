package admin_test

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/api/admin"
	"github.com/agents-mcp/agents-mcp/credentials"
	"github.com/agents-mcp/agents-mcp/internal/oauthtest"
	"github.com/agents-mcp/agents-mcp/memory/secrets"
)

// protectedServer is a go-sdk MCP server behind auth.RequireBearerToken
// whose RFC 9728 metadata names the authorization server at issuer.
func protectedServer(t *testing.T, issuer string) string {
	s := mcp.NewServer(&mcp.Implementation{Name: "protected", Version: "1"}, nil)
	mcpH := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil)
	var srv *httptest.Server
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/.well-known/oauth-protected-resource/mcp" {
			auth.ProtectedResourceMetadataHandler(&oauthex.ProtectedResourceMetadata{Resource: srv.URL + "/mcp",
				AuthorizationServers: []string{issuer}, ScopesSupported: []string{"mcp"}}).ServeHTTP(w, r)
			return
		}
		verify := func(context.Context, string, *http.Request) (*auth.TokenInfo, error) {
			return nil, auth.ErrInvalidToken
		}
		auth.RequireBearerToken(verify, &auth.RequireBearerTokenOptions{
			ResourceMetadataURL: srv.URL + "/.well-known/oauth-protected-resource/mcp"})(mcpH).ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/mcp"
}

// TestOAuthDiscoverAndRegister runs the routes over go-sdk's protected
// server and the RFC 8414 document of an authorization server that
// accepts Client ID Metadata Documents and offers no dynamic
// registration: registering by document sends nothing to the server, so
// its metadata is all this test needs of it. Dynamic registration is
// tested against a real authorization server in scripts/e2e/oauth-dcr.test.mjs.
func TestOAuthDiscoverAndRegister(t *testing.T) {
	var as *httptest.Server
	as = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/.well-known/oauth-authorization-server" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"issuer": as.URL, "authorization_endpoint": as.URL + "/authorize",
			"token_endpoint": as.URL + "/token", "response_types_supported": []string{"code"},
			"code_challenge_methods_supported": []string{"S256"}, "client_id_metadata_document_supported": true})
	}))
	defer as.Close()
	resource := protectedServer(t, as.URL)

	loopback := &http.Client{Transport: &http.Transport{DialContext: (&net.Dialer{}).DialContext}}
	var store *secrets.Credentials
	var m *credentials.Manager
	e := newEnv(t, envOptions{edit: func(o *admin.Options) {
		store = o.Credentials.(*secrets.Credentials)
		m = credentials.New(credentials.Options{Store: store, BaseURL: "https://agents.example.test", HTTP: loopback})
		o.Authorizer, o.Registrar = m, admin.ManagerRegistrar{Manager: m, Store: store}
	}})

	r := e.do(request{method: http.MethodPost, path: admin.Prefix + "/credentials/discover", as: adminAll,
		body: map[string]any{"integration": "prot", "url": resource}})
	var d admin.OAuthDiscovery
	r.decode(t, &d)
	if r.status != http.StatusOK || d.Issuer != as.URL || d.Resource != resource || d.TokenEndpoint != as.URL+"/token" ||
		!d.ClientIDMetadataDocumentSupported || d.Registration != agentsmcp.RegistrationClientIDMetadata || d.Registered != "" {
		t.Fatalf("discover: %d %s", r.status, r.body)
	}
	for _, bad := range []map[string]any{
		{"url": resource},
		{"integration": "prot", "url": "ftp://x/mcp"},
		{"integration": "prot", "url": resource, "method": "dynamic"},
	} {
		if r := e.do(request{method: http.MethodPost, path: admin.Prefix + "/credentials/discover", as: adminAll, body: bad}); r.status != http.StatusBadRequest {
			t.Errorf("discover %v: %d %s", bad, r.status, r.body)
		}
	}
	if r := e.do(request{method: http.MethodPost, path: admin.Prefix + "/credentials/discover", as: readOnly,
		body: map[string]any{"integration": "prot", "url": resource}}); r.status != http.StatusForbidden {
		t.Errorf("discover with admin:read: %d", r.status)
	}
	// The server offers no dynamic registration: asking for it is refused.
	if r := e.do(request{method: http.MethodPost, path: admin.Prefix + "/credentials/register", as: adminAll,
		body: map[string]any{"integration": "prot", "url": resource, "method": "dynamic"}}); r.status != http.StatusBadRequest ||
		!strings.Contains(string(r.body), "no dynamic client registration") {
		t.Errorf("register by DCR without an endpoint: %d %s", r.status, r.body)
	}

	r = e.do(request{method: http.MethodPost, path: admin.Prefix + "/credentials/register", as: adminAll,
		body: map[string]any{"integration": "prot", "url": resource}})
	var c admin.CredentialView
	r.decode(t, &c)
	if r.status != http.StatusCreated || c.Principal != "" || c.Kind != agentsmcp.CredentialAuthorizationCode ||
		c.Settings.ClientID != "https://agents.example.test"+credentials.ClientMetadataPath ||
		c.Settings.Registration != agentsmcp.RegistrationClientIDMetadata || c.Settings.Resource != resource || c.Settings.Issuer != as.URL {
		t.Fatalf("register: %d %s", r.status, r.body)
	}
	// The stored client starts flows whose client_id is the document's URL.
	r = e.do(request{method: http.MethodPost, path: admin.Prefix + "/credentials/authorize", as: adminAll, body: map[string]any{"integration": "prot"}})
	var started admin.AuthorizationStarted
	r.decode(t, &started)
	if r.status != http.StatusOK {
		t.Fatalf("authorize after register: %d %s", r.status, r.body)
	}
	if asURL := oauthtest.StartInProcess(t, m, started.AuthorizationURL); !strings.Contains(asURL, "client_id=https%3A%2F%2Fagents.example.test%2Foauth%2Fclient-metadata.json") ||
		!strings.HasPrefix(asURL, as.URL+"/authorize?") {
		t.Errorf("the link after register led to %s", asURL)
	}
	// A second registration would orphan the first: refused, and
	// discover names the client in use.
	if r := e.do(request{method: http.MethodPost, path: admin.Prefix + "/credentials/register", as: adminAll,
		body: map[string]any{"integration": "prot", "url": resource}}); r.status != http.StatusConflict {
		t.Errorf("second register: %d %s", r.status, r.body)
	}
	r = e.do(request{method: http.MethodPost, path: admin.Prefix + "/credentials/discover", as: adminAll,
		body: map[string]any{"integration": "prot", "url": resource}})
	r.decode(t, &d)
	if d.Registered != c.ID {
		t.Errorf("discover after register: %s", r.body)
	}
	// A server without OAuth.
	open := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server {
		return mcp.NewServer(&mcp.Implementation{Name: "open", Version: "1"}, nil)
	}, nil))
	defer open.Close()
	if r := e.do(request{method: http.MethodPost, path: admin.Prefix + "/credentials/register", as: adminAll,
		body: map[string]any{"integration": "open", "url": open.URL}}); r.status != http.StatusNotFound {
		t.Errorf("register a server without OAuth: %d %s", r.status, r.body)
	}
	// The audit trail has both routes.
	var discovered, registered bool
	for _, a := range e.audit.all() {
		discovered = discovered || a.Target == "POST /admin/v1/credentials/discover"
		registered = registered || a.Target == "POST /admin/v1/credentials/register"
	}
	if !discovered || !registered {
		t.Errorf("audited: discover %v, register %v", discovered, registered)
	}
}

// TestOAuthRegistrarMissing: without a credential store the routes answer
// 503, like the other credential routes.
func TestOAuthRegistrarMissing(t *testing.T) {
	e := newEnv(t, envOptions{edit: func(o *admin.Options) { o.Registrar = nil }})
	if r := e.do(request{method: http.MethodPost, path: admin.Prefix + "/credentials/register", as: adminAll,
		body: map[string]any{"integration": "prot"}}); r.status != http.StatusServiceUnavailable {
		t.Errorf("register without a registrar: %d %s", r.status, r.body)
	}
}
