package vectors

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"sync"
	"testing"

	agentsmcp "github.com/agents-mcp/agents-mcp"
)

// dataset draws n vectors and nq queries from one mixture of `clusters`
// Gaussian clusters, the shape real embeddings have (pure Gaussian data is
// unrealistically hard for any graph index). With rank > 0 each cluster
// spreads along its own random rank-dimensional subspace plus a little
// isotropic noise, so the data has low intrinsic dimension, as sentence
// embeddings do; with rank 0 each cluster is an isotropic blob, the hard
// case. Metadata: "shard" is i%50 (2 % each), "kind" is "b" for every third
// vector, "cluster" the cluster's number.
func dataset(seed uint64, n, nq, dims, clusters, rank int) ([]agentsmcp.Vector, [][]float32) {
	r := rand.New(rand.NewPCG(seed, 7))
	gauss := func(v []float32, scale float32) {
		for j := range v {
			v[j] = scale * float32(r.NormFloat64())
		}
	}
	centres := make([][]float32, clusters)
	bases := make([][]float32, clusters) // rank × dims, row-major
	for c := range centres {
		centres[c] = make([]float32, dims)
		gauss(centres[c], 1)
		if rank > 0 {
			bases[c] = make([]float32, rank*dims)
			gauss(bases[c], 1/float32(math.Sqrt(float64(rank))))
		}
	}
	point := func() ([]float32, int) {
		c := r.IntN(clusters)
		v := make([]float32, dims)
		if rank == 0 {
			gauss(v, 0.6)
		} else {
			gauss(v, 0.1)
			for k := range rank {
				z := 0.8 * float32(r.NormFloat64())
				for j, b := range bases[c][k*dims : (k+1)*dims] {
					v[j] += z * b
				}
			}
		}
		for j := range v {
			v[j] += centres[c][j]
		}
		return v, c
	}
	vs := make([]agentsmcp.Vector, n)
	for i := range vs {
		v, c := point()
		kind := "a"
		if i%3 == 0 {
			kind = "b"
		}
		vs[i] = agentsmcp.Vector{ID: "id" + strconv.Itoa(i), Values: v, Metadata: map[string]string{
			"shard": strconv.Itoa(i % 50), "kind": kind, "cluster": strconv.Itoa(c),
		}}
	}
	qs := make([][]float32, nq)
	for i := range qs {
		qs[i], _ = point()
	}
	return vs, qs
}

// clusteredVectors is dataset's vectors with isotropic clusters.
func clusteredVectors(seed uint64, n, dims, clusters int) []agentsmcp.Vector {
	vs, _ := dataset(seed, n, 0, dims, clusters, 0)
	return vs
}

func ids(ms []agentsmcp.VectorMatch) []string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = m.ID
	}
	return out
}

// overlap counts the ids of got that are in want.
func overlap(got, want []string) int {
	n := 0
	for _, id := range got {
		if slices.Contains(want, id) {
			n++
		}
	}
	return n
}

func mustQuery(t testing.TB, ix agentsmcp.VectorIndex, ns string, q agentsmcp.VectorQuery) []agentsmcp.VectorMatch {
	t.Helper()
	got, err := ix.Query(context.Background(), ns, q)
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i < len(got); i++ {
		if got[i].Score > got[i-1].Score {
			t.Fatalf("results not sorted: %v", got)
		}
	}
	return got
}

// sameMatches reports whether a and b have the same ids and scores, in
// order, allowing ties to be listed either way.
func sameMatches(a, b []agentsmcp.VectorMatch) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Score != b[i].Score {
			return false
		}
	}
	x, y := ids(a), ids(b)
	slices.Sort(x)
	slices.Sort(y)
	return slices.Equal(x, y)
}

const (
	recallN, recallDims, recallClusters = 5000, 64, 50
)

type recallFixture struct {
	h  *HNSW
	f  *Flat
	qs [][]float32
}

// The 5000-vector fixture is built once and shared: under -race the build
// is the slowest step of these tests.
var fixture = sync.OnceValue(func() recallFixture {
	ctx := context.Background()
	vs, qs := dataset(1, recallN, 250, recallDims, recallClusters, 0)
	h := NewHNSW(recallDims, HNSWOptions{Seed: 42})
	f := NewFlat(recallDims)
	if err := h.Upsert(ctx, "ns", vs); err != nil {
		panic(err)
	}
	if err := f.Upsert(ctx, "ns", vs); err != nil {
		panic(err)
	}
	return recallFixture{h, f, qs}
})

