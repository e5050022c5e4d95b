package main

import (
	"cmp"
	"math"
	"slices"
	"strings"
)

// relation is a word related to another in WordNet, with a weight in (0, 1].
type relation struct {
	to int
	w  float64
}

// Weights of the relations kept for each word (see related).
const (
	maxRelated   = 32
	relSynonym   = 1.0
	relBase      = 1.0 // the base form of an inflected word ("dollars" → "dollar")
	relDerived   = 0.8 // derivation, attribute, pertainym, similar to
	relDerived2  = 0.6 // a derivation or attribute of a similar word ("muggy" → "humid" → "humidity")
	relHypernym  = 0.7
	relHypernym2 = 0.5
	relHypernym3 = 0.3
	relHolonym   = 0.5 // the whole a word is part or member of ("wheel" → "car")
	relDomain    = 0.5
	relGloss     = 0.4
	glossSenses  = 2 // the senses whose gloss words are related
	// relatedSenses is how many senses of each part of speech give their
	// relations; a later sense's weights are scaled by senseDecay per rank,
	// so that the common sense's relations come first ("yen" the currency
	// before "yen" the longing).
	relatedSenses  = 3
	senseDecay     = 0.8
	glossMaxCorpus = 5e-4 // gloss words more frequent than this say little
)

// wordNetBases returns the forms under which WordNet knows w: w itself,
// else its base forms by WordNet's exceptions and detachment rules
// ("dollars" → "dollar", "revisions" → "revision").
func wordNetBases(wn *wordNet, w string) []string {
	if len(wn.senses[w]) > 0 {
		return []string{w}
	}
	var out []string
	for _, b := range wn.exceptions[w] {
		if len(wn.senses[b]) > 0 && !slices.Contains(out, b) {
			out = append(out, b)
		}
	}
	for _, r := range morphyRules {
		base, ok := strings.CutSuffix(w, r[0])
		if !ok || len(base) < 2 {
			continue
		}
		base += r[1]
		if len(wn.senses[base]) > 0 && !slices.Contains(out, base) {
			out = append(out, base)
		}
	}
	return out
}

// morphyRules are WordNet's detachment rules (nouns, verbs, adjectives),
// as memory/embed applies them at lookup.
var morphyRules = [][2]string{
	{"ies", "y"}, {"ses", "s"}, {"xes", "x"}, {"zes", "z"}, {"ches", "ch"}, {"shes", "sh"},
	{"men", "man"}, {"es", "e"}, {"es", ""}, {"s", ""},
	{"ied", "y"}, {"ed", "e"}, {"ed", ""}, {"ing", "e"}, {"ing", ""},
	{"er", ""}, {"est", ""}, {"er", "e"}, {"est", "e"},
}

// related returns, for every vocabulary word, the vocabulary words WordNet
// relates it to in its first senses (synonyms, derivations, attributes,
// similar words and their derivations, hypernyms three levels up, holonyms,
// topic domains, and the content words of its glosses), strongest first
// (ties in sense order), at most maxRelated. An inflected word that WordNet
// lacks takes the relations of its base form.
func related(wn *wordNet, vocab []string, index map[string]int, counts map[string]int, total int) [][]relation {
	out := make([][]relation, len(vocab))
	for i, w := range vocab {
		best := map[int]float64{}
		var order []int
		add := func(lemma string, wt float64) {
			j, ok := index[lemma]
			if !ok || j == i {
				return
			}
			if _, seen := best[j]; !seen {
				order = append(order, j)
			}
			if wt > best[j] {
				best[j] = wt
			}
		}
		bases := wordNetBases(wn, w)
		for _, b := range bases {
			if b != w {
				add(b, relBase)
			}
		}
		for _, b := range bases {
			// A sense's relations are scaled by senseDecay per rank among
			// its part of speech's senses and by the square root of its
			// share of the word's most frequent sense ("weather" the noun
			// before "weather" the verb, "stock" the shares before "stock"
			// the adjective); +1 so that untagged senses keep a little.
			ranks, byPOS := map[string]int{}, map[byte]int{}
			most := 0
			for _, key := range wn.senses[b] {
				s := wn.synsets[key]
				ranks[key] = byPOS[s.pos]
				most = max(most, wn.senseCount(b, s.pos, byPOS[s.pos]))
				byPOS[s.pos]++
			}
			for _, key := range wn.senses[b] {
				s := wn.synsets[key]
				rank := ranks[key]
				if rank >= relatedSenses {
					continue
				}
				f := math.Sqrt(float64(wn.senseCount(b, s.pos, rank)+1) / float64(most+1))
				for range rank {
					f *= senseDecay
				}
				for _, l := range s.lemmas {
					add(l, f*relSynonym)
				}
				if rank < glossSenses {
					def, _, _ := strings.Cut(s.gloss, ";")
					for _, g := range words(def) {
						if float64(counts[g])/float64(total) < glossMaxCorpus {
							add(g, f*relGloss)
						}
					}
				}
				hypernyms(wn, s, 1, f, add)
				for _, p := range s.ptrs {
					if p.source > 0 && (p.source > len(s.lemmas) || s.lemmas[p.source-1] != b) {
						continue // a lexical relation of another lemma of the synset
					}
					t := wn.synsets[p.target]
					if t == nil {
						continue
					}
					switch p.symbol {
					case "+", "=", "\\", "&":
						for _, l := range t.lemmas {
							add(l, f*relDerived)
						}
						if p.symbol == "&" {
							for _, q := range t.ptrs {
								if q.symbol != "=" && q.symbol != "+" {
									continue
								}
								if tt := wn.synsets[q.target]; tt != nil {
									for _, l := range tt.lemmas {
										add(l, f*relDerived2)
									}
								}
							}
						}
					case "#p", "#m":
						for _, l := range t.lemmas {
							add(l, f*relHolonym)
						}
					case ";c", ";r", ";u":
						for _, l := range t.lemmas {
							add(l, f*relDomain)
						}
					}
				}
			}
		}
		rs := make([]relation, 0, len(best))
		for _, j := range order {
			rs = append(rs, relation{j, best[j]})
		}
		slices.SortStableFunc(rs, func(a, b relation) int { return cmp.Compare(b.w, a.w) })
		out[i] = rs[:min(len(rs), maxRelated)]
	}
	return out
}

// hypernymWeights are the weights of a synset's hypernyms one, two and
// three levels up.
var hypernymWeights = []float64{relHypernym, relHypernym2, relHypernym3}

// hypernyms adds the lemmas of s's hypernyms from level up to the last of
// hypernymWeights, scaled by f.
func hypernyms(wn *wordNet, s *synset, level int, f float64, add func(string, float64)) {
	if level > len(hypernymWeights) {
		return
	}
	for _, p := range s.ptrs {
		if p.symbol != "@" && p.symbol != "@i" {
			continue
		}
		t := wn.synsets[p.target]
		if t == nil {
			continue
		}
		for _, l := range t.lemmas {
			add(l, f*hypernymWeights[level-1])
		}
		hypernyms(wn, t, level+1, f, add)
	}
}
