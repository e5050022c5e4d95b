package pinecone

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	pc "github.com/pinecone-io/go-pinecone/v5/pinecone"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// fakePlane stands in for a Pinecone data-plane connection of one
// namespace: it records requests and answers from a script, for the
// timing and batching cases a server cannot easily stage. wire_test.go runs
// the same code through go-pinecone on Pinecone's published protocols, and
// the live test against a real index.
type fakePlane struct {
	ns string

	mu        sync.Mutex
	upserts   [][]string // ids per request
	deletes   [][]string
	queries   []*pc.QueryByVectorValuesRequest
	deadlines []time.Duration // time left on each call's context
	errs      []error         // returned by successive calls, then nil
	hang      bool            // wait for the context instead of answering
	res       *pc.QueryVectorsResponse
}

func (f *fakePlane) next(ctx context.Context) error {
	f.mu.Lock()
	if dl, ok := ctx.Deadline(); ok {
		f.deadlines = append(f.deadlines, time.Until(dl))
	} else {
		f.deadlines = append(f.deadlines, -1)
	}
	hang := f.hang
	var err error
	if len(f.errs) > 0 {
		err, f.errs = f.errs[0], f.errs[1:]
	}
	f.mu.Unlock()
	if hang {
		<-ctx.Done()
		// What grpc-go returns when the call's context ends.
		return status.FromContextError(ctx.Err()).Err()
	}
	return err
}

func (f *fakePlane) UpsertVectors(ctx context.Context, in []*pc.Vector) (uint32, error) {
	f.mu.Lock()
	f.upserts = append(f.upserts, ids(in))
	f.mu.Unlock()
	if err := f.next(ctx); err != nil {
		return 0, err
	}
	return uint32(len(in)), nil
}

func (f *fakePlane) DeleteVectorsById(ctx context.Context, in []string) error {
	f.mu.Lock()
	f.deletes = append(f.deletes, append([]string(nil), in...))
	f.mu.Unlock()
	return f.next(ctx)
}

func (f *fakePlane) QueryByVectorValues(ctx context.Context, in *pc.QueryByVectorValuesRequest) (*pc.QueryVectorsResponse, error) {
	f.mu.Lock()
	f.queries = append(f.queries, in)
	f.mu.Unlock()
	if err := f.next(ctx); err != nil {
		return nil, err
	}
	return f.res, nil
}

// fakeIndex is an Index over fake planes, one per namespace, with short
// retries so tests stay fast.
type fakeIndex struct {
	*Index
	mu     sync.Mutex
	planes map[string]*fakePlane
	dials  int
}

func newFakeIndex(dims int, prefix string) *fakeIndex {
	fi := &fakeIndex{planes: map[string]*fakePlane{}}
	fi.Index = newIndex(Config{APIKey: "pcsk_test_KEY", Dimensions: dims, NamespacePrefix: prefix, Timeout: time.Second},
		func(ns string) dataPlane {
			fi.mu.Lock()
			defer fi.mu.Unlock()
			fi.dials++
			return fi.plane(ns)
		})
	fi.backoff = time.Millisecond
	return fi
}

// plane returns the fake of a full (prefixed) namespace; callers hold mu
// or run before concurrent use.
func (fi *fakeIndex) plane(ns string) *fakePlane {
	p := fi.planes[ns]
	if p == nil {
		p = &fakePlane{ns: ns}
		fi.planes[ns] = p
	}
	return p
}

func unit(dims, hot int) []float32 {
	v := make([]float32, dims)
	v[hot%dims] = 1
	return v
}