func TestHNSWRecallAgainstFlat(t *testing.T) {
	fx := fixture()
	h, f, qs := fx.h, fx.f, fx.qs[:200]
	if h.Len("ns") != recallN {
		t.Fatalf("len = %d", h.Len("ns"))
	}
	var truth [][]string
	for _, q := range qs {
		truth = append(truth, ids(mustQuery(t, f, "ns", agentsmcp.VectorQuery{Values: q, TopK: 10})))
	}
	recallAt := func(ef int) float64 {
		hits := 0
		for i, q := range qs {
			got, err := h.QueryEf(context.Background(), "ns", agentsmcp.VectorQuery{Values: q, TopK: 10}, ef)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != 10 {
				t.Fatalf("got %d results", len(got))
			}
			hits += overlap(ids(got), truth[i])
		}
		return float64(hits) / float64(10*len(qs))
	}
	recall := recallAt(0)
	t.Logf("recall@10 = %.4f (n=%d, dims=%d, defaults); ef=10: %.4f, ef=20: %.4f", recall, recallN, recallDims, recallAt(10), recallAt(20))
	if recall < 0.95 {
		t.Fatalf("recall@10 = %.4f, want ≥ 0.95", recall)
	}
}

func TestHNSWFilters(t *testing.T) {
	fx := fixture()
	h, f, qs := fx.h, fx.f, fx.qs[200:]
	for i, q := range qs {
		// 2 % of the vectors: answered exactly.
		sel := map[string]string{"shard": strconv.Itoa(i % 50)}
		want := mustQuery(t, f, "ns", agentsmcp.VectorQuery{Values: q, TopK: 10, Filter: sel})
		got := mustQuery(t, h, "ns", agentsmcp.VectorQuery{Values: q, TopK: 10, Filter: sel})
		if !sameMatches(got, want) {
			t.Fatalf("query %d, selective filter: got %v, want %v", i, ids(got), ids(want))
		}
		// Two keys, intersecting to about 0.7 %.
		two := map[string]string{"shard": strconv.Itoa(i % 50), "kind": "b"}
		want = mustQuery(t, f, "ns", agentsmcp.VectorQuery{Values: q, TopK: 10, Filter: two})
		got = mustQuery(t, h, "ns", agentsmcp.VectorQuery{Values: q, TopK: 10, Filter: two})
		if !sameMatches(got, want) {
			t.Fatalf("query %d, two-key filter: got %v, want %v", i, ids(got), ids(want))
		}
	}
	// A broad filter (a third of the vectors); at this size the cost model
	// scans it too. TestHNSWFilteredBeamSearch covers the graph path.
	hits := 0
	for _, q := range qs {
		broad := map[string]string{"kind": "b"}
		want := ids(mustQuery(t, f, "ns", agentsmcp.VectorQuery{Values: q, TopK: 10, Filter: broad}))
		got := mustQuery(t, h, "ns", agentsmcp.VectorQuery{Values: q, TopK: 10, Filter: broad})
		if len(got) != 10 {
			t.Fatalf("broad filter: %d results", len(got))
		}
		for _, m := range got {
			if m.Metadata["kind"] != "b" {
				t.Fatalf("filter ignored: %+v", m)
			}
		}
		hits += overlap(ids(got), want)
	}
	if recall := float64(hits) / float64(10*len(qs)); recall < 0.95 {
		t.Fatalf("broad filter recall@10 = %.4f", recall)
	} else {
		t.Logf("broad filter (1/3) recall@10 = %.4f", recall)
	}
	if got := mustQuery(t, h, "ns", agentsmcp.VectorQuery{Values: qs[0], TopK: 10, Filter: map[string]string{"shard": "none"}}); len(got) != 0 {
		t.Fatalf("unmatched filter: %v", ids(got))
	}
}

