package main

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// The sources below add English prose that packages ship to the training
// text: the WordNet part teaches synonyms, but which words share a topic
// (umbrella, rain, forecast) is learnt only from text that uses them
// together, and the package descriptions and Go comments are short and
// technical.

// roffEscape matches troff escapes (\fB, \(em, \*(Aq, \s-1, \[...]) and
// any other backslash pair, which are removed before the text is split.
var roffEscape = regexp.MustCompile(`\\[fFn*](\(..|\[[^\]]*\]|.)|\\\(..|\\\[[^\]]*\]|\\s[+-]?[0-9]|\\.`)

// roffTextMacros are the macros whose arguments are running text.
var roffTextMacros = map[string]bool{
	".B": true, ".I": true, ".BR": true, ".BI": true, ".IB": true, ".IR": true, ".RB": true, ".RI": true,
	".SH": true, ".SS": true, ".IP": true, ".SM": true, ".SB": true, ".Nd": true, ".Sh": true, ".Ss": true,
}

// writeManPages writes the English manual pages under dir (man1 … man9,
// the language subdirectories left out), one paragraph a line, in path
// order. Pages that only include another (.so) and symbolic links are
// skipped, so a page is read once; so are pages of packages that Debian's
// archive (apt's lists) does not have, such as a vendor's repository's, so
// that the corpus depends on Debian's packages only.
func writeManPages(w io.Writer, dir string) error {
	debian, err := debianManPages()
	if err != nil {
		return err
	}
	var files []string
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p != dir && !strings.HasPrefix(d.Name(), "man") {
				return filepath.SkipDir
			}
			return nil
		}
		if d.Type().IsRegular() && strings.HasSuffix(p, ".gz") && debian[p] {
			files = append(files, p)
		}
		return nil
	})
	if err != nil {
		return err
	}
	slices.Sort(files)
	for _, p := range files {
		text, err := readGzip(p)
		if err != nil || bytes.HasPrefix(text, []byte(".so ")) {
			continue
		}
		writeRoff(w, string(text))
	}
	return nil
}

// debianManPages returns the files under /usr/share/man that installed
// packages of Debian's archive own (dpkg's file lists).
func debianManPages() (map[string]bool, error) {
	out, err := exec.Command("apt-cache", "dumpavail").Output()
	if err != nil {
		return nil, fmt.Errorf("apt-cache dumpavail: %w", err)
	}
	inArchive := map[string]bool{}
	for _, l := range bytes.Split(out, []byte("\n")) {
		if name, ok := bytes.CutPrefix(l, []byte("Package: ")); ok {
			inArchive[string(name)] = true
		}
	}
	lists, err := filepath.Glob("/var/lib/dpkg/info/*.list")
	if err != nil {
		return nil, err
	}
	owned := map[string]bool{}
	for _, list := range lists {
		pkg, _, _ := strings.Cut(strings.TrimSuffix(filepath.Base(list), ".list"), ":")
		if !inArchive[pkg] {
			continue
		}
		data, err := os.ReadFile(list)
		if err != nil {
			return nil, err
		}
		for _, f := range strings.Split(string(data), "\n") {
			if strings.HasPrefix(f, "/usr/share/man/man") {
				owned[f] = true
			}
		}
	}
	return owned, nil
}

func readGzip(p string) ([]byte, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return nil, err
	}
	return io.ReadAll(io.LimitReader(zr, 4<<20))
}

// writeRoff writes the running text of a troff page, a paragraph a line.
func writeRoff(w io.Writer, page string) {
	var para []string
	flush := func() {
		line(w, strings.Join(para, " "))
		para = para[:0]
	}
	for _, l := range strings.Split(page, "\n") {
		if strings.HasPrefix(l, ".") || strings.HasPrefix(l, "'") {
			name, args, _ := strings.Cut(l, " ")
			if !roffTextMacros[name] {
				if name == ".PP" || name == ".P" || name == ".LP" || name == ".TP" || name == ".Pp" || name == ".sp" {
					flush()
				}
				continue
			}
			if name == ".SH" || name == ".SS" || name == ".Sh" || name == ".Ss" {
				flush()
				continue // a heading ("DESCRIPTION") is not prose
			}
			l = args
		}
		l = strings.ReplaceAll(l, `\-`, "-")
		l = roffEscape.ReplaceAllString(l, " ")
		if strings.TrimSpace(l) == "" {
			flush()
			continue
		}
		para = append(para, l)
	}
	flush()
}

