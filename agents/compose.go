package agents

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/internal/storedform"
)

// This file composes a parameter's value from parts the request gives,
// when the parameter shows the value's shape (see shape.go): "currency
// pair such as USD/EUR" takes "USD/EUR" from "Convert 100 USD to EUR";
// "repository in owner/repo form" takes "golang/go" from "the owner golang
// and the repo go"; "date as YYYY-MM-DD" takes "2024-03-05" from "March 5,
// 2024".
//
// The contract, for slot filling and for a repair's mapping alike:
//   - Every part is text of the request, found as the example's part is
//     (a currency code where the example has one, a country code where it
//     has one, the value after the part's name — "owner golang" — where
//     the example names the part), and the result has the example's shape.
//   - Parts of one class are taken in the order of the request, except
//     that a part after "from" goes first and one after "to" or "into"
//     last: "to EUR from USD" is USD/EUR.
//   - When the request gives fewer parts than the shape has, or more (two
//     pairs of codes: which one?), nothing is composed, and the user is
//     asked for the value.
//   - A date is composed only from a day the request states whole (a
//     month, a day and a year); "next Friday", "tomorrow" and "March 5"
//     are not resolved, and the user is asked.
//   - The composed value says where it came from: "pair = 'USD/EUR'
//     composed from 'USD' and 'EUR' in the request".

// composedPart is a part of the request that a composed value takes.
type composedPart struct {
	text       string // as the value takes it (a code upper-cased)
	start, end int
	order      int // -1: after "from", so first; 1: after "to", so last
}

// findComposed proposes for params[i] the values composed from the
// request's parts, for each shape of several parts the parameter shows,
// and the request's words that have such a shape already ("the pair
// USD/EUR"), or the shape of its example URL, email address or path.
func (f *slotFinder) findComposed(i int) {
	p := f.params[i]
	shapes := p.shape.wholeWordShapes()
	if p.kind == slotDate && !slices.ContainsFunc(shapes, func(es exampleShape) bool { return es.date != "" }) {
		shapes = append(shapes, exampleShape{example: "YYYY-MM-DD", date: "2006-01-02", re: isoDateWhole, what: "a date written YYYY-MM-DD"})
	}
	for _, es := range shapes {
		for j, w := range f.words {
			if es.fits(w.text) && !f.isReservedOther(w.start, w.end, es) && !f.namesWhatIsAsked(j) {
				f.addWithNote(i, w.text, w.start, w.end, scoreExact-j, nil, "")
			}
		}
		if es.date != "" {
			f.composeDate(i, es)
			continue
		}
		if !es.composite() {
			continue
		}
		parts, ok := f.composeParts(es)
		if !ok {
			continue
		}
		var value strings.Builder
		var spans [][2]int
		var quoted []string
		for k, part := range parts {
			if k > 0 {
				value.WriteString(es.seps[k-1])
			}
			value.WriteString(part.text)
			spans = append(spans, [2]int{part.start, part.end})
			quoted = append(quoted, "'"+f.text[part.start:part.end]+"'")
		}
		v := value.String()
		if !es.fits(v) {
			continue
		}
		note := fmt.Sprintf("%s = '%s' composed from %s in the request", p.name, v, joinAnd(quoted))
		f.addWithNote(i, v, spans[0][0], spans[len(spans)-1][1], scoreAmount, spans, note)
	}
}

// isReservedOther reports whether [start, end) is within a URL, email,
// path or date that the shape itself is not: a date template's value is
// a date span, and must not be refused for being one.
func (f *slotFinder) isReservedOther(start, end int, es exampleShape) bool {
	if es.date != "" || es.what == shapeURL || es.what == shapeEmail || es.what == shapePath {
		return false
	}
	return f.isReserved(start, end)
}

