package planlang

import (
	"bytes"
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	agentsmcp "github.com/agents-mcp/agents-mcp"
)

// This file implements the reference language of plan step arguments: a
// JSON string value of a step's arguments may refer to the output of an
// earlier step or to a task input, and the executor replaces the references
// with the values they name before it calls the tool.
//
//	{{steps.<step id>.output<path>}}   the output of a step (a JSON value)
//	{{inputs.<name><path>}}            a value the user supplied
//
// A path is zero or more of .field, [N] and ["any key"]: a field matches
// ^[A-Za-z_][A-Za-z0-9_-]*$, a key in brackets is a JSON string literal (for
// keys with dots, spaces or brackets), and N is an array index, negative N
// counting from the end ([-1] is the last element) because "the last result"
// is what plans most often want and the length of an output is not known
// when the plan is made. Spaces, tabs and newlines are allowed just inside
// the braces, nowhere else.
//
// Only "{{" followed, after optional spaces, by "steps." or "inputs." starts
// a reference, so that arguments can hold other double-brace text (a
// Mustache template, say) as is; a reference that starts so but is
// malformed is an error rather than literal text, since leaving it would
// send the tool a placeholder instead of a value. Object keys are never
// templated: they are the tool's parameter names.
//
// A string that is exactly one reference (nothing before or after the
// braces) is replaced by the referenced value itself, whatever its type, so
// that an array output can feed an array parameter. References embedded in
// other text are replaced by the text of their value: a string's own text,
// any other value's compact JSON; the result stays a string.
//
// Resolution works on the bytes: everything but the strings holding
// references is copied byte for byte, so numbers keep their exact text
// (12345678901234567890 is never rounded through float64) and objects keep
// the order of their keys, both in the arguments and in the values copied
// from outputs.

// RefKind says what a reference refers to.
type RefKind int

const (
	RefStep  RefKind = iota + 1 // the output of a step: {{steps.<id>.output...}}
	RefInput                    // a task input: {{inputs.<name>...}}
)

// InputNamePattern is what the name of a task input looks like in a
// reference; it is the first path element of {{inputs.<name>}}.
var InputNamePattern = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_-]{0,63}$`)

// refFieldPattern is a field that may follow a dot; any other key needs
// brackets.
var refFieldPattern = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_-]*$`)

// MaxResolvedArgumentsBytes bounds the arguments ResolveRefs produces: a
// reference to a large output repeated many times would otherwise let a
// plan of a few bytes take any amount of memory.
const MaxResolvedArgumentsBytes = agentsmcp.MaxStepArgumentsBytes * 16

// PathElem is one step of a reference's path: a field of an object when
// IsIndex is false, an element of an array otherwise (Index < 0 counts from
// the end).
type PathElem struct {
	Field   string
	Index   int
	IsIndex bool
}

// String returns the element as it would be written in a reference:
// .field when the field allows it, ["key"] otherwise, [N] for an index.
func (e PathElem) String() string {
	if e.IsIndex {
		return "[" + strconv.Itoa(e.Index) + "]"
	}
	if refFieldPattern.MatchString(e.Field) {
		return "." + e.Field
	}
	return "[" + quoteJSON(e.Field) + "]"
}

// Ref is one reference found in a step's arguments.
type Ref struct {
	Kind RefKind
	// Name is the step id (RefStep) or the input name (RefInput).
	Name string
	// Path goes from the step's output or the input into the value.
	Path []PathElem
	// Text is the reference as written, braces and spaces included.
	Text string
	// Pointer is the RFC 6901 JSON pointer, within the arguments, of the
	// string value that holds the reference; several references share it
	// when they are embedded in one string.
	Pointer string
	// Whole is true when the string is exactly this reference, so that it
	// resolves to the referenced value, of any type, rather than to text.
	Whole bool
}

// String returns the reference in canonical form, without braces:
// steps.<id>.output<path> or inputs.<name><path>. Error messages name
// references and the place a path failed in this form.
func (r Ref) String() string {
	return r.prefix(len(r.Path))
}

// prefix returns the canonical form of r cut after n path elements.
func (r Ref) prefix(n int) string {
	var b strings.Builder
	if r.Kind == RefStep {
		b.WriteString("steps.")
		b.WriteString(r.Name)
		b.WriteString(".output")
	} else {
		b.WriteString("inputs")
		b.WriteString(PathElem{Field: r.Name}.String())
	}
	for _, e := range r.Path[:n] {
		b.WriteString(e.String())
	}
	return b.String()
}

