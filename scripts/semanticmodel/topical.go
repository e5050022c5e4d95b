package main

import (
	"bufio"
	"cmp"
	"math"
	"os"
	"slices"
	"strings"
)

// Settings of the topical relations (see topical).
const (
	// topicalPerWord is how many topical neighbours each word keeps.
	topicalPerWord = 8
	// topicalMinLines and topicalMaxShare bound the lines a word must occur
	// in to take part: a rarer word has no reliable neighbours, a more
	// common one ("use", "file") is no topic.
	topicalMinLines = 5
	topicalMaxShare = 0.005
	// topicalMaxWords skips corpus lines with more taking part words than
	// this: a long text mixes topics.
	topicalMaxWords = 40
	// topicalMinPairs is the least number of lines two words must share.
	topicalMinPairs = 3
	// relTopic is the weight of a topical relation of PMI topicalFullPMI
	// or more; a weaker one weighs proportionally less.
	relTopic       = 0.5
	topicalFullPMI = 6.0
)

// topical returns, for every vocabulary word, up to topicalPerWord words
// that occur in the same lines of the corpus far more often than by chance
// (pointwise mutual information of line co-occurrence, ranked by count ×
// PMI): the topical relatedness that WordNet's relations lack ("forecast"
// and "temperature" in weather packages' descriptions, "playlist" and
// "volume" in music players'). Each line of the corpus is a WordNet synset
// with its gloss, a package description or a doc comment.
func topical(corpus string, index map[string]int, n int) ([][]relation, error) {
	f, err := os.Open(corpus)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var lines [][]int32
	df := make([]int32, n)
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		var ids []int32
		for _, w := range strings.Fields(sc.Text()) {
			if j, ok := index[w]; ok && !slices.Contains(ids, int32(j)) {
				ids = append(ids, int32(j))
			}
		}
		for _, j := range ids {
			df[j]++
		}
		lines = append(lines, ids)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	total := float64(len(lines))
	takes := func(j int32) bool {
		return df[j] >= topicalMinLines && float64(df[j]) <= topicalMaxShare*total
	}
	pairs := map[uint64]int32{}
	for _, ids := range lines {
		kept := ids[:0]
		for _, j := range ids {
			if takes(j) {
				kept = append(kept, j)
			}
		}
		if len(kept) > topicalMaxWords {
			continue
		}
		slices.Sort(kept)
		for a := range kept {
			for b := a + 1; b < len(kept); b++ {
				pairs[uint64(kept[a])<<32|uint64(kept[b])]++
			}
		}
	}
	type cand struct {
		to         int
		pmi, score float64
	}
	cands := make([][]cand, n)
	for key, c := range pairs {
		if c < topicalMinPairs {
			continue
		}
		a, b := int(key>>32), int(key&0xffffffff)
		pmi := math.Log(float64(c) * total / (float64(df[a]) * float64(df[b])))
		if pmi <= 0 {
			continue
		}
		s := float64(c) * pmi
		cands[a] = append(cands[a], cand{b, pmi, s})
		cands[b] = append(cands[b], cand{a, pmi, s})
	}
	out := make([][]relation, n)
	for i, cs := range cands {
		slices.SortFunc(cs, func(x, y cand) int {
			if x.score != y.score {
				return cmp.Compare(y.score, x.score)
			}
			return cmp.Compare(x.to, y.to)
		})
		for _, c := range cs[:min(len(cs), topicalPerWord)] {
			out[i] = append(out[i], relation{c.to, relTopic * min(1, c.pmi/topicalFullPMI)})
		}
	}
	return out, nil
}

// mergeTopical appends to each word's WordNet relations (cut to
// maxRelated − topicalPerWord) its topical ones that WordNet does not
// already give, strongest first.
func mergeTopical(rel, top [][]relation) {
	for i := range rel {
		rs := rel[i][:min(len(rel[i]), maxRelated-topicalPerWord)]
		for _, t := range top[i] {
			if !slices.ContainsFunc(rs, func(r relation) bool { return r.to == t.to }) {
				rs = append(rs, t)
			}
		}
		slices.SortStableFunc(rs, func(a, b relation) int { return cmp.Compare(b.w, a.w) })
		rel[i] = rs
	}
}