var isoDateWhole = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}$`)

// composeParts finds in the request one part for each of the example's
// parts; false when the request gives too few, or too many to tell.
func (f *slotFinder) composeParts(es exampleShape) ([]composedPart, bool) {
	out := make([]composedPart, len(es.parts))
	// Parts of one kind (all currency codes, all country codes, all
	// capitals) are the request's words of that kind, assigned in order.
	type group struct {
		find    func(j int) (string, bool)
		indexes []int // the example's parts of this kind
	}
	var groups []*group
	byKind := map[string]*group{}
	for k, part := range es.parts {
		var key string
		var find func(j int) (string, bool)
		switch {
		case part.class == partCapitals && slices.Contains(isoCurrencies, part.literal):
			key, find = "currency", f.currencyAt
		case part.class == partCapitals && slices.Contains(isoCountries, part.literal):
			key, find = "country", f.countryAt
		case part.class == partCapitals:
			n := part.n
			key, find = fmt.Sprintf("caps%d", n), func(j int) (string, bool) {
				w := f.words[j]
				return w.text, len(w.text) == n && slotCapsCode.MatchString(w.text) && !slices.Contains(isoCurrencies, w.text)
			}
		case part.class == partName:
			v, ok := f.namedPart(part.literal, es)
			if !ok {
				return nil, false
			}
			out[k] = v
			continue
		default:
			return nil, false // digits: which number is which cannot be told from an example
		}
		if byKind[key] == nil {
			byKind[key] = &group{find: find}
			groups = append(groups, byKind[key])
		}
		byKind[key].indexes = append(byKind[key].indexes, k)
	}
	for _, g := range groups {
		var found []composedPart
		for j, w := range f.words {
			if f.isReserved(w.start, w.end) {
				continue
			}
			v, ok := g.find(j)
			if !ok || slices.ContainsFunc(found, func(c composedPart) bool { return c.text == v }) {
				continue
			}
			order := 0
			switch f.wordBefore(w.start) {
			case "from":
				order = -1
			case "to", "into":
				order = 1
			}
			found = append(found, composedPart{text: v, start: w.start, end: w.end, order: order})
		}
		if len(found) != len(g.indexes) {
			return nil, false // too few: ask; too many: which?
		}
		slices.SortStableFunc(found, func(a, b composedPart) int { return a.order - b.order })
		for n, k := range g.indexes {
			out[k] = found[n]
		}
	}
	// Two parts never come from one span of the request.
	for a := range out {
		for b := a + 1; b < len(out); b++ {
			if out[a].start < out[b].end && out[b].start < out[a].end {
				return nil, false
			}
		}
	}
	return out, true
}

// Abbreviations that name a part as its example does: "repo" in the
// example, "repository" in the request.
var partSynonyms = map[string][]string{
	"repo": {"repository"}, "org": {"organization", "organisation"}, "dir": {"directory", "folder"},
	"env": {"environment"}, "ns": {"namespace"}, "db": {"database"}, "user": {"username"},
}

// namedPart is the value the request gives after a part's name ("owner
// golang", "repo: go", "the repository named go"), one word of the
// characters the shape allows. None when the request names the part
// twice with two values.
func (f *slotFinder) namedPart(name string, es exampleShape) (composedPart, bool) {
	names := append([]string{strings.ToLower(name)}, partSynonyms[strings.ToLower(name)]...)
	var found []composedPart
	for _, n := range names {
		re := mustCompileCached(`(?i)(?:^|[^\p{L}\p{N}_])` + regexp.QuoteMeta(n) + `(?:\s*[:=]\s*|\s+(?:(?:is|named|called)\s+)?)`)
		for _, m := range re.FindAllStringIndex(f.text, -1) {
			j := f.wordIndexAt(m[1])
			if j >= len(f.words) || f.words[j].start != m[1] {
				continue
			}
			w := f.words[j]
			if slices.Contains(slotValueStop, w.lower) || strings.ContainsAny(w.text, strings.Join(es.seps, "")) ||
				!strings.ContainsFunc(w.text, func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }) {
				continue
			}
			if !slices.ContainsFunc(found, func(c composedPart) bool { return c.text == w.text }) {
				found = append(found, composedPart{text: w.text, start: w.start, end: w.end})
			}
		}
	}
	if len(found) != 1 {
		return composedPart{}, false
	}
	return found[0], true
}

// Dates the request states whole: "March 5, 2024", "5 March 2024", "5th
// of March 2024", and ISO dates. No other is resolved.
var (
	wholeDateMonthFirst = regexp.MustCompile(`(?i)\b(jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.?\s+(\d{1,2})(?:st|nd|rd|th)?,?\s+(\d{4})\b`)
	wholeDateDayFirst   = regexp.MustCompile(`(?i)\b(\d{1,2})(?:st|nd|rd|th)?\s+(?:of\s+)?(jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.?,?\s+(\d{4})\b`)
	wholeDateISO        = regexp.MustCompile(`\b(\d{4})-(\d{2})-(\d{2})\b`)
	monthAbbrevs        = []string{"jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"}
)

// composeDate proposes the days the request states whole, written as the
// shape's layout says; a day that does not exist (February 30) is none.
func (f *slotFinder) composeDate(i int, es exampleShape) {
	p := f.params[i]
	add := func(start, end int, year, month, day string) {
		m := slices.Index(monthAbbrevs, strings.ToLower(month)[:min(3, len(month))]) + 1
		if m == 0 {
			if _, err := fmt.Sscan(month, &m); err != nil {
				return
			}
		}
		var y, d int
		if _, err := fmt.Sscan(year+" "+day, &y, &d); err != nil {
			return
		}
		t := time.Date(y, time.Month(m), d, 0, 0, 0, 0, time.UTC)
		if t.Day() != d || int(t.Month()) != m {
			return // not a day of the calendar
		}
		v := t.Format(es.date)
		said := f.text[start:end]
		if v == said {
			f.addWithNote(i, v, start, end, scoreExact, nil, "")
			return
		}
		f.addWithNote(i, v, start, end, scoreExact, nil, fmt.Sprintf("%s = '%s' resolved from '%s' in the request", p.name, v, said))
	}
	for _, m := range wholeDateMonthFirst.FindAllStringSubmatchIndex(f.text, -1) {
		add(m[0], m[1], f.text[m[6]:m[7]], f.text[m[2]:m[3]], f.text[m[4]:m[5]])
	}
	for _, m := range wholeDateDayFirst.FindAllStringSubmatchIndex(f.text, -1) {
		add(m[0], m[1], f.text[m[6]:m[7]], f.text[m[4]:m[5]], f.text[m[2]:m[3]])
	}
	if es.date != "2006-01-02" {
		for _, m := range wholeDateISO.FindAllStringSubmatchIndex(f.text, -1) {
			add(m[0], m[1], f.text[m[2]:m[3]], f.text[m[4]:m[5]], f.text[m[6]:m[7]])
		}
	}
}

// moveProblem says why the failed call's value v, of old parameter o, may
// not move to parameter p of a replacement: "" when it may. A literal
// value must have p's shape; a reference ({{inputs.from}}), whose value is
// known at run time only, moves only between parameters that show the
// same shape, so that a "from" currency never becomes a "pair".
func moveProblem(p, o slotParam, v json.RawMessage) string {
	var value any
	dec := json.NewDecoder(bytes.NewReader(v))
	dec.UseNumber()
	if dec.Decode(&value) != nil {
		return ""
	}
	if s, ok := value.(string); ok && strings.Contains(s, "{{") {
		if p.shape.key() != o.shape.key() {
			return fmt.Sprintf("its value, known only at run time, may not have the shape %s shows (%s)", p.name, p.shape.key())
		}
		return ""
	}
	return p.shape.problem(value)
}

// composedOf names the failed call's arguments, not used yet, whose
// values are the parts of a composed value, one each; nil unless every
// part is one.
func composedOf(parts []string, oldNames []string, oldArgs map[string]json.RawMessage, used map[string]bool) []string {
	if len(parts) < 2 {
		return nil
	}
	var from []string
	for _, part := range parts {
		i := slices.IndexFunc(oldNames, func(n string) bool {
			var s string
			return !used[n] && !slices.Contains(from, n) && json.Unmarshal(oldArgs[n], &s) == nil && strings.EqualFold(s, part)
		})
		if i < 0 {
			return nil
		}
		from = append(from, oldNames[i])
	}
	return from
}

// eventValuesFilled is the type of the history event that says, for a
// step, which values were taken from the request and how: "pair =
// 'USD/EUR' composed from 'USD' and 'EUR' in the request". A repaired
// step says so in its step_repaired event.
const eventValuesFilled = "values_filled"

// addValuesFilledEvents records in t's history, for each step of plan
// whose description notes the values taken from the request (see
// describeStep), where they came from, so that the client and the console
// show it beside the step's result.
func addValuesFilledEvents(t *agentsmcp.Task, plan *agentsmcp.Plan, at time.Time) {
	for _, s := range plan.Steps {
		m := takenFromRequestNote.FindStringSubmatch(s.Description)
		if m == nil {
			continue
		}
		storedform.AddEvent(t, agentsmcp.TaskEvent{At: at, Type: eventValuesFilled, StepID: s.ID, Message: "taken from the request: " + m[1]})
	}
}

// takenFromRequestNote is describeStep's note, and what it lists.
var takenFromRequestNote = regexp.MustCompile(`\(taken from the request: (.*)\)$`)

// composedFromRequest reports whether a literal argument of a past plan
// was composed from its request (see reuse): a value of several parts, each
// a word of request ("USD/EUR" of "Convert 100 USD to EUR"), or a value
// the step's description notes as taken from it. Such a value belongs to
// that request, and is never carried over to another.
func composedFromRequest(name string, v json.RawMessage, request, description string) bool {
	if m := takenFromRequestNote.FindStringSubmatch(description); m != nil {
		for _, note := range strings.Split(m[1], "; ") {
			if strings.HasPrefix(note, name+" = ") {
				return true
			}
		}
	}
	var s string
	if json.Unmarshal(v, &s) != nil {
		return false
	}
	parts := shapeSeparators.Split(s, -1)
	if len(parts) < 2 {
		return false
	}
	words := splitWords(request)
	for _, p := range parts {
		if p != "" && !slices.Contains(words, strings.ToLower(p)) {
			return false
		}
	}
	return true
}
