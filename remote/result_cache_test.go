package remote

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/internal/mcpwire"
	"github.com/agents-mcp/agents-mcp/internal/testutil"
	"github.com/agents-mcp/agents-mcp/router"
)

// readsUpstream is a go-sdk server whose resources say how they may be
// cached, and which counts the reads that reach it.
type readsUpstream struct {
	server *mcp.Server
	reads  map[string]*atomic.Int32 // by URI
}

func newReadsUpstream(publicTTL time.Duration) *readsUpstream {
	u := &readsUpstream{server: mcp.NewServer(&mcp.Implementation{Name: "reads", Version: "1"}, nil), reads: map[string]*atomic.Int32{}}
	add := func(uri string, hints mcp.Cacheable) {
		n := &atomic.Int32{}
		u.reads[uri] = n
		u.server.AddResource(&mcp.Resource{URI: uri, Name: uri}, func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			k := n.Add(1)
			return &mcp.ReadResourceResult{Cacheable: hints, Contents: []*mcp.ResourceContents{{URI: uri, Text: fmt.Sprintf("%s read %d", uri, k)}}}, nil
		})
	}
	add("test://public", mcp.Cacheable{TTLMs: int(publicTTL / time.Millisecond), CacheScope: "public"})
	add("test://private", mcp.Cacheable{TTLMs: 60_000, CacheScope: "private"})
	add("test://stale", mcp.Cacheable{TTLMs: 0, CacheScope: "public"})
	return u
}

// bearer adds a bearer token to each request.
type bearer struct{ token string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

// callerOver connects a go-sdk client to the router's HTTP endpoint as the
// principal of token, at protocol version ("" negotiates the latest).
// go-sdk's client keeps 2026-07-28 reads itself, so the callers that count
// reads at the upstream speak 2025-11-25.
func callerOver(t *testing.T, url, token, version string) *mcp.ClientSession {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "reader", Version: "1"}, nil)
	cs, err := c.Connect(testCtx(t, 10*time.Second), &mcp.StreamableClientTransport{Endpoint: url,
		HTTPClient: &http.Client{Transport: bearer{token}}, MaxRetries: -1}, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

// readsEnv is a pool with the reads upstream, behind the router's HTTP
// endpoint (url) with two principals, "a" and "b", and a 2025-11-25 caller
// of each.
func readsEnv(t *testing.T, upstreamVersion string, cacheReads int, publicTTL time.Duration) (url string, up *readsUpstream, a, b *mcp.ClientSession) {
	t.Helper()
	opts := fastOptions()
	// No reconnect on pings missed under load: a new session drops the
	// cache, and the test counts reads.
	opts.HealthInterval = time.Minute
	opts.CacheReads = cacheReads
	e := newEnv(t, opts)
	up = newReadsUpstream(publicTTL)
	served := serveHTTP(t, func() http.Handler {
		return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return up.server },
			&mcp.StreamableHTTPOptions{Stateless: upstreamVersion == mcpwire.ProtocolSessionless})
	})
	e.add(streamableConfig("up", served.URL()))
	if got := e.status("up").ProtocolVersion; (got == mcpwire.ProtocolSessionless) != (upstreamVersion == mcpwire.ProtocolSessionless) {
		t.Fatalf("the pool reached the upstream at %s, want %s", got, versionLabel(upstreamVersion))
	}
	principals := map[string]*agentsmcp.Principal{
		"a": {ID: "key:a", Scopes: []string{agentsmcp.ScopeMCP}},
		"b": {ID: "key:b", Scopes: []string{agentsmcp.ScopeMCP}},
	}
	verify := func(_ context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
		p, ok := principals[token]
		if !ok {
			return nil, auth.ErrInvalidToken
		}
		return &auth.TokenInfo{UserID: p.ID, Scopes: p.Scopes, Expiration: time.Now().Add(time.Hour), Extra: map[string]any{agentsmcp.TokenInfoPrincipal: p}}, nil
	}
	h := e.router.HTTPHandler(router.HTTPOptions{Authenticate: auth.RequireBearerToken(verify, nil)})
	srv := httptest.NewServer(h)
	t.Cleanup(func() { h.Close(); srv.CloseClientConnections(); srv.Close() })
	url = srv.URL + "/mcp"
	return url, up, callerOver(t, url, "a", "2025-11-25"), callerOver(t, url, "b", "2025-11-25")
}

// read reads the upstream's URI uri through the router.
func read(t *testing.T, cs *mcp.ClientSession, uri string) *mcp.ReadResourceResult {
	t.Helper()
	res, err := cs.ReadResource(testCtx(t, 10*time.Second), &mcp.ReadResourceParams{URI: ResourceURIPrefix("up") + uri})
	if err != nil {
		t.Fatalf("read %s: %v", uri, err)
	}
	if len(res.Contents) != 1 {
		t.Fatalf("read %s: %d contents", uri, len(res.Contents))
	}
	return res
}

// TestUpstreamReadCache: resources/read results an upstream marks
// cacheable are served from the pool while fresh, counted at the upstream.
// A public one is shared by two principals, a private one is not; a
// result with ttlMs 0 is never kept; a result expires with its ttlMs; the
// upstream's notifications/resources/list_changed drops what is kept. The
// results relayed to a caller with credentials are private, with the
// upstream's ttlMs (what is left of it).
func TestUpstreamReadCache(t *testing.T) {
	t.Parallel()
	forEachUpstreamRevision(t, testUpstreamReadCache)
}

