// Package vectortest is the behaviour every [agentsmcp.VectorIndex] shares,
// as one suite that each implementation runs: the embedded indexes of
// memory/vectors and memory/pinecone on the wire of a Pinecone test
// server. It holds what callers rely on and the implementations agree on:
// exact top-k by cosine, metadata round trips and equality filters (an
// empty value matching a missing key), namespaces kept apart, replacement
// and deletion, and EINVALID for a query of the wrong size or a
// non-positive topK. It leaves out what the interface lets them differ in:
// the order of equal scores, the zero vector, eventual consistency (the
// suite needs an index that shows its writes at once).
//
// Only tests import it.
package vectortest

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"sort"
	"testing"

	agentsmcp "github.com/agents-mcp/agents-mcp"
)

// nsTools is a third namespace; the interface names two.
const nsTools = "tools"

// Dims is the vector size the suite uses; open must return an index of it.
const Dims = 16

// Run runs the suite. open returns a fresh, empty index of [Dims]
// dimensions for each subtest. skip names subtests an implementation is
// known to fail; each is logged as skipped, so the divergence stays in
// view.
func Run(t *testing.T, open func(t *testing.T) agentsmcp.VectorIndex, skip ...string) {
	for _, c := range []struct {
		name string
		f    func(*testing.T, agentsmcp.VectorIndex)
	}{
		{"RoundTrip", roundTrip},
		{"ExactTopK", exactTopK},
		{"Filters", filters},
		{"EmptyFilterValue", emptyFilterValue},
		{"Namespaces", namespaces},
		{"ReplaceAndDelete", replaceAndDelete},
		{"Invalid", invalid},
	} {
		t.Run(c.name, func(t *testing.T) {
			if slices.Contains(skip, c.name) {
				t.Skip("known divergence of this implementation")
			}
			c.f(t, open(t))
		})
	}
}

// axis is a unit vector along dimension i, tilted slightly towards i+1 so
// that no two axes tie against any query.
func axis(i int) []float32 {
	v := make([]float32, Dims)
	v[i%Dims] = 1
	v[(i+1)%Dims] = 0.01 * float32(i%Dims+1)
	return v
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func query(t *testing.T, x agentsmcp.VectorIndex, ns string, q agentsmcp.VectorQuery) []agentsmcp.VectorMatch {
	t.Helper()
	ms, err := x.Query(context.Background(), ns, q)
	if err != nil {
		t.Fatalf("Query(%s, topK %d, filter %v): %v", ns, q.TopK, q.Filter, err)
	}
	if ms == nil {
		t.Fatalf("Query(%s) returned nil; want an empty slice when nothing matches", ns)
	}
	return ms
}

func ids(ms []agentsmcp.VectorMatch) []string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = m.ID
	}
	return out
}

func roundTrip(t *testing.T, x agentsmcp.VectorIndex) {
	ctx := context.Background()
	must(t, x.Upsert(ctx, agentsmcp.NamespaceLearnings, []agentsmcp.Vector{
		{ID: "a", Values: axis(0), Metadata: map[string]string{"kind": "learning", "tool": "fs"}},
		{ID: "b", Values: axis(1), Metadata: map[string]string{"kind": "learning", "tool": "web"}},
		{ID: "c", Values: axis(2)},
	}))
	ms := query(t, x, agentsmcp.NamespaceLearnings, agentsmcp.VectorQuery{Values: axis(0), TopK: 10})
	if len(ms) != 3 || ms[0].ID != "a" {
		t.Fatalf("matches %v, want a first of 3", ids(ms))
	}
	if math.Abs(float64(ms[0].Score)-1) > 1e-4 {
		t.Errorf("score of the query's own vector %v, want 1", ms[0].Score)
	}
	for i := 1; i < len(ms); i++ {
		if ms[i].Score > ms[i-1].Score {
			t.Errorf("not best first: %+v", ms)
		}
	}
	if want := map[string]string{"kind": "learning", "tool": "fs"}; !reflect.DeepEqual(ms[0].Metadata, want) {
		t.Errorf("metadata %v, want %v", ms[0].Metadata, want)
	}
	byID := map[string]agentsmcp.VectorMatch{}
	for _, m := range ms {
		byID[m.ID] = m
	}
	if len(byID["c"].Metadata) != 0 {
		t.Errorf("a vector stored without metadata came back with %v", byID["c"].Metadata)
	}
	if ms := query(t, x, agentsmcp.NamespaceLearnings, agentsmcp.VectorQuery{Values: axis(1), TopK: 1}); len(ms) != 1 || ms[0].ID != "b" {
		t.Errorf("top 1 near b: %v", ids(ms))
	}
}

