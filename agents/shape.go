package agents

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode"

	agentsmcp "github.com/agents-mcp/agents-mcp"
)

// This file is the shape check of a value against the parameter it would
// fill: what the parameter's schema and words show of the values it takes
// beyond their JSON type. A value that does not have that shape never fills
// the parameter, whoever proposes it: slot filling, a repair's mapping of
// the failed call's values, or a model's plan (see Planner.Check).
//
// A shape comes from the schema (enum, format, pattern, examples) and from
// the examples its description gives ("currency pair such as USD/EUR",
// "date as YYYY-MM-DD", "in owner/repo form", "ISO 4217 code"). An example
// gives a shape only when it has one to give: parts joined by separators
// (USD/EUR: three capitals, "/", three capitals; owner/repo: two names
// joined by "/"), a code in capitals (USD), a date, a URL, an email
// address or a "#name" (a channel: "such as #general"). A plain word ("such as Paris") or a number shows no shape: it
// would refuse "New York". When the parameter gives several examples, a
// value of the shape of any of them fits.

// valueShape is what a parameter shows of the values it takes.
type valueShape struct {
	enum     []any
	format   string         // "date", "date-time", "email", "uri"
	pattern  *regexp.Regexp // the schema's pattern, unanchored as in JSON Schema
	examples []exampleShape // any one fits
	// isoCode is the shape of an ISO code the description names
	// ("ISO 4217": three capitals), "" when none.
	isoCode     *regexp.Regexp
	isoCodeName string
}

// exampleShape is the shape of one example.
type exampleShape struct {
	example string
	re      *regexp.Regexp // anchored
	// parts are the example's segments and seps what joins them
	// (len(seps) == len(parts)-1): USD/EUR is [USD EUR] and ["/"]. Set
	// only for an example of several parts, which a value may be
	// composed into (see compose.go).
	parts []shapePart
	seps  []string
	date  string // a date template, in Go's layout: "2006-01-02"
	what  string // the shape in words, for reasons
}

// What the shapes of an example URL, email address and path are called;
// a word of the request that has one is taken whole (see findComposed).
const (
	shapeURL   = "a URL"
	shapeEmail = "an email address"
	shapePath  = "a path"
	// shapeTag is a channel or topic written "#name", as chat tools show
	// theirs ("the channel, such as #general").
	shapeTag = "a #name"
)

// tagWord is a "#name" word: a channel or a topic, never an issue number
// ("#12" starts with a digit).
var tagWord = regexp.MustCompile(`^#\p{L}[\p{L}\p{N}_.-]*$`)

// partClass is what one segment of an example is.
type partClass int

const (
	partName     partClass = iota // a word standing for a value: owner, repo, Paris
	partCapitals                  // a code in capitals: USD, FR
	partDigits                    // digits
)

// shapePart is one segment of an example.
type shapePart struct {
	class   partClass
	literal string // as the example writes it
	n       int    // its length, for capitals
}

