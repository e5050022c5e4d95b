package toolsearch

import (
	"strings"
	"testing"
)

// TestLexicalScoresMatchScoreDoc: the scores a search computes from the
// postings are exactly those of scoring each document in turn (scoreDoc),
// for every labelled request of the catalog, a query longer than 64 words
// and one with no known word, so that indexing by postings changed no
// ranking.
func TestLexicalScoresMatchScoreDoc(t *testing.T) {
	ix := newLexicalIndex(catalogDocs(loadCatalog(t)))
	queries := []string{strings.Repeat("create issue file read write list ", 12) + "extra words past sixty four", "zzqx"}
	for _, q := range loadQueries(t) {
		queries = append(queries, q.Query)
	}
	for _, p := range []rankParams{defaultRankParams, semanticRankParams, {weights: [numFields]float64{1, 1, 1, 1}, k1: 1.2, b: 0.75}} {
		for _, q := range queries {
			terms := parseQuery(q, p.synonymWeight)
			got := ix.lexicalScores(terms, p)
			idf := ix.idfs(terms)
			for i := range ix.docs {
				want, _ := ix.scoreDoc(&ix.docs[i], terms, idf, p)
				if got[i] != want {
					t.Fatalf("%q, %s: lexicalScores %v, scoreDoc %v", q, ix.docs[i].match.Name, got[i], want)
				}
			}
		}
	}
}