// With the exact shortcuts disabled, filters go through the beam search: a
// broad one must keep its recall, and a selective one exhausts the
// similarity budget in the graph and must still come back exact.
func TestHNSWFilteredBeamSearch(t *testing.T) {
	ctx := context.Background()
	const n, dims = 2000, 16
	vs, qs := dataset(5, n, 30, dims, 20, 0)
	h := NewHNSW(dims, HNSWOptions{Seed: 1, ExactThreshold: -1})
	f := NewFlat(dims)
	if err := h.Upsert(ctx, "ns", vs); err != nil {
		t.Fatal(err)
	}
	f.Upsert(ctx, "ns", vs)
	hits := 0
	for i, q := range qs {
		for _, filter := range []map[string]string{{"shard": strconv.Itoa(i % 50)}, {"cluster": strconv.Itoa(i % 20)}, {"kind": "b"}} {
			want := mustQuery(t, f, "ns", agentsmcp.VectorQuery{Values: q, TopK: 10, Filter: filter})
			got := mustQuery(t, h, "ns", agentsmcp.VectorQuery{Values: q, TopK: 10, Filter: filter})
			if len(got) != len(want) {
				t.Fatalf("query %d %v: %d results, want %d", i, filter, len(got), len(want))
			}
			if filter["shard"] != "" && !sameMatches(got, want) {
				t.Fatalf("query %d %v: got %v, want %v", i, filter, ids(got), ids(want))
			}
			hits += overlap(ids(got), ids(want))
		}
	}
	if recall := float64(hits) / float64(3*10*len(qs)); recall < 0.95 {
		t.Fatalf("filtered recall %.3f", recall)
	}
}

func TestHNSWDeleteAndReplace(t *testing.T) {
	ctx := context.Background()
	const n, dims = 400, 8
	for _, ratio := range []float64{0, -1} { // default compaction, and none
		t.Run(fmt.Sprint("compact=", ratio), func(t *testing.T) {
			vs, qs := dataset(9, n+n/5, 40, dims, 8, 0)
			extra := vs[n:]
			vs = vs[:n]
			h := NewHNSW(dims, HNSWOptions{Seed: 3, CompactRatio: ratio})
			f := NewFlat(dims)
			must := func(err error) {
				t.Helper()
				if err != nil {
					t.Fatal(err)
				}
			}
			must(h.Upsert(ctx, "ns", vs))
			must(f.Upsert(ctx, "ns", vs))
			r := rand.New(rand.NewPCG(4, 4))
			// Replace a fifth with new vectors, delete another fifth in steps.
			var repl []agentsmcp.Vector
			for i := 0; i < n; i += 5 {
				v := extra[i/5]
				v.ID = vs[i].ID
				repl = append(repl, v)
			}
			must(h.Upsert(ctx, "ns", repl))
			must(f.Upsert(ctx, "ns", repl))
			var del []string
			for i := 1; i < n; i += 5 {
				del = append(del, vs[i].ID)
			}
			for len(del) > 0 {
				k := min(len(del), 1+r.IntN(20))
				must(h.Delete(ctx, "ns", append(del[:k:k], "missing")))
				must(f.Delete(ctx, "ns", del[:k]))
				del = del[k:]
			}
			if h.Len("ns") != f.Len("ns") {
				t.Fatalf("len %d, flat %d", h.Len("ns"), f.Len("ns"))
			}
			sp := h.space("ns", false)
			t.Logf("nodes %d, tombstones %d", len(sp.g.ids), sp.g.ndead)
			if ratio < 0 && sp.g.ndead != 2*n/5 {
				t.Fatalf("tombstones %d, want %d", sp.g.ndead, 2*n/5)
			}
			if ratio == 0 && float64(sp.g.ndead) >= 0.25*float64(len(sp.g.ids)) {
				t.Fatalf("no compaction: %d of %d tombstoned", sp.g.ndead, len(sp.g.ids))
			}
			hits := 0
			for _, q := range qs {
				want := mustQuery(t, f, "ns", agentsmcp.VectorQuery{Values: q, TopK: 10})
				got := mustQuery(t, h, "ns", agentsmcp.VectorQuery{Values: q, TopK: 10})
				if len(got) != 10 {
					t.Fatalf("%d results", len(got))
				}
				for _, m := range got {
					if i, _ := strconv.Atoi(m.ID[2:]); i%5 == 1 {
						t.Fatalf("deleted %s returned", m.ID)
					}
				}
				hits += overlap(ids(got), ids(want))
				// A beam as wide as the namespace is exhaustive.
				all, err := h.QueryEf(ctx, "ns", agentsmcp.VectorQuery{Values: q, TopK: 10}, n)
				must(err)
				if !sameMatches(all, want) {
					t.Fatalf("ef=n: got %v, want %v", ids(all), ids(want))
				}
			}
			if recall := float64(hits) / 400; recall < 0.95 {
				t.Fatalf("recall after churn %.3f", recall)
			}
			// A replaced vector is found by its new value, with its new score.
			got := mustQuery(t, h, "ns", agentsmcp.VectorQuery{Values: repl[3].Values, TopK: 1})
			if len(got) != 1 || got[0].ID != repl[3].ID || got[0].Score < 0.9999 {
				t.Fatalf("replaced vector: %+v", got)
			}
		})
	}
}

