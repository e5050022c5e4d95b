package main

import (
	"bufio"
	"cmp"
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
)

// Settings of the packed model (see memory/embed/semantic/README.md for
// how they were chosen).
var (
	// maxVocab bounds the words kept, most frequent first.
	maxVocab = 50000
	// minCountWordNet and minCount are the corpus counts a word needs to be
	// kept: fewer for a word WordNet knows.
	minCountWordNet = 3
	minCount        = 20
	// retrofitIterations and retrofitSelf shape the retrofitting of the
	// vectors to WordNet (Faruqui et al., 2015): each iteration moves a
	// word's vector to the weighted mean of its trained vector (weight
	// retrofitSelf times its neighbour count) and its WordNet neighbours.
	retrofitIterations = 10
	retrofitSelf       = 1.0
	// commonComponents is how many principal components, after the mean,
	// are removed from every vector ("all-but-the-top", Mu and Viswanath,
	// 2018): the directions that all words share say nothing about any of
	// them, and would make every two texts look alike.
	commonComponents = 2
)

// modelMagic starts the packed model; the format is read by
// memory/embed/semantic_model.go.
const modelMagic = "AMSEMB01"

// pack reads the trained vectors, keeps the vocabulary, retrofits the
// vectors to WordNet, and writes the quantised model.
func pack(wn *wordNet, corpus, vectors, out string) error {
	counts, total, err := countWords(corpus)
	if err != nil {
		return err
	}
	words, vecs, dim, err := readVec(vectors)
	if err != nil {
		return err
	}
	var keep []int
	for i, w := range words {
		c := counts[w]
		_, known := wn.senses[w]
		if !plainWord(w) || c < minCount && !(known && c >= minCountWordNet) {
			continue
		}
		keep = append(keep, i)
	}
	slices.SortStableFunc(keep, func(a, b int) int { return cmp.Compare(counts[words[b]], counts[words[a]]) })
	keep = keep[:min(len(keep), maxVocab)]
	slices.SortFunc(keep, func(a, b int) int { return strings.Compare(words[a], words[b]) })
	vocab := make([]string, len(keep))
	mat := make([][]float32, len(keep))
	index := map[string]int{}
	for j, i := range keep {
		vocab[j], mat[j] = words[i], normalized(vecs[i])
		index[words[i]] = j
	}
	retrofit(wn, vocab, index, mat)
	removeCommon(mat, commonComponents)
	freq := make([]float64, len(vocab))
	for j, w := range vocab {
		freq[j] = float64(counts[w]) / float64(total)
	}
	exc := exceptions(wn, index)
	rel := related(wn, vocab, index, counts, total)
	fmt.Fprintf(os.Stderr, "vocabulary %d words of %d, dimension %d, %d exceptions\n", len(vocab), len(words), dim, len(exc))
	return writeModel(out, vocab, mat, freq, exc, rel, dim)
}

// plainWord reports whether w is worth a vector: letters, or letters and
// digits with at least two letters, of at most 24 bytes.
func plainWord(w string) bool {
	letters := 0
	for i := 0; i < len(w); i++ {
		c := w[i]
		switch {
		case c >= 'a' && c <= 'z':
			letters++
		case c >= '0' && c <= '9':
		default:
			return false
		}
	}
	return letters >= 2 && len(w) <= 24
}

func countWords(path string) (map[string]int, int, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	counts := map[string]int{}
	total := 0
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		for _, w := range strings.Fields(sc.Text()) {
			counts[w]++
			total++
		}
	}
	return counts, total, sc.Err()
}

func readVec(path string) ([]string, [][]float32, int, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	if !sc.Scan() {
		return nil, nil, 0, fmt.Errorf("%s: empty", path)
	}
	var n, dim int
	if _, err := fmt.Sscan(sc.Text(), &n, &dim); err != nil {
		return nil, nil, 0, fmt.Errorf("%s: header: %w", path, err)
	}
	words := make([]string, 0, n)
	vecs := make([][]float32, 0, n)
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		if len(fs) != dim+1 {
			continue
		}
		v := make([]float32, dim)
		for i, s := range fs[1:] {
			x, err := strconv.ParseFloat(s, 32)
			if err != nil {
				return nil, nil, 0, fmt.Errorf("%s: %q: %w", path, fs[0], err)
			}
			v[i] = float32(x)
		}
		words = append(words, fs[0])
		vecs = append(vecs, v)
	}
	return words, vecs, dim, sc.Err()
}

func normalized(v []float32) []float32 {
	var n float64
	for _, x := range v {
		n += float64(x) * float64(x)
	}
	out := make([]float32, len(v))
	if n == 0 {
		return out
	}
	inv := 1 / math.Sqrt(n)
	for i, x := range v {
		out[i] = float32(float64(x) * inv)
	}
	return out
}

