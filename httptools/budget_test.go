package httptools_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/httptools"
	"github.com/agents-mcp/agents-mcp/router"
)

// refChainDoc is an expensive document: ops operations whose
// answer is schema S0, where each S<i> has fan properties that all refer
// to S<i+1>, depth schemas deep. Nothing is circular, so nothing cuts the
// expansion early: each answer expands to fan^depth nodes, cut only by the
// per-tool bound, and each tool costs its full bound to build and compile.
func refChainDoc(ops, depth, fan int) string {
	var b strings.Builder
	b.WriteString(`{"openapi":"3.0.3","info":{"title":"chain","version":"1"},"paths":{`)
	for i := range ops {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `"/p%d":{"get":{"operationId":"op%d","responses":{"200":{"description":"ok","content":{"application/json":{"schema":{"$ref":"#/components/schemas/S0"}}}}}}}`, i, i)
	}
	b.WriteString(`},"components":{"schemas":{`)
	for d := range depth {
		if d > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `"S%d":{"type":"object","properties":{`, d)
		for f := range fan {
			if f > 0 {
				b.WriteString(",")
			}
			if d+1 < depth {
				fmt.Fprintf(&b, `"f%d":{"$ref":"#/components/schemas/S%d"}`, f, d+1)
			} else {
				fmt.Fprintf(&b, `"f%d":{"type":"string"}`, f)
			}
		}
		b.WriteString(`}}`)
	}
	b.WriteString(`}}}`)
	return b.String()
}

// TestOpenAPIRefChainIsRefusedWithinItsBudget adds the $ref-chain
// document (150 operations, each expanding to the per-tool bound; before
// the budget it loaded in about a minute of CPU): it is refused, with
// EINVALID naming the source, the document and the bound, once its
// schemas pass the default node budget and before any is compiled. Nothing
// is stored, and a document within the budget loads.
func TestOpenAPIRefChainIsRefusedWithinItsBudget(t *testing.T) {
	store := openStore(t)
	r := newReplica(store)
	doc := refChainDoc(150, 30, 2)
	start := time.Now()
	err := r.shared.Add(t.Context(), httptools.Source{Name: "chain", BaseURL: "http://127.0.0.1:1", OpenAPIDocument: doc})
	took := time.Since(start)
	if agentsmcp.ErrorCode(err) != agentsmcp.EINVALID {
		t.Fatalf("Add of the chain: %v (after %v), want EINVALID", err, took)
	}
	msg := agentsmcp.ErrorMessage(err)
	for _, want := range []string{`http_tools "chain"`, "given inline", "over the load budget", fmt.Sprint(httptools.DefaultMaxSchemaNodes), "openapi.max_schema_nodes"} {
		if !strings.Contains(msg, want) {
			t.Errorf("the refusal %q does not say %q", msg, want)
		}
	}
	// Generous for a loaded 2-core machine and the race detector: about
	// 1 s of CPU without it; before the budget, about a minute.
	if took > 45*time.Second {
		t.Errorf("the refusal took %v", took)
	}
	t.Logf("refused in %v: %s", took, msg)
	if defs, err := store.ListUpstreamDefinitions(t.Context(), agentsmcp.UpstreamKindHTTP); err != nil || len(defs) != 0 {
		t.Errorf("stored: %v, %v", defs, err)
	}
	if len(r.router.Tools()) != 0 {
		t.Errorf("the router serves %d tools", len(r.router.Tools()))
	}
	// The same shape, small enough, loads; a smaller bound refuses it.
	small := httptools.Source{Name: "small", BaseURL: "http://127.0.0.1:1", OpenAPIDocument: refChainDoc(3, 8, 2)}
	if err := r.shared.Add(t.Context(), small); err != nil {
		t.Fatalf("Add of a small chain: %v", err)
	}
	tight := httptools.NewSources(router.New(router.Options{}), httptools.Options{Budget: httptools.Budget{MaxSchemaNodes: 500}})
	small.Name = "tight"
	if err := tight.Add(t.Context(), small); err != nil {
		t.Fatal(err)
	}
	if st := tight.Statuses(); st[0].State != "failed" || !strings.Contains(st[0].Reason, "more than 500 schema nodes") {
		t.Errorf("with a bound of 500 nodes: %+v", st)
	}
}

