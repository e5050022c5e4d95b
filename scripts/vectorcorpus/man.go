package main

import (
	"bufio"
	"compress/gzip"
	"io"
	"io/fs"
	"log"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// manPages collects, from every English manual page under root (the
// man1 … man9 directories, not the translations beside them; regular files
// only, since a link or a ".so" page repeats another page), first the
// description of its NAME line ("ls \- list directory contents" gives "list
// directory contents"), then the first sentence of each paragraph of its
// prose sections. Only man(7) pages give paragraphs: mdoc(7) pages (BSD
// style) give their NAME line (.Nd) only, since their prose is split by
// inline macros. Sections that are not prose (SYNOPSIS, EXAMPLES, FILES,
// SEE ALSO, AUTHORS …), no-fill blocks (.nf, .EX) and tables are skipped,
// and so is the tag line after .TP (an option's name). Pages are read in
// lexical order of their paths.
func manPages(c *corpus, root string) {
	var files []string
	_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.IsDir() && p != root {
			if !manSectionDir.MatchString(p[len(root)+1:]) {
				return filepath.SkipDir
			}
			return nil
		}
		if d.Type().IsRegular() {
			files = append(files, p)
		}
		return nil
	})
	slices.Sort(files)
	pages, names := 0, 0
	var paras []string
	for _, p := range files {
		text, err := readManPage(p)
		if err != nil {
			log.Printf("%s: %v", p, err)
			continue
		}
		name, ps := parseManPage(text)
		if name == "" && len(ps) == 0 {
			continue
		}
		pages++
		if c.add(name) {
			names++
		}
		paras = append(paras, ps...)
	}
	// NAME lines first, so that a sentence repeating a NAME line is the
	// duplicate dropped.
	for _, s := range paras {
		c.add(s)
	}
	log.Printf("%d manual pages under %s: %d NAME lines, %d paragraph sentences, %d lines", pages, root, names, len(c.lines)-names, len(c.lines))
}

// manSectionDir matches the directories of the English pages: man1 … man9
// and their suffixed variants (man3p, man1ssl).
var manSectionDir = regexp.MustCompile(`^man[1-9n][a-z]*$`)

// readManPage is the text of the page at p, gunzipped when it ends in .gz.
func readManPage(p string) (string, error) {
	f, err := os.Open(p)
	if err != nil {
		return "", err
	}
	defer f.Close()
	var r io.Reader = f
	if strings.HasSuffix(p, ".gz") {
		zr, err := gzip.NewReader(f)
		if err != nil {
			return "", err
		}
		r = zr
	}
	b, err := io.ReadAll(io.LimitReader(r, 4<<20))
	return string(b), err
}

// manSkipSections are the section titles whose text is not prose about
// the command.
var manSkipSections = map[string]bool{
	"SYNOPSIS": true, "SEE ALSO": true, "AUTHOR": true, "AUTHORS": true, "COPYRIGHT": true,
	"REPORTING BUGS": true, "EXAMPLE": true, "EXAMPLES": true, "FILES": true, "HISTORY": true,
	"COLOPHON": true, "LICENSE": true, "VERSION": true, "AVAILABILITY": true, "BUGS": true,
}

// manTextMacros are the font macros whose arguments are running text.
var manTextMacros = map[string]bool{
	"B": true, "I": true, "BR": true, "RB": true, "IR": true, "RI": true, "BI": true, "IB": true,
	"SM": true, "SB": true,
}

// parseManPage returns the description of the page's NAME section and the
// first sentence of each paragraph of its prose sections.
func parseManPage(text string) (name string, sentences []string) {
	if strings.HasPrefix(text, ".so ") {
		return "", nil
	}
	mdoc := strings.Contains(text, "\n.Dd") || strings.HasPrefix(text, ".Dd") || strings.Contains(text, "\n.Sh ")
	section := ""
	var nameText, para []string
	skipFill, skipTag := false, false
	flush := func() {
		if len(para) > 0 && section != "NAME" && !manSkipSections[section] && !mdoc {
			if s := firstSentence(strings.Join(para, " ")); manProse(s) {
				sentences = append(sentences, s)
			}
		}
		para = para[:0]
	}
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Buffer(make([]byte, 1<<16), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" {
			flush()
			continue
		}
		if line[0] != '.' && line[0] != '\'' {
			if skipFill || manSkipSections[section] {
				continue
			}
			if skipTag {
				skipTag = false
				continue
			}
			t := roffText(line)
			if section == "NAME" {
				nameText = append(nameText, t)
			} else {
				para = append(para, t)
			}
			continue
		}
		macro, args, _ := strings.Cut(strings.TrimSpace(line[1:]), " ")
		macro = strings.TrimSpace(macro)
		switch {
		case strings.HasPrefix(macro, `\"`) || macro == "":
			continue // a comment
		case macro == "SH" || macro == "Sh":
			flush()
			section = strings.ToUpper(strings.Trim(roffText(args), `" `))
			continue
		case macro == "Nd" && section == "NAME":
			nameText = append(nameText, `\- `+roffText(args))
			continue
		case macro == "nf" || macro == "EX" || macro == "TS":
			flush()
			skipFill = true
			continue
		case macro == "fi" || macro == "EE" || macro == "TE":
			skipFill = false
			continue
		case manTextMacros[macro] && !skipFill:
			t := roffText(strings.ReplaceAll(args, `"`, ""))
			if skipTag {
				skipTag = false
				continue
			}
			if section == "NAME" {
				nameText = append(nameText, t)
			} else {
				para = append(para, t)
			}
			continue
		case macro == "TP":
			flush()
			skipTag = true
			continue
		}
		flush() // any other request breaks the paragraph
	}
	flush()
	n := strings.Join(nameText, " ")
	for _, sep := range []string{`\-`, " - ", " -- ", " — "} {
		if _, d, ok := strings.Cut(n, sep); ok {
			return strings.TrimSpace(d), sentences
		}
	}
	return "", sentences
}

// manProse reports whether s reads as a sentence: it starts with a letter
// and at least three quarters of its bytes are letters or spaces (not a
// command line, a path or a table row).
func manProse(s string) bool {
	if s == "" || !(s[0] >= 'A' && s[0] <= 'Z' || s[0] >= 'a' && s[0] <= 'z') {
		return false
	}
	letters := 0
	for _, r := range s {
		if r == ' ' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' {
			letters++
		}
	}
	return letters*4 >= len(s)*3
}

// roffEscape matches the roff escapes roffText drops: fonts (\fB, \f(CW,
// \f[R]), sizes (\s-1), strings (\*(Aq, \*[x], \*x), named characters
// (\(em, \[em]) and the zero-width ones (\&, \c, \%, \|, \^).
var roffEscape = regexp.MustCompile(`\\f(\(..|\[[^]]*\]|.)|\\s[-+]?\d+|\\\*(\(..|\[[^]]*\]|.)|\\\(..|\\\[[^]]*\]|\\[&c%|^,/:]`)

// roffNamed are the named characters worth keeping as text.
var roffNamed = strings.NewReplacer(`\-`, "-", `\(em`, " - ", `\(en`, "-", `\(aq`, "'", `\(lq`, `"`, `\(rq`, `"`,
	`\(oq`, "'", `\(cq`, "'", `\[em]`, " - ", `\[en]`, "-", `\[aq]`, "'", `\e`, `\`, `\ `, " ", `\~`, " ")

// roffText is the running text of a roff line, escapes removed.
func roffText(s string) string {
	s = roffNamed.Replace(s)
	s = roffEscape.ReplaceAllString(s, "")
	return strings.TrimSpace(strings.ReplaceAll(s, `\`, ""))
}