func TestUpsertBatchesAndNamespaces(t *testing.T) {
	fi := newFakeIndex(4, "prod-")
	vs := make([]agentsmcp.Vector, 250)
	for i := range vs {
		vs[i] = agentsmcp.Vector{ID: fmt.Sprintf("l%03d", i), Values: unit(4, i), Metadata: map[string]string{"kind": "learning"}}
	}
	if err := fi.Upsert(context.Background(), "learnings", vs); err != nil {
		t.Fatal(err)
	}
	if err := fi.Upsert(context.Background(), "learnings", vs[:1]); err != nil {
		t.Fatal(err)
	}
	p := fi.planes["prod-learnings"]
	if p == nil {
		t.Fatalf("no requests in namespace prod-learnings; namespaces used: %v", reflect.ValueOf(fi.planes).MapKeys())
	}
	var sizes []int
	for _, u := range p.upserts {
		sizes = append(sizes, len(u))
	}
	if !reflect.DeepEqual(sizes, []int{100, 100, 50, 1}) {
		t.Errorf("upsert request sizes %v, want [100 100 50 1]", sizes)
	}
	if p.upserts[2][49] != "l249" {
		t.Errorf("last id of third batch %q, want l249", p.upserts[2][49])
	}
	if fi.dials != 1 {
		t.Errorf("dialled %d times for one namespace, want 1 (cached)", fi.dials)
	}
	for i, d := range p.deadlines {
		if d <= 0 || d > time.Second {
			t.Errorf("call %d had %v left, want a deadline within the 1s timeout", i, d)
		}
	}
}

func TestUpsertInvalidSendsNothing(t *testing.T) {
	fi := newFakeIndex(3, "")
	for _, vs := range [][]agentsmcp.Vector{
		{{ID: "a", Values: unit(3, 0)}, {ID: "b", Values: []float32{1, 0}}},
		{{ID: "a", Values: unit(3, 0)}, {ID: "", Values: unit(3, 1)}},
		{{ID: "a", Values: unit(3, 0)}, {ID: "ü", Values: unit(3, 1)}},
	} {
		err := fi.Upsert(context.Background(), "tools", vs)
		if agentsmcp.ErrorCode(err) != agentsmcp.EINVALID {
			t.Errorf("Upsert(%v) = %v, want EINVALID", vs, err)
		}
	}
	if len(fi.planes) != 0 {
		t.Errorf("requests were sent for an invalid batch: %v", fi.planes)
	}
	if err := fi.Upsert(context.Background(), "tools", nil); err != nil || len(fi.planes) != 0 {
		t.Errorf("empty upsert: %v, %d namespaces touched", err, len(fi.planes))
	}
}

func TestRetriesAndCodes(t *testing.T) {
	unavailable := status.Error(codes.Unavailable, "overloaded")
	tests := []struct {
		name  string
		errs  []error
		calls int
		code  string
	}{
		{"success", nil, 1, ""},
		{"transient then success", []error{unavailable, status.Error(codes.ResourceExhausted, "429")}, 3, ""},
		{"transient exhausted", []error{unavailable, unavailable, unavailable, unavailable}, 3, agentsmcp.EUNAVAILABLE},
		{"invalid not retried", []error{status.Error(codes.InvalidArgument, "dimension mismatch")}, 1, agentsmcp.EINVALID},
		{"auth not retried", []error{status.Error(codes.Unauthenticated, "bad key")}, 1, agentsmcp.EUNAUTHORIZED},
	}
	for _, tt := range tests {
		fi := newFakeIndex(2, "")
		fi.plane("learnings").errs = tt.errs
		err := fi.Upsert(context.Background(), "learnings", []agentsmcp.Vector{{ID: "a", Values: []float32{1, 0}}})
		if got := agentsmcp.ErrorCode(err); got != tt.code {
			t.Errorf("%s: code %q, want %q (%v)", tt.name, got, tt.code, err)
		}
		if got := len(fi.plane("learnings").upserts); got != tt.calls {
			t.Errorf("%s: %d calls, want %d", tt.name, got, tt.calls)
		}
		if err != nil && strings.Contains(err.Error(), "pcsk_test_KEY") {
			t.Errorf("%s: error holds the API key: %v", tt.name, err)
		}
	}
}

