package auth_test

import (
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/api/auth"
)

// Protect an MCP endpoint with scoped API keys and a per-principal rate
// limit, and an admin API whose reads and writes need different scopes.
func ExampleAuthenticator_Middleware() {
	a, err := auth.New(auth.Config{
		Keys: []auth.Key{
			{Name: "ci-bot", Secret: "ci-bot-secret", Scopes: []string{agentsmcp.ScopeMCP}, Tools: []string{"everything__*"}},
			{Name: "ops", Secret: "ops-secret", Scopes: []string{agentsmcp.ScopeAdminRead}},
		},
		OnFailure: func(r *http.Request, hint string, status int, reason string) {
			fmt.Printf("audit: %s %s by %s: %d %s\n", r.Method, r.URL.Path, hint, status, reason)
		},
	})
	if err != nil {
		log.Fatal(err)
	}
	limiter := auth.NewLimiter(auth.DefaultRateLimit, auth.DefaultRateBurst)

	whoami := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p := agentsmcp.PrincipalFrom(r.Context())
		fmt.Fprintf(w, "%s may use everything__echo: %v", p.Name, p.MayUseTool("everything__echo"))
	})
	mux := http.NewServeMux()
	mux.Handle("/mcp", a.Middleware(agentsmcp.ScopeMCP)(limiter.Middleware(whoami)))
	mux.Handle("GET /admin/", a.Middleware(agentsmcp.ScopeAdminRead)(limiter.Middleware(whoami)))
	mux.Handle("/admin/", a.Middleware(agentsmcp.ScopeAdminWrite)(limiter.Middleware(whoami)))
	srv := httptest.NewServer(mux)
	defer srv.Close()

	call := func(method, path, key string) {
		req, _ := http.NewRequest(method, srv.URL+path, nil)
		if key != "" {
			req.Header.Set("Authorization", "Bearer "+key)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			log.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		fmt.Printf("%s %s: %d %s\n", method, path, resp.StatusCode, strings.TrimSpace(string(body)))
	}
	call("POST", "/mcp", "ci-bot-secret")
	call("POST", "/mcp", "")
	call("GET", "/admin/v1/upstreams", "ops-secret")
	call("DELETE", "/admin/v1/upstreams/x", "ops-secret")
	// Output:
	// POST /mcp: 200 ci-bot may use everything__echo: true
	// audit: POST /mcp by none: 401 missing bearer token
	// POST /mcp: 401 {"error":{"code":"unauthenticated","message":"missing bearer token"}}
	// GET /admin/v1/upstreams: 200 ops may use everything__echo: true
	// audit: DELETE /admin/v1/upstreams/x by key:32323cfa9ec9: 403 requires scope admin:write
	// DELETE /admin/v1/upstreams/x: 403 {"error":{"code":"forbidden","message":"requires scope admin:write"}}
}
