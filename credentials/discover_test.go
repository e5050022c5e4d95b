package credentials_test

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/credentials"
	"github.com/agents-mcp/agents-mcp/internal/oauthtest"
)

// loopbackClient dials itself, which opts out of go-sdk's refusal of
// private addresses during discovery: the test servers are on loopback.
func loopbackClient() *http.Client {
	return &http.Client{Transport: &http.Transport{DialContext: (&net.Dialer{}).DialContext}}
}

func TestDiscoverProtectedMCPServer(t *testing.T) {
	issuer := oauthtest.StartMockAS(t).Issuer
	s := mcp.NewServer(&mcp.Implementation{Name: "protected", Version: "1"}, nil)
	mcpH := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil)
	var srv *httptest.Server
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/.well-known/oauth-protected-resource/mcp" {
			auth.ProtectedResourceMetadataHandler(&oauthex.ProtectedResourceMetadata{Resource: srv.URL + "/mcp",
				AuthorizationServers: []string{issuer}, ScopesSupported: []string{"mcp:tools"}}).ServeHTTP(w, r)
			return
		}
		verify := func(context.Context, string, *http.Request) (*auth.TokenInfo, error) {
			return nil, auth.ErrInvalidToken
		}
		auth.RequireBearerToken(verify, &auth.RequireBearerTokenOptions{
			ResourceMetadataURL: srv.URL + "/.well-known/oauth-protected-resource/mcp"})(mcpH).ServeHTTP(w, r)
	}))
	defer srv.Close()

	d, err := credentials.Discover(t.Context(), loopbackClient(), srv.URL+"/mcp")
	if err != nil {
		t.Fatalf("Discover: %v", err)
	}
	if d.Issuer != issuer || d.AuthURL != issuer+"/authorize" || d.TokenURL != issuer+"/token" ||
		d.Resource != srv.URL+"/mcp" || len(d.Scopes) != 1 || d.Scopes[0] != "mcp:tools" {
		t.Errorf("Discover = %+v", d)
	}
	// oauth2-mock-server offers no dynamic registration: the error says
	// what to do instead.
	m := credentials.New(credentials.Options{Store: openStore(t), BaseURL: "http://127.0.0.1:8080", HTTP: loopbackClient()})
	if _, err := m.Register(t.Context(), "prot", d, ""); agentsmcp.ErrorCode(err) != agentsmcp.ENOTIMPLEMENTED {
		t.Errorf("Register without a registration endpoint: %v", err)
	}

	// A server that does not ask for OAuth.
	open := httptest.NewServer(mcpH)
	defer open.Close()
	if _, err := credentials.Discover(t.Context(), loopbackClient(), open.URL); agentsmcp.ErrorCode(err) != agentsmcp.ENOTFOUND {
		t.Errorf("Discover of an open server: %v", err)
	}
}
