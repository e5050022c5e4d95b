package main

import (
	"bufio"
	"bytes"
	"fmt"
	"go/parser"
	"go/token"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"unicode"
)

// words lower-cases text and splits it into words of letters and digits,
// breaking camelCase, snake_case and kebab-case.
func words(text string) []string {
	var out []string
	var cur []rune
	flush := func() {
		if len(cur) > 0 {
			out = append(out, string(cur))
			cur = cur[:0]
		}
	}
	var prev rune
	for _, c := range text {
		switch {
		case unicode.IsUpper(c) && unicode.IsLower(prev):
			flush()
			cur = append(cur, unicode.ToLower(c))
		case c < 128 && (unicode.IsLetter(c) || unicode.IsDigit(c)):
			cur = append(cur, unicode.ToLower(c))
		default:
			flush()
		}
		prev = c
	}
	flush()
	return out
}

// line writes the words of the texts as one corpus line; nothing for an
// empty line.
func line(w io.Writer, texts ...string) {
	var ws []string
	for _, t := range texts {
		ws = append(ws, words(t)...)
	}
	if len(ws) > 1 {
		fmt.Fprintln(w, strings.Join(ws, " "))
	}
}

// relatedSymbols are the pointers whose targets a word is written beside
// in the corpus, so that the trained vectors put them near each other.
var relatedSymbols = map[string]bool{
	"@": true, "@i": true, // hypernym, instance hypernym
	"~": true, "~i": true, // hyponym
	"+":  true,                       // derivationally related form
	"=":  true,                       // attribute (warm → temperature)
	"&":  true,                       // similar to
	"\\": true,                       // pertainym / derived from adjective
	"^":  true,                       // also see
	"$":  true, "*": true, ">": true, // verb group, entailment, cause
	";c": true, "-c": true, // domain of topic, member of topic
	"#p": true, "%p": true, "#m": true, "%m": true, // parts and members
}

// writeWordNet writes, for every synset, its lemmas and gloss, and for
// every lemma, the lemmas of the synsets it points to (its hypernyms two
// levels up, derivations, attributes, similar words, topic domains).
func writeWordNet(w io.Writer, wn *wordNet) {
	for _, key := range wn.order {
		s := wn.synsets[key]
		gloss := strings.NewReplacer(`"`, " ", ";", " ").Replace(s.gloss)
		line(w, strings.Join(s.lemmas, " "), gloss)
		var related []string
		for _, p := range s.ptrs {
			if !relatedSymbols[p.symbol] {
				continue
			}
			t := wn.synsets[p.target]
			if t == nil {
				continue
			}
			if p.dest > 0 && p.dest <= len(t.lemmas) {
				related = append(related, t.lemmas[p.dest-1])
			} else {
				related = append(related, t.lemmas...)
			}
			if p.symbol == "@" || p.symbol == "@i" {
				for _, q := range t.ptrs {
					if q.symbol == "@" {
						if tt := wn.synsets[q.target]; tt != nil {
							related = append(related, tt.lemmas...)
						}
					}
				}
			}
		}
		if len(related) == 0 {
			continue
		}
		for _, l := range s.lemmas {
			line(w, l, strings.Join(related, " "))
		}
	}
}

// writeDebian writes the package descriptions apt knows
// (apt-cache dumpavail), one line each, in package order.
func writeDebian(w io.Writer) error {
	out, err := exec.Command("apt-cache", "dumpavail").Output()
	if err != nil {
		return fmt.Errorf("apt-cache dumpavail: %w", err)
	}
	seen := map[string]bool{}
	var descs []string
	for _, l := range bytes.Split(out, []byte("\n")) {
		if d, ok := bytes.CutPrefix(l, []byte("Description: ")); ok && !seen[string(d)] {
			seen[string(d)] = true
			descs = append(descs, string(d))
		}
	}
	slices.Sort(descs)
	for _, d := range descs {
		line(w, d)
	}
	return nil
}

// writeGoDocs writes the comments of the Go standard library's sources
// (GOROOT/src, tests and testdata left out), one comment group a line, in
// path order.
func writeGoDocs(w io.Writer, goroot string) error {
	var files []string
	err := filepath.WalkDir(filepath.Join(goroot, "src"), func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || d.Name() == "vendor") {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(p, ".go") && !strings.HasSuffix(p, "_test.go") {
			files = append(files, p)
		}
		return nil
	})
	if err != nil {
		return err
	}
	slices.Sort(files)
	fset := token.NewFileSet()
	for _, p := range files {
		f, err := parser.ParseFile(fset, p, nil, parser.ParseComments)
		if err != nil {
			continue // a file for another toolchain's syntax; its comments are not needed
		}
		for _, g := range f.Comments {
			t := g.Text()
			if strings.HasPrefix(t, "Copyright ") || strings.HasPrefix(t, "go:") || strings.HasPrefix(t, "Code generated") {
				continue
			}
			for _, para := range strings.Split(t, "\n\n") {
				line(w, para)
			}
		}
	}
	return nil
}

// writeCorpus writes the training text to path.
// With prose set, the manual pages under manDir, the AppStream
// descriptions in aptLists and the Python standard library's docstrings
// follow.
func writeCorpus(path string, wn *wordNet, goroot string, prose bool, manDir, aptLists string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	bw := bufio.NewWriterSize(f, 1<<20)
	writeWordNet(bw, wn)
	if err := writeDebian(bw); err != nil {
		return err
	}
	if err := writeGoDocs(bw, goroot); err != nil {
		return err
	}
	if prose {
		if err := writeManPages(bw, manDir); err != nil {
			return err
		}
		if err := writeAppStream(bw, aptLists); err != nil {
			return err
		}
		if err := writePythonDocs(bw); err != nil {
			return err
		}
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	return f.Close()
}
