package mcphttp_test

import (
	"net/http/httptest"
	"testing"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/localtools"
	"github.com/agents-mcp/agents-mcp/router"
	"github.com/agents-mcp/agents-mcp/router/internal/routertest"
	"github.com/agents-mcp/agents-mcp/router/toolsearch"
)

// newHTTPServer serves a router with search_tools over real HTTP on loopback.
func newHTTPServer(t testing.TB, opts router.HTTPOptions) (*router.Router, *httptest.Server) {
	t.Helper()
	return routertest.NewHTTPServer(t, opts, searchTools)
}

// searchTools is a provider of search_tools over r.
func searchTools(t testing.TB, r *router.Router) agentsmcp.ToolProvider {
	t.Helper()
	local := localtools.New()
	if err := toolsearch.AddSearchTools(local, toolsearch.NewIndex(r, toolsearch.Options{})); err != nil {
		t.Fatal(err)
	}
	return local
}
