package toolsearch

import (
	"context"
	"fmt"
	"os"
	"testing"

	"github.com/agents-mcp/agents-mcp/memory/embed"
)

// TestSemanticDevVariants compares ranking variants with the semantic
// embedder on the dev sets of testdata/paraphrase and on the real catalog
// of TestSearchQuality, never on a held-out set, so that a knob or a new
// model is chosen without looking at the sets that measure it. It runs only
// with SEMANTIC_DEV=1; SEMANTIC_DEV_MISSES=<variant>/<set> with -v lists
// that variant's misses on that set.
func TestSemanticDevVariants(t *testing.T) {
	if os.Getenv("SEMANTIC_DEV") == "" {
		t.Skip("SEMANTIC_DEV=1 compares ranking variants on the dev sets")
	}
	emb := embed.Semantic{}
	type setup struct {
		name    string
		ix      *lexicalIndex
		vecs    [][]float32
		queries []labelledQuery
	}
	build := func(name string, servers []catalogServer, queries []labelledQuery) setup {
		docs := catalogDocs(servers)
		texts := make([]string, len(docs))
		for i, d := range docs {
			texts[i] = d.embedText
		}
		vecs, err := emb.Embed(context.Background(), texts)
		if err != nil {
			t.Fatal(err)
		}
		for i := range vecs {
			vecs[i] = normalize(vecs[i])
		}
		return setup{name, newLexicalIndex(docs), vecs, queries}
	}
	para := loadParaphraseCatalog(t)
	sets := []setup{
		build("dev", para, loadParaphraseQueries(t, "dev")),
		build("dev2", para, loadParaphraseQueries(t, "dev2")),
		build("real", loadCatalog(t), loadQueries(t)),
	}
	alignAlways := semanticRankParams
	alignAlways.alignWeightLexical = alignAlways.alignWeight
	variants := []struct {
		name string
		p    rankParams
	}{{"shipped", semanticRankParams}, {"align weight 1 always", alignAlways}}
	for _, v := range variants {
		line := v.name
		for _, s := range sets {
			rank := func(q string) []string {
				qv, err := emb.Embed(context.Background(), []string{q})
				if err != nil {
					t.Fatal(err)
				}
				align := func(texts []string) ([]float64, error) { return emb.Align(q, texts) }
				return matchNames(rankMatches(s.ix, parseQuery(q, v.p.synonymWeight), v.p, "all", 10, normalize(qv[0]), s.vecs, align))
			}
			r := measureRecall(s.queries, rank)
			line += fmt.Sprintf(" | %s %.3f/%.3f/%.3f", s.name, r.at1, r.at3, r.at10)
			if os.Getenv("SEMANTIC_DEV_MISSES") == v.name+"/"+s.name {
				for _, m := range r.misses {
					t.Log("miss:", m)
				}
			}
		}
		t.Log(line)
	}
}
