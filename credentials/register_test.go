package credentials_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/credentials"
)

// TestChooseRegistration: a Client ID Metadata Document comes before
// dynamic registration, and only with an https public URL (the spec
// requires an https client_id) and a server that accepts documents.
func TestChooseRegistration(t *testing.T) {
	both := &credentials.Discovery{Issuer: "https://as.example.test", RegistrationURL: "https://as.example.test/reg", ClientIDMetadata: true}
	cimdOnly := &credentials.Discovery{Issuer: "https://as.example.test", ClientIDMetadata: true}
	dcrOnly := &credentials.Discovery{Issuer: "https://as.example.test", RegistrationURL: "https://as.example.test/reg"}
	https := credentials.New(credentials.Options{Store: openStore(t), BaseURL: "https://agents.example.test/"})
	loopback := credentials.New(credentials.Options{Store: openStore(t), BaseURL: "http://127.0.0.1:8080"})
	for _, tc := range []struct {
		name   string
		m      *credentials.Manager
		d      *credentials.Discovery
		method string
		want   string
		code   string
	}{
		{"https, both", https, both, "", agentsmcp.RegistrationClientIDMetadata, ""},
		{"https, both, dynamic asked", https, both, agentsmcp.RegistrationDynamic, agentsmcp.RegistrationDynamic, ""},
		{"https, dynamic only", https, dcrOnly, "", agentsmcp.RegistrationDynamic, ""},
		{"https, document asked, not accepted", https, dcrOnly, agentsmcp.RegistrationClientIDMetadata, "", agentsmcp.EINVALID},
		{"http, both", loopback, both, "", agentsmcp.RegistrationDynamic, ""},
		{"http, document asked", loopback, both, agentsmcp.RegistrationClientIDMetadata, "", agentsmcp.EINVALID},
		{"http, document only", loopback, cimdOnly, "", "", agentsmcp.ENOTIMPLEMENTED},
		{"unknown method", https, both, "magic", "", agentsmcp.EINVALID},
	} {
		got, err := tc.m.ChooseRegistration("prot", tc.d, tc.method)
		if got != tc.want || agentsmcp.ErrorCode(err) != tc.code {
			t.Errorf("%s: %q, %v; want %q, %s", tc.name, got, err, tc.want, tc.code)
		}
		if tc.name == "http, document asked" && !strings.Contains(agentsmcp.ErrorMessage(err), "https public_url") {
			t.Errorf("%s: the error does not say what to do: %v", tc.name, err)
		}
	}
	// By document: nothing is sent, the client_id is the document's URL,
	// and there is no secret.
	c, err := https.Register(t.Context(), "prot", cimdOnly, "")
	if err != nil || c.Settings.ClientID != "https://agents.example.test/oauth/client-metadata.json" ||
		c.Settings.Registration != agentsmcp.RegistrationClientIDMetadata || c.Secret.ClientSecret != "" {
		t.Errorf("Register by document: %+v, %v", c, err)
	}
}

func TestClientMetadataDocument(t *testing.T) {
	m := credentials.New(credentials.Options{Store: openStore(t), BaseURL: "https://agents.example.test"})
	srv := httptest.NewServer(m.ClientMetadataHandler())
	defer srv.Close()
	resp, err := http.Get(srv.URL + credentials.ClientMetadataPath)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var doc map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&doc); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET: %d, %v", resp.StatusCode, err)
	}
	if doc["client_id"] != "https://agents.example.test/oauth/client-metadata.json" || doc["token_endpoint_auth_method"] != "none" ||
		doc["redirect_uris"].([]any)[0] != "https://agents.example.test/oauth/callback" || doc["client_secret"] != nil {
		t.Errorf("document: %v", doc)
	}
	if resp.Header.Get("Content-Type") != "application/json" {
		t.Errorf("Content-Type %q", resp.Header.Get("Content-Type"))
	}
	post, err := http.Post(srv.URL+credentials.ClientMetadataPath, "application/json", nil)
	if err != nil {
		t.Fatal(err)
	}
	post.Body.Close()
	if post.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("POST: %d", post.StatusCode)
	}
}
