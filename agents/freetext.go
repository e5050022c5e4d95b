package agents

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// This file adds to slot filling (slots.go) the values that a request
// gives the way a person words them, beyond a parameter's name followed
// by its value:
//
//   - Free text a request spells out for a message or a text: after "the
//     words" or "the phrase" ("Echo the words hello there"), after the
//     colon that ends the request's own words ("Store an insight: the
//     folder is read-only"), and for a message after "that" ("Email Dana
//     that the lab is booked"). Free text only ever fills a free-text
//     parameter: never an identifier, an enum or a number.
//   - File names: a word with a file's extension (todo.md, docs/api.yaml)
//     or a relative path ending in "/" is a path, for a path parameter;
//     a list of paths takes the request's paths when it names several, or
//     speaks of files in the plural: "Read the file todo.md" is about one
//     file, and a tool that reads one is the one a person picks.
//   - Named things: "named X" or "called X" gives a name parameter, and an
//     array of objects whose required fields the request names all ("an
//     entity named demo-project of type project") takes one such object.
//     A required list field of the object that the request says nothing
//     of is an empty list; any other field it does not give leaves the
//     whole object to ask for.
//   - Filters: "by the author ada", "with label bug", "whose status is
//     open" give the parameter named after the preposition (author,
//     label, status) the word that ends the phrase, even in lower case.
//     And when the request states such a filter that a parameter of the
//     chosen tool takes, but its value cannot be read, the parameter is
//     asked for (see statesConstraint): running the tool without it would
//     answer another question ("every post") and report success.
//
// Every value is text of the request, and passes the parameter's shape
// check (see shape.go) like any other candidate.

// Phrases after which the rest of the clause is free text, and their
// scores: below a value after the parameter's own name, and a quoted one.
var (
	freeTextWordsPattern = regexp.MustCompile(`(?i)(?:^|\s)the\s+(?:words?|phrase|sentence|line)\s+`)
	freeTextThatPattern  = regexp.MustCompile(`(?i)(?:^|\s)that\s+`)
	// A colon that ends a clause's own words: "Store an insight: …",
	// "Write to Aiko: …". Not one of a time (10:30) or a URL.
	freeTextColonPattern = regexp.MustCompile(`\S:\s+\S`)
)

const (
	scoreTheWords = scoreSaying     // "the words hello there"
	scoreColon    = scoreQuoted - 2 // "Store an insight: the folder is read-only"
	scoreThat     = scoreQuoted - 6 // "Email Dana that the lab is booked"
	scoreFilter   = scoreNamed - 3  // "by the author ada"
	scoreCalled   = scoreNamed - 2  // "an entity named demo-project"
)

// findFromWording proposes for params[i] the values of this file's kinds.
// slots.go's find calls it after its own finders.
func (f *slotFinder) findFromWording(i int) {
	p := f.params[i]
	switch {
	case p.kind == slotText:
		f.findSpelledText(i)
	case p.kind == slotPath && p.prop.is("string"):
		for _, sp := range f.fileNames() {
			f.add(i, f.text[sp[0]:sp[1]], sp[0], sp[1], scoreExact)
		}
	case p.prop.is("array"):
		f.findList(i)
	}
	if nameLike(p) && p.prop.is("string") {
		if v, start, end, ok := f.calledValue(); ok {
			f.add(i, v, start, end, scoreCalled)
		}
	}
	if p.prop.is("string") && (p.kind == slotPerson || p.kind == slotPlace || p.kind == slotNone) && len(p.prop.Enum) == 0 {
		f.findFilter(i)
	}
}

// findSpelledText proposes the free text after "the words", after a
// colon, and for a message after "that".
func (f *slotFinder) findSpelledText(i int) {
	p := f.params[i]
	for _, m := range freeTextWordsPattern.FindAllStringIndex(f.text, -1) {
		if v, start, end, ok := f.valueAt(i, m[1], true); ok {
			f.add(i, v, start, end, scoreTheWords)
		}
	}
	if m := freeTextColonPattern.FindStringIndex(f.text); m != nil && !f.isReserved(m[0], m[1]) {
		before := splitWords(f.text[:m[0]+1])
		named := len(before) > 0 && slices.ContainsFunc(f.params, func(o slotParam) bool {
			return slices.Contains(o.keys, before[len(before)-1]) || slices.Contains(o.synonyms, before[len(before)-1])
		})
		if !named { // "city: Paris" is the city's (see findNamed)
			start := m[0] + 2
			for start < len(f.text) && f.text[start] == ' ' {
				start++
			}
			end := len(f.text)
			if k := slotThen.FindStringIndex(f.text[start:]); k != nil {
				end = start + k[0]
			}
			v := strings.TrimRight(f.text[start:end], " \t.!?,;:")
			if v != "" && !f.wholeReserved(start, start+len(v)) {
				f.add(i, v, start, start+len(v), scoreColon)
			}
		}
	}
	if p.synonyms == nil {
		return // "that" introduces a message, not a query
	}
	for _, m := range freeTextThatPattern.FindAllStringIndex(f.text, -1) {
		if v, start, end, ok := f.valueAt(i, m[1], true); ok {
			f.add(i, v, start, end, scoreThat)
		}
	}
}