// forEachUpstreamRevision runs test with the pool's session to the
// upstream at the version go-sdk negotiates with a stateful server
// (2025-11-25) and at 2026-07-28 (a stateless server), the revision that
// defines the cache hints.
func forEachUpstreamRevision(t *testing.T, test func(t *testing.T, version string)) {
	for _, version := range []string{"", mcpwire.ProtocolSessionless} {
		t.Run("upstream "+versionLabel(version), func(t *testing.T) {
			t.Parallel()
			test(t, version)
		})
	}
}

func testUpstreamReadCache(t *testing.T, version string) {
	const publicTTL = 1500 * time.Millisecond
	url, up, a, b := readsEnv(t, version, 100, publicTTL)
	hits := func(uri string) int32 { return up.reads[uri].Load() }

	first := read(t, a, "test://public")
	again := read(t, a, "test://public")
	fromB := read(t, b, "test://public")
	if got := hits("test://public"); got != 1 {
		t.Errorf("a public result read 3 times by 2 principals within its ttlMs reached the upstream %d times, want 1", got)
	}
	if again.Contents[0].Text != first.Contents[0].Text || fromB.Contents[0].Text != first.Contents[0].Text {
		t.Errorf("cached reads differ: %q, %q, %q", first.Contents[0].Text, again.Contents[0].Text, fromB.Contents[0].Text)
	}
	if again.Contents[0].URI != ResourceURIPrefix("up")+"test://public" {
		t.Errorf("a cached read's content URI is %q, want the exposed one", again.Contents[0].URI)
	}
	// A 2026-07-28 caller sees the hints: the upstream's ttlMs (what is
	// left of it) and private, since it has credentials.
	if r := read(t, callerOver(t, url, "a", ""), "test://public"); r.CacheScope != "private" || r.TTLMs <= 0 || r.TTLMs > int(publicTTL/time.Millisecond) {
		t.Errorf("a cached public read relayed to a caller with credentials has ttlMs %d cacheScope %q, want 0 < ttlMs ≤ %d and private", r.TTLMs, r.CacheScope, publicTTL/time.Millisecond)
	}
	if hits("test://public") != 1 {
		t.Errorf("the 2026-07-28 read reached the upstream")
	}

	read(t, a, "test://private")
	read(t, a, "test://private")
	if got := hits("test://private"); got != 1 {
		t.Errorf("a private result read twice by one principal reached the upstream %d times, want 1", got)
	}
	if got := read(t, b, "test://private").Contents[0].Text; got != "test://private read 2" {
		t.Errorf("another principal read the private result %q, want its own read (2)", got)
	}
	read(t, b, "test://private")
	if got := hits("test://private"); got != 2 {
		t.Errorf("a private result read by two principals twice each reached the upstream %d times, want 2", got)
	}

	read(t, a, "test://stale")
	read(t, a, "test://stale")
	if got := hits("test://stale"); got != 2 {
		t.Errorf("a result with ttlMs 0 read twice reached the upstream %d times, want 2", got)
	}

	time.Sleep(publicTTL + 100*time.Millisecond)
	if got := read(t, b, "test://public").Contents[0].Text; got != "test://public read 2" || hits("test://public") != 2 {
		t.Errorf("after its ttlMs a public result read %q with %d upstream reads, want a new read (2)", got, hits("test://public"))
	}

	// A new resource upstream: go-sdk tells the pool's session
	// notifications/resources/list_changed, which drops what is kept.
	up.server.AddResource(&mcp.Resource{URI: "test://new", Name: "new"}, func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: "test://new", Text: "new"}}}, nil
	})
	testutil.Eventually(t, 10*time.Second, "the new resource is listed", func() bool {
		lr, err := a.ListResources(testCtx(t, 5*time.Second), nil)
		if err != nil {
			return false
		}
		for _, r := range lr.Resources {
			if r.URI == ResourceURIPrefix("up")+"test://new" {
				return true
			}
		}
		return false
	})
	read(t, a, "test://private")
	if got := hits("test://private"); got != 3 {
		t.Errorf("after list_changed a private result kept for a reached the upstream %d times in all, want 3 (read again)", got)
	}
}

// TestUpstreamReadCacheOffByDefault: without Options.CacheReads every read
// reaches the upstream, whatever its ttlMs: go-sdk's client session, which
// keeps 2026-07-28 reads by URI for every caller of the pool's session,
// does not answer in its place.
func TestUpstreamReadCacheOffByDefault(t *testing.T) {
	t.Parallel()
	forEachUpstreamRevision(t, testUpstreamReadCacheOff)
}

func testUpstreamReadCacheOff(t *testing.T, version string) {
	_, up, a, _ := readsEnv(t, version, 0, time.Minute)
	read(t, a, "test://public")
	second := read(t, a, "test://public")
	if got := up.reads["test://public"].Load(); got != 2 {
		t.Errorf("with the cache off, 2 reads reached the upstream %d times, want 2", got)
	}
	if got, want := second.Contents[0].URI, ResourceURIPrefix("up")+"test://public"; got != want {
		t.Errorf("the second read's content URI is %q, want %q", got, want)
	}
}
