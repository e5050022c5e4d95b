package router_test

import (
	"context"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/internal/testutil"
	"github.com/agents-mcp/agents-mcp/router/internal/routertest"
)

// TestToolsListChangedPerModeAndView: a real client per session counts
// notifications/tools/list_changed while an upstream adds tools. The whole
// catalog in full mode is told of every change; a discovery-mode session,
// whose list (meta-tools and pinned tools) stays the same, is never told;
// a virtual server's session is told only of a change its view shows. Both
// under 2025-11-25 (sessions) and 2026-07-28 (a subscriptions/listen
// stream).
func TestToolsListChangedPerModeAndView(t *testing.T) {
	for _, version := range []string{"2025-11-25", ""} {
		t.Run("protocol "+version, func(t *testing.T) { testToolsListChanged(t, version) })
	}
}

func testToolsListChanged(t *testing.T, version string) {
	f := newVirtualFixture(t, &agentsmcp.VirtualServer{Name: "xdev", Tools: []agentsmcp.VirtualSelection{{Upstream: "x", Names: []string{"x__keep*"}}}})
	f.principals["disc"] = &agentsmcp.Principal{ID: "key:disc", Scopes: []string{agentsmcp.ScopeMCP}, CatalogMode: agentsmcp.CatalogDiscovery}
	x := &staticProvider{name: "x", tools: []*mcp.Tool{rawTool("x__keep1", `{"type":"object"}`)}}
	if err := f.router.AddProvider(context.Background(), x); err != nil {
		t.Fatal(err)
	}
	dial := func(token, path string) *atomic.Int32 {
		t.Helper()
		var n atomic.Int32
		c := mcp.NewClient(&mcp.Implementation{Name: "list-changed", Version: "1"}, &mcp.ClientOptions{
			ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { n.Add(1) },
		})
		cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: f.srv.URL + path,
			HTTPClient: &http.Client{Transport: routertest.Bearer{Token: token, Base: http.DefaultTransport}}, MaxRetries: -1},
			&mcp.ClientSessionOptions{ProtocolVersion: version})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cs.Close() })
		if _, err := cs.ListTools(context.Background(), nil); err != nil {
			t.Fatal(err)
		}
		return &n
	}
	whole, discovery, view := dial("wide", "/mcp"), dial("disc", "/mcp"), dial("wide", "/mcp/xdev")
	check := func(step string, wantWhole, wantView int32) {
		t.Helper()
		testutil.Eventually(t, 10*time.Second, step+": the whole catalog is told", func() bool { return whole.Load() == wantWhole })
		// The notifications go out one session after another: give the
		// others time to arrive, if they were (wrongly) sent.
		time.Sleep(500 * time.Millisecond)
		if got := view.Load(); got != wantView {
			t.Errorf("%s: the virtual server's session was told %d times, want %d", step, got, wantView)
		}
		if got := discovery.Load(); got != 0 {
			t.Errorf("%s: the discovery-mode session was told %d times, want 0 (its list did not change)", step, got)
		}
	}
	x.setTools(rawTool("x__keep1", `{"type":"object"}`), rawTool("x__other", `{"type":"object"}`))
	check("a tool outside the view", 1, 0)
	x.setTools(rawTool("x__keep1", `{"type":"object"}`), rawTool("x__other", `{"type":"object"}`), rawTool("x__keep2", `{"type":"object"}`))
	check("a tool inside the view", 2, 1)
}