// RefValues are the values references resolve against.
type RefValues struct {
	// Steps maps a step id to the step's output, a JSON value; a step that
	// is absent, or maps to an empty output, has no output to refer to
	// (it has not run, or it failed), which is an error, not null.
	Steps map[string]json.RawMessage
	// Inputs is the task inputs object; empty when the user supplied none.
	Inputs json.RawMessage
}

// Lookup returns the value r refers to, as compact JSON. Errors are
// EINVALID and name where the path failed, as in
// "steps.list.output.files[3]: index 3 out of range (len 2)".
func (r Ref) Lookup(v RefValues) (json.RawMessage, error) {
	root, err := r.root(v)
	if err != nil {
		return nil, err
	}
	if !json.Valid(root) {
		return nil, r.invalidRoot()
	}
	raw, err := r.walk(root)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		return nil, agentsmcp.Errorf(agentsmcp.EINVALID, "%s: %v", r, err)
	}
	return buf.Bytes(), nil
}

// root returns the document r's path starts from, not yet checked to be
// valid JSON.
func (r Ref) root(v RefValues) (json.RawMessage, error) {
	if r.Kind == RefStep {
		out := v.Steps[r.Name]
		if len(trimWS(out)) == 0 {
			return nil, agentsmcp.Errorf(agentsmcp.EINVALID, "%s: step %q has no output", r.prefix(0), r.Name)
		}
		return out, nil
	}
	if len(trimWS(v.Inputs)) == 0 {
		return nil, agentsmcp.Errorf(agentsmcp.EINVALID, "%s: no input %q was supplied", r.prefix(0), r.Name)
	}
	return v.Inputs, nil
}

func (r Ref) invalidRoot() error {
	if r.Kind == RefStep {
		return agentsmcp.Errorf(agentsmcp.EINVALID, "%s: the output of step %q is not valid JSON", r.prefix(0), r.Name)
	}
	return agentsmcp.Errorf(agentsmcp.EINVALID, "%s: the task inputs are not valid JSON", r.prefix(0))
}

// walk follows r's path from root, which must be valid JSON, and returns
// the value it reaches as a slice of root.
func (r Ref) walk(root []byte) ([]byte, error) {
	cur := trimWS(root)
	if r.Kind == RefInput {
		if cur[0] != '{' {
			return nil, agentsmcp.Errorf(agentsmcp.EINVALID, "%s: the task inputs are %s, not an object", r.prefix(0), kindOf(cur))
		}
		val, ok := ObjectField(cur, r.Name)
		if !ok {
			return nil, agentsmcp.Errorf(agentsmcp.EINVALID, "%s: no input %q was supplied", r.prefix(0), r.Name)
		}
		cur = val
	}
	for i, e := range r.Path {
		at := r.prefix(i + 1)
		if !e.IsIndex {
			if cur[0] != '{' {
				return nil, agentsmcp.Errorf(agentsmcp.EINVALID, "%s: cannot take field %q of %s", at, e.Field, kindOf(cur))
			}
			val, ok := ObjectField(cur, e.Field)
			if !ok {
				return nil, agentsmcp.Errorf(agentsmcp.EINVALID, "%s: field %q is missing", at, e.Field)
			}
			cur = val
			continue
		}
		if cur[0] != '[' {
			return nil, agentsmcp.Errorf(agentsmcp.EINVALID, "%s: cannot index %s", at, kindOf(cur))
		}
		elems := arrayElems(cur)
		n := e.Index
		if n < 0 {
			n += len(elems)
		}
		if n < 0 || n >= len(elems) {
			return nil, agentsmcp.Errorf(agentsmcp.EINVALID, "%s: index %d out of range (len %d)", at, e.Index, len(elems))
		}
		cur = elems[n]
	}
	return cur, nil
}

// FindRefs returns every reference in args, in document order. Empty args
// hold none; args that are not a JSON object, or hold a malformed
// reference, are EINVALID. It checks the syntax only: whether the steps and
// inputs named exist is for the caller, who knows the plan.
func FindRefs(args json.RawMessage) ([]Ref, error) {
	var refs []Ref
	err := eachRefString(args, func(_ refString, found []Ref) error {
		refs = append(refs, found...)
		return nil
	})
	return refs, err
}

