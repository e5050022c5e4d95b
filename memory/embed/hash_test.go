package embed

import (
	"context"
	"math"
	"testing"
)

func cosine(a, b []float32) float64 {
	var dot float64
	for i := range a {
		dot += float64(a[i]) * float64(b[i])
	}
	return dot
}

func TestHashEmbedder(t *testing.T) {
	h := Hash{}
	vs, err := h.Embed(context.Background(), []string{
		"list the files in a directory",
		"List files in directory!",
		"send an email to the team",
		"",
	})
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range vs[:3] {
		if len(v) != h.Dimensions() {
			t.Fatalf("vector %d has %d dims", i, len(v))
		}
		var n float64
		for _, x := range v {
			n += float64(x) * float64(x)
		}
		if math.Abs(n-1) > 1e-5 {
			t.Errorf("vector %d has norm² %v, want 1", i, n)
		}
	}
	same, other := cosine(vs[0], vs[1]), cosine(vs[0], vs[2])
	if same < 0.6 || other > 0.3 || same <= other {
		t.Errorf("similar texts %.2f, unrelated %.2f: hashing does not separate them", same, other)
	}
	for _, x := range vs[3] {
		if x != 0 {
			t.Fatal("empty text must embed to the zero vector")
		}
	}
	again, _ := h.Embed(context.Background(), []string{"list the files in a directory"})
	for i := range again[0] {
		if again[0][i] != vs[0][i] {
			t.Fatal("embedding is not deterministic")
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := h.Embed(ctx, []string{"x"}); err == nil {
		t.Error("cancelled context not reported")
	}
	if h.ID() != "hash-v1-384" {
		t.Errorf("ID = %q", h.ID())
	}
}
