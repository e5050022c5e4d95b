package toolsearch

// Query expansion by a model's related words: a word the user wrote that
// no tool's text contains adds, as low-weight BM25 terms, the words the
// embedder's model relates to it ("rain" → precipitation, weather), so
// that the lexical half of the hybrid ranking can match a tool that says
// it in other words. Measured in docs/benchmarks.md ("Fifth round").

// relatingEmbedder is an embedder whose model relates words to words
// (memory/embed.Semantic).
type relatingEmbedder interface {
	// RelatedWords returns the words related to word with weights in
	// (0, 1]; none for an unknown word.
	RelatedWords(word string) (words []string, weights []float64)
}

// relatedTermWeight scales a related word's weight as a query term (1 for
// a word the user wrote). Chosen on the dev sets and the first three
// held-out sets of testdata/paraphrase and on the real catalog, never on
// heldout4 (0.3 and 0.5 measured within a request or two of it).
const relatedTermWeight = 0.4

// withRelatedTerms returns terms plus, for each word the user wrote that
// no document of ix contains, its related words (stemmed) that some
// document contains, at relatedTermWeight × their relation's weight. A word
// that some tool contains is left alone: BM25 already matches it, and its
// related words would mostly lift other tools. Related words no tool
// contains are left out: BM25 gives them nothing, and a query can relate
// to a hundred of them, each a lookup in every tool.
func withRelatedTerms(ix *lexicalIndex, terms []queryTerm, rel relatingEmbedder) []queryTerm {
	have := make(map[string]bool, len(terms))
	for _, t := range terms {
		have[t.term] = true
	}
	out := terms
	for _, qt := range terms {
		if qt.from != "" || ix.df[qt.term] > 0 {
			continue
		}
		words, weights := rel.RelatedWords(qt.word)
		for k, w := range words {
			for _, stem := range tokenize(w) {
				if !have[stem] && ix.df[stem] > 0 {
					have[stem] = true
					out = append(out, queryTerm{term: stem, weight: relatedTermWeight * weights[k], word: w, from: qt.word})
				}
			}
		}
	}
	return out
}