// Phrases of a description that introduce an example, and the forms that
// name one: "such as USD/EUR", "e.g. owner/repo", "in YYYY-MM-DD format".
var (
	exampleIntro    = regexp.MustCompile(`(?i)(?:^|[\s(,;:])(?:such as|e\.g\.,?|eg\.?|for example,?|for instance,?|example:|examples:|like|format:|formatted as|in the form(?: of)?|as in|i\.e\.,?)\s+((?:["'“‘` + "`" + `]?[^\s"'”’,;()` + "`" + `]+["'”’` + "`" + `]?(?:,?\s+(?:or\s+)?)?){1,4})`)
	exampleFormWord = regexp.MustCompile(`(?i)(?:^|\s)(?:in|as|an?|the)\s+["'“‘` + "`" + `]?([^\s"'”’` + "`" + `]+?)["'”’` + "`" + `]?\s+(?:format|form|notation|syntax)\b`)
	exampleQuoted   = regexp.MustCompile("`([^`\\s]+)`")
	exampleToken    = regexp.MustCompile(`[^\s"'“‘”’,;()` + "`" + `]+`)
	dateTemplate    = regexp.MustCompile(`^(?:YYYY|YY|MM|DD)(?:[-/.](?:YYYY|YY|MM|DD)){2}$`)
	isoDateLiteral  = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}$`)
	shapeSeparators = regexp.MustCompile(`[^\p{L}\p{N}_]+`)
	slotCapsCode    = regexp.MustCompile(`^[A-Z]{2,4}$`)
	slotDigits      = regexp.MustCompile(`^\d+$`)
	// Words that read as an example's introduction but are not one.
	exampleNotExamples = []string{"and/or", "either/or", "this", "that", "the", "a", "an", "one", "any", "other", "these", "those"}
)

// shapeOf is the shape a parameter shows: nil when it shows none beyond
// its JSON type.
func shapeOf(sp schemaProperty) *valueShape {
	s := &valueShape{enum: sp.Enum}
	switch strings.ToLower(sp.Format) {
	case "date":
		s.format = "date"
	case "date-time":
		s.format = "date-time"
	case "email", "idn-email":
		s.format = "email"
	case "uri", "url", "iri":
		s.format = "uri"
	}
	if sp.Pattern != "" {
		s.pattern, _ = regexp.Compile(sp.Pattern) // RE2 cannot read every ECMA pattern: those are left to the validator
	}
	var examples []string
	for _, e := range append(slices.Clone(sp.Examples), sp.Example) {
		if v, ok := e.(string); ok {
			examples = append(examples, v)
		}
	}
	examples = append(examples, descriptionExamples(sp.Description+" "+sp.Title)...)
	for _, e := range examples {
		if es, ok := exampleShapeOf(e); ok && !slices.ContainsFunc(s.examples, func(o exampleShape) bool { return o.re.String() == es.re.String() }) {
			s.examples = append(s.examples, es)
		}
	}
	words := splitWords(sp.Description + " " + sp.Title)
	switch {
	case slices.Contains(words, "4217"):
		s.isoCode, s.isoCodeName = regexp.MustCompile(`^[A-Z]{3}$`), "an ISO 4217 code (three capitals)"
	case slices.Contains(words, "3166") && (slices.Contains(words, "alpha3") || strings.Contains(strings.ToLower(sp.Description), "alpha-3")):
		s.isoCode, s.isoCodeName = regexp.MustCompile(`^[A-Z]{3}$`), "an ISO 3166-1 alpha-3 code (three capitals)"
	case slices.Contains(words, "3166"):
		s.isoCode, s.isoCodeName = regexp.MustCompile(`^[A-Z]{2}$`), "an ISO 3166-1 alpha-2 code (two capitals)"
	}
	if s.format == "" && s.pattern == nil && len(s.examples) == 0 && s.isoCode == nil && len(s.enum) == 0 {
		return nil
	}
	return s
}

// descriptionExamples are the examples a description gives: the words
// after "such as", "e.g."…, a form named as in "in owner/repo format",
// a date template (YYYY-MM-DD) and text in backquotes.
func descriptionExamples(desc string) []string {
	var out []string
	addToken := func(t string) {
		t = strings.TrimRight(strings.Trim(t, "\"'“‘”’`"), ".:!?")
		if t != "" && !slices.Contains(exampleNotExamples, strings.ToLower(t)) && !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	for _, m := range exampleIntro.FindAllStringSubmatch(desc, -1) {
		for _, t := range exampleToken.FindAllString(m[1], -1) {
			if !strings.EqualFold(t, "or") {
				addToken(t)
			}
		}
	}
	for _, re := range []*regexp.Regexp{exampleFormWord, exampleQuoted} {
		for _, m := range re.FindAllStringSubmatch(desc, -1) {
			addToken(m[1])
		}
	}
	for _, t := range exampleToken.FindAllString(desc, -1) {
		if t = strings.TrimRight(t, ".:!?"); dateTemplate.MatchString(t) {
			addToken(t)
		}
	}
	return out
}