func TestHNSWMetadataUpdateInPlace(t *testing.T) {
	ctx := context.Background()
	h := NewHNSW(2, HNSWOptions{Seed: 1})
	v := []agentsmcp.Vector{{ID: "x", Values: []float32{1, 0}, Metadata: map[string]string{"k": "old", "same": "1"}}, {ID: "y", Values: []float32{0, 1}}}
	if err := h.Upsert(ctx, "ns", v); err != nil {
		t.Fatal(err)
	}
	v[0].Metadata = map[string]string{"k": "new", "same": "1"}
	if err := h.Upsert(ctx, "ns", v[:1]); err != nil {
		t.Fatal(err)
	}
	if g := h.space("ns", false).g; len(g.ids) != 2 || g.ndead != 0 {
		t.Fatalf("same vector re-inserted: %d nodes, %d dead", len(g.ids), g.ndead)
	}
	q := func(f map[string]string) []string {
		return ids(mustQuery(t, h, "ns", agentsmcp.VectorQuery{Values: []float32{1, 1}, TopK: 5, Filter: f}))
	}
	if got := q(map[string]string{"k": "old"}); len(got) != 0 {
		t.Fatalf("old metadata still matches: %v", got)
	}
	if got := q(map[string]string{"k": "new", "same": "1"}); !slices.Equal(got, []string{"x"}) {
		t.Fatalf("new metadata: %v", got)
	}
	if got := q(nil); len(got) != 2 {
		t.Fatalf("all: %v", got)
	}
}

// After heavy deletion without compaction most of the graph is tombstones;
// queries must still return every live vector they should.
func TestHNSWNeverShort(t *testing.T) {
	ctx := context.Background()
	const n, dims = 600, 8
	vs, qs := dataset(11, n, 20, dims, 6, 0)
	h := NewHNSW(dims, HNSWOptions{Seed: 5, CompactRatio: -1, M: 4})
	f := NewFlat(dims)
	h.Upsert(ctx, "ns", vs)
	f.Upsert(ctx, "ns", vs)
	var del []string
	for i := range n {
		if i%40 != 0 {
			del = append(del, vs[i].ID)
		}
	}
	h.Delete(ctx, "ns", del)
	f.Delete(ctx, "ns", del)
	for _, q := range qs {
		want := mustQuery(t, f, "ns", agentsmcp.VectorQuery{Values: q, TopK: 10})
		got := mustQuery(t, h, "ns", agentsmcp.VectorQuery{Values: q, TopK: 10})
		if len(got) != 10 {
			t.Fatalf("%d results with %d live", len(got), h.Len("ns"))
		}
		if overlap(ids(got), ids(want)) < 9 {
			t.Fatalf("got %v, want %v", ids(got), ids(want))
		}
		want = mustQuery(t, f, "ns", agentsmcp.VectorQuery{Values: q, TopK: 100})
		got = mustQuery(t, h, "ns", agentsmcp.VectorQuery{Values: q, TopK: 100})
		if !sameMatches(got, want) {
			t.Fatalf("topK > live: got %d, want %d", len(got), len(want))
		}
	}
	h.Delete(ctx, "ns", ids(mustQuery(t, f, "ns", agentsmcp.VectorQuery{Values: vs[0].Values, TopK: 100})))
	if got := mustQuery(t, h, "ns", agentsmcp.VectorQuery{Values: vs[0].Values, TopK: 3}); len(got) != 0 {
		t.Fatalf("empty namespace: %v", got)
	}
	h.Compact("ns")
	if g := h.space("ns", false).g; len(g.ids) != 0 || g.hasEntry {
		t.Fatalf("compacted empty graph: %d nodes", len(g.ids))
	}
	if err := h.Upsert(ctx, "ns", vs[:3]); err != nil {
		t.Fatal(err)
	}
	if got := mustQuery(t, h, "ns", agentsmcp.VectorQuery{Values: vs[1].Values, TopK: 1}); len(got) != 1 || got[0].ID != vs[1].ID {
		t.Fatalf("after refill: %v", got)
	}
}

