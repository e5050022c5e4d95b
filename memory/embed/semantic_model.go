package embed

import (
	"bufio"
	"bytes"
	"compress/gzip"
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
// packages ship and retrofitted to WordNet, quantised to int8.
//
//go:embed semantic/model.bin.gz
var semanticModelData []byte

// semanticModelMagic starts an unpacked model (scripts/semanticmodel's
// writeModel documents the layout).
const semanticModelMagic = "AMSEMB01"

// semanticModel is the loaded model: a sorted vocabulary with a vector and
// a unigram probability per word, and WordNet's irregular inflections.
type semanticModel struct {
	dim   int
	words []string
	index map[string]int32
	prob  []float32
	scale []float32
	vecs  []int8 // len(index) × dim
	irreg map[string]string
}

var (
	loadSemanticOnce sync.Once
	loadedSemantic   *semanticModel
	loadSemanticErr  error
)

// semanticModelLoaded returns the embedded model, unpacking it on first
// use (tens of milliseconds; see TestSemanticModelLoadCost).
func semanticModelLoaded() (*semanticModel, error) {
	loadSemanticOnce.Do(func() {
		loadedSemantic, loadSemanticErr = readSemanticModel(bytes.NewReader(semanticModelData))
		if loadSemanticErr != nil {
			loadSemanticErr = fmt.Errorf("semantic model: %w", loadSemanticErr)
		}
	})
	return loadedSemantic, loadSemanticErr
}

// readSemanticModel unpacks a gzip-compressed model.
func readSemanticModel(r io.Reader) (*semanticModel, error) {
	zr, err := gzip.NewReader(r)
	if err != nil {
		return nil, err
	}
	defer zr.Close()
	br := bufio.NewReaderSize(zr, 1<<16)
	magic := make([]byte, len(semanticModelMagic))
	if _, err := io.ReadFull(br, magic); err != nil {
		return nil, err
	}
	if string(magic) != semanticModelMagic {
		return nil, fmt.Errorf("bad magic %q", magic)
	}
	le := binary.LittleEndian
	var n uint32
	var dim uint16
	if err := binary.Read(br, le, &n); err != nil {
		return nil, err
	}
	if err := binary.Read(br, le, &dim); err != nil {
		return nil, err
	}
	if n == 0 || n > 1<<22 || dim == 0 || dim > 4096 {
		return nil, fmt.Errorf("implausible size %d×%d", n, dim)
	}
	m := &semanticModel{dim: int(dim), words: make([]string, n), index: make(map[string]int32, n), irreg: map[string]string{}}
	for i := range n {
		w, err := readShortString(br)
		if err != nil {
			return nil, err
		}
		m.words[i] = w
		m.index[w] = int32(i)
	}
	m.prob = make([]float32, n)
	m.scale = make([]float32, n)
	m.vecs = make([]int8, int(n)*int(dim))
	for _, v := range []any{m.prob, m.scale, m.vecs} {
		if err := binary.Read(br, le, v); err != nil {
			return nil, err
		}
	}
	var e uint32
	if err := binary.Read(br, le, &e); err != nil {
		return nil, err
	}
	for range e {
		form, err := readShortString(br)
		if err != nil {
			return nil, err
		}
		base, err := readShortString(br)
		if err != nil {
			return nil, err
		}
		m.irreg[form] = base
	}
	if _, err := br.ReadByte(); !errors.Is(err, io.EOF) {
		return nil, errors.New("trailing data")
	}
	return m, nil
}

func readShortString(r *bufio.Reader) (string, error) {
	n, err := r.ReadByte()
	if err != nil {
		return "", err
	}
	b := make([]byte, n)
	if _, err := io.ReadFull(r, b); err != nil {
		return "", err
	}
	return string(b), nil
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
		acc[d] += s * float32(q)
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