// exampleShapeOf is the shape example shows, if it shows one (see the
// file's comment).
func exampleShapeOf(example string) (exampleShape, bool) {
	e := strings.TrimSpace(example)
	if e == "" || strings.ContainsFunc(e, unicode.IsSpace) || len(e) > 200 {
		return exampleShape{}, false
	}
	switch {
	case dateTemplate.MatchString(e):
		layout := strings.NewReplacer("YYYY", "2006", "YY", "06", "MM", "01", "DD", "02").Replace(e)
		return exampleShape{example: e, re: regexp.MustCompile(`^` + regexp.QuoteMeta(layout) + `$`), date: layout, what: "a date written " + e}.withDigits(), true
	case isoDateLiteral.MatchString(e):
		return exampleShape{example: e, re: regexp.MustCompile(`^\d{4}-\d{2}-\d{2}$`), date: "2006-01-02", what: "a date written YYYY-MM-DD"}, true
	case urlPattern.FindString(e) == e:
		return exampleShape{example: e, re: regexp.MustCompile(`^https?://[^\s"'<>]+$`), what: shapeURL}, true
	case emailPattern.FindString(e) == e:
		return exampleShape{example: e, re: regexp.MustCompile(`^` + emailPattern.String() + `$`), what: shapeEmail}, true
	case strings.HasPrefix(e, "/") || strings.HasPrefix(e, "./") || strings.HasPrefix(e, "~/"):
		return exampleShape{example: e, re: regexp.MustCompile(`^(?:~|\.{1,2})?/\S*$`), what: shapePath}, true
	case tagWord.MatchString(e):
		return exampleShape{example: e, re: tagWord, what: shapeTag}, true
	case slotCapsCode.MatchString(e):
		return exampleShape{example: e, re: regexp.MustCompile(fmt.Sprintf(`^[A-Z]{%d}$`, len(e))), what: fmt.Sprintf("a code of %d capitals like %s", len(e), e)}, true
	}
	segs := shapeSeparators.Split(e, -1)
	seps := shapeSeparators.FindAllString(e, -1)
	if len(segs) < 2 || segs[0] == "" || segs[len(segs)-1] == "" {
		return exampleShape{}, false // a word, a number, a code, a "#tag"
	}
	es := exampleShape{example: e, seps: seps}
	var re, what strings.Builder
	re.WriteString("^")
	sepChars := regexp.QuoteMeta(strings.Join(slices.Compact(slices.Sorted(slices.Values(seps))), ""))
	for i, seg := range segs {
		if i > 0 {
			re.WriteString(regexp.QuoteMeta(seps[i-1]))
			what.WriteString(" " + seps[i-1] + " ")
		}
		part := shapePart{literal: seg, n: len(seg)}
		switch {
		case slotCapsCode.MatchString(seg):
			part.class = partCapitals
			fmt.Fprintf(&re, `[A-Z]{%d}`, len(seg))
			fmt.Fprintf(&what, "%d capitals", len(seg))
		case slotDigits.MatchString(seg):
			part.class = partDigits
			re.WriteString(`\d+`)
			what.WriteString("digits")
		default:
			part.class = partName
			fmt.Fprintf(&re, `[^\s%s]+`, sepChars)
			what.WriteString(seg)
		}
		es.parts = append(es.parts, part)
	}
	re.WriteString("$")
	es.re = regexp.MustCompile(re.String())
	es.what = what.String()
	return es, true
}

// withDigits makes a date template's pattern accept digits where its
// layout has them.
func (es exampleShape) withDigits() exampleShape {
	var re strings.Builder
	re.WriteString("^")
	for _, r := range es.date {
		if unicode.IsDigit(r) {
			re.WriteString(`\d`)
		} else {
			re.WriteString(regexp.QuoteMeta(string(r)))
		}
	}
	re.WriteString("$")
	es.re = regexp.MustCompile(re.String())
	return es
}