// retrofitNeighbours are the WordNet relations whose words retrofitting
// pulls together, with their weights.
var retrofitNeighbours = map[string]float64{
	"syn": 1,   // lemmas of the same synset
	"@":   0.5, // hypernym (rain → precipitation)
	"@i":  0.5, // instance hypernym (oslo → national capital)
	"+":   0.7, // derivation (warm → warmth)
	"=":   0.7, // attribute (warm → temperature)
	"&":   0.6, // similar to
	"\\":  0.6, // pertainym
	";c":  0.4, // topic domain
}

// retrofit pulls each word's vector towards the vectors of its WordNet
// neighbours (single-word lemmas in the vocabulary).
func retrofit(wn *wordNet, vocab []string, index map[string]int, mat [][]float32) {
	type edge struct {
		to int
		w  float64
	}
	nbrs := make([][]edge, len(vocab))
	add := func(from int, to string, w float64) {
		if j, ok := index[to]; ok && j != from {
			for _, e := range nbrs[from] {
				if e.to == j {
					return
				}
			}
			nbrs[from] = append(nbrs[from], edge{j, w})
		}
	}
	for i, w := range vocab {
		for _, key := range wn.senses[w] {
			s := wn.synsets[key]
			for _, l := range s.lemmas {
				add(i, l, retrofitNeighbours["syn"])
			}
			for _, p := range s.ptrs {
				wt, ok := retrofitNeighbours[p.symbol]
				if !ok {
					continue
				}
				if p.source > 0 && (p.source > len(s.lemmas) || s.lemmas[p.source-1] != w) {
					continue // a lexical relation of another lemma of the synset
				}
				t := wn.synsets[p.target]
				if t == nil {
					continue
				}
				if p.dest > 0 && p.dest <= len(t.lemmas) {
					add(i, t.lemmas[p.dest-1], wt)
					continue
				}
				for _, l := range t.lemmas {
					add(i, l, wt)
				}
			}
		}
	}
	orig := make([][]float32, len(mat))
	for i := range mat {
		orig[i] = slices.Clone(mat[i])
	}
	dim := len(mat[0])
	next := make([]float64, dim)
	for range retrofitIterations {
		for i := range mat {
			if len(nbrs[i]) == 0 {
				continue
			}
			self := retrofitSelf * float64(len(nbrs[i]))
			for d := range next {
				next[d] = self * float64(orig[i][d])
			}
			sum := self
			for _, e := range nbrs[i] {
				for d := range next {
					next[d] += e.w * float64(mat[e.to][d])
				}
				sum += e.w
			}
			for d := range next {
				mat[i][d] = float32(next[d] / sum)
			}
		}
	}
	for i := range mat {
		mat[i] = normalized(mat[i])
	}
}

// exceptions returns the WordNet inflections whose base form is in the
// vocabulary and that are not in it themselves ("mice" → "mouse").
func exceptions(wn *wordNet, index map[string]int) [][2]string {
	var out [][2]string
	for w, bases := range wn.exceptions {
		if _, ok := index[w]; ok || strings.Contains(w, " ") {
			continue
		}
		for _, b := range bases {
			if _, ok := index[b]; ok {
				out = append(out, [2]string{w, b})
				break
			}
		}
	}
	slices.SortFunc(out, func(a, b [2]string) int { return strings.Compare(a[0], b[0]) })
	return out
}

// writeModel writes the model, uncompressed (int8 vectors barely compress,
// and the embedder parses it in place at start):
//
//	magic "AMSEMB01"
//	uint32 vocabulary size N, uint16 dimension D
//	N words, each uint8 length and bytes, sorted
//	N float32 unigram probabilities
//	N float32 vector scales, then N×D int8 (vector = scale × int8 / 127)
//	uint32 exception count E, E pairs of (uint8 length, bytes) form and base
//	N relation lists: uint8 count, then (uint16 word, uint8 weight × 255)
func writeModel(path string, vocab []string, mat [][]float32, freq []float64, exc [][2]string, rel [][]relation, dim int) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	bw := bufio.NewWriter(f)
	le := binary.LittleEndian
	bw.WriteString(modelMagic)
	_ = binary.Write(bw, le, uint32(len(vocab)))
	_ = binary.Write(bw, le, uint16(dim))
	str := func(s string) {
		bw.WriteByte(byte(len(s)))
		bw.WriteString(s)
	}
	for _, w := range vocab {
		str(w)
	}
	for _, p := range freq {
		_ = binary.Write(bw, le, float32(p))
	}
	q := make([]int8, dim)
	scales := make([]float32, len(mat))
	for i, v := range mat {
		var m float32
		for _, x := range v {
			m = max(m, float32(math.Abs(float64(x))))
		}
		scales[i] = m
	}
	_ = binary.Write(bw, le, scales)
	for i, v := range mat {
		for d, x := range v {
			if scales[i] > 0 {
				q[d] = int8(math.Round(float64(x / scales[i] * 127)))
			}
		}
		_ = binary.Write(bw, le, q)
	}
	_ = binary.Write(bw, le, uint32(len(exc)))
	for _, e := range exc {
		str(e[0])
		str(e[1])
	}
	for _, rs := range rel {
		bw.WriteByte(byte(len(rs)))
		for _, r := range rs {
			_ = binary.Write(bw, le, uint16(r.to))
			bw.WriteByte(byte(math.Round(r.w * 255)))
		}
	}
	if err := bw.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// removeCommon subtracts the mean vector and the projections on the top k