func TestCallTimeout(t *testing.T) {
	fi := newFakeIndex(2, "")
	fi.timeout = 50 * time.Millisecond
	fi.attempts = 2
	fi.plane("tools").hang = true
	start := time.Now()
	_, err := fi.Query(context.Background(), "tools", agentsmcp.VectorQuery{Values: []float32{1, 0}, TopK: 3})
	elapsed := time.Since(start)
	if agentsmcp.ErrorCode(err) != agentsmcp.EUNAVAILABLE {
		t.Errorf("hanging server: %v, want EUNAVAILABLE", err)
	}
	if elapsed < 100*time.Millisecond || elapsed > 2*time.Second {
		t.Errorf("took %v; want two 50ms attempts", elapsed)
	}
	if n := len(fi.plane("tools").queries); n != 2 {
		t.Errorf("%d attempts, want 2", n)
	}
}

func TestCallerCancellation(t *testing.T) {
	fi := newFakeIndex(2, "")
	fi.backoff = time.Hour // a retry would wait; cancellation must not
	p := fi.plane("tools")
	p.errs = []error{status.Error(codes.Unavailable, "x")}
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(30*time.Millisecond, cancel)
	start := time.Now()
	err := fi.Upsert(ctx, "tools", []agentsmcp.Vector{{ID: "a", Values: []float32{1, 0}}})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("got %v, want context.Canceled", err)
	}
	if time.Since(start) > 2*time.Second {
		t.Errorf("cancellation took %v", time.Since(start))
	}
	if len(p.upserts) != 1 {
		t.Errorf("%d attempts after cancellation, want 1", len(p.upserts))
	}
}

func TestDelete(t *testing.T) {
	fi := newFakeIndex(2, "x-")
	many := make([]string, 2100)
	for i := range many {
		many[i] = fmt.Sprintf("id%d", i)
	}
	if err := fi.Delete(context.Background(), "insights", many); err != nil {
		t.Fatal(err)
	}
	p := fi.plane("x-insights")
	if len(p.deletes) != 3 || len(p.deletes[0]) != 1000 || len(p.deletes[2]) != 100 {
		t.Errorf("delete batches %d, want 1000/1000/100", len(p.deletes))
	}

	// A namespace Pinecone has never seen is not an error, and neither are
	// ids it could not hold.
	fi.plane("x-tools").errs = []error{status.Error(codes.NotFound, "Namespace not found")}
	if err := fi.Delete(context.Background(), "tools", []string{"a", ""}); err != nil {
		t.Errorf("delete in a missing namespace: %v", err)
	}
	if got := fi.plane("x-tools").deletes; !reflect.DeepEqual(got, [][]string{{"a"}}) {
		t.Errorf("sent %v, want [[a]]", got)
	}
	if err := fi.Delete(context.Background(), "learnings", []string{"", "é"}); err != nil || fi.planes["x-learnings"] != nil {
		t.Errorf("delete of only impossible ids: %v, sent %v", err, fi.planes["x-learnings"])
	}
	fi.plane("x-tools").errs = []error{status.Error(codes.PermissionDenied, "no")}
	if err := fi.Delete(context.Background(), "tools", []string{"a"}); agentsmcp.ErrorCode(err) != agentsmcp.EUNAUTHORIZED {
		t.Errorf("refused delete: %v, want EUNAUTHORIZED", err)
	}
}

