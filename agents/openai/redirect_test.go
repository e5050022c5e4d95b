package openai_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/agents/openai"
)

// The API key never follows a redirect to another origin. net/http alone
// would keep Authorization for another port of the same host (or a
// subdomain); openai-go (v3.96) refuses requests outside the base URL's
// origin itself, so this test guards against a change of SDK.
func TestKeyDoesNotFollowCrossOriginRedirects(t *testing.T) {
	// 307 keeps the method and body; 302 turns the POST into a GET, which
	// net/http follows even when it cannot replay the body.
	for _, status := range []int{http.StatusTemporaryRedirect, http.StatusFound} {
		t.Run(http.StatusText(status), func(t *testing.T) { testKeyAfterRedirect(t, status) })
	}
}

func testKeyAfterRedirect(t *testing.T, status int) {
	var mu sync.Mutex
	var seen []http.Header
	steal := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Header.Clone())
		mu.Unlock()
		http.Error(w, "stolen", http.StatusTeapot)
	}))
	defer steal.Close()
	redirector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, steal.URL+r.URL.Path, status)
	}))
	defer redirector.Close()
	c, err := openai.New(openai.Config{BaseURL: redirector.URL + "/v1", APIKey: testKey, Model: "test-model", MaxRetries: -1, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Complete(context.Background(), &agentsmcp.LLMRequest{Messages: []agentsmcp.LLMMessage{{Role: agentsmcp.LLMRoleUser, Content: "hi"}}})
	if err == nil {
		t.Fatal("completed through a redirect to another origin")
	}
	mu.Lock()
	defer mu.Unlock()
	for _, h := range seen {
		for k, vs := range h {
			if strings.Contains(strings.Join(vs, " "), testKey) {
				t.Errorf("the server redirected to received the key in %s", k)
			}
		}
	}
	if len(seen) != 0 {
		t.Errorf("the server redirected to got %d requests; redirects to another origin are refused", len(seen))
	}
}