// TestOpenAPILoadTimeout fetches a document from a loopback server that
// does not answer: the load stops at the budget's time with a reason
// naming the document and the setting, and the fetch is cancelled.
func TestOpenAPILoadTimeout(t *testing.T) {
	var cancelled atomic.Bool
	stall := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
			cancelled.Store(true)
		case <-time.After(20 * time.Second):
		}
	}))
	t.Cleanup(stall.Close)
	s := httptools.NewSources(router.New(router.Options{}), httptools.Options{Budget: httptools.Budget{Timeout: 300 * time.Millisecond}})
	start := time.Now()
	if err := s.Add(t.Context(), httptools.Source{Name: "slow", BaseURL: "http://127.0.0.1:1", OpenAPI: stall.URL + "/doc.json"}); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("the load took %v, with a budget of 300ms", took)
	}
	st := s.Statuses()[0]
	if st.State != "failed" || !strings.Contains(st.Reason, stall.URL+"/doc.json") || !strings.Contains(st.Reason, "took longer than 300ms (openapi.load_timeout)") {
		t.Errorf("status %+v, want failed naming the document and the budget", st)
	}
	deadline := time.Now().Add(5 * time.Second)
	for !cancelled.Load() && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if !cancelled.Load() {
		t.Error("the stalled fetch was not cancelled")
	}
}

// TestRemoteRefBodiesAreBounded serves a document's remote $ref from a
// loopback server that would send 300 MiB: loading stops after
// MaxRemoteRefBytes (plus what the sockets buffer) and refuses the
// document with a reason; a body that announces its size is refused before
// it is read.
func TestRemoteRefBodiesAreBounded(t *testing.T) {
	const huge = 300 << 20
	var written, announcedWritten atomic.Int64
	chunk := []byte(strings.Repeat(" ", 64<<10))
	refs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		counter := &written
		if strings.HasSuffix(r.URL.Path, "/announced.json") {
			counter = &announcedWritten
			w.Header().Set("Content-Length", fmt.Sprint(huge))
		}
		w.Header().Set("Content-Type", "application/json")
		n, _ := w.Write([]byte(`{"type":"object","description":"`))
		counter.Add(int64(n))
		for counter.Load() < huge {
			n, err := w.Write(chunk)
			counter.Add(int64(n))
			if err != nil {
				return
			}
		}
	}))
	t.Cleanup(refs.Close)
	docWith := func(ref string) string {
		return `{"openapi":"3.0.3","info":{"title":"r","version":"1"},"paths":{"/x":{"get":{"operationId":"x",` +
			`"responses":{"200":{"description":"ok","content":{"application/json":{"schema":{"$ref":"` + ref + `"}}}}}}}}}`
	}
	for _, tc := range []struct {
		name, path string
		written    *atomic.Int64
		max        int64
	}{
		// The limit, and what the two sockets buffer besides.
		{"streamed", "/huge.json", &written, httptools.MaxRemoteRefBytes + 32<<20},
		{"announced", "/announced.json", &announcedWritten, 32 << 20},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newReplica(openStore(t))
			start := time.Now()
			err := r.shared.Add(t.Context(), httptools.Source{Name: "refs", BaseURL: "http://127.0.0.1:1", AllowRemoteRefs: true,
				OpenAPIDocument: docWith(refs.URL + tc.path)})
			if agentsmcp.ErrorCode(err) != agentsmcp.EINVALID || !strings.Contains(err.Error(), "remote $ref documents are larger than") ||
				!strings.Contains(err.Error(), `http_tools "refs"`) {
				t.Fatalf("Add: %v, want EINVALID saying the remote $refs are too large", err)
			}
			// The server may still be writing into the closed socket.
			time.Sleep(200 * time.Millisecond)
			if n := tc.written.Load(); n > tc.max || n >= huge {
				t.Errorf("the server sent %d bytes of the %d, want at most %d", n, huge, tc.max)
			}
			t.Logf("refused after %v; the server sent %d bytes", time.Since(start), tc.written.Load())
		})
	}
}