// htmlTag matches the markup of AppStream descriptions.
var htmlTag = regexp.MustCompile(`<[^>]*>`)

// writeAppStream writes the English (C) summaries and descriptions of the
// DEP-11 AppStream files apt downloaded (dir/*_dep11_Components-*.yml.gz),
// the long descriptions of Debian's applications, a paragraph a line.
func writeAppStream(w io.Writer, dir string) error {
	files, err := filepath.Glob(filepath.Join(dir, "*_dep11_Components-*.yml.gz"))
	if err != nil {
		return err
	}
	slices.Sort(files)
	for _, p := range files {
		text, err := readGzipAll(p)
		if err != nil {
			return fmt.Errorf("%s: %w", p, err)
		}
		writeDEP11(w, text)
	}
	return nil
}

func readGzipAll(p string) ([]byte, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return nil, err
	}
	return io.ReadAll(zr)
}

// writeDEP11 writes the C-locale Summary and Description values of a DEP-11
// document stream.
func writeDEP11(w io.Writer, text []byte) {
	sc := bufio.NewScanner(bytes.NewReader(text))
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	var inField, inC bool
	var value []string
	flush := func() {
		if len(value) > 0 {
			v := strings.Join(value, " ")
			for _, para := range strings.Split(v, "</p>") {
				line(w, htmlTag.ReplaceAllString(para, " "))
			}
		}
		value = value[:0]
	}
	for sc.Scan() {
		l := sc.Text()
		switch {
		case l == "Summary:" || l == "Description:":
			flush()
			inField, inC = true, false
		case !strings.HasPrefix(l, " "):
			flush()
			inField, inC = false, false
		case inField && strings.HasPrefix(l, "  ") && !strings.HasPrefix(l, "   "):
			flush()
			key, rest, _ := strings.Cut(strings.TrimSpace(l), ":")
			inC = key == "C"
			if inC {
				if r := strings.TrimSpace(rest); r != ">-" && r != "|" && r != ">" && r != "|-" {
					value = append(value, r)
				}
			}
		case inField && inC:
			value = append(value, strings.TrimSpace(l))
		}
	}
	flush()
}

// pythonDocstrings is run by python3: it prints the docstrings of the
// modules under the directories given, a paragraph a line, in path order.
const pythonDocstrings = `
import ast, os, sys
files = []
for root in sys.argv[1:]:
    for d, dirs, fs in os.walk(root):
        dirs[:] = sorted(x for x in dirs if x not in ("test", "tests", "idlelib", "__pycache__", "site-packages", "dist-packages"))
        files += [os.path.join(d, f) for f in fs if f.endswith(".py")]
for p in sorted(files):
    try:
        tree = ast.parse(open(p, encoding="utf-8").read())
    except Exception:
        continue
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            doc = ast.get_docstring(node)
            if doc:
                for para in doc.split("\n\n"):
                    print(" ".join(para.split()))
`

// writePythonDocs writes the docstrings of the Python standard library
// (python3's own directory), a paragraph a line.
func writePythonDocs(w io.Writer) error {
	dir, err := exec.Command("python3", "-c", "import os,sysconfig; print(sysconfig.get_paths()['stdlib'])").Output()
	if err != nil {
		return fmt.Errorf("python3: %w", err)
	}
	out, err := exec.Command("python3", "-c", pythonDocstrings, strings.TrimSpace(string(dir))).Output()
	if err != nil {
		return fmt.Errorf("python3 docstrings: %w", err)
	}
	for _, l := range strings.Split(string(out), "\n") {
		line(w, l)
	}
	return nil
}
