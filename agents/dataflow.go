package agents

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"unicode"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/agents/planlang"
	"github.com/agents-mcp/agents-mcp/internal/redact"
)

// This file is the builtin planner's data flow: how a value that the
// request does not give reaches a step from the output of another step,
// rather than from the user.
//
// Three rules, each refusing rather than guessing:
//
//   - Wiring forward ([wireParam]). A required parameter that the sub-goal
//     does not give takes the output of an earlier step the step depends on
//     ("Add 3 and 4, then echo the result"), by the reference form that the
//     executor resolves to a value of the parameter's type: the field of a
//     structured output that the parameter names or means (an email field
//     for an email address), or, when the sub-goal points back at the
//     result ("the result", "it", "that"), the output's one field or its
//     one result-like field, or the whole output of a tool that declares no
//     output schema (its text). Two fields that fit equally, an output of
//     unknown shape, or a type that the value cannot have: no wiring, the
//     user is asked.
//   - Identifiers the request names ([requestIdentifier]). "Delete post 7"
//     and "close issue #12" give a string identifier after the noun of the
//     tool's own name or description, or after "#" or "id"; a number after
//     any other word ("the 3 oldest posts") is none.
//   - Chaining backwards ([Planner.lookupsFor]). A required value that the
//     request does not give and no earlier step provides, but that another
//     tool says it returns ("look up a person … and return their email
//     address") when the request gives every required input of that tool
//     (the person's name), is looked up first: the lookup step is planned
//     before the step, which depends on it and takes its output. The name
//     never fills the address itself: slot filling checks kinds.

// flowSource is an earlier step whose output may feed a later one.
type flowSource struct {
	step string
	tool *ToolFacts
	// refersBack: the later sub-goal points at this step's result ("echo
	// the result", "send it"), so a generic result fits a text parameter.
	refersBack bool
	// provides is the parameter a lookup step was planned for (chaining
	// backwards): its tool said it returns that value.
	provides string
}

// stepFlow is what argument filling knows of a step beyond its tool's
// input schema: the tool (whose name and description are the nouns of its
// identifiers) and the earlier steps it may take values from, nearest
// first.
type stepFlow struct {
	tool    *agentsmcp.ToolInfo
	sources []flowSource
}

// outputField is one property of a tool's output schema.
type outputField struct {
	name string
	prop schemaProperty
}

// outputFields reads the properties of an output schema, sorted by name;
// ok is false when the schema declares none (no schema, or an object of
// unknown shape).
func outputFields(schema json.RawMessage) (fields []outputField, ok bool) {
	var doc struct {
		Properties map[string]json.RawMessage `json:"properties"`
	}
	if json.Unmarshal(schema, &doc) != nil || len(doc.Properties) == 0 {
		return nil, false
	}
	for name, raw := range doc.Properties {
		var sp schemaProperty
		_ = json.Unmarshal(raw, &sp)
		fields = append(fields, outputField{name, sp})
	}
	slices.SortFunc(fields, func(a, b outputField) int { return strings.Compare(a.name, b.name) })
	return fields, true
}

// resultFieldNames are fields that hold "the result" of a tool.
var resultFieldNames = []string{"result", "results", "value", "output", "answer", "sum", "total", "text", "content", "data", "response", "reply"}

// typeFits reports whether a value typed as src (an output field's
// schema) may be passed where dst (a parameter's schema) is expected: the
// same type; an integer where a number is expected (not the reverse); a
// number or boolean where only a string is, which the executor passes as
// its text (see textForStringParams). An untyped side fits nothing.
func typeFits(src, dst schemaProperty) bool {
	for _, t := range []string{"string", "integer", "boolean", "array", "object"} {
		if src.is(t) && dst.is(t) {
			return true
		}
	}
	if (src.is("number") || src.is("integer")) && dst.is("number") {
		return true
	}
	return (src.is("number") || src.is("integer") || src.is("boolean")) && stringOnly(dst)
}

// stringOnly reports whether a parameter takes strings and nothing else.
func stringOnly(sp schemaProperty) bool {
	return sp.is("string") && !sp.is("number") && !sp.is("integer") && !sp.is("boolean")
}

