package embed

import "math"

// Word alignment: a second similarity of [Semantic], finer than the cosine
// of two mean vectors. Each word of the query meets its best match among a
// text's words (BERTScore's recall, with static word vectors), so that
// "warm" is matched by "temperature" in a long tool description instead of
// being averaged away among its other words. search_tools uses it to
// re-rank its best candidates (toolsearch.Index; measured in
// docs/adr/0015-offline-semantic-model.md).

// Knobs of the alignment, chosen on the dev sets of router/toolsearch/testdata/paraphrase.
const (
	// alignCosineFloor is the word cosine that counts as no similarity: the
	// model's unrelated words still have cosines up to about 0.2.
	alignCosineFloor = 0.2
)

// alignWord is one content word of a text.
type alignWord struct {
	id     int32   // vocabulary index, or -1 for a word the model lacks
	text   string  // base form, or the word itself when the model lacks it
	weight float32 // SIF weight: a frequent word weighs less
}

// alignWords returns the content words of text (stop words left out) with
// their weights.
func (m *semanticModel) alignWords(text string) []alignWord {
	var out []alignWord
	for _, w := range splitWords(text) {
		if semanticStopWords[w] {
			continue
		}
		i := m.lookup(w)
		if i < 0 {
			out = append(out, alignWord{id: -1, text: w, weight: 1})
			continue
		}
		sif := float32(semanticSIF / (semanticSIF + float64(m.prob[i])))
		out = append(out, alignWord{id: i, text: m.word(i), weight: sif})
	}
	return out
}

// wordCosine is the cosine of the vectors of words a and b.
func (m *semanticModel) wordCosine(a, b int32) float32 {
	ra := m.vecs[int(a)*m.dim : int(a+1)*m.dim]
	rb := m.vecs[int(b)*m.dim : int(b+1)*m.dim]
	var ab, aa, bb int32
	for k := range ra {
		x, y := int32(int8(ra[k])), int32(int8(rb[k]))
		ab += x * y
		aa += x * x
		bb += y * y
	}
	if aa == 0 || bb == 0 {
		return 0
	}
	return float32(float64(ab) / math.Sqrt(float64(aa)*float64(bb)))
}

// relationWeight is the weight of the WordNet relation between words a and
// b, either way (see [semanticModel.related]), or 0.
func (m *semanticModel) relationWeight(a, b int32) float32 {
	var w float32
	for _, r := range m.related[a] {
		if r.word == b {
			w = max(w, r.weight)
		}
	}
	for _, r := range m.related[b] {
		if r.word == a {
			w = max(w, r.weight)
		}
	}
	return w
}

// wordSimilarity is the similarity of two words in [0, 1]: 1 for the same
// base form, else the larger of their cosine above [alignCosineFloor]
// (rescaled to [0, 1]) and the weight of their WordNet relation.
func (m *semanticModel) wordSimilarity(a, b alignWord) float32 {
	if a.text == b.text {
		return 1
	}
	if a.id < 0 || b.id < 0 {
		return 0
	}
	s := max(m.wordCosine(a.id, b.id)-alignCosineFloor, 0) / (1 - alignCosineFloor)
	return max(s, m.relationWeight(a.id, b.id))
}

// alignment is the weighted mean, over the query's words, of each one's
// best similarity to a word of text; 0 for a query of stop words only.
func (m *semanticModel) alignment(query, text []alignWord) float64 {
	best := m.bestMatches(query, text)
	var num, den float64
	for k, q := range query {
		num += float64(q.weight * best[k])
		den += float64(q.weight)
	}
	if den == 0 {
		return 0
	}
	return num / den
}

// bestMatches returns, for each word of query, its best similarity to a
// word of text.
func (m *semanticModel) bestMatches(query, text []alignWord) []float32 {
	best := make([]float32, len(query))
	for k, q := range query {
		for _, w := range text {
			best[k] = max(best[k], m.wordSimilarity(q, w))
		}
	}
	return best
}

// alignCommonFloor bounds how far [semanticModel.alignments] damps a query
// word that every text matches.
const alignCommonFloor = 0.05

// alignments is [semanticModel.alignment] of query with each of several
// texts, where a query word that the texts all match alike weighs less:
// its SIF weight is scaled by 1 − its mean best similarity over the texts
// (at least alignCommonFloor), an inverse document frequency over the
// candidates. A generic verb ("make", "show", "check") links to some word
// of nearly every tool and, at full weight, turned the ranking of near ties
// into a ranking of how well each tool says "create" or "display"; the
// telling noun of the request now decides. A single text keeps the plain
// alignment (there is nothing to compare with).
func (m *semanticModel) alignments(query []alignWord, texts [][]alignWord) []float64 {
	out := make([]float64, len(texts))
	if len(texts) == 1 {
		out[0] = m.alignment(query, texts[0])
		return out
	}
	best := make([][]float32, len(texts))
	mean := make([]float64, len(query))
	for i, t := range texts {
		best[i] = m.bestMatches(query, t)
		for k, b := range best[i] {
			mean[k] += float64(b) / float64(len(texts))
		}
	}
	weight := make([]float64, len(query))
	var den float64
	for k, q := range query {
		weight[k] = float64(q.weight) * max(1-mean[k], alignCommonFloor)
		den += weight[k]
	}
	if den == 0 {
		return out
	}
	for i := range texts {
		var num float64
		for k := range query {
			num += weight[k] * float64(best[i][k])
		}
		out[i] = num / den
	}
	return out
}

// Align returns, for each text, how well the words of query are matched by
// its words, in [0, 1] (see the note at the top of this file), a query word
// that all the texts match alike weighing less (see
// [semanticModel.alignments]). It fails only on a corrupt model.
func (Semantic) Align(query string, texts []string) ([]float64, error) {
	m, err := semanticModelLoaded()
	if err != nil {
		return nil, err
	}
	words := make([][]alignWord, len(texts))
	for i, t := range texts {
		words[i] = m.alignWords(t)
	}
	return m.alignments(m.alignWords(query), words), nil
}
