package vectors

import (
	"context"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"

	agentsmcp "github.com/agents-mcp/agents-mcp"
)

func randomVectors(r *rand.Rand, n, dims int) []agentsmcp.Vector {
	vs := make([]agentsmcp.Vector, n)
	for i := range vs {
		v := make([]float32, dims)
		for j := range v {
			v[j] = float32(r.NormFloat64())
		}
		kind := "a"
		if i%3 == 0 {
			kind = "b"
		}
		vs[i] = agentsmcp.Vector{ID: "v" + string(rune('A'+i%26)) + string(rune('a'+i/26%26)) + string(rune('0'+i/676)), Values: v, Metadata: map[string]string{"kind": kind}}
	}
	return vs
}

// exact computes the expected answer the slow, obvious way.
func exact(vs []agentsmcp.Vector, q []float32, k int, filter map[string]string) []string {
	type s struct {
		id    string
		score float32
	}
	qn := slices.Clone(q)
	normalize(qn)
	var all []s
	for _, v := range vs {
		if !matches(v.Metadata, filter) {
			continue
		}
		vn := slices.Clone(v.Values)
		normalize(vn)
		all = append(all, s{v.ID, dot(qn, vn)})
	}
	sort.Slice(all, func(i, j int) bool { return all[i].score > all[j].score })
	var ids []string
	for i := 0; i < k && i < len(all); i++ {
		ids = append(ids, all[i].id)
	}
	return ids
}

func TestFlatMatchesExactSearch(t *testing.T) {
	ctx := context.Background()
	r := rand.New(rand.NewPCG(1, 2))
	const dims = 16
	vs := randomVectors(r, 500, dims)
	f := NewFlat(dims)
	if err := f.Upsert(ctx, "ns", vs); err != nil {
		t.Fatal(err)
	}
	for trial := range 20 {
		q := randomVectors(r, 1, dims)[0].Values
		var filter map[string]string
		if trial%2 == 1 {
			filter = map[string]string{"kind": "b"}
		}
		got, err := f.Query(ctx, "ns", agentsmcp.VectorQuery{Values: q, TopK: 10, Filter: filter})
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for i, m := range got {
			ids = append(ids, m.ID)
			if i > 0 && m.Score > got[i-1].Score {
				t.Fatal("results not sorted by score")
			}
			if filter != nil && m.Metadata["kind"] != "b" {
				t.Fatal("filter ignored")
			}
		}
		if want := exact(vs, q, 10, filter); !slices.Equal(ids, want) {
			t.Fatalf("trial %d: got %v, want %v", trial, ids, want)
		}
	}
}

func TestFlatUpsertReplaceAndDelete(t *testing.T) {
	ctx := context.Background()
	f := NewFlat(2)
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(f.Upsert(ctx, "ns", []agentsmcp.Vector{{ID: "x", Values: []float32{1, 0}}, {ID: "y", Values: []float32{0, 1}}, {ID: "z", Values: []float32{1, 1}}}))
	must(f.Upsert(ctx, "ns", []agentsmcp.Vector{{ID: "x", Values: []float32{0, 3}}})) // replaced, normalised
	got, _ := f.Query(ctx, "ns", agentsmcp.VectorQuery{Values: []float32{0, 1}, TopK: 2})
	if len(got) != 2 || got[0].Score < 0.999 || got[1].Score < 0.999 {
		t.Fatalf("after replace: %+v", got)
	}
	must(f.Delete(ctx, "ns", []string{"x", "missing"}))
	if f.Len("ns") != 2 {
		t.Fatalf("len = %d after delete", f.Len("ns"))
	}
	got, _ = f.Query(ctx, "ns", agentsmcp.VectorQuery{Values: []float32{1, 0}, TopK: 5})
	if len(got) != 2 || got[0].ID != "z" || got[1].ID != "y" {
		t.Fatalf("after delete: %+v", got)
	}
	if got, _ := f.Query(ctx, "other", agentsmcp.VectorQuery{Values: []float32{1, 0}, TopK: 5}); len(got) != 0 {
		t.Fatal("namespaces leak into each other")
	}
	if err := f.Upsert(ctx, "ns", []agentsmcp.Vector{{ID: "bad", Values: []float32{1}}}); agentsmcp.ErrorCode(err) != agentsmcp.EINVALID {
		t.Fatalf("wrong dims: %v", err)
	}
	if _, err := f.Query(ctx, "ns", agentsmcp.VectorQuery{Values: []float32{1, 0}}); agentsmcp.ErrorCode(err) != agentsmcp.EINVALID {
		t.Fatalf("topK 0: %v", err)
	}
}