// exact is the expected answer computed the obvious way.
func exact(vs []agentsmcp.Vector, q []float32, k int, filter map[string]string) []string {
	type s struct {
		id    string
		score float64
	}
	cos := func(a, b []float32) float64 {
		var d, na, nb float64
		for i := range a {
			d += float64(a[i]) * float64(b[i])
			na += float64(a[i]) * float64(a[i])
			nb += float64(b[i]) * float64(b[i])
		}
		return d / math.Sqrt(na*nb)
	}
	var all []s
	for _, v := range vs {
		ok := true
		for k, want := range filter {
			ok = ok && v.Metadata[k] == want
		}
		if ok {
			all = append(all, s{v.ID, cos(q, v.Values)})
		}
	}
	sort.Slice(all, func(i, j int) bool { return all[i].score > all[j].score })
	var out []string
	for i := 0; i < k && i < len(all); i++ {
		out = append(out, all[i].id)
	}
	return out
}

func exactTopK(t *testing.T, x agentsmcp.VectorIndex) {
	r := rand.New(rand.NewPCG(7, 11))
	random := func() []float32 {
		v := make([]float32, Dims)
		for i := range v {
			v[i] = float32(r.NormFloat64())
		}
		return v
	}
	vs := make([]agentsmcp.Vector, 300)
	for i := range vs {
		kind := []string{"a", "b", "c"}[i%3]
		vs[i] = agentsmcp.Vector{ID: fmt.Sprintf("v%03d", i), Values: random(), Metadata: map[string]string{"kind": kind}}
	}
	must(t, x.Upsert(context.Background(), nsTools, vs))
	for trial := range 12 {
		q := random()
		var filter map[string]string
		if trial%2 == 1 {
			filter = map[string]string{"kind": "b"}
		}
		got := ids(query(t, x, nsTools, agentsmcp.VectorQuery{Values: q, TopK: 10, Filter: filter}))
		if want := exact(vs, q, 10, filter); !slices.Equal(got, want) {
			t.Fatalf("trial %d (filter %v): got %v, want %v", trial, filter, got, want)
		}
	}
}

func filters(t *testing.T, x agentsmcp.VectorIndex) {
	must(t, x.Upsert(context.Background(), agentsmcp.NamespaceInsights, []agentsmcp.Vector{
		{ID: "fs-ok", Values: axis(0), Metadata: map[string]string{"tool": "fs", "outcome": "success"}},
		{ID: "fs-bad", Values: axis(1), Metadata: map[string]string{"tool": "fs", "outcome": "failure"}},
		{ID: "web-ok", Values: axis(2), Metadata: map[string]string{"tool": "web", "outcome": "success"}},
		{ID: "bare", Values: axis(3)},
		{ID: "quoted", Values: axis(4), Metadata: map[string]string{"tool": `fs "x" $eq`, "outcome": "success"}},
	}))
	for _, tt := range []struct {
		filter map[string]string
		want   []string
	}{
		{map[string]string{"tool": "fs"}, []string{"fs-bad", "fs-ok"}},
		{map[string]string{"tool": "fs", "outcome": "success"}, []string{"fs-ok"}},
		{map[string]string{"outcome": "success"}, []string{"fs-ok", "quoted", "web-ok"}},
		{map[string]string{"tool": `fs "x" $eq`}, []string{"quoted"}},
		{map[string]string{"tool": "nope"}, nil},
	} {
		got := ids(query(t, x, agentsmcp.NamespaceInsights, agentsmcp.VectorQuery{Values: axis(0), TopK: 10, Filter: tt.filter}))
		slices.Sort(got)
		if !slices.Equal(got, tt.want) && !(len(got) == 0 && len(tt.want) == 0) {
			t.Errorf("filter %v: got %v, want %v", tt.filter, got, tt.want)
		}
	}
}

// emptyFilterValue: a filter value "" matches vectors that lack the key
// (a Go map reads a missing key as "").
func emptyFilterValue(t *testing.T, x agentsmcp.VectorIndex) {
	must(t, x.Upsert(context.Background(), agentsmcp.NamespaceInsights, []agentsmcp.Vector{
		{ID: "fs", Values: axis(0), Metadata: map[string]string{"tool": "fs", "outcome": "success"}},
		{ID: "bare", Values: axis(1), Metadata: map[string]string{"outcome": "success"}},
	}))
	for _, tt := range []struct {
		filter map[string]string
		want   []string
	}{
		{map[string]string{"tool": ""}, []string{"bare"}},
		{map[string]string{"tool": "", "outcome": "success"}, []string{"bare"}},
		{map[string]string{"tool": "fs", "outcome": ""}, nil},
	} {
		got := ids(query(t, x, agentsmcp.NamespaceInsights, agentsmcp.VectorQuery{Values: axis(0), TopK: 10, Filter: tt.filter}))
		if !slices.Equal(got, tt.want) && !(len(got) == 0 && len(tt.want) == 0) {
			t.Errorf("filter %v: got %v, want %v", tt.filter, got, tt.want)
		}
	}
}