// composite reports whether the shape is of several parts a value may be
// composed from.
func (es exampleShape) composite() bool { return len(es.parts) >= 2 }

// problem says why v does not have the shape s shows, "" when it does (or
// when s is nil). A reference ({{…}}) is not judged: its value is known at
// run time only. Numbers and booleans are judged by the enum alone.
func (s *valueShape) problem(v any) string { return s.check(v, true) }

// check is problem; with strict false, a value is judged against the
// examples' shapes loosely (see fitsLoosely), for a model's plan: an
// example illustrates, and a label selector "app=nginx,tier=web" is one
// although its example is "app=nginx". Enum, format, pattern, ISO codes,
// dates, URLs, email addresses and paths are judged strictly either way.
func (s *valueShape) check(v any, strict bool) string {
	if s == nil {
		return ""
	}
	str, isString := v.(string)
	if isString && strings.Contains(str, "{{") {
		return ""
	}
	if len(s.enum) > 0 {
		if _, ok := enumValue(s.enum, fmt.Sprint(v)); !ok {
			return fmt.Sprintf("%s is not one of its values %s", quoteValue(v), enumList(s.enum))
		}
	}
	if !isString {
		return ""
	}
	switch s.format {
	case "date":
		if _, err := time.Parse("2006-01-02", str); err != nil {
			return fmt.Sprintf("%q is not a date written YYYY-MM-DD", str)
		}
	case "date-time":
		if _, err := time.Parse(time.RFC3339, str); err != nil {
			return fmt.Sprintf("%q is not a date and time (RFC 3339)", str)
		}
	case "email":
		if emailPattern.FindString(str) != str {
			return fmt.Sprintf("%q is not an email address", str)
		}
	case "uri":
		if u, err := url.Parse(str); err != nil || u.Scheme == "" || u.Host == "" && u.Opaque == "" {
			return fmt.Sprintf("%q is not an absolute URL", str)
		}
	}
	if s.pattern != nil && !s.pattern.MatchString(str) {
		return fmt.Sprintf("%q does not match its pattern %s", str, s.pattern)
	}
	if s.isoCode != nil && !s.isoCode.MatchString(str) {
		return fmt.Sprintf("%q is not %s", str, s.isoCodeName)
	}
	if len(s.examples) > 0 && !slices.ContainsFunc(s.examples, func(es exampleShape) bool { return es.fits(str) || !strict && es.fitsLoosely(str) }) {
		var shown []string
		for _, es := range s.examples {
			shown = append(shown, fmt.Sprintf("%s (%s)", es.example, es.what))
		}
		return fmt.Sprintf("%q does not have the shape of its example %s", str, strings.Join(shown, " or "))
	}
	return ""
}

// fits reports whether str has the example's shape; a date must also be
// a day of the calendar.
func (es exampleShape) fits(str string) bool {
	if !es.re.MatchString(str) {
		return false
	}
	if es.date != "" {
		_, err := time.Parse(es.date, str)
		return err == nil
	}
	return true
}

// fitsLoosely reports whether str is of the example's kind without
// having its exact shape: a value of parts holds one of the example's
// separators at least ("USD" is no pair, "status.phase=Running" is a
// selector like "metadata.name=my-pod"); a code in capitals has no
// lower-case letter and no space ("BRK.B" like "AAPL", not "France").
func (es exampleShape) fitsLoosely(str string) bool {
	switch {
	case es.composite() && es.date == "":
		return slices.ContainsFunc(es.seps, func(sep string) bool { return strings.Contains(str, sep) })
	case slotCapsCode.MatchString(es.example):
		return str != "" && !strings.ContainsFunc(str, func(r rune) bool { return unicode.IsLower(r) || unicode.IsSpace(r) })
	case es.what == shapeTag:
		return str != "" && !strings.ContainsFunc(str, unicode.IsSpace) // "general" names the channel too
	}
	return false
}