func TestQuery(t *testing.T) {
	fi := newFakeIndex(3, "")
	p := fi.plane("learnings")
	p.res = &pc.QueryVectorsResponse{Matches: []*pc.ScoredVector{
		scored("low", 0.1, nil),
		scored("high", 0.9, map[string]string{"kind": "learning"}),
	}}
	got, err := fi.Query(context.Background(), "learnings", agentsmcp.VectorQuery{
		Values: []float32{0, 1, 0}, TopK: 5000, Filter: map[string]string{"kind": "learning", "tool": "fs"},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []agentsmcp.VectorMatch{{ID: "high", Score: 0.9, Metadata: map[string]string{"kind": "learning"}}, {ID: "low", Score: 0.1}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("matches %+v, want %+v", got, want)
	}
	req := p.queries[0]
	if req.TopK != 1000 || !req.IncludeMetadata || req.IncludeValues || !reflect.DeepEqual(req.Vector, []float32{0, 1, 0}) {
		t.Errorf("request %+v: want TopK 1000, metadata, no values", req)
	}
	if f := canonical(t, req.MetadataFilter); f != `{"$and":[{"kind":{"$eq":"learning"}},{"tool":{"$eq":"fs"}}]}` {
		t.Errorf("filter %s", f)
	}

	// No filter is no filter, not an empty one.
	if _, err := fi.Query(context.Background(), "learnings", agentsmcp.VectorQuery{Values: []float32{0, 1, 0}, TopK: 2}); err != nil {
		t.Fatal(err)
	}
	if p.queries[1].MetadataFilter != nil || p.queries[1].TopK != 2 {
		t.Errorf("second request %+v", p.queries[1])
	}

	fi.plane("tools").errs = []error{status.Error(codes.NotFound, "namespace not found")}
	got, err = fi.Query(context.Background(), "tools", agentsmcp.VectorQuery{Values: []float32{1, 0, 0}, TopK: 1})
	if err != nil || got == nil || len(got) != 0 {
		t.Errorf("missing namespace: %v, %v; want empty, nil", got, err)
	}

	for _, q := range []agentsmcp.VectorQuery{
		{Values: []float32{1, 0}, TopK: 1},
		{Values: []float32{0, 0, 0}, TopK: 1},
		{Values: []float32{1, 0, 0}, TopK: 0},
	} {
		if _, err := fi.Query(context.Background(), "insights", q); agentsmcp.ErrorCode(err) != agentsmcp.EINVALID {
			t.Errorf("Query(%+v) = %v, want EINVALID", q, err)
		}
	}
	if fi.planes["insights"] != nil {
		t.Error("an invalid query was sent")
	}
}

func TestClose(t *testing.T) {
	fi := newFakeIndex(2, "")
	if err := fi.Close(); err != nil {
		t.Fatal(err)
	}
	if err := fi.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	err := fi.Upsert(context.Background(), "tools", []agentsmcp.Vector{{ID: "a", Values: []float32{1, 0}}})
	if err == nil || !strings.Contains(err.Error(), "closed") {
		t.Errorf("upsert after Close: %v", err)
	}
}

func TestConcurrentUse(t *testing.T) {
	fi := newFakeIndex(2, "")
	var wg sync.WaitGroup
	for i := range 40 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ns := []string{"learnings", "tools", "insights"}[i%3]
			_ = fi.Upsert(context.Background(), ns, []agentsmcp.Vector{{ID: fmt.Sprint(i), Values: []float32{1, 0}}})
			_, _ = fi.Query(context.Background(), ns, agentsmcp.VectorQuery{Values: []float32{1, 0}, TopK: 1})
		}()
	}
	wg.Wait()
	if fi.dials != 3 {
		t.Errorf("%d dials for 3 namespaces", fi.dials)
	}
}

// fakeControlPlane answers DescribeIndex like Pinecone's API would, for
// the index "agents", and checks the API key header.
func fakeControlPlane(t *testing.T, key string, status int, desc map[string]any) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Api-Key") != key {
			w.WriteHeader(http.StatusUnauthorized)
			fmt.Fprint(w, `{"error":{"code":"UNAUTHENTICATED","message":"Invalid API Key"},"status":401}`)
			return
		}
		if r.Method != http.MethodGet || r.URL.Path != "/indexes/agents" {
			w.WriteHeader(http.StatusNotFound)
			fmt.Fprint(w, `{"error":{"code":"NOT_FOUND","message":"Resource not found"},"status":404}`)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_ = json.NewEncoder(w).Encode(desc)
	}))
	t.Cleanup(srv.Close)
	t.Setenv("PINECONE_CONTROLLER_HOST", srv.URL)
	return srv
}