func namespaces(t *testing.T, x agentsmcp.VectorIndex) {
	ctx := context.Background()
	must(t, x.Upsert(ctx, agentsmcp.NamespaceLearnings, []agentsmcp.Vector{{ID: "same", Values: axis(0), Metadata: map[string]string{"in": "learnings"}}}))
	must(t, x.Upsert(ctx, nsTools, []agentsmcp.Vector{{ID: "same", Values: axis(5), Metadata: map[string]string{"in": "tools"}}}))
	for ns, want := range map[string]string{agentsmcp.NamespaceLearnings: "learnings", nsTools: "tools"} {
		ms := query(t, x, ns, agentsmcp.VectorQuery{Values: axis(0), TopK: 5})
		if len(ms) != 1 || ms[0].Metadata["in"] != want {
			t.Errorf("namespace %s: %+v, want only its own vector", ns, ms)
		}
	}
	if ms := query(t, x, "never-written", agentsmcp.VectorQuery{Values: axis(0), TopK: 5}); len(ms) != 0 {
		t.Errorf("a namespace never written: %v", ids(ms))
	}
	must(t, x.Delete(ctx, nsTools, []string{"same"}))
	if ms := query(t, x, agentsmcp.NamespaceLearnings, agentsmcp.VectorQuery{Values: axis(0), TopK: 5}); len(ms) != 1 {
		t.Errorf("a delete in tools removed from learnings: %v", ids(ms))
	}
}

func replaceAndDelete(t *testing.T, x agentsmcp.VectorIndex) {
	ctx := context.Background()
	ns := agentsmcp.NamespaceLearnings
	must(t, x.Upsert(ctx, ns, []agentsmcp.Vector{
		{ID: "x", Values: axis(0), Metadata: map[string]string{"v": "1"}},
		{ID: "y", Values: axis(1)},
		{ID: "z", Values: axis(2)},
	}))
	// Replacing moves x and replaces its metadata as a whole.
	must(t, x.Upsert(ctx, ns, []agentsmcp.Vector{{ID: "x", Values: axis(7), Metadata: map[string]string{"w": "2"}}}))
	ms := query(t, x, ns, agentsmcp.VectorQuery{Values: axis(7), TopK: 1})
	if len(ms) != 1 || ms[0].ID != "x" || !reflect.DeepEqual(ms[0].Metadata, map[string]string{"w": "2"}) {
		t.Fatalf("after replace: %+v", ms)
	}
	if ms := query(t, x, ns, agentsmcp.VectorQuery{Values: axis(0), TopK: 10, Filter: map[string]string{"v": "1"}}); len(ms) != 0 {
		t.Errorf("old metadata still matches: %v", ids(ms))
	}
	must(t, x.Delete(ctx, ns, []string{"x", "never-there"}))
	if got := ids(query(t, x, ns, agentsmcp.VectorQuery{Values: axis(1), TopK: 10})); !slices.Equal(got, []string{"y", "z"}) {
		t.Errorf("after delete: %v, want [y z]", got)
	}
	must(t, x.Delete(ctx, ns, []string{"y", "z"}))
	if ms := query(t, x, ns, agentsmcp.VectorQuery{Values: axis(1), TopK: 10}); len(ms) != 0 {
		t.Errorf("after deleting all: %v", ids(ms))
	}
	if err := x.Delete(ctx, "never-written", []string{"a"}); err != nil {
		t.Errorf("delete in a namespace never written: %v", err)
	}
	if err := x.Delete(ctx, ns, nil); err != nil {
		t.Errorf("delete of nothing: %v", err)
	}
}

func invalid(t *testing.T, x agentsmcp.VectorIndex) {
	ctx := context.Background()
	if err := x.Upsert(ctx, nsTools, []agentsmcp.Vector{{ID: "short", Values: []float32{1, 0}}}); agentsmcp.ErrorCode(err) != agentsmcp.EINVALID {
		t.Errorf("upsert of the wrong size: %v, want EINVALID", err)
	}
	for _, q := range []agentsmcp.VectorQuery{
		{Values: []float32{1, 0}, TopK: 1},
		{Values: axis(0), TopK: 0},
	} {
		if _, err := x.Query(ctx, nsTools, q); agentsmcp.ErrorCode(err) != agentsmcp.EINVALID {
			t.Errorf("Query(%d dims, topK %d): %v, want EINVALID", len(q.Values), q.TopK, err)
		}
	}
}