// textForStringParams is the executor's half of typeFits: in resolved,
// the arguments of a call after ResolveRefs, each top-level argument that
// the plan wrote as exactly one step reference (refs, from FindRefs of the
// planned arguments) and that resolved to a number or a boolean, where the
// tool's input schema takes a string only, becomes that value's JSON text
// ("the sum" 7 → "7" for an echo's message). Nothing else changes, byte
// for byte; resolved is returned as is when nothing needs to.
func textForStringParams(refs []planlang.Ref, resolved, inputSchema json.RawMessage) json.RawMessage {
	var doc struct {
		Properties map[string]schemaProperty `json:"properties"`
	}
	if len(refs) == 0 || json.Unmarshal(inputSchema, &doc) != nil {
		return resolved
	}
	obj := bytes.Trim(resolved, " \t\r\n") // JSON whitespace
	if len(obj) == 0 || obj[0] != '{' {
		return resolved
	}
	out := obj
	for _, r := range refs {
		name, topLevel := strings.CutPrefix(r.Pointer, "/")
		if r.Kind != planlang.RefStep || !r.Whole || !topLevel || strings.ContainsAny(name, "/~") || !stringOnly(doc.Properties[name]) {
			continue
		}
		val, ok := planlang.ObjectField(out, name)
		if !ok || len(val) == 0 || !(val[0] == '-' || val[0] >= '0' && val[0] <= '9' || string(val) == "true" || string(val) == "false") {
			continue
		}
		// val is a slice of out: where it starts is what their capacities
		// differ by.
		at := cap(out) - cap(val)
		text, _ := json.Marshal(string(val))
		spliced := make([]byte, 0, len(out)+2)
		spliced = append(append(append(spliced, out[:at]...), text...), out[at+len(val):]...)
		out = spliced
	}
	return out
}

// meaningFits reports whether an output field means what the parameter
// is: the same name, a name word of one that is a key of the other, or the
// same specific kind (both email addresses, both URLs, both identifiers).
func meaningFits(f outputField, p slotParam) bool {
	if f.name == p.name {
		return true
	}
	fp := classifySlot(f.name, f.prop, false)
	switch p.kind {
	case slotEmail, slotURL, slotPath, slotDate, slotCurrency, slotCountryCode, slotLanguage, slotIdentifier:
		if fp.kind == p.kind {
			return true
		}
	}
	// Shared name words other than the vague ones: "user_email" and "email".
	for _, k := range fp.keys {
		if slices.Contains(p.keys, k) && !slices.Contains(slotVagueNames, k) && !slices.Contains([]string{"name", "value", "data", "result"}, k) {
			return true
		}
	}
	return false
}

// wireParam is the reference that fills parameter p from one of sources
// (nearest first), or "" when none fits without guessing; see the file's
// comment for the rules. Secret parameters are never wired.
func wireParam(p slotParam, sources []flowSource) string {
	if redact.IsSecretName(p.name) {
		return ""
	}
	for _, src := range sources {
		if src.tool == nil {
			continue
		}
		fields, structured := outputFields(src.tool.OutputSchema)
		if !structured {
			// No declared shape: the output is the tool's text (a JSON
			// string), unless the tool declared an object of unknown
			// fields, which no string parameter can take.
			var doc struct {
				Type any `json:"type"`
			}
			_ = json.Unmarshal(src.tool.OutputSchema, &doc)
			if doc.Type == nil && p.prop.is("string") && (src.refersBack && (p.kind == slotText || p.kind == slotNone) || src.provides == p.name) {
				return fmt.Sprintf("{{steps.%s.output}}", src.step)
			}
			continue
		}
		var fit []outputField
		for _, f := range fields {
			if typeFits(f.prop, p.prop) && meaningFits(f, p) {
				fit = append(fit, f)
			}
		}
		if len(fit) == 0 && (src.refersBack && (p.kind == slotText || p.kind == slotNone || p.kind == slotNumber) || src.provides == p.name) {
			// "the result": the one field, or the one result-like field.
			var typed, resultLike []outputField
			for _, f := range fields {
				if typeFits(f.prop, p.prop) {
					typed = append(typed, f)
					if slices.Contains(resultFieldNames, strings.ToLower(f.name)) {
						resultLike = append(resultLike, f)
					}
				}
			}
			switch {
			case len(fields) == 1 && len(typed) == 1:
				fit = typed
			case len(resultLike) == 1:
				fit = resultLike
			}
		}
		if len(fit) == 1 {
			return fmt.Sprintf("{{steps.%s.output%s}}", src.step, planlang.PathElem{Field: fit[0].name})
		}
		if len(fit) > 1 {
			return "" // which one? ask
		}
	}
	return ""
}

// identifierNounStop are words of a tool's name or description that are
// no noun an identifier follows.
var identifierNounStop = strings.Fields(`get set put list read fetch find show delete remove update create add close open
	by its it the a an of for to from with and or in on at as is are be this that which one all any given`)