func describe(dims int, metric string) map[string]any {
	return map[string]any{
		"name": "agents", "dimension": dims, "metric": metric, "host": "agents-abc123.svc.aped-4627-b74a.pinecone.io",
		"vector_type": "dense", "spec": map[string]any{}, "status": map[string]any{"ready": true, "state": "Ready"},
	}
}

func TestOpenChecksTheIndex(t *testing.T) {
	const key = "pcsk_OPEN_secret"
	tests := []struct {
		name   string
		key    string
		index  string
		status int
		desc   map[string]any
		code   string
		want   []string // in the message
	}{
		{"matches", key, "agents", 200, describe(384, "cosine"), "", nil},
		{"wrong dimension", key, "agents", 200, describe(1536, "cosine"), agentsmcp.EINVALID, []string{"1536", "384"}},
		{"wrong metric", key, "agents", 200, describe(384, "dotproduct"), agentsmcp.EINVALID, []string{"dotproduct", "cosine"}},
		{"sparse", key, "agents", 200, map[string]any{"name": "agents", "metric": "dotproduct", "host": "h", "vector_type": "sparse", "spec": map[string]any{}, "status": map[string]any{}}, agentsmcp.EINVALID, []string{"sparse"}},
		{"missing index", key, "other", 200, nil, agentsmcp.ENOTFOUND, []string{"other"}},
		{"bad key", "pcsk_wrong_secret", "agents", 200, nil, agentsmcp.EUNAUTHORIZED, nil},
		{"overloaded", key, "agents", 503, map[string]any{"error": map[string]any{"message": "busy"}}, agentsmcp.EUNAVAILABLE, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fakeControlPlane(t, key, tt.status, tt.desc)
			x, err := Open(context.Background(), Config{APIKey: tt.key, Index: tt.index, Dimensions: 384, Timeout: 2 * time.Second})
			if got := agentsmcp.ErrorCode(err); got != tt.code {
				t.Fatalf("code %q, want %q (%v)", got, tt.code, err)
			}
			if err == nil {
				defer x.Close()
				if x.host != "agents-abc123.svc.aped-4627-b74a.pinecone.io" {
					t.Errorf("host %q, want the described one", x.host)
				}
				return
			}
			t.Log(err)
			for _, w := range tt.want {
				if !strings.Contains(agentsmcp.ErrorMessage(err), w) {
					t.Errorf("message %q lacks %q", agentsmcp.ErrorMessage(err), w)
				}
			}
			if strings.Contains(err.Error(), tt.key) {
				t.Errorf("error holds the API key: %v", err)
			}
		})
	}
}

func TestOpenConfig(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
		code string
	}{
		{"no key", Config{Host: "h.pinecone.io", Dimensions: 3}, agentsmcp.EINVALID},
		{"no index nor host", Config{APIKey: "k", Dimensions: 3}, agentsmcp.EINVALID},
		{"no dimensions", Config{APIKey: "k", Host: "h.pinecone.io"}, agentsmcp.EINVALID},
		{"bad host", Config{APIKey: "k", Host: "https://h.pinecone.io/path", Dimensions: 3}, agentsmcp.EINVALID},
		{"host only", Config{APIKey: "k", Host: "h.pinecone.io", Dimensions: 3}, ""},
		{"host with scheme", Config{APIKey: "k", Host: "https://h.pinecone.io", Dimensions: 3}, ""},
	}
	for _, tt := range tests {
		x, err := Open(context.Background(), tt.cfg)
		if got := agentsmcp.ErrorCode(err); got != tt.code {
			t.Errorf("%s: code %q, want %q (%v)", tt.name, got, tt.code, err)
		}
		if err == nil {
			if x.timeout != DefaultTimeout {
				t.Errorf("%s: timeout %v, want the default", tt.name, x.timeout)
			}
			if err := x.Close(); err != nil {
				t.Errorf("%s: Close: %v", tt.name, err)
			}
		}
	}
}
