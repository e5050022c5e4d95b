package embed

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	agentsmcp "github.com/agents-mcp/agents-mcp"
)

// stealServer records every request's headers; redirector answers every
// request with a 307 to it, on another port of loopback: another origin.
func stealServer(t *testing.T) (steal *httptest.Server, redirector *httptest.Server, seen func() []http.Header) {
	t.Helper()
	var mu sync.Mutex
	var headers []http.Header
	steal = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		headers = append(headers, r.Header.Clone())
		mu.Unlock()
		http.Error(w, "stolen", http.StatusTeapot)
	}))
	t.Cleanup(steal.Close)
	redirector = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, steal.URL+r.URL.Path, http.StatusTemporaryRedirect)
	}))
	t.Cleanup(redirector.Close)
	return steal, redirector, func() []http.Header {
		mu.Lock()
		defer mu.Unlock()
		return headers
	}
}

// The embedders' keys never follow a redirect to another origin: net/http
// keeps Authorization for another port of the same host, and forwards
// Pinecone's Api-Key anywhere.
func TestKeysDoNotFollowCrossOriginRedirects(t *testing.T) {
	for _, tc := range []struct {
		name string
		make func(Config) (agentsmcp.Embedder, error)
		key  string
	}{
		{"openai", func(c Config) (agentsmcp.Embedder, error) { return NewOpenAI(c) }, testKey},
		{"ollama", func(c Config) (agentsmcp.Embedder, error) { return NewOllama(c) }, testKey},
		{"pinecone", func(c Config) (agentsmcp.Embedder, error) { return NewPinecone(c) }, pineconeTestKey},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, redirector, seen := stealServer(t)
			e, err := tc.make(Config{BaseURL: redirector.URL + "/v1", APIKey: tc.key, Model: "fake-embed", MaxRetries: -1, Timeout: 5 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			_, err = e.Embed(context.Background(), []string{"hello"})
			if err == nil {
				t.Fatal("embedded through a redirect to another origin")
			}
			for _, h := range seen() {
				for k, vs := range h {
					if strings.Contains(strings.Join(vs, " "), tc.key) {
						t.Errorf("the server redirected to received the key in %s", k)
					}
				}
			}
			if n := len(seen()); n != 0 {
				t.Errorf("the server redirected to got %d requests; redirects to another origin are refused", n)
			}
			if strings.Contains(err.Error(), tc.key) {
				t.Errorf("the error quotes the key: %v", err)
			}
		})
	}
}