// principal components (found by power iteration) from every vector, and
// normalises them again.
func removeCommon(mat [][]float32, k int) {
	dim := len(mat[0])
	mean := make([]float64, dim)
	for _, v := range mat {
		for d, x := range v {
			mean[d] += float64(x)
		}
	}
	for d := range mean {
		mean[d] /= float64(len(mat))
	}
	for _, v := range mat {
		for d := range v {
			v[d] -= float32(mean[d])
		}
	}
	for c := range k {
		u := make([]float64, dim)
		for d := range u {
			u[d] = 1 / math.Sqrt(float64(dim)+float64(c*d)) // deterministic start
		}
		for range 50 {
			next := make([]float64, dim)
			for _, v := range mat {
				var p float64
				for d, x := range v {
					p += float64(x) * u[d]
				}
				for d, x := range v {
					next[d] += p * float64(x)
				}
			}
			var n float64
			for _, x := range next {
				n += x * x
			}
			n = math.Sqrt(n)
			for d := range u {
				u[d] = next[d] / n
			}
		}
		for _, v := range mat {
			var p float64
			for d, x := range v {
				p += float64(x) * u[d]
			}
			for d := range v {
				v[d] -= float32(p * u[d])
			}
		}
	}
	for i := range mat {
		mat[i] = normalized(mat[i])
	}
}

// relation is a word related to another in WordNet, with a weight in (0, 1].
type relation struct {
	to int
	w  float64
}

// Weights of the relations kept for each word (see related).
const (
	maxRelated     = 24
	relSynonym     = 1.0
	relDerived     = 0.8 // derivation, attribute, pertainym, similar to
	relHypernym    = 0.7
	relHypernym2   = 0.4
	relDomain      = 0.5
	relGloss       = 0.4
	glossSenses    = 2    // the senses whose gloss words are related
	relatedSenses  = 3    // the senses whose relations are kept
	glossMaxCorpus = 5e-4 // gloss words more frequent than this say little
)

// related returns, for every vocabulary word, the vocabulary words WordNet
// relates it to in its first senses (synonyms, derivations, attributes,
// hypernyms two levels up, topic domains, and the content words of its
// glosses), strongest first, at most maxRelated.
func related(wn *wordNet, vocab []string, index map[string]int, counts map[string]int, total int) [][]relation {
	out := make([][]relation, len(vocab))
	for i, w := range vocab {
		best := map[int]float64{}
		add := func(lemma string, wt float64) {
			if j, ok := index[lemma]; ok && j != i && wt > best[j] {
				best[j] = wt
			}
		}
		byPOS := map[byte]int{}
		for _, key := range wn.senses[w] {
			s := wn.synsets[key]
			byPOS[s.pos]++
			if byPOS[s.pos] > relatedSenses {
				continue
			}
			for _, l := range s.lemmas {
				add(l, relSynonym)
			}
			if byPOS[s.pos] <= glossSenses {
				def, _, _ := strings.Cut(s.gloss, ";")
				for _, g := range words(def) {
					if float64(counts[g])/float64(total) < glossMaxCorpus {
						add(g, relGloss)
					}
				}
			}
			for _, p := range s.ptrs {
				t := wn.synsets[p.target]
				if t == nil {
					continue
				}
				var wt float64
				switch p.symbol {
				case "+", "=", "\\", "&":
					wt = relDerived
				case "@", "@i":
					wt = relHypernym
				case ";c":
					wt = relDomain
				default:
					continue
				}
				if p.source > 0 && (p.source > len(s.lemmas) || s.lemmas[p.source-1] != w) {
					continue
				}
				for _, l := range t.lemmas {
					add(l, wt)
				}
				if wt == relHypernym {
					for _, q := range t.ptrs {
						if q.symbol == "@" {
							if tt := wn.synsets[q.target]; tt != nil {
								for _, l := range tt.lemmas {
									add(l, relHypernym2)
								}
							}
						}
					}
				}
			}
		}
		rs := make([]relation, 0, len(best))
		for j, wt := range best {
			rs = append(rs, relation{j, wt})
		}
		slices.SortFunc(rs, func(a, b relation) int {
			if a.w != b.w {
				return cmp.Compare(b.w, a.w)
			}
			return cmp.Compare(a.to, b.to)
		})
		out[i] = rs[:min(len(rs), maxRelated)]
	}
	return out
}
