package main

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// synset is one WordNet synset: its lemmas (lower case, words of a
// collocation joined by spaces), its gloss, and its pointers.
type synset struct {
	key     string // "n:11501381"
	pos     byte   // n, v, a (s folds into a), r
	lexFile int    // lexicographer file number (19 is noun.phenomenon)
	lemmas  []string
	gloss   string
	ptrs    []pointer
}

// pointer is a relation from a synset (source 0) or from one of its lemmas
// (source ≥ 1, lexical relations such as derivation) to another synset.
type pointer struct {
	symbol string
	target string // synset key
	source int    // 0: the whole synset; else the 1-based lemma
	dest   int    // 0: the whole synset; else the 1-based lemma of target
}

// wordNet is the database: synsets by key, the synsets of each lemma in
// sense order, and the morphological exceptions (inflected form → base
// forms) of the *.exc files.
type wordNet struct {
	synsets    map[string]*synset
	order      []string // synset keys in file order, for reproducible output
	senses     map[string][]string
	exceptions map[string][]string
	// tagged counts, per lemma, its senses tagged in WordNet's semantic
	// concordance (the index files' tagsense_cnt): how common the word is
	// in running text.
	tagged map[string]int
}

var posFiles = []struct {
	pos  byte
	name string
}{{'n', "noun"}, {'v', "verb"}, {'a', "adj"}, {'r', "adv"}}

func posOf(c string) byte {
	if c == "s" {
		return 'a'
	}
	return c[0]
}

// loadWordNet reads the WordNet 3.0 database files under dir.
func loadWordNet(dir string) (*wordNet, error) {
	wn := &wordNet{synsets: map[string]*synset{}, senses: map[string][]string{}, exceptions: map[string][]string{}, tagged: map[string]int{}}
	for _, pf := range posFiles {
		if err := wn.readData(filepath.Join(dir, "data."+pf.name)); err != nil {
			return nil, err
		}
		if err := wn.readIndex(filepath.Join(dir, "index."+pf.name), pf.pos); err != nil {
			return nil, err
		}
		if err := wn.readExceptions(filepath.Join(dir, pf.name+".exc")); err != nil {
			return nil, err
		}
	}
	return wn, nil
}

func (wn *wordNet) readData(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "  ") {
			continue // licence header
		}
		data, gloss, _ := strings.Cut(line, " | ")
		fs := strings.Fields(data)
		if len(fs) < 4 {
			return fmt.Errorf("%s: short line %q", path, line)
		}
		pos := posOf(fs[2])
		lex, _ := strconv.Atoi(fs[1])
		s := &synset{key: string(pos) + ":" + fs[0], pos: pos, lexFile: lex, gloss: strings.TrimSpace(gloss)}
		n, err := strconv.ParseInt(fs[3], 16, 32)
		if err != nil {
			return fmt.Errorf("%s: word count %q", path, fs[3])
		}
		i := 4
		for range n {
			s.lemmas = append(s.lemmas, lemmaText(fs[i]))
			i += 2
		}
		pc, err := strconv.Atoi(fs[i])
		if err != nil {
			return fmt.Errorf("%s: pointer count %q", path, fs[i])
		}
		i++
		for range pc {
			st, _ := strconv.ParseInt(fs[i+3], 16, 32)
			s.ptrs = append(s.ptrs, pointer{symbol: fs[i], target: string(posOf(fs[i+2])) + ":" + fs[i+1], source: int(st >> 8), dest: int(st & 0xff)})
			i += 4
		}
		wn.synsets[s.key] = s
		wn.order = append(wn.order, s.key)
	}
	return sc.Err()
}

// lemmaText turns "weather_condition" or "long(a)" into "weather condition"
// or "long".
func lemmaText(w string) string {
	if i := strings.IndexByte(w, '('); i > 0 {
		w = w[:i]
	}
	return strings.ToLower(strings.ReplaceAll(w, "_", " "))
}

func (wn *wordNet) readIndex(path string, pos byte) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "  ") {
			continue
		}
		fs := strings.Fields(line)
		if len(fs) < 6 {
			continue
		}
		lemma := lemmaText(fs[0])
		senses, _ := strconv.Atoi(fs[2])
		if senses+1 > len(fs) {
			return fmt.Errorf("%s: short line %q", path, line)
		}
		offsets := fs[len(fs)-senses:]
		tagged, _ := strconv.Atoi(fs[len(fs)-senses-1])
		wn.tagged[lemma] += tagged
		for _, o := range offsets {
			wn.senses[lemma] = append(wn.senses[lemma], string(pos)+":"+o)
		}
	}
	return sc.Err()
}

func (wn *wordNet) readExceptions(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		if len(fs) < 2 {
			continue
		}
		for _, b := range fs[1:] {
			w, base := lemmaText(fs[0]), lemmaText(b)
			if w != base && !contains(wn.exceptions[w], base) {
				wn.exceptions[w] = append(wn.exceptions[w], base)
			}
		}
	}
	return sc.Err()
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}
