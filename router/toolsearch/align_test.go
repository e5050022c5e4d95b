package toolsearch

import (
	"context"
	"errors"
	"strings"
	"testing"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/memory/embed"
)

// With the semantic embedder, search_tools re-ranks its best candidates by
// word alignment and says so in why; with the hash embedder it does not.
func TestToolIndexRealignsWithSemantic(t *testing.T) {
	r, _ := newSmallRouter(t)
	for _, c := range []struct {
		name    string
		emb     agentsmcp.Embedder
		aligned bool
	}{{"semantic", embed.Semantic{}, true}, {"hash", embed.Hash{}, false}} {
		t.Run(c.name, func(t *testing.T) {
			x := NewIndex(r, Options{Embedder: c.emb})
			defer x.Close()
			waitEmbedded(t, x)
			res := x.Search(context.Background(), "show what is inside a folder", "all", 4)
			if res.Mode != ModeHybrid || len(res.Tools) == 0 {
				t.Fatalf("mode %q, %d tools, want hybrid results", res.Mode, len(res.Tools))
			}
			if res.Tools[0].Name != "fs__list_directory" {
				t.Errorf("first %s, want fs__list_directory; all %+v", res.Tools[0].Name, res.Tools)
			}
			for _, m := range res.Tools {
				if got := strings.Contains(m.Why, "word alignment"); got != c.aligned {
					t.Errorf("%s: why %q, word alignment shown %v, want %v", m.Name, m.Why, got, c.aligned)
				}
			}
		})
	}
}

// A failing aligner leaves the fused ranking as it was, never fails the
// search.
func TestRankMatchesAlignerFails(t *testing.T) {
	r, _ := newSmallRouter(t)
	x := NewIndex(r, Options{Embedder: embed.Semantic{}})
	defer x.Close()
	waitEmbedded(t, x)
	ix, vecs, _ := x.snapshot()
	q := "show what is inside a folder"
	qv, err := x.embedQuery(context.Background(), q)
	if err != nil {
		t.Fatal(err)
	}
	terms := parseQuery(q, x.params.synonymWeight)
	plain := rankMatches(ix, terms, x.params, "all", 4, qv, vecs, nil)
	failing := rankMatches(ix, terms, x.params, "all", 4, qv, vecs, func([]string) ([]float64, error) { return nil, errors.New("no model") })
	short := rankMatches(ix, terms, x.params, "all", 4, qv, vecs, func([]string) ([]float64, error) { return []float64{1}, nil })
	for name, got := range map[string][]Match{"failing": failing, "short": short} {
		if len(got) != len(plain) {
			t.Fatalf("%s aligner: %d results, want %d", name, len(got), len(plain))
		}
		for i := range got {
			if got[i] != plain[i] {
				t.Errorf("%s aligner: result %d %+v, want %+v", name, i, got[i], plain[i])
			}
		}
	}
}
