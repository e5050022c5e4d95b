package router_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/internal/testutil"
	"github.com/agents-mcp/agents-mcp/router"
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

// TestToolsListDigestMemoised: the digest of a caller's listing, which
// decides who is told notifications/tools/list_changed, is made once per
// allowlist, mode and virtual server while the registry stays the same.
// Two principals with no allowlist and one with an allowlist list tools
// several times each over real sessions: two listings are hashed (one per
// allowlist), not one per tools/list. After a registry change, each is
// hashed once more, however many sessions re-check it and list again.
func TestToolsListDigestMemoised(t *testing.T) {
	f := newVirtualFixture(t)
	f.principals["wide2"] = &agentsmcp.Principal{ID: "key:wide2", Scopes: []string{agentsmcp.ScopeMCP}}
	f.principals["narrow"] = &agentsmcp.Principal{ID: "key:narrow", Scopes: []string{agentsmcp.ScopeMCP}, Tools: []string{"gh__*"}}
	x := &staticProvider{name: "x", tools: []*mcp.Tool{rawTool("x__a", `{"type":"object"}`)}}
	if err := f.router.AddProvider(context.Background(), x); err != nil {
		t.Fatal(err)
	}
	var told atomic.Int32
	var sessions []*mcp.ClientSession
	for _, token := range []string{"wide", "wide2", "narrow"} {
		c := mcp.NewClient(&mcp.Implementation{Name: "digest", Version: "1"}, &mcp.ClientOptions{
			ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { told.Add(1) },
		})
		cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: f.srv.URL + "/mcp",
			HTTPClient: &http.Client{Transport: routertest.Bearer{Token: token, Base: http.DefaultTransport}}, MaxRetries: -1},
			&mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cs.Close() })
		sessions = append(sessions, cs)
	}
	listAll := func() {
		t.Helper()
		for range 3 {
			for _, cs := range sessions {
				if _, err := cs.ListTools(context.Background(), nil); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	base := f.router.ListingsHashedForTest()
	listAll()
	if got := f.router.ListingsHashedForTest() - base; got != 2 {
		t.Fatalf("9 tools/list by 3 principals with 2 allowlists hashed %d listings, want 2", got)
	}
	x.setTools(rawTool("x__a", `{"type":"object"}`), rawTool("x__b", `{"type":"object"}`))
	testutil.Eventually(t, 10*time.Second, "the two unrestricted sessions are told", func() bool { return told.Load() == 2 })
	listAll()
	time.Sleep(300 * time.Millisecond) // a late re-check would show here
	if got := f.router.ListingsHashedForTest() - base; got != 4 {
		t.Errorf("after a registry change, re-checks and 9 more tools/list: %d listings hashed in all, want 4", got)
	}
	if got := told.Load(); got != 2 {
		t.Errorf("list_changed told %d times, want 2 (the narrow caller's listing did not change)", got)
	}
}

// BenchmarkToolsList: tools/list of a 1,200-tool catalog over a real
// session, with the listing digest memoised and with it made afresh on
// every tools/list page (the baseline: what every tools/list cost before).
func BenchmarkToolsList(b *testing.B) {
	ctx := context.Background()
	tools := make([]*mcp.Tool, 1200)
	for i := range tools {
		tools[i] = rawTool(fmt.Sprintf("big__tool_%04d", i), benchToolSchema)
	}
	r := router.New(router.Options{})
	if err := r.AddProvider(ctx, &staticProvider{name: "big", tools: tools}); err != nil {
		b.Fatal(err)
	}
	st, ct := mcp.NewInMemoryTransports()
	ss, err := r.Server().Connect(ctx, st, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer ss.Close()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer cs.Close()
	for _, memo := range []bool{true, false} {
		name := "memoised"
		if !memo {
			name = "digest-each-list-baseline"
		}
		b.Run(name, func(b *testing.B) {
			defer router.SetListingDigestMemoForTest(memo)()
			before := r.ListingsHashedForTest()
			for b.Loop() {
				n := 0
				for _, err := range cs.Tools(ctx, nil) {
					if err != nil {
						b.Fatal(err)
					}
					n++
				}
				if n != len(tools) {
					b.Fatalf("listed %d tools, want %d", n, len(tools))
				}
			}
			b.ReportMetric(float64(r.ListingsHashedForTest()-before)/float64(b.N), "hashes/op")
		})
	}
}

// BenchmarkToolsListDigest: the router's own share of a tools/list or of
// a session's re-check after a registry change: the digest of the
// caller's listing of a 1,200-tool catalog, memoised (the registry
// unchanged) and made afresh (the baseline).
func BenchmarkToolsListDigest(b *testing.B) {
	tools := make([]*mcp.Tool, 1200)
	for i := range tools {
		tools[i] = rawTool(fmt.Sprintf("big__tool_%04d", i), benchToolSchema)
	}
	r := router.New(router.Options{})
	if err := r.AddProvider(context.Background(), &staticProvider{name: "big", tools: tools}); err != nil {
		b.Fatal(err)
	}
	for _, memo := range []bool{true, false} {
		name := "memoised"
		if !memo {
			name = "digest-each-time-baseline"
		}
		b.Run(name, func(b *testing.B) {
			defer router.SetListingDigestMemoForTest(memo)()
			for b.Loop() {
				r.ListingDigestForTest()
			}
		})
	}
}

// benchToolSchema is an input schema of the size an OpenAPI operation's
// has (a few KB), so the listing weighs what a real catalog's does.
var benchToolSchema = func() string {
	var props []string
	for i := range 40 {
		props = append(props, fmt.Sprintf(`"field_%02d":{"type":"string","description":"The field number %d of the request body, as the upstream's OpenAPI document describes it, with its format and examples."}`, i, i))
	}
	return `{"type":"object","properties":{` + strings.Join(props, ",") + `}}`
}()