// TestSharedSourcesDoNotReloadADocumentOverItsBudget stores a source whose
// document (by URL) is over the node budget of one replica: that replica
// serves it without tools, saying why, and does not fetch it again at the
// next sync (it would cost the same and fail the same), unlike a document
// that could not be fetched.
func TestSharedSourcesDoNotReloadADocumentOverItsBudget(t *testing.T) {
	store := openStore(t)
	var fetches atomic.Int64
	doc := refChainDoc(3, 9, 2) // 1,536 nodes
	docs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fetches.Add(1)
		_, _ = w.Write([]byte(doc))
	}))
	t.Cleanup(docs.Close)
	a := newReplica(store)
	src := httptools.Source{Name: "chain", BaseURL: "http://127.0.0.1:1", OpenAPI: docs.URL + "/doc.json"}
	if err := a.shared.Add(t.Context(), src); err != nil {
		t.Fatalf("Add on a replica with the default budget: %v", err)
	}
	rt := router.New(router.Options{})
	tight := httptools.NewSources(rt, httptools.Options{Budget: httptools.Budget{MaxSchemaNodes: 1000}})
	b := &replica{router: rt, sources: tight, shared: httptools.NewSharedSources(tight, store, nil)}
	before := fetches.Load()
	b.sync(t)
	b.sync(t)
	b.sync(t)
	if n := fetches.Load() - before; n != 1 {
		t.Errorf("the replica over budget fetched the document %d times in three syncs, want 1", n)
	}
	st := b.shared.Statuses()
	if len(st) != 1 || st[0].State != "failed" || !strings.Contains(st[0].Reason, "more than 1000 schema nodes") || st[0].Origin != httptools.OriginAPI {
		t.Errorf("statuses %+v", st)
	}
	// Removing it through the other replica removes it here.
	if err := a.shared.Remove(t.Context(), "chain"); err != nil {
		t.Fatal(err)
	}
	b.sync(t)
	if st := b.shared.Statuses(); len(st) != 0 {
		t.Errorf("after the removal: %+v", st)
	}
}

// TestRemoveDuringASyncLoadWins removes a stored source while a replica's
// Sync is loading it (its document fetch stalls): the Remove does not wait
// for the load, cancels it, and the load's result is not served.
func TestRemoveDuringASyncLoadWins(t *testing.T) {
	store := openStore(t)
	base := blogAPI(t)
	var stalling atomic.Bool
	fetching := make(chan struct{}, 4)
	docs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if stalling.Load() {
			fetching <- struct{}{}
			select {
			case <-r.Context().Done():
			case <-time.After(20 * time.Second): // so that a failing test ends
			}
			return
		}
		_, _ = w.Write([]byte(readPostDoc))
	}))
	t.Cleanup(docs.Close)
	a, b := newReplica(store), newReplica(store)
	if err := a.shared.Add(t.Context(), httptools.Source{Name: "blog", BaseURL: base, OpenAPI: docs.URL + "/doc.json"}); err != nil {
		t.Fatal(err)
	}
	stalling.Store(true)
	synced := make(chan error, 1)
	go func() { synced <- b.shared.Sync(context.Background()) }()
	select {
	case <-fetching:
	case <-time.After(10 * time.Second):
		t.Fatal("b's sync did not fetch the document")
	}
	removed := make(chan error, 1)
	go func() { removed <- b.shared.Remove(context.Background(), "blog") }()
	select {
	case err := <-removed:
		if err != nil {
			t.Fatalf("Remove: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Remove waited for the load of the source it removes")
	}
	select {
	case err := <-synced:
		if err != nil {
			t.Fatalf("Sync: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the Sync's load was not cancelled by the Remove")
	}
	if b.has("blog__readPost") || len(b.shared.Statuses()) != 0 {
		t.Errorf("b serves the removed source: %+v", b.shared.Statuses())
	}
	stalling.Store(false)
	b.sync(t)
	if b.has("blog__readPost") {
		t.Error("a later sync loaded the removed source")
	}
}
