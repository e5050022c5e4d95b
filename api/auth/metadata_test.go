package auth

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/oauthex"

	agentsmcp "github.com/agents-mcp/agents-mcp"
)

func TestProtectedResourceMetadata(t *testing.T) {
	rs := newRSASigner(t, "rsa-1")
	is := newTestIssuer(t, rs)
	tests := []struct {
		name        string
		servers     []string
		wantServers []string
	}{
		{"issuer by default", nil, []string{testIssuerName}},
		{"configured servers", []string{"https://as1.example/", "https://as2.example/"}, []string{"https://as1.example/", "https://as2.example/"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := is.jwtConfig()
			cfg.AuthorizationServers = tt.servers
			a := newJWTAuthenticator(t, cfg)
			mux := http.NewServeMux()
			a.RegisterMetadata(mux)
			srv := httptest.NewServer(mux)
			defer srv.Close()
			for _, path := range []string{"/.well-known/oauth-protected-resource", "/.well-known/oauth-protected-resource/mcp"} {
				resp, err := http.Get(srv.URL + path)
				if err != nil {
					t.Fatal(err)
				}
				var md oauthex.ProtectedResourceMetadata
				err = json.NewDecoder(resp.Body).Decode(&md)
				resp.Body.Close()
				if err != nil || resp.StatusCode != http.StatusOK {
					t.Fatalf("GET %s: %d %v", path, resp.StatusCode, err)
				}
				if md.Resource != testResource || !slices.Equal(md.AuthorizationServers, tt.wantServers) ||
					!slices.Equal(md.ScopesSupported, agentsmcp.Scopes) || !slices.Equal(md.BearerMethodsSupported, []string{"header"}) {
					t.Errorf("GET %s: %+v", path, md)
				}
				if resp.Header.Get("Access-Control-Allow-Origin") != "*" {
					t.Errorf("GET %s: no CORS header; browser clients cannot discover the issuer", path)
				}
			}
			resp, err := http.Post(srv.URL+"/.well-known/oauth-protected-resource", "application/json", nil)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusMethodNotAllowed {
				t.Errorf("POST metadata: %d, want 405", resp.StatusCode)
			}
		})
	}

	// Without JWT nothing is mounted.
	a, err := New(Config{Keys: []Key{{Secret: mcpKey, Scopes: []string{"mcp"}}}})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	a.RegisterMetadata(mux)
	rec := httptest.NewRecorder()
	mux.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/.well-known/oauth-protected-resource", nil))
	if rec.Code != http.StatusNotFound {
		t.Errorf("metadata without JWT: %d, want 404", rec.Code)
	}
}

// A go-sdk OAuth client finds its way from our 401 to the issuer: it parses
// the challenge, fetches the metadata it names and accepts it.
func TestMetadataDiscoveryByGoSDKClient(t *testing.T) {
	rs := newRSASigner(t, "rsa-1")
	is := newTestIssuer(t, rs)
	mux := http.NewServeMux()
	srv := httptest.NewServer(mux)
	defer srv.Close()
	cfg := is.jwtConfig()
	cfg.Resource = srv.URL + "/mcp"
	cfg.AuthorizationServers = []string{"http://127.0.0.1:9/"} // loopback: go-sdk accepts http there
	a := newJWTAuthenticator(t, cfg)
	a.RegisterMetadata(mux)
	mux.Handle("/mcp", a.Middleware(agentsmcp.ScopeMCP)(okHandler))

	resp, err := http.Post(srv.URL+"/mcp", "application/json", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("no token: %d", resp.StatusCode)
	}
	challenges, err := oauthex.ParseWWWAuthenticate(resp.Header.Values("WWW-Authenticate"))
	if err != nil || len(challenges) != 1 || challenges[0].Scheme != "bearer" {
		t.Fatalf("challenges %+v, %v", challenges, err)
	}
	mdURL := challenges[0].Params["resource_metadata"]
	if mdURL != srv.URL+"/.well-known/oauth-protected-resource" {
		t.Fatalf("resource_metadata %q", mdURL)
	}
	md, err := oauthex.GetProtectedResourceMetadata(t.Context(), mdURL, cfg.Resource, http.DefaultClient)
	if err != nil {
		t.Fatalf("go-sdk refuses our metadata: %v", err)
	}
	if !slices.Equal(md.AuthorizationServers, cfg.AuthorizationServers) {
		t.Errorf("authorization servers %q", md.AuthorizationServers)
	}
}
