package embed

// RelatedWords returns the words the model relates to word (WordNet's
// synonyms, derivations, hypernyms and gloss words, then the topics and
// entity types of the knowledge step; see [semanticModel.related]), as base
// forms, with their weights in (0, 1]; none for a word the model does not
// know, or if the model cannot be loaded. search_tools adds them to the
// words of a query that match no tool, so that BM25 sees "precipitation"
// and "weather" in "Is it going to rain?".
func (Semantic) RelatedWords(word string) (words []string, weights []float64) {
	m, err := semanticModelLoaded()
	if err != nil {
		return nil, nil
	}
	i := m.lookup(word)
	if i < 0 {
		return nil, nil
	}
	for _, r := range m.related[i] {
		words = append(words, m.word(r.word))
		weights = append(weights, float64(r.weight))
	}
	return words, weights
}