// inSecret reports whether [start, end) lies within a secret of the
// request (see secretSpans): such a value goes to no parameter of this
// file's kinds, which are never secret ones.
func (f *slotFinder) inSecret(start, end int) bool {
	return slices.ContainsFunc(secretSpans(f.text), func(s [2]int) bool { return s[0] < end && start < s[1] })
}

// wholeReserved reports whether [start, end) is one URL, email, path or
// date: that is a value of its own, not free text.
func (f *slotFinder) wholeReserved(start, end int) bool {
	return slices.ContainsFunc(f.reserved, func(r [2]int) bool { return r[0] <= start && end <= r[1] })
}

// fileExtensions are the extensions that make a word a file's name.
// Top-level domains are not among them (example.com is no file), except
// where the file type is far the likelier reading (md, sh, py, rs).
var fileExtensions = strings.Fields(`md markdown txt text rst adoc json jsonl ndjson yaml yml toml ini cfg conf env xml csv tsv log
	go py rb js mjs cjs ts tsx jsx java kt c h cc cpp hpp cs rs swift php pl sh bash zsh ps1 sql proto graphql
	html htm css scss svg png jpg jpeg gif webp pdf doc docx xls xlsx ppt pptx odt ods rtf zip tar gz tgz bz2 xz 7z
	lock mod sum gradle dockerfile makefile ipynb parquet sqlite db bak tmp`)

var fileNamePattern = regexp.MustCompile(`(?:^|[\s"'“(\[])((?:[\w.-]+/)*[\w-][\w.-]*\.([A-Za-z0-9]{1,10})|(?:[\w.-]+/)+)(?:$|[\s"'”),;:!?\]]|\.(?:\s|$))`)

// fileNames are the spans of the request's file names and relative paths
// (todo.md, docs/api.yaml, build/), and of its absolute paths (/etc/hosts).
func (f *slotFinder) fileNames() [][2]int {
	var spans [][2]int
	for _, m := range fileNamePattern.FindAllStringSubmatchIndex(f.text, -1) {
		start, end := m[2], m[3]
		if m[4] >= 0 && !slices.Contains(fileExtensions, strings.ToLower(f.text[m[4]:m[5]])) {
			continue
		}
		if m[4] < 0 && strings.Count(f.text[start:end], "/") < 1 {
			continue
		}
		if f.isReserved(start, end) || start > 0 && f.text[start-1] == '/' {
			continue // a piece of a URL, an email address or an absolute path
		}
		spans = append(spans, [2]int{start, end})
	}
	for _, m := range pathPattern.FindAllStringSubmatchIndex(f.text, -1) {
		v := strings.TrimRight(f.text[m[2]:m[3]], ".,;:!?)")
		if len(v) > 1 && !f.overlapsURL(m[2]) {
			spans = append(spans, [2]int{m[2], m[2] + len(v)})
		}
	}
	slices.SortFunc(spans, func(a, b [2]int) int { return a[0] - b[0] })
	return spans
}

// pluralFiles are the words by which a request speaks of several files.
var pluralFiles = []string{"files", "paths", "documents", "docs", "folders", "directories", "dirs", "notes", "both", "all"}

// findList proposes for a list parameter the request's values: its paths
// for a list of paths (see the file comment), one object for a list of
// objects (see objectFromRequest).
func (f *slotFinder) findList(i int) {
	p := f.params[i]
	var items schemaItems
	if json.Unmarshal(p.prop.Items, &items) != nil {
		return
	}
	switch {
	case items.is("string"):
		item := classifySlot(p.name, schemaProperty{Type: "string", Description: p.prop.Description, Title: p.prop.Title}, true)
		if item.kind != slotPath {
			return
		}
		spans := f.fileNames()
		plural := slices.ContainsFunc(f.words, func(w slotWord) bool { return slices.Contains(pluralFiles, w.lower) })
		if len(spans) == 0 || len(spans) == 1 && !plural || p.prop.MaxItems != nil && len(spans) > *p.prop.MaxItems {
			return
		}
		shape := shapeOf(items.schemaProperty)
		values := make([]any, 0, len(spans))
		var quoted []string
		for _, sp := range spans {
			v := f.text[sp[0]:sp[1]]
			if shape.problem(v) != "" {
				return
			}
			values = append(values, v)
			quoted = append(quoted, "'"+v+"'")
		}
		f.addWithNote(i, values, spans[0][0], spans[len(spans)-1][1], scoreExact, spans,
			fmt.Sprintf("%s = [%s] from the request", p.name, strings.Join(quoted, ", ")))
	case items.is("object"):
		if obj, spans, note, ok := f.objectFromRequest(items); ok {
			f.addWithNote(i, []any{obj}, spans[0][0], spans[len(spans)-1][1], scoreCalled, spans,
				fmt.Sprintf("%s = one object from the request: %s", p.name, note))
		}
	}
}