// ArgumentsForValidation prepares arguments that still hold references for
// validation against a tool's input schema, before any step has run. It
// returns the arguments to validate (args itself; "{}" for empty args, since
// tools take an object) and, for each string value holding references, its
// RFC 6901 pointer mapped to whether the string is a whole-value reference.
//
// The caller validates doc and then drops every error whose instance
// location is a key of refs: a whole-value reference (true) will become a
// value of any type, so no error about it means anything; an embedded one
// (false) stays a string, so a type error there is real and may be kept,
// but its text is not known yet, so pattern, format, enum and length errors
// are not. Errors elsewhere, "required" among them, stand: the key holding
// a reference is present either way. With santhosh-tekuri/jsonschema, the
// pointer of an error is its InstanceLocation tokens, each escaped (~ as
// ~0, / as ~1) and prefixed with "/".
func ArgumentsForValidation(args json.RawMessage) (doc json.RawMessage, refs map[string]bool, err error) {
	refs = make(map[string]bool)
	err = eachRefString(args, func(s refString, found []Ref) error {
		refs[s.pointer] = found[0].Whole
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	if len(trimWS(args)) == 0 {
		return json.RawMessage("{}"), refs, nil
	}
	return args, refs, nil
}

// ResolveRefs returns args with every reference replaced by the value it
// names in v (see the top of this file). Everything else is kept byte for
// byte; args without references come back as they are. Errors are EINVALID:
// args not a JSON object, a malformed reference, a reference that names
// nothing, or a result over MaxResolvedArgumentsBytes.
func ResolveRefs(args json.RawMessage, v RefValues) (json.RawMessage, error) {
	res := resolver{values: v, valid: make(map[string]bool)}
	var out []byte
	last, changed := 0, false
	err := eachRefString(args, func(s refString, found []Ref) error {
		changed = true
		out = append(out, args[last:s.start]...)
		last = s.end
		var err error
		if out, err = res.appendString(out, s, found); err != nil {
			return err
		}
		if len(out) > MaxResolvedArgumentsBytes {
			return tooLarge()
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if !changed {
		if len(args) > MaxResolvedArgumentsBytes {
			return nil, tooLarge()
		}
		return args, nil
	}
	out = append(out, args[last:]...)
	if len(out) > MaxResolvedArgumentsBytes {
		return nil, tooLarge()
	}
	return out, nil
}

func tooLarge() error {
	return agentsmcp.Errorf(agentsmcp.EINVALID, "resolved arguments would be over %d bytes", MaxResolvedArgumentsBytes)
}

// resolver looks references up, checking each output once however many
// references name it.
type resolver struct {
	values RefValues
	valid  map[string]bool // RefStep names, and "" for the inputs, known to be valid JSON
}

func (res *resolver) lookup(r Ref) ([]byte, error) {
	root, err := r.root(res.values)
	if err != nil {
		return nil, err
	}
	key := ""
	if r.Kind == RefStep {
		key = r.Name
	}
	if !res.valid[key] {
		if !json.Valid(root) {
			return nil, r.invalidRoot()
		}
		res.valid[key] = true
	}
	return r.walk(root)
}

// appendString appends to out the JSON value that replaces the string s,
// which holds the references found.
func (res *resolver) appendString(out []byte, s refString, found []Ref) ([]byte, error) {
	fail := func(r Ref, err error) error {
		return agentsmcp.Errorf(agentsmcp.EINVALID, "arguments at %s: reference %q: %s", s.pointer, r.Text, agentsmcp.ErrorMessage(err))
	}
	if found[0].Whole {
		raw, err := res.lookup(found[0])
		if err != nil {
			return nil, fail(found[0], err)
		}
		if len(raw) > MaxResolvedArgumentsBytes {
			return nil, tooLarge()
		}
		buf := bytes.NewBuffer(out)
		if err := json.Compact(buf, raw); err != nil {
			return nil, fail(found[0], err)
		}
		return buf.Bytes(), nil
	}
	var text strings.Builder
	last := 0
	for i, r := range found {
		text.WriteString(s.text[last:s.spans[i][0]])
		last = s.spans[i][1]
		raw, err := res.lookup(r)
		if err != nil {
			return nil, fail(r, err)
		}
		if text.Len()+len(raw) > MaxResolvedArgumentsBytes {
			return nil, tooLarge()
		}
		if raw[0] == '"' {
			var str string
			if err := json.Unmarshal(raw, &str); err != nil {
				return nil, fail(r, err)
			}
			text.WriteString(str)
		} else {
			var buf bytes.Buffer
			if err := json.Compact(&buf, raw); err != nil {
				return nil, fail(r, err)
			}
			text.Write(buf.Bytes())
		}
	}
	text.WriteString(s.text[last:])
	return append(out, quoteJSON(text.String())...), nil
}

// quoteJSON returns s as a JSON string literal, leaving <, > and & as they
// are (they are not HTML here, and tools read the arguments).
func quoteJSON(s string) string {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	return strings.TrimSuffix(buf.String(), "\n")
}

// refString is a string value of the arguments that holds references.
type refString struct {
	start, end int      // of the string literal, quotes included, in the arguments
	pointer    string   // RFC 6901, within the arguments
	text       string   // decoded
	spans      [][2]int // of each reference within text
}

// eachRefString calls fn, in document order, for every string value of
// args that holds references, with the references it holds.
func eachRefString(args json.RawMessage, fn func(s refString, found []Ref) error) error {
	trimmed := trimWS(args)
	if len(trimmed) == 0 {
		return nil
	}
	if !json.Valid(args) {
		return agentsmcp.Errorf(agentsmcp.EINVALID, "arguments are not valid JSON")
	}
	if trimmed[0] != '{' {
		return agentsmcp.Errorf(agentsmcp.EINVALID, "arguments are %s, not a JSON object", kindOf(trimmed))
	}
	// A single pass over the tokens with a stack of the enclosing
	// containers, which gives each string value its pointer without
	// recursion; the input is valid JSON, which keeps the scan simple.
	type frame struct {
		object  bool
		wantKey bool   // object: the next string is a key
		key     []byte // object: the key of the current member, a JSON string literal
		index   int    // array: the index of the current element
	}
	var stack []frame
	pointer := func() string {
		var b strings.Builder
		for _, f := range stack {
			b.WriteByte('/')
			if f.object {
				b.WriteString(escapePointer(decodeString(f.key)))
			} else {
				b.WriteString(strconv.Itoa(f.index))
			}
		}
		return b.String()
	}
	for i := 0; i < len(args); {
		switch c := args[i]; c {
		case ' ', '\t', '\r', '\n', ':':
			i++
		case '{', '[':
			stack = append(stack, frame{object: c == '{', wantKey: true})
			i++
		case '}', ']':
			stack = stack[:len(stack)-1]
			i++
		case ',':
			if top := &stack[len(stack)-1]; top.object {
				top.wantKey = true
			} else {
				top.index++
			}
			i++
		case '"':
			end := skipString(args, i)
			raw := args[i:end]
			if top := &stack[len(stack)-1]; top.object && top.wantKey {
				top.wantKey = false
				top.key = raw // decoded only for the pointer of a reference
				i = end
				continue
			}
			i = end
			if !bytes.Contains(raw, []byte("{")) && !bytes.Contains(raw, []byte(`\u`)) {
				continue // cannot hold "{{"
			}
			text := decodeString(raw)
			found, spans, err := parseRefs(text)
			if err != nil {
				return agentsmcp.Errorf(agentsmcp.EINVALID, "arguments at %s: %s", pointer(), agentsmcp.ErrorMessage(err))
			}
			if len(found) == 0 {
				continue
			}
			s := refString{start: i - len(raw), end: end, pointer: pointer(), text: text, spans: spans}
			for k := range found {
				found[k].Pointer = s.pointer
			}
			if err := fn(s, found); err != nil {
				return err
			}
		default: // a number, true, false or null
			for i < len(args) && !isDelim(args[i]) {
				i++
			}
		}
	}
	return nil
}

// parseRefs returns the references in text and their spans. A reference
// that starts well ("{{steps." or "{{inputs.") but does not go on well is
// an error naming it.
func parseRefs(text string) ([]Ref, [][2]int, error) {
	var refs []Ref
	var spans [][2]int
	for i := 0; ; {
		k := strings.Index(text[i:], "{{")
		if k < 0 {
			break
		}
		start := i + k
		j := skipSpaces(text, start+2)
		var kind RefKind
		switch {
		case strings.HasPrefix(text[j:], "steps."):
			kind, j = RefStep, j+len("steps.")
		case strings.HasPrefix(text[j:], "inputs."):
			kind, j = RefInput, j+len("inputs.")
		default:
			i = start + 1 // literal text; "{{{steps..." may still start one at the next brace
			continue
		}
		r, end, problem := parseRef(text, kind, j)
		if problem != "" {
			return nil, nil, agentsmcp.Errorf(agentsmcp.EINVALID, "malformed reference %q: %s", snippet(text, start), problem)
		}
		r.Text = text[start:end]
		refs = append(refs, r)
		spans = append(spans, [2]int{start, end})
		i = end
	}
	if len(refs) == 1 && spans[0] == [2]int{0, len(text)} {
		refs[0].Whole = true
	}
	return refs, spans, nil
}

// parseRef parses a reference of the given kind from text[j:], just after
// "steps." or "inputs.", up to and including the closing braces. It returns
// where the reference ends, or a problem.
func parseRef(text string, kind RefKind, j int) (r Ref, end int, problem string) {
	r.Kind = kind
	name := text[j : j+identLen(text[j:])]
	j += len(name)
	switch {
	case kind == RefStep && name == "":
		return r, 0, `a step id must follow "steps."`
	case kind == RefStep && !agentsmcp.IsStepID(name):
		return r, 0, "step id " + strconv.Quote(name) + " does not match " + agentsmcp.StepIDPattern.String()
	case kind == RefInput && name == "":
		return r, 0, `an input name must follow "inputs."`
	case kind == RefInput && !InputNamePattern.MatchString(name):
		return r, 0, "input name " + strconv.Quote(name) + " does not match " + InputNamePattern.String()
	}
	r.Name = name
	if kind == RefStep {
		if !strings.HasPrefix(text[j:], ".output") || identLen(text[j+len(".output"):]) > 0 {
			return r, 0, `".output" must follow the step id`
		}
		j += len(".output")
	}
	for j < len(text) && (text[j] == '.' || text[j] == '[') {
		var e PathElem
		if text[j] == '.' {
			e.Field = text[j+1 : j+1+identLen(text[j+1:])]
			j += 1 + len(e.Field)
			if !refFieldPattern.MatchString(e.Field) {
				if e.Field == "" {
					return r, 0, `a field name must follow "."; use ["key"] for other keys`
				}
				return r, 0, "field " + strconv.Quote(e.Field) + ` does not match ` + refFieldPattern.String() + `; use [N] for an index, ["key"] for other keys`
			}
		} else {
			var problem string
			if e, j, problem = parseBracket(text, j+1); problem != "" {
				return r, 0, problem
			}
		}
		r.Path = append(r.Path, e)
	}
	j = skipSpaces(text, j)
	switch {
	case strings.HasPrefix(text[j:], "}}"):
		return r, j + 2, ""
	case j == len(text):
		return r, 0, `"}}" is missing`
	default:
		return r, 0, "unexpected " + strconv.QuoteRune(firstRune(text[j:])) + `; "}}" must follow the path`
	}
}

// parseBracket parses ["key"] or [N] from text[j:], just after "[".
func parseBracket(text string, j int) (e PathElem, end int, problem string) {
	if strings.HasPrefix(text[j:], `"`) {
		k := j + 1
		for k < len(text) && text[k] != '"' {
			if text[k] == '\\' {
				k++
			}
			k++
		}
		if k >= len(text) {
			return e, 0, "unterminated key in brackets"
		}
		if err := json.Unmarshal([]byte(text[j:k+1]), &e.Field); err != nil {
			return e, 0, "key " + text[j:k+1] + " is not a JSON string"
		}
		j = k + 1
	} else {
		k := j
		if k < len(text) && text[k] == '-' {
			k++
		}
		digits := k
		for k < len(text) && text[k] >= '0' && text[k] <= '9' {
			k++
		}
		num := text[j:k]
		n, err := strconv.Atoi(num)
		switch {
		case k == digits:
			return e, 0, `"[" must be followed by an index or a quoted key`
		case err != nil:
			return e, 0, "index " + num + " is out of range"
		case num == "-0" || (k-digits > 1 && text[digits] == '0'):
			return e, 0, "index " + num + " is not in canonical form"
		}
		e.Index, e.IsIndex = n, true
		j = k
	}
	if !strings.HasPrefix(text[j:], "]") {
		return e, 0, `"]" is missing`
	}
	return e, j + 1, ""
}

// identLen returns the length of the run of [A-Za-z0-9_-] that s starts
// with: names and fields are cut there, then checked against their
// pattern, which makes for errors that quote what was written.
func identLen(s string) int {
	n := 0
	for n < len(s) {
		c := s[n]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			break
		}
		n++
	}
	return n
}

func skipSpaces(s string, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '\r' || s[i] == '\n') {
		i++
	}
	return i
}

func firstRune(s string) rune {
	r, _ := utf8.DecodeRuneInString(s)
	return r
}

// snippet returns the malformed reference that starts at text[start:] for
// an error message: up to the next "}}", at most 80 bytes.
func snippet(text string, start int) string {
	s := text[start:]
	if k := strings.Index(s[2:], "}}"); k >= 0 {
		s = s[:k+4]
	}
	if len(s) > 80 {
		cut := 80
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "…"
	}
	return s
}

// escapePointer escapes a key as an RFC 6901 reference token.
func escapePointer(key string) string {
	return strings.ReplaceAll(strings.ReplaceAll(key, "~", "~0"), "/", "~1")
}

// The helpers below scan JSON that is known to be valid.

// skipString returns the index just past the string literal at data[i].
func skipString(data []byte, i int) int {
	for i++; data[i] != '"'; i++ {
		if data[i] == '\\' {
			i++
		}
	}
	return i + 1
}

// skipValue returns the index just past the value at data[i].
func skipValue(data []byte, i int) int {
	switch data[i] {
	case '"':
		return skipString(data, i)
	case '{', '[':
		depth := 0
		for {
			switch data[i] {
			case '"':
				i = skipString(data, i)
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
			i++
		}
	default:
		for i < len(data) && !isDelim(data[i]) {
			i++
		}
		return i
	}
}

// isDelim reports whether c ends a number or a literal.
func isDelim(c byte) bool {
	switch c {
	case ',', ']', '}', ' ', '\t', '\r', '\n':
		return true
	}
	return false
}

// trimWS trims JSON whitespace, which is narrower than bytes.TrimSpace's.
func trimWS(data []byte) []byte {
	return bytes.Trim(data, " \t\r\n")
}

func skipWS(data []byte, i int) int {
	for i < len(data) && (data[i] == ' ' || data[i] == '\t' || data[i] == '\r' || data[i] == '\n') {
		i++
	}
	return i
}

func decodeString(raw []byte) string {
	var s string
	_ = json.Unmarshal(raw, &s) // raw is a valid string literal
	return s
}

// ObjectField returns the value of key in the JSON object obj, such as
// the arguments ResolveRefs returns; the last one when the key occurs
// twice, as encoding/json would decode it. obj must be a valid JSON object
// with no whitespace before its brace: it is read as it is, not checked.
// val is a slice of obj.
func ObjectField(obj []byte, key string) (val []byte, ok bool) {
	for i := skipWS(obj, 1); obj[i] != '}'; {
		end := skipString(obj, i)
		k := obj[i:end]
		i = skipWS(obj, end) + 1 // past ':'
		i = skipWS(obj, i)
		vend := skipValue(obj, i)
		var match bool
		if bytes.IndexByte(k, '\\') < 0 && utf8.Valid(k) {
			match = string(k[1:len(k)-1]) == key // the common case, without decoding
		} else {
			match = decodeString(k) == key
		}
		if match {
			val, ok = obj[i:vend], true
		}
		i = skipWS(obj, vend)
		if obj[i] == ',' {
			i = skipWS(obj, i+1)
		}
	}
	return val, ok
}

// arrayElems returns the elements of the array arr.
func arrayElems(arr []byte) [][]byte {
	var elems [][]byte
	for i := skipWS(arr, 1); arr[i] != ']'; {
		end := skipValue(arr, i)
		elems = append(elems, arr[i:end])
		i = skipWS(arr, end)
		if arr[i] == ',' {
			i = skipWS(arr, i+1)
		}
	}
	return elems
}

// kindOf names the type of the valid JSON value v, with an article.
func kindOf(v []byte) string {
	switch v[0] {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	default:
		return "a number"
	}
}
