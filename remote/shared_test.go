package remote

import (
	"encoding/json"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/memory/sqlite"
	"github.com/agents-mcp/agents-mcp/mock"
)

// Two "replicas" here are two pools, each with its own router, sharing one
// real SQLite store: what two server processes on one database do, within
// one test process.

type replica struct {
	*env
	shared *SharedUpstreams
}

func newStore(t *testing.T) *sqlite.DB {
	t.Helper()
	db, err := sqlite.Open(testCtx(t, 10*time.Second), filepath.Join(t.TempDir(), "upstreams.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return db
}

func newReplica(t *testing.T, store agentsmcp.UpstreamService) *replica {
	t.Helper()
	e := newEnv(t, fastOptions())
	return &replica{env: e, shared: NewSharedUpstreams(e.pool, store, e.pool.opts.Logger)}
}

func (r *replica) sync() {
	r.t.Helper()
	if err := r.shared.Sync(testCtx(r.t, 10*time.Second)); err != nil {
		r.t.Fatalf("sync: %v", err)
	}
}

func (r *replica) has(name string) bool {
	_, ok := r.pool.Status(name)
	return ok
}

func storedNames(t *testing.T, store agentsmcp.UpstreamService) []string {
	t.Helper()
	defs, err := store.ListUpstreamDefinitions(testCtx(t, 5*time.Second), agentsmcp.UpstreamKindMCP)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, d := range defs {
		names = append(names, d.Name)
	}
	return names
}

func TestSharedUpstreamsReachEveryReplicaAndOutliveRestarts(t *testing.T) {
	store := newStore(t)
	up := serveStreamable(t, newFixture("up").server)
	a, b := newReplica(t, store), newReplica(t, store)

	cfg := streamableConfig("shared", up.URL())
	cfg.Tools = agentsmcp.UpstreamToolFilter{Allow: []string{"echo", "person"}}
	cfg.Headers = map[string]string{"X-Token": "s3cret"}
	ctx := agentsmcp.WithPrincipal(testCtx(t, 10*time.Second), &agentsmcp.Principal{ID: "key:abc"})
	if err := a.shared.Add(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	a.waitState("shared", StateReady, 10*time.Second)
	if got := storedNames(t, store); !slices.Equal(got, []string{"shared"}) {
		t.Fatalf("stored %v, want [shared]", got)
	}
	defs, _ := store.ListUpstreamDefinitions(testCtx(t, 5*time.Second), agentsmcp.UpstreamKindMCP)
	if defs[0].CreatedBy != "key:abc" {
		t.Errorf("CreatedBy %q, want the adding principal", defs[0].CreatedBy)
	}

	if b.has("shared") {
		t.Fatal("replica b runs the upstream before it synced")
	}
	b.sync()
	st := b.waitState("shared", StateReady, 10*time.Second)
	if st.Origin != OriginAPI {
		t.Errorf("origin %q, want %q", st.Origin, OriginAPI)
	}
	// The allow filter travelled through the store.
	if got, want := b.routerToolNames("shared__"), a.routerToolNames("shared__"); !slices.Equal(got, want) || len(got) != 2 {
		t.Errorf("replica b lists %v, replica a %v; want the same two allowed tools", got, want)
	}
	// A second sync changes nothing.
	b.sync()
	if st2 := b.status("shared"); !st2.ConnectedAt.Equal(st.ConnectedAt) {
		t.Errorf("an unchanged definition was restarted: connected at %v, then %v", st.ConnectedAt, st2.ConnectedAt)
	}

	// A restart of replica a: a fresh pool over the same store.
	restarted := newReplica(t, store)
	restarted.sync()
	restarted.waitState("shared", StateReady, 10*time.Second)
	if got := restarted.routerToolNames("shared__"); len(got) != 2 {
		t.Errorf("after a restart the upstream lists %v", got)
	}

	// Removed on b: gone from the store, from b at once, from a at its
	// next sync.
	if err := b.shared.Remove(testCtx(t, 10*time.Second), "shared"); err != nil {
		t.Fatal(err)
	}
	if b.has("shared") || len(storedNames(t, store)) != 0 {
		t.Fatalf("after Remove: on b %v, stored %v", b.has("shared"), storedNames(t, store))
	}
	if !a.has("shared") {
		t.Fatal("replica a stopped the upstream before it synced")
	}
	a.sync()
	if a.has("shared") || len(a.routerToolNames("shared__")) != 0 {
		t.Errorf("replica a still runs the removed upstream")
	}
	if err := a.shared.Remove(testCtx(t, 5*time.Second), "shared"); agentsmcp.ErrorCode(err) != agentsmcp.ENOTFOUND {
		t.Errorf("Remove of a removed upstream: %v, want ENOTFOUND", err)
	}
}

func TestSharedUpstreamStoredAgainIsRestartedWithItsNewDefinition(t *testing.T) {
	store := newStore(t)
	first := serveStreamable(t, newFixture("first").server)
	second := serveSSE(t, newFixture("second").server)
	a, b := newReplica(t, store), newReplica(t, store)

	if err := a.shared.Add(testCtx(t, 10*time.Second), streamableConfig("moving", first.URL())); err != nil {
		t.Fatal(err)
	}
	b.sync()
	b.waitState("moving", StateReady, 10*time.Second)

	// Between two syncs of b, a removes it and adds it again elsewhere.
	if err := a.shared.Remove(testCtx(t, 10*time.Second), "moving"); err != nil {
		t.Fatal(err)
	}
	moved := agentsmcp.UpstreamConfig{Name: "moving", Transport: TransportSSE, URL: second.URL(), Timeout: 5 * time.Second, MaxBackoff: 300 * time.Millisecond}
	if err := a.shared.Add(testCtx(t, 10*time.Second), moved); err != nil {
		t.Fatal(err)
	}
	b.sync()
	st := b.waitState("moving", StateReady, 10*time.Second)
	if st.Transport != TransportSSE || st.URL != second.URL() {
		t.Errorf("replica b runs %s %s, want the new definition sse %s", st.Transport, st.URL, second.URL())
	}
}

func TestConfigFileUpstreamRemovedThroughTheAPIStaysRemovedEverywhere(t *testing.T) {
	store := newStore(t)
	up := serveStreamable(t, newFixture("up").server)
	other := serveSSE(t, newFixture("other").server)
	a, b := newReplica(t, store), newReplica(t, store)
	// Both replicas have it in their config file.
	a.add(streamableConfig("fixed", up.URL()))
	b.add(streamableConfig("fixed", up.URL()))

	if err := a.shared.Add(testCtx(t, 5*time.Second), streamableConfig("fixed", other.URL())); agentsmcp.ErrorCode(err) != agentsmcp.ECONFLICT {
		t.Errorf("Add under a config-file upstream's name: %v, want ECONFLICT", err)
	}
	if got := storedNames(t, store); len(got) != 0 {
		t.Fatalf("a refused Add left %v stored", got)
	}

	ctx := agentsmcp.WithPrincipal(testCtx(t, 10*time.Second), &agentsmcp.Principal{ID: "key:remover"})
	if err := a.shared.Remove(ctx, "fixed"); err != nil {
		t.Fatalf("Remove of a config-file upstream: %v", err)
	}
	if a.has("fixed") || len(a.routerToolNames("fixed__")) != 0 {
		t.Fatal("replica a still serves the removed config-file upstream")
	}
	b.sync()
	if b.has("fixed") {
		t.Fatal("replica b still serves the config-file upstream removed on a")
	}
	// A restart reads its config file, then the store.
	restarted := newReplica(t, store)
	restarted.add(streamableConfig("fixed", up.URL()))
	restarted.sync()
	if restarted.has("fixed") {
		t.Fatal("a restarted replica serves the config-file upstream removed through the API")
	}
	if !strings.Contains(restarted.logs.String(), "removedBy=key:remover") {
		t.Errorf("the restarted replica does not say who removed it:\n%s", restarted.logs.String())
	}
	if err := a.shared.Remove(testCtx(t, 5*time.Second), "fixed"); agentsmcp.ErrorCode(err) != agentsmcp.ENOTFOUND {
		t.Errorf("second Remove: %v, want ENOTFOUND", err)
	}

	// Added through the API under that name: it replaces the tombstone and
	// reaches every replica.
	moved := agentsmcp.UpstreamConfig{Name: "fixed", Transport: TransportSSE, URL: other.URL(), Timeout: 5 * time.Second, MaxBackoff: 300 * time.Millisecond}
	if err := b.shared.Add(testCtx(t, 10*time.Second), moved); err != nil {
		t.Fatalf("Add over a tombstone: %v", err)
	}
	for name, r := range map[string]*replica{"a": a, "restarted": restarted} {
		r.sync()
		if st := r.waitState("fixed", StateReady, 10*time.Second); st.Origin != OriginAPI || st.URL != other.URL() {
			t.Errorf("replica %s runs %+v, want the API's definition", name, st)
		}
	}
}

func TestStoredUpstreamShadowedByAConfigFileUpstream(t *testing.T) {
	store := newStore(t)
	up := serveStreamable(t, newFixture("up").server)
	other := serveStreamable(t, newFixture("other").server)
	a, b := newReplica(t, store), newReplica(t, store)
	a.add(streamableConfig("fixed", up.URL())) // only in a's config file

	if err := b.shared.Add(testCtx(t, 10*time.Second), streamableConfig("fixed", other.URL())); err != nil {
		t.Fatal(err)
	}
	a.sync()
	a.sync()
	if st := a.status("fixed"); st.Origin != OriginConfig || st.URL != up.URL() {
		t.Errorf("replica a's config-file upstream was replaced: %+v", st)
	}
	if n := strings.Count(a.logs.String(), "has the name of a config-file upstream"); n != 1 {
		t.Errorf("the shadowed definition was logged %d times, want once", n)
	}
}

func TestSharedUpstreamsNeverStoreOrStartCommands(t *testing.T) {
	store := newStore(t)
	a := newReplica(t, store)
	stdio := agentsmcp.UpstreamConfig{Name: "cmd", Transport: TransportStdio, Command: "/bin/sh", Args: []string{"-c", "true"}}
	if err := a.shared.Add(testCtx(t, 5*time.Second), stdio); agentsmcp.ErrorCode(err) != agentsmcp.EINVALID {
		t.Errorf("Add of a stdio upstream: %v, want EINVALID", err)
	}
	if got := storedNames(t, store); len(got) != 0 {
		t.Fatalf("stdio upstream stored: %v", got)
	}

	// Whoever writes to the database directly cannot make a replica run a
	// command, nor smuggle one into a streamable definition.
	for name, raw := range map[string]string{
		"stored-stdio":   `{"transport":"stdio","url":""}`,
		"smuggled":       `{"transport":"streamable","url":"http://127.0.0.1:1/mcp","command":"/bin/sh"}`,
		"stored-garbage": `{"transport":"streamable","url":"not a url"}`,
	} {
		def := &agentsmcp.UpstreamDefinition{Name: name, Config: json.RawMessage(raw)}
		if err := store.CreateUpstreamDefinition(testCtx(t, 5*time.Second), def); err != nil {
			t.Fatal(err)
		}
	}
	a.sync()
	a.sync()
	for _, name := range []string{"stored-stdio", "smuggled", "stored-garbage"} {
		if a.has(name) {
			t.Errorf("%s was started from the store", name)
		}
		if n := strings.Count(a.logs.String(), "upstream="+name); n != 1 {
			t.Errorf("%s: logged %d times, want once", name, n)
		}
	}
	// Such a definition can still be removed through the API.
	if err := a.shared.Remove(testCtx(t, 5*time.Second), "smuggled"); err != nil {
		t.Errorf("Remove of a stored definition not running here: %v", err)
	}
	if slices.Contains(storedNames(t, store), "smuggled") {
		t.Error("smuggled is still stored")
	}
}

func TestSharedUpstreamNotStartedIsNotKept(t *testing.T) {
	store := newStore(t)
	up := serveStreamable(t, newFixture("up").server)
	a := newReplica(t, store)
	// The router already has a provider of that name, so the pool cannot
	// register the upstream.
	taken := &mock.ToolProvider{NameFn: func() string { return "taken" }} // no tools
	if err := a.router.AddProvider(testCtx(t, 5*time.Second), taken); err != nil {
		t.Fatal(err)
	}
	if err := a.shared.Add(testCtx(t, 10*time.Second), streamableConfig("taken", up.URL())); agentsmcp.ErrorCode(err) != agentsmcp.ECONFLICT {
		t.Fatalf("Add under a provider's name: %v, want ECONFLICT", err)
	}
	if got := storedNames(t, store); len(got) != 0 {
		t.Errorf("an upstream that was not started stays stored: %v", got)
	}
}

func TestStoredConfigRoundTrip(t *testing.T) {
	cfg := agentsmcp.UpstreamConfig{
		Name: "rt", Transport: TransportSSE, URL: "https://example.com/sse?x=1",
		Headers:         map[string]string{"Authorization": "Bearer t"},
		Tools:           agentsmcp.UpstreamToolFilter{Allow: []string{"a"}, Deny: []string{"b"}},
		Timeout:         7 * time.Second,
		ProtocolVersion: "2025-06-18", MaxConcurrency: 3, MaxBackoff: 2500 * time.Millisecond,
	}
	raw, err := encodeStoredConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	got, tomb, err := decodeStoredConfig(&agentsmcp.UpstreamDefinition{Name: "rt", Config: raw})
	if err != nil || tomb {
		t.Fatal(tomb, err)
	}
	if !reflect.DeepEqual(got, cfg) {
		t.Errorf("round trip:\n got %#v\nwant %#v", got, cfg)
	}
}