// schemaItems is what list filling reads of an array's item schema.
type schemaItems struct {
	schemaProperty
	Properties map[string]schemaProperty `json:"properties"`
	Required   []string                  `json:"required"`
}

// calledPattern finds "named X" and "called X": X quoted, or one word.
var calledPattern = regexp.MustCompile(`(?i)(?:^|\s)(?:named|called)\s+(?:"([^"]+)"|'([^']+)'|“([^”]+)”|([^\s"'“”,;:!?]+))`)

// calledValue is the name that the request gives a thing ("named
// demo-project"), and its span; not a word such as "the" or "after".
func (f *slotFinder) calledValue() (string, int, int, bool) {
	for _, m := range calledPattern.FindAllStringSubmatchIndex(f.text, -1) {
		for g := 2; g+1 < len(m); g += 2 {
			if m[g] < 0 {
				continue
			}
			v := f.text[m[g]:m[g+1]]
			if g == 8 {
				v = strings.TrimRight(v, ".")
				if slices.Contains(slotValueStop, strings.ToLower(v)) || f.isReserved(m[g], m[g]+len(v)) {
					break
				}
			}
			if f.inSecret(m[g], m[g]+len(v)) {
				break
			}
			return v, m[g], m[g] + len(v), v != ""
		}
	}
	return "", 0, 0, false
}

// nameLike reports whether a parameter is the name or title of the thing
// a tool makes or finds: name, title, fooName, foo_name.
func nameLike(p slotParam) bool {
	ws := splitWords(p.name)
	return len(ws) > 0 && (ws[len(ws)-1] == "name" || ws[len(ws)-1] == "title") && !slices.Contains(ws, "user") && !slices.Contains(ws, "file")
}

// typeLike reports whether a field names what kind of thing it is:
// type, entityType, kind, category.
func typeLike(name string) bool {
	ws := splitWords(name)
	return len(ws) > 0 && slices.Contains([]string{"type", "kind", "category"}, ws[len(ws)-1])
}

// typePattern finds "of type X", "type X", "of kind X": X one word.
var typePattern = regexp.MustCompile(`(?i)(?:^|\s)(?:of\s+(?:the\s+)?)?(?:type|kind|category)\s+(?:"([^"]+)"|'([^']+)'|([^\s"',;:!?]+))`)

// objectFromRequest builds one object of items' schema from the request
// when it gives every required field: the name-like one from "named X",
// the type-like one from "of type X", a list one that it says nothing of
// as an empty list (when the schema allows one), any other as slot filling
// finds it. It returns the object, the spans it came from, and a note.
func (f *slotFinder) objectFromRequest(items schemaItems) (map[string]any, [][2]int, string, bool) {
	if len(items.Required) == 0 {
		return nil, nil, "", false // nothing says what an object must hold
	}
	obj := map[string]any{}
	var spans [][2]int
	var notes []string
	var others []slotParam
	take := func(name string, v any, start, end int) bool {
		if shapeOf(items.Properties[name]).problem(v) != "" || f.inSecret(start, end) {
			return false
		}
		obj[name] = v
		spans = append(spans, [2]int{start, end})
		notes = append(notes, fmt.Sprintf("%s '%v'", name, v))
		return true
	}
	for _, name := range items.Required {
		sp := items.Properties[name]
		field := classifySlot(name, sp, true)
		switch {
		case nameLike(field) && sp.is("string"):
			v, start, end, ok := f.calledValue()
			if !ok || !take(name, v, start, end) {
				return nil, nil, "", false
			}
		case typeLike(name) && sp.is("string"):
			m := typePattern.FindStringSubmatchIndex(f.text)
			if m == nil {
				return nil, nil, "", false
			}
			ok := false
			for g := 2; g+1 < len(m) && !ok; g += 2 {
				if m[g] >= 0 {
					v := f.text[m[g]:m[g+1]]
					ok = !slices.Contains(slotValueStop, strings.ToLower(v)) && take(name, v, m[g], m[g+1])
				}
			}
			if !ok {
				return nil, nil, "", false
			}
		case sp.is("array") && (sp.MinItems == nil || *sp.MinItems == 0):
			obj[name] = []any{} // the request gives none: an empty list says so
			notes = append(notes, name+" empty")
		default:
			others = append(others, field)
		}
	}
	if len(others) > 0 {
		found := fillSlots(f.text, others)
		for _, o := range others {
			fill, ok := found[o.name]
			if !ok {
				return nil, nil, "", false
			}
			obj[o.name] = fill.value
			notes = append(notes, fill.note)
		}
	}
	// Fields the request gives although the schema does not require them
	// are left out: an object of the required fields is a whole one.
	for _, sp := range spans {
		if slices.ContainsFunc(spans, func(o [2]int) bool { return o != sp && sp[0] < o[1] && o[0] < sp[1] }) {
			return nil, nil, "", false // one word for two fields
		}
	}
	slices.SortFunc(spans, func(a, b [2]int) int { return a[0] - b[0] })
	if len(spans) == 0 {
		return nil, nil, "", false // nothing of the request in it
	}
	return obj, spans, strings.Join(notes, ", "), true
}