// requestIdentifier is the string identifier that text gives for the
// identifier parameter p of tool: the one code (a word with a digit, or
// any word after "#") that follows a noun of the tool's name or
// description, "#", "id" or one of p's own names ("post 7", "issue #12",
// "id abc-1"). Two different codes, or none: ok is false. A code within a
// secret of the request, or that is one of takenValues (the values other
// parameters took), is never taken.
func requestIdentifier(text string, p slotParam, tool *agentsmcp.ToolInfo, takenValues ...any) (string, bool) {
	if p.kind != slotIdentifier || !p.prop.is("string") || redact.IsSecretName(p.name) {
		return "", false
	}
	nouns := []string{"id", "identifier", "number", "no", "nr", "ref", "reference"}
	nouns = append(nouns, p.keys...)
	if tool != nil {
		for _, w := range splitWords(tool.Name + " " + tool.Title + " " + tool.Description) {
			if len(w) > 2 && !slices.Contains(identifierNounStop, w) {
				nouns = append(nouns, w, w+"s")
			}
		}
	}
	words := slotWords(text)
	secrets := secretSpans(text)
	found := ""
	for j, w := range words {
		hash := strings.HasPrefix(w.text, "#")
		v := strings.TrimPrefix(w.text, "#")
		if !slotCodeChars.MatchString(v) || !hash && !strings.ContainsFunc(v, unicode.IsDigit) {
			continue
		}
		if !hash && (j == 0 || !slices.Contains(nouns, words[j-1].lower)) {
			continue
		}
		if slices.ContainsFunc(secrets, func(s [2]int) bool { return s[0] <= w.start && w.end <= s[1] }) ||
			slices.ContainsFunc(takenValues, func(t any) bool { return fmt.Sprint(t) == v }) {
			continue
		}
		if found != "" && found != v {
			return "", false // two codes: which one?
		}
		found = v
	}
	return found, found != ""
}

// fillStepArgumentsFlow is fillStepArguments for a step of a plan: the
// values the sub-goal gives (slot filling, then a string identifier the
// request names for the tool, see requestIdentifier); then, for a
// required parameter still empty, a reference to an earlier step's output
// (see wireParam); and otherwise a plan input, declared in inputs, so
// that the user is asked. It returns the arguments, the notes of the
// values taken from the request, and the parameters left to ask.
func fillStepArgumentsFlow(schema json.RawMessage, goal, request, stepID string, flow stepFlow, inputs *inputsSchema) (json.RawMessage, []string, []slotParam) {
	var doc struct {
		Properties map[string]json.RawMessage `json:"properties"`
		Required   []string                   `json:"required"`
	}
	_ = json.Unmarshal(schema, &doc)
	names := make([]string, 0, len(doc.Properties))
	for n := range doc.Properties {
		names = append(names, n)
	}
	slices.Sort(names)
	text := goal
	if text == "" {
		text = request
	}
	params := make([]slotParam, 0, len(names))
	for _, name := range names {
		var sp schemaProperty
		_ = json.Unmarshal(doc.Properties[name], &sp)
		params = append(params, classifySlot(name, sp, slices.Contains(doc.Required, name)))
	}
	found := fillSlots(text, params)
	foundValues := make([]any, 0, len(found))
	for _, f := range found {
		foundValues = append(foundValues, f.value)
	}
	args := map[string]any{}
	var taken []string
	var asked []slotParam
	for _, p := range params {
		fill, ok := found[p.name]
		if !ok && p.required {
			if id, named := requestIdentifier(text, p, flow.tool, foundValues...); named {
				fill, ok = slotFill{value: id, note: p.name + " = " + id}, true
			}
		}
		switch {
		case ok:
			args[p.name] = fill.value
			taken = append(taken, fill.note)
		case !p.required && !statesConstraint(text, p):
			// A filter the request states is asked for, never dropped.
		default:
			if ref := wireParam(p, flow.sources); ref != "" {
				args[p.name] = ref
				continue
			}
			asked = append(asked, p)
			input := inputs.add(p.name, stepID, inputSchemaOf(p.prop, p.name))
			args[p.name] = "{{inputs." + input + "}}"
		}
	}
	b, _ := json.Marshal(args)
	return b, taken, asked
}

// returnVerb finds where a tool's description says what it returns.
var returnVerb = regexp.MustCompile(`(?i)\b(?:returns?|returning|gives?|provides?|resolves?(?:\s+\w+)?\s+to|yields?|outputs?|responds?\s+with)\b`)

// meaningWords are the words that name what parameter p holds, for
// reading a tool's description: its name's words and, for a value of a
// specific kind, the kind's words.
func meaningWords(p slotParam) []string {
	ws := slices.Clone(p.keys)
	switch p.kind {
	case slotEmail:
		ws = append(ws, "email", "mail", "e-mail")
	case slotURL:
		ws = append(ws, "url", "link", "uri")
	case slotPath:
		ws = append(ws, "path")
	case slotIdentifier:
		ws = append(ws, "id", "identifier")
	}
	return slices.DeleteFunc(ws, func(w string) bool { return slices.Contains([]string{"name", "value", "data", "result", "address"}, w) })
}

