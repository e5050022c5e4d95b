package main

import (
	"bufio"
	"encoding/json"
	"log"
	"os"
	"os/exec"
	"strings"
)

// pythonDocstrings is run by python3: it prints, as one JSON string per
// line, the docstring of every module, class and function in the .py files
// under the directories of sys.path (the standard library and the installed
// packages; not the current directory), files in lexical order, each file
// once (by its real path), nodes in ast.walk order. It parses the source
// and imports nothing, so no installed code runs.
const pythonDocstrings = `
import ast, json, os, sys, warnings
warnings.filterwarnings("ignore")
seen = set()
for root in sys.path:
    if not root or not os.path.isdir(root):
        continue
    for dirpath, dirs, files in os.walk(root):
        dirs.sort()
        for f in sorted(files):
            if not f.endswith(".py"):
                continue
            p = os.path.realpath(os.path.join(dirpath, f))
            if p in seen:
                continue
            seen.add(p)
            try:
                with open(p, "rb") as fh:
                    tree = ast.parse(fh.read())
            except Exception:
                continue
            for node in ast.walk(tree):
                if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                    d = ast.get_docstring(node, clean=True)
                    if d:
                        print(json.dumps(d))
`

// pythonDocs collects the first sentence of every docstring that
// [pythonDocstrings] prints, then the first sentence of each of their
// further paragraphs (so that a later paragraph repeating a summary is the
// duplicate dropped), unless it is a doctest, reStructuredText markup or
// a parameter list rather than prose.
func pythonDocs(c *corpus) {
	cmd := exec.Command("python3", "-c", pythonDocstrings)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		log.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		log.Fatalf("python3: %v", err)
	}
	docstrings := 0
	var more []string
	sc := bufio.NewScanner(out)
	sc.Buffer(make([]byte, 1<<16), 16<<20)
	for sc.Scan() {
		var d string
		if err := json.Unmarshal(sc.Bytes(), &d); err != nil {
			log.Fatalf("python3 printed %q: %v", sc.Text(), err)
		}
		docstrings++
		paras := strings.Split(d, "\n\n")
		if pythonProse(firstSentence(paras[0])) {
			c.add(firstSentence(paras[0]))
		}
		for _, p := range paras[1:] {
			if s := firstSentence(p); pythonProse(s) && !strings.Contains(p, "\n---") {
				more = append(more, s)
			}
		}
	}
	summaries := len(c.lines)
	for _, s := range more {
		c.add(s)
	}
	if err := sc.Err(); err != nil {
		log.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		log.Fatalf("python3: %v", err)
	}
	v, _ := exec.Command("python3", "--version").Output()
	log.Printf("%s: %d docstrings, %d summaries, %d later paragraphs, %d lines", strings.TrimSpace(string(v)), docstrings, summaries, len(c.lines)-summaries, len(c.lines))
}

// pythonProse reports whether s reads as a sentence rather than a doctest,
// reStructuredText markup or a field list.
func pythonProse(s string) bool {
	return !strings.Contains(s, ">>>") && !strings.Contains(s, "::") && !strings.HasPrefix(s, ":") &&
		!strings.HasPrefix(s, "..") && manProse(s)
}