// filterPrepositions introduce a filter of a list: "posts by the author
// ada", "issues with label bug", "orders whose status is open".
const filterPrepositions = `by|for|from|with|whose|where|of|in`

// findFilter proposes for params[i] the one word after "by the <name>"
// ("by the author ada") when that word ends the phrase: the request's end,
// punctuation, or a word such as "and", "from", "in" follows. The word is
// no word of a parameter's own name or description ("by the author name"
// names no author), nor a day or a pronoun ("in the city today").
func (f *slotFinder) findFilter(i int) {
	p := f.params[i]
	for _, key := range p.keys {
		re := mustCompileCached(`(?i)(?:^|\s)(?:` + filterPrepositions + `)\s+(?:(?:the|a|an|its|their)\s+)?` + regexp.QuoteMeta(key) + `(?:\s+(?:is|=|:)|\s*[:=])?\s+`)
		for _, m := range re.FindAllStringIndex(f.text, -1) {
			j := f.wordIndexAt(m[1])
			if j >= len(f.words) || f.words[j].start != m[1] {
				continue
			}
			w := f.words[j]
			if slices.Contains(slotValueStop, w.lower) || slices.Contains(slotNotNames, w.lower) || f.isReserved(w.start, w.end) || f.paramWord(w.lower) || f.inSecret(w.start, w.end) {
				continue
			}
			ends := j+1 == len(f.words) || strings.ContainsAny(f.text[w.end:f.words[j+1].start], ",;:.!?") ||
				slices.Contains(slotValueStop, f.words[j+1].lower)
			if ends {
				f.add(i, w.text, w.start, w.end, scoreFilter)
			}
		}
	}
}

// paramWord reports whether w is a word of a parameter's name, title or
// description.
func (f *slotFinder) paramWord(w string) bool {
	return slices.ContainsFunc(f.params, func(p slotParam) bool {
		return slices.Contains(splitWords(p.name+" "+p.prop.Title+" "+p.prop.Description), w)
	})
}

// sortedBefore are the words before a preposition that make "by the
// author" an order, not a filter: "sorted by author".
var sortedBefore = []string{"sort", "sorted", "order", "ordered", "group", "grouped", "rank", "ranked", "arrange", "arranged"}

// statesConstraint reports whether text states a filter that parameter p
// takes ("by the author …", "whose author is …", "with label …"): its
// name after a preposition, and a word after it that is no day or
// pronoun ("in the city today" states none). When slot filling found
// no value for such an optional parameter, the plan asks for it rather
// than run the tool without the filter.
func statesConstraint(text string, p slotParam) bool {
	if !p.prop.is("string") || len(p.keys) == 0 {
		return false
	}
	for _, key := range p.keys {
		re := mustCompileCached(`(?i)(?:^|\s)(?:(\S+)\s+)?(?:` + filterPrepositions + `)\s+(?:(?:the|a|an|its|their)\s+)?` + regexp.QuoteMeta(key) + `(?:\s+(?:is|=|:)|\s*[:=])?\s+(\S+)`)
		for _, m := range re.FindAllStringSubmatch(text, -1) {
			next := strings.ToLower(strings.TrimRight(strings.TrimLeft(m[2], slotTrimLeft), slotTrimRight))
			if slices.Contains(sortedBefore, strings.ToLower(m[1])) || next == "" || slices.Contains([]string{"and", "or", "then"}, next) || slices.Contains(slotNotNames, next) {
				continue
			}
			return true
		}
	}
	return false
}