// saysItReturns reports whether tool says it returns what p holds: an
// output field that means p, or a description whose words after a
// return verb ("… and return their email address") name it.
func saysItReturns(tool *agentsmcp.ToolInfo, p slotParam) bool {
	if fields, ok := outputFields(tool.OutputSchema); ok {
		for _, f := range fields {
			if typeFits(f.prop, p.prop) && meaningFits(f, p) {
				return true
			}
		}
	}
	loc := returnVerb.FindStringIndex(tool.Description)
	if loc == nil {
		return false
	}
	after := splitWords(tool.Description[loc[1]:])
	for _, w := range meaningWords(p) {
		if slices.Contains(after, w) {
			return true
		}
	}
	return false
}

// lookup is a step planned before another to provide one of its values.
type lookup struct {
	tool  *ToolFacts
	param string
}

// lookupsFor chains backwards from the step that calls best for goal: for
// each required parameter of a specific kind (an email, a URL, an
// identifier…) that neither the sub-goal nor an earlier step gives, the
// catalog's first tool (by name) that says it returns that value and
// whose every required input the sub-goal gives. A tool that is best
// itself, destructive, down, on cool-down or one of the agents' own is
// never a lookup. None found: the value is asked, as before.
func (p *Planner) lookupsFor(ctx context.Context, k *Knowledge, goal string, best *ToolFacts, sources []flowSource) []lookup {
	_, _, asked := fillStepArgumentsFlow(best.InputSchema, goal, k.Request, "dry-run", stepFlow{tool: &best.ToolInfo, sources: sources}, newInputsSchema())
	var wanted []slotParam
	for _, a := range asked {
		switch a.kind {
		case slotNone, slotText, slotEnum, slotEndpoint:
		default:
			if !redact.IsSecretName(a.name) {
				wanted = append(wanted, a)
			}
		}
	}
	if len(wanted) == 0 {
		return nil
	}
	all, err := p.Gatherer.Catalog.ListTools(ctx)
	if err != nil {
		return nil
	}
	var out []lookup
	for _, want := range wanted {
		for _, t := range all {
			if t.Name == best.Name || t.Destructive || t.Health == agentsmcp.HealthDown || isAgentTool(t.Name) || !saysItReturns(t, want) {
				continue
			}
			if !givesEveryInput(t.InputSchema, goal) {
				continue
			}
			f := p.toolFacts(ctx, k, t.Name)
			if f == nil || f.Reliability.CoolingDown {
				continue
			}
			out = append(out, lookup{tool: f, param: want.name})
			break
		}
	}
	return out
}

// givesEveryInput reports whether text gives every required input of a
// tool with input schema, and the tool needs at least one: a lookup needs
// a key (a name, a code, not the whole request as a query), and one the
// user would be asked for is no shortcut.
func givesEveryInput(schema json.RawMessage, text string) bool {
	var doc struct {
		Properties map[string]json.RawMessage `json:"properties"`
		Required   []string                   `json:"required"`
	}
	if json.Unmarshal(schema, &doc) != nil || len(doc.Required) == 0 {
		return false
	}
	params := make([]slotParam, 0, len(doc.Required))
	for _, name := range doc.Required {
		var sp schemaProperty
		_ = json.Unmarshal(doc.Properties[name], &sp)
		params = append(params, classifySlot(name, sp, true))
	}
	found := fillSlots(text, params)
	for _, f := range found {
		if strings.HasSuffix(f.note, "= the request's text") {
			return false // a search on the whole request is no lookup by key
		}
	}
	return len(found) == len(params)
}

// referBackSplit finds, within a sub-goal, " and " before a clause that
// acts on what the part before it produced: "look up Ada's email and send
// it to Bob", "add 3 and 4 and echo the result".
// The clause starts with a lower-case verb: "Ann and Bob that …" joins
// two names.
var referBackSplit = regexp.MustCompile(`(?i:,?\s+and\s+)([a-z]+)\s+((?i:it|them|that|those|the result|the results|the output|the answer))\b`)

// sayingVerbs take a "that" which starts what is said, not a result:
// "… and say that the build is green".
var sayingVerbs = []string{"say", "tell", "confirm", "ensure", "check", "verify", "note", "mention", "know", "make", "think", "see"}

// splitReferringBack splits part where a clause joined by "and" refers to
// the result of the clause before it; other parts stay whole.
func splitReferringBack(part string) []string {
	var out []string
	for rest, from := part, 0; from < len(rest); {
		loc := referBackSplit.FindStringSubmatchIndex(rest[from:])
		if loc == nil {
			break
		}
		verb, object := rest[from+loc[2]:from+loc[3]], strings.ToLower(rest[from+loc[4]:from+loc[5]])
		head := strings.TrimSpace(rest[:from+loc[0]])
		if head == "" || object == "that" && slices.Contains(sayingVerbs, verb) {
			from += loc[1]
			continue
		}
		out = append(out, head)
		rest, from = rest[from+loc[2]:], 0
		part = rest
	}
	return append(out, part)
}
