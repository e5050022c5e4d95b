package embed

import (
	_ "embed"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
	"sync"
)

// semanticModelData is the packed model that scripts/semanticmodel builds
// (see semantic/README.md): word vectors trained on text that Debian
// packages ship and retrofitted to WordNet, quantised to int8. It is stored
// uncompressed: int8 vectors barely compress (7.7 MB against 6.5 MB
// gzipped), and unpacking gzip cost most of the first embedding (3.9 s of
// 5.2 under the race detector on a busy machine).
//
//go:embed semantic/model.bin
var semanticModelData []byte

// semanticModelMagic starts a model (scripts/semanticmodel's writeModel
// documents the layout).
const semanticModelMagic = "AMSEMB01"

// semanticModel is the loaded model: a vocabulary (the corpus words in
// order, then the names of cities, currencies and languages that the
// knowledge step added) with a vector and a unigram probability per word,
// and WordNet's irregular inflections.
type semanticModel struct {
	dim   int
	words []string
	index map[string]int32
	prob  []float32
	scale []float32
	// vecs holds the int8 vectors (len(index) × dim) as bytes, in place in
	// the embedded model; read each one as int8(b).
	vecs  []byte
	irreg map[string]string
	// related[i] are the words WordNet relates to word i (synonyms,
	// derivations, hypernyms, gloss words), then the topics and entity
	// types the knowledge step adds (emoji keywords: "umbrella" → weather;
	// gazetteers: "dakar" → city), with weights in (0, 1].
	related [][]relatedWord
}

// relatedWord is one entry of [semanticModel.related].
type relatedWord struct {
	word   int32
	weight float32
}

var (
	loadSemanticOnce sync.Once
	loadedSemantic   *semanticModel
	loadSemanticErr  error
)

// semanticModelLoaded returns the embedded model, parsing it on first use
// (tens of milliseconds; see TestSemanticModelLoadCost).
func semanticModelLoaded() (*semanticModel, error) {
	loadSemanticOnce.Do(func() {
		loadedSemantic, loadSemanticErr = parseSemanticModel(semanticModelData)
		if loadSemanticErr != nil {
			loadSemanticErr = fmt.Errorf("semantic model: %w", loadSemanticErr)
		}
	})
	return loadedSemantic, loadSemanticErr
}

// parseSemanticModel reads a model from data, which it keeps (the vectors
// stay in place) and must not change afterwards.
func parseSemanticModel(data []byte) (*semanticModel, error) {
	p := &modelParser{data: data}
	if string(p.take(len(semanticModelMagic))) != semanticModelMagic {
		return nil, errors.New("bad magic")
	}
	le := binary.LittleEndian
	n, dim := int(le.Uint32(p.take(4))), int(le.Uint16(p.take(2)))
	if p.err != nil || n == 0 || n > 1<<16 || dim == 0 || dim > 4096 {
		return nil, fmt.Errorf("implausible size %d×%d", n, dim)
	}
	m := &semanticModel{dim: dim, words: make([]string, n), index: make(map[string]int32, n), irreg: map[string]string{}}
	for i := range n {
		w := p.shortString()
		m.words[i] = w
		m.index[w] = int32(i)
	}
	m.prob = p.floats(n)
	m.scale = p.floats(n)
	m.vecs = p.take(n * dim)
	e := int(le.Uint32(p.take(4)))
	for i := 0; i < e && p.err == nil; i++ {
		form := p.shortString()
		m.irreg[form] = p.shortString()
	}
	m.related = make([][]relatedWord, n)
	for i := 0; i < n && p.err == nil; i++ {
		c := int(p.take(1)[0])
		raw := p.take(3 * c)
		if p.err != nil {
			break
		}
		rs := make([]relatedWord, c)
		for j := range rs {
			w := int32(le.Uint16(raw[3*j:]))
			if int(w) >= n {
				return nil, fmt.Errorf("related word %d of %d out of range", w, n)
			}
			rs[j] = relatedWord{w, float32(raw[3*j+2]) / 255}
		}
		m.related[i] = rs
	}
	if p.err != nil {
		return nil, p.err
	}
	if len(p.data) != 0 {
		return nil, errors.New("trailing data")
	}
	return m, nil
}

// modelParser reads a model's fields from its bytes; past the end it
// records io.ErrUnexpectedEOF and returns zeros.
type modelParser struct {
	data []byte
	err  error
}

func (p *modelParser) take(n int) []byte {
	if p.err != nil || n > len(p.data) {
		p.err = io.ErrUnexpectedEOF
		return make([]byte, max(n, 0))
	}
	b := p.data[:n]
	p.data = p.data[n:]
	return b
}

func (p *modelParser) shortString() string {
	n := int(p.take(1)[0])
	return string(p.take(n))
}

func (p *modelParser) floats(n int) []float32 {
	raw := p.take(4 * n)
	out := make([]float32, n)
	for i := range out {
		out[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
	}
	return out
}

// lookup returns the vocabulary index of word or of its base form
// (WordNet's irregular forms, then its detachment rules: "cities" →
// "city", "running" → "run", "warmer" → "warm"), or -1.
func (m *semanticModel) lookup(word string) int32 {
	if i, ok := m.index[word]; ok {
		return i
	}
	if b, ok := m.irreg[word]; ok {
		if i, ok := m.index[b]; ok {
			return i
		}
	}
	for _, r := range detachRules {
		base, ok := strings.CutSuffix(word, r[0])
		if !ok || len(base) < 2 {
			continue
		}
		base += r[1]
		if i, ok := m.index[base]; ok {
			return i
		}
		if n := len(base); r[1] == "" && n >= 3 && base[n-1] == base[n-2] {
			if i, ok := m.index[base[:n-1]]; ok { // "running" → "runn" → "run"
				return i
			}
		}
	}
	return -1
}

// detachRules are WordNet's morphy suffix rules (nouns, verbs, adjectives)
// and the adverb "-ly", tried in order.
var detachRules = [][2]string{
	{"'s", ""}, {"ies", "y"}, {"ses", "s"}, {"xes", "x"}, {"zes", "z"}, {"ches", "ch"}, {"shes", "sh"},
	{"men", "man"}, {"es", "e"}, {"es", ""}, {"s", ""},
	{"ied", "y"}, {"ed", "e"}, {"ed", ""}, {"ing", "e"}, {"ing", ""},
	{"iest", "y"}, {"ier", "y"}, {"est", "e"}, {"est", ""}, {"er", "e"}, {"er", ""},
	{"ily", "y"}, {"ly", ""},
}

// addTo adds weight × the vector of word i to acc.
func (m *semanticModel) addTo(acc []float32, i int32, weight float32) {
	s := weight * m.scale[i] / 127
	row := m.vecs[int(i)*m.dim : int(i+1)*m.dim]
	for d, q := range row {
		acc[d] += s * float32(int8(q))
	}
}

// normalize scales v to unit length in place (a zero vector stays zero).
func normalizeInPlace(v []float32) {
	var n float64
	for _, x := range v {
		n += float64(x) * float64(x)
	}
	if n == 0 {
		return
	}
	inv := float32(1 / math.Sqrt(n))
	for i := range v {
		v[i] *= inv
	}
}

// word is the vocabulary's word i.
func (m *semanticModel) word(i int32) string { return m.words[i] }

func sqrt32(x float64) float32 { return float32(math.Sqrt(x)) }
