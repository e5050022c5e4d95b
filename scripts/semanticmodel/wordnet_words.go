package main

import (
	"cmp"
	"fmt"
	"os"
	"slices"
	"strings"
)

// WordNet words the corpus left out: pack keeps the 50,000 most frequent
// words of the corpus, so that WordNet words rare in package descriptions
// and Go comments ("muggy", "checklist", "revision") have no vector and no
// relations, and a request using one is matched by its spelling only. The
// knowledge step adds them back, the most common in English first (by
// WordNet's tagged sense counts), each with the relations pack gives a
// word (synonyms, derivations, hypernyms, domains, gloss words) and, as its
// vector, the weighted mean of its related words' vectors.

// Settings of the added WordNet words.
var (
	// wordNetWordsMinTagged is the tagged sense count a word needs to be
	// added (see wordNet.tagged); 0 adds words never tagged too.
	wordNetWordsMinTagged = 1
	// wordNetWordsMax caps the words added.
	wordNetWordsMax = 10000
)

// wordNetWordProb is the unigram probability of an added word: rare in the
// corpus (it had fewer than minCountWordNet occurrences or fell past
// maxVocab), so a content word of full SIF weight.
const wordNetWordProb = 3e-7

// addWordNetWords adds the WordNet words of the order above that the model
// lacks and cannot reach through an inflection, up to the format's 65,536
// words, and returns how many it added.
func addWordNetWords(wn *wordNet, m *baseModel) int {
	exc := map[string]bool{}
	for _, e := range m.exc {
		exc[e[0]] = true
	}
	var cands []string
	for lemma := range wn.senses {
		if wn.tagged[lemma] < wordNetWordsMinTagged || strings.Contains(lemma, " ") || !plainWord(lemma) {
			continue
		}
		if _, ok := m.index[lemma]; ok || exc[lemma] || m.reachable(lemma) {
			continue
		}
		cands = append(cands, lemma)
	}
	slices.SortFunc(cands, func(a, b string) int {
		if c := cmp.Compare(wn.tagged[b], wn.tagged[a]); c != 0 {
			return c
		}
		return strings.Compare(a, b)
	})
	room := 1<<16 - len(m.vocab)
	cands = cands[:min(len(cands), wordNetWordsMax, room)]
	first := len(m.vocab)
	for _, w := range cands {
		i := m.addWord(w)
		m.freq[i] = wordNetWordProb
	}
	// related reads a word's corpus count to leave out frequent gloss
	// words; the probabilities in parts per billion stand in for counts.
	const total = 1_000_000_000
	counts := make(map[string]int, len(m.vocab))
	for i, w := range m.vocab {
		counts[w] = int(m.freq[i] * total)
	}
	rels := related(wn, m.vocab, m.index, counts, total)
	noVector := 0
	for i := first; i < len(m.vocab); i++ {
		m.rel[i] = rels[i]
		v := make([]float32, m.dim)
		for _, r := range rels[i] {
			if r.to < first {
				for d, x := range m.mat[r.to] {
					v[d] += float32(r.w) * x
				}
			}
		}
		m.mat[i] = normalized(v)
		if m.mat[i][0] == 0 && slices.Max(m.mat[i]) == 0 {
			noVector++
		}
	}
	fmt.Fprintf(os.Stderr, "knowledge: %d WordNet words added (%d without a related word in the model)\n", len(cands), noVector)
	return len(cands)
}

// reachable reports whether the embedder's lookup would find w through
// WordNet's detachment rules (memory/embed's detachRules, which it
// mirrors): "revisions" reaches "revision" if that is a word of the model.
func (m *baseModel) reachable(w string) bool {
	for _, r := range detachRules {
		base, ok := strings.CutSuffix(w, r[0])
		if !ok || len(base) < 2 {
			continue
		}
		base += r[1]
		if _, ok := m.index[base]; ok {
			return true
		}
		if n := len(base); r[1] == "" && n >= 3 && base[n-1] == base[n-2] {
			if _, ok := m.index[base[:n-1]]; ok {
				return true
			}
		}
	}
	return false
}

// detachRules are memory/embed's: WordNet's morphy suffix rules and the
// adverb "-ly", tried in order.
var detachRules = [][2]string{
	{"'s", ""}, {"ies", "y"}, {"ses", "s"}, {"xes", "x"}, {"zes", "z"}, {"ches", "ch"}, {"shes", "sh"},
	{"men", "man"}, {"es", "e"}, {"es", ""}, {"s", ""},
	{"ied", "y"}, {"ed", "e"}, {"ed", ""}, {"ing", "e"}, {"ing", ""},
	{"iest", "y"}, {"ier", "y"}, {"est", "e"}, {"est", ""}, {"er", "e"}, {"er", ""},
	{"ily", "y"}, {"ly", ""},
}
