package toolsearch

import (
	"context"
	"os"
	"testing"

	"github.com/agents-mcp/agents-mcp/memory/embed"
)

// TestSemanticTune sweeps the hybrid ranking's knobs on the dev set (never
// the test set). It runs only with SEMANTIC_TUNE=1.
func TestSemanticTune(t *testing.T) {
	if os.Getenv("SEMANTIC_TUNE") == "" {
		t.Skip("SEMANTIC_TUNE=1 sweeps the ranking knobs on the dev set")
	}
	servers := loadParaphraseCatalog(t)
	docs := catalogDocs(servers)
	ix := newLexicalIndex(docs)
	texts := make([]string, len(docs))
	for i, d := range docs {
		texts[i] = d.embedText
	}
	emb := embed.Semantic{}
	vecs, err := emb.Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	for i := range vecs {
		vecs[i] = normalize(vecs[i])
	}
	sets := [][]labelledQuery{loadParaphraseQueries(t, "dev")}
	old := loadQueries(t)
	oldServers := loadCatalog(t)
	oldDocs := catalogDocs(oldServers)
	oldIx := newLexicalIndex(oldDocs)
	oldTexts := make([]string, len(oldDocs))
	for i, d := range oldDocs {
		oldTexts[i] = d.embedText
	}
	oldVecs, _ := emb.Embed(context.Background(), oldTexts)
	for i := range oldVecs {
		oldVecs[i] = normalize(oldVecs[i])
	}
	_ = sets
	for _, w := range []float64{0.5, 0.7, 0.85} {
		for _, floor := range []float64{0, 0.2} {
			for _, minCos := range []float64{0.1, 0.3} {
				p := defaultRankParams
				p.vectorWeight, p.cosineFloor, p.minCosine = w, floor, minCos
				rank := func(ix *lexicalIndex, vecs [][]float32) func(string) []string {
					return func(q string) []string {
						qv, _ := emb.Embed(context.Background(), []string{q})
						return rankedNames(ix.rank(parseQuery(q, p.synonymWeight), p, normalize(qv[0]), vecs))
					}
				}
				dev := measureRecall(loadParaphraseQueries(t, "dev"), rank(ix, vecs))
				real := measureRecall(old, rank(oldIx, oldVecs))
				t.Logf("w=%.1f floor=%.1f min=%.1f  dev %.3f/%.3f/%.3f  catalog %.3f/%.3f/%.3f", w, floor, minCos, dev.at1, dev.at3, dev.at10, real.at1, real.at3, real.at10)
			}
		}
	}
}