func TestHNSWValidationAndNamespaces(t *testing.T) {
	ctx := context.Background()
	h := NewHNSW(2, HNSWOptions{})
	if err := h.Upsert(ctx, "ns", []agentsmcp.Vector{{ID: "x", Values: []float32{1, 0}}, {ID: "bad", Values: []float32{1}}}); agentsmcp.ErrorCode(err) != agentsmcp.EINVALID {
		t.Fatalf("wrong dims: %v", err)
	}
	if h.Len("ns") != 0 {
		t.Fatal("part of an invalid batch stored")
	}
	if err := h.Upsert(ctx, "ns", []agentsmcp.Vector{{Values: []float32{1, 0}}}); agentsmcp.ErrorCode(err) != agentsmcp.EINVALID {
		t.Fatalf("no id: %v", err)
	}
	if _, err := h.Query(ctx, "ns", agentsmcp.VectorQuery{Values: []float32{1, 0}}); agentsmcp.ErrorCode(err) != agentsmcp.EINVALID {
		t.Fatalf("topK 0: %v", err)
	}
	if _, err := h.Query(ctx, "ns", agentsmcp.VectorQuery{Values: []float32{1}, TopK: 1}); agentsmcp.ErrorCode(err) != agentsmcp.EINVALID {
		t.Fatalf("query dims: %v", err)
	}
	h.Upsert(ctx, "a", []agentsmcp.Vector{{ID: "x", Values: []float32{1, 0}}})
	if got := mustQuery(t, h, "b", agentsmcp.VectorQuery{Values: []float32{1, 0}, TopK: 5}); len(got) != 0 {
		t.Fatal("namespaces leak into each other")
	}
	if err := h.Delete(ctx, "nowhere", []string{"x"}); err != nil {
		t.Fatal(err)
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := h.Query(cancelled, "a", agentsmcp.VectorQuery{Values: []float32{1, 0}, TopK: 1}); err == nil {
		t.Fatal("cancelled query succeeded")
	}
	if err := h.Upsert(cancelled, "c", []agentsmcp.Vector{{ID: "x", Values: []float32{1, 0}}}); err == nil || h.Len("c") != 0 {
		t.Fatalf("cancelled upsert: %v, len %d", err, h.Len("c"))
	}
	var _ agentsmcp.VectorIndex = h
}

func TestHNSWConcurrentQueriesAndWrites(t *testing.T) {
	ctx := context.Background()
	const n, dims = 600, 16
	vs, qs := dataset(13, n, 50, dims, 10, 0)
	h := NewHNSW(dims, HNSWOptions{Seed: 7})
	for _, ns := range []string{"a", "b"} {
		if err := h.Upsert(ctx, ns, vs[:n/2]); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for w := range 2 { // writers: grow both namespaces, replace and delete
		wg.Go(func() {
			ns := []string{"a", "b"}[w]
			for i := n / 2; i < n; i += 10 {
				if err := h.Upsert(ctx, ns, vs[i:i+10]); err != nil {
					errs <- err
					return
				}
				if err := h.Delete(ctx, ns, []string{vs[i-n/2].ID}); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	for r := range 4 {
		wg.Go(func() {
			for i := range 150 {
				q := agentsmcp.VectorQuery{Values: qs[(r*7+i)%len(qs)], TopK: 5}
				if i%3 == 0 {
					q.Filter = map[string]string{"kind": "b"}
				}
				got, err := h.Query(ctx, []string{"a", "b"}[i%2], q)
				if err != nil {
					errs <- err
					return
				}
				if len(got) != 5 {
					errs <- fmt.Errorf("%d results", len(got))
					return
				}
			}
		})
	}
	wg.Go(func() { // a saver running alongside
		for range 3 {
			if _, err := h.WriteTo(discard{}); err != nil {
				errs <- err
			}
		}
	})
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if h.Len("a") != n-n/2/10 || h.Len("b") != h.Len("a") {
		t.Fatalf("len a=%d b=%d", h.Len("a"), h.Len("b"))
	}
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }

func TestCandHeap(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 1))
	var h candHeap
	var all []float32
	for i := range 500 {
		s := float32(r.NormFloat64())
		all = append(all, s)
		h.push(cand{s, uint32(i)})
		if m := slices.Min(all); h[0].sim != m {
			t.Fatalf("top %v, min %v", h[0].sim, m)
		}
	}
	slices.Sort(all)
	for i, want := range all {
		if got := h.pop(); got.sim != want {
			t.Fatalf("pop %d = %v, want %v", i, got.sim, want)
		}
	}
	for _, s := range []float32{3, 1, 2, 5, 4} {
		h.push(cand{s, 0})
	}
	var buf []cand
	best := h.drainBest(3, &buf)
	if len(best) != 3 || best[0].sim != 5 || best[1].sim != 4 || best[2].sim != 3 || len(h) != 0 {
		t.Fatalf("drainBest: %v", best)
	}
}

func TestDotMatchesFloat64(t *testing.T) {
	r := rand.New(rand.NewPCG(2, 2))
	for n := range 80 {
		a, b := make([]float32, n), make([]float32, n)
		for i := range a {
			a[i], b[i] = float32(r.NormFloat64()), float32(r.NormFloat64())
		}
		var ref float64
		for i := range a {
			ref += float64(a[i]) * float64(b[i])
		}
		if got := dot(a, b); math.Abs(float64(got)-ref) > 1e-4*(1+math.Abs(ref)) {
			t.Fatalf("n=%d: dot %v, float64 %v", n, got, ref)
		}
	}
}

func TestHNSWDeterministicWithSeed(t *testing.T) {
	ctx := context.Background()
	vs := clusteredVectors(15, 300, 8, 5)
	var files [2][]byte
	for i := range files {
		h := NewHNSW(8, HNSWOptions{Seed: 99})
		h.Upsert(ctx, "ns", vs)
		h.Delete(ctx, "ns", []string{vs[0].ID})
		var b bytesBuffer
		if _, err := h.WriteTo(&b); err != nil {
			t.Fatal(err)
		}
		files[i] = b
	}
	if !slices.Equal(files[0], files[1]) {
		t.Fatal("same seed and writes gave different graphs")
	}
}

type bytesBuffer []byte

func (b *bytesBuffer) Write(p []byte) (int, error) { *b = append(*b, p...); return len(p), nil }

// The exact scan is the safety net for nodes the graph cannot reach: cut
// every edge into one node and ask for the whole namespace.
func TestHNSWUnreachableNodeStillReturned(t *testing.T) {
	ctx := context.Background()
	vs, _ := dataset(17, 60, 0, 8, 3, 0)
	h := NewHNSW(8, HNSWOptions{Seed: 1})
	h.Upsert(ctx, "ns", vs)
	g := h.space("ns", false).g
	x := g.index[vs[7].ID]
	if x == g.entry {
		x = g.index[vs[8].ID]
	}
	for i := range g.ids {
		for l := 0; l <= int(g.levels[i]); l++ {
			row := g.slot(uint32(i), l)
			links := slices.DeleteFunc(slices.Clone(row[1:1+row[0]]), func(nb uint32) bool { return nb == x })
			row[0] = uint32(len(links))
			copy(row[1:], links)
		}
	}
	got := mustQuery(t, h, "ns", agentsmcp.VectorQuery{Values: vs[0].Values, TopK: 60})
	if len(got) != 60 || !slices.Contains(ids(got), g.ids[x]) {
		t.Fatalf("%d results, unreachable node included: %v", len(got), slices.Contains(ids(got), g.ids[x]))
	}
}