// wholeWordShapes are the shapes of s that a word of the request may have
// whole, to be taken as it is: shapes of several parts, dates, URLs,
// email addresses, paths and "#name" tags. A code in capitals is not one: the kinds'
// finders (see slots.go) know which capitals are codes.
func (s *valueShape) wholeWordShapes() []exampleShape {
	if s == nil {
		return nil
	}
	var out []exampleShape
	for _, es := range s.examples {
		if es.composite() || es.date != "" || es.what == shapeURL || es.what == shapeEmail || es.what == shapePath || es.what == shapeTag {
			out = append(out, es)
		}
	}
	return out
}

func quoteValue(v any) string {
	if s, ok := v.(string); ok {
		return fmt.Sprintf("%q", s)
	}
	return fmt.Sprint(v)
}

func enumList(enum []any) string {
	b, _ := json.Marshal(enum)
	return string(b)
}

// key is the shape in words, the same for two parameters that show the
// same shape; "" for none.
func (s *valueShape) key() string {
	if s == nil {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s", s.format)
	if len(s.enum) > 0 {
		fmt.Fprintf(&b, " one of %s", enumList(s.enum))
	}
	if s.pattern != nil {
		fmt.Fprintf(&b, " matching %s", s.pattern)
	}
	if s.isoCode != nil {
		b.WriteString(" " + s.isoCodeName)
	}
	for _, es := range s.examples {
		fmt.Fprintf(&b, " like %s (%s)", es.example, es.what)
	}
	return strings.TrimSpace(b.String())
}

// shapeProblems are the problems of step s's literal arguments that do not
// have the shape their parameter (in the tool's input schema) shows, one
// sentence each, for Planner.Check: a model's plan that fills a parameter
// with such a value goes back to the model like any invalid plan. With
// checkSchema false the enum and pattern, which the tool's validator
// checks already, are left to it.
func shapeProblems(s agentsmcp.PlanStep, schema json.RawMessage, checkSchema bool) []string {
	var doc struct {
		Properties map[string]schemaProperty `json:"properties"`
	}
	if json.Unmarshal(schema, &doc) != nil || len(s.Arguments) == 0 {
		return nil
	}
	var args map[string]any
	dec := json.NewDecoder(bytes.NewReader(s.Arguments))
	dec.UseNumber()
	if dec.Decode(&args) != nil {
		return nil // Check reports arguments that are no object
	}
	var problems []string
	for _, name := range slices.Sorted(maps.Keys(args)) {
		sp, ok := doc.Properties[name]
		if !ok {
			continue
		}
		shape := shapeOf(sp)
		if shape != nil && !checkSchema {
			c := *shape
			c.enum, c.pattern = nil, nil
			shape = &c
		}
		if why := shape.check(args[name], false); why != "" {
			problems = append(problems, fmt.Sprintf("step %q (%s) argument /%s: %s; give a value of that shape (compose it from the parts the request gives), or declare an input so that the user is asked for it",
				s.ID, s.Tool, name, why))
		}
	}
	return problems
}

// inputPattern is a JSON Schema pattern (read alike by Go and ECMA-262)
// that only values of one of s's example shapes match, for the plan input
// that asks the user for the value: an answer without the shape is refused
// as the answer to any input that does not satisfy its schema. "" when s
// shows no example shape, or one that a pattern cannot say (a date's day
// of the calendar is checked on filling).
func (s *valueShape) inputPattern() string {
	if s == nil || len(s.examples) == 0 {
		return ""
	}
	var alts []string
	for _, es := range s.examples {
		alts = append(alts, strings.TrimSuffix(strings.TrimPrefix(es.re.String(), "^"), "$"))
	}
	return "^(?:" + strings.Join(alts, "|") + ")$"
}
