package toolsearch

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/agents-mcp/agents-mcp/memory/embed"
)

// TestSemanticRoundVariants measures ranking variants of the semantic
// default on every paraphrase set and the real catalog through the same
// steps as Index.Search (related query terms, hybrid fusion, alignment),
// without a router, so that one run compares many variants. It runs only
// with SEMANTIC_ROUND=1 (a measurement, not a check).
func TestSemanticRoundVariants(t *testing.T) {
	if os.Getenv("SEMANTIC_ROUND") == "" {
		t.Skip("SEMANTIC_ROUND=1 compares ranking variants on every set")
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
	var sets []setup
	for _, s := range []string{"heldout", "heldout2", "heldout3", "heldout4", "dev2", "dev"} {
		sets = append(sets, build(s, para, loadParaphraseQueries(t, s)))
	}
	sets = append(sets, build("real", loadCatalog(t), loadQueries(t)))
	for _, v := range roundVariants {
		if only := os.Getenv("SEMANTIC_ROUND_ONLY"); only != "" && !strings.Contains(v.name, only) {
			continue
		}
		restore := v.set()
		line := fmt.Sprintf("| %-40s", v.name)
		for _, s := range sets {
			rank := func(q string) []string {
				qv, err := emb.Embed(context.Background(), []string{q})
				if err != nil {
					t.Fatal(err)
				}
				p := semanticRankParams
				terms := withRelatedTerms(s.ix, parseQuery(q, p.synonymWeight), emb)
				align := func(texts []string) ([]float64, error) { return emb.Align(q, texts) }
				return matchNames(rankMatches(s.ix, terms, p, "all", 10, normalize(qv[0]), s.vecs, align))
			}
			r := measureRecall(s.queries, rank)
			line += fmt.Sprintf(" | %s %.3f/%.3f/%.3f", s.name, r.at1, r.at3, r.at10)
			if os.Getenv("SEMANTIC_ROUND_MISSES") == v.name+"/"+s.name {
				for _, m := range r.misses {
					t.Log("miss:", m)
				}
			}
		}
		restore()
		t.Log(line + " |")
	}
}

// roundVariants are the variants TestSemanticRoundVariants compares; set
// applies one and returns what undoes it.
var roundVariants = []struct {
	name string
	set  func() (restore func())
}{
	{"shipped", func() func() { return func() {} }},
}
