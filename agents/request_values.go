package agents

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"

	agentsmcp "github.com/agents-mcp/agents-mcp"
)

// This file makes a plan do every part of a request that gives a value of
// a specific kind: a URL, an email address, a "#channel". Such a value is
// what the request wants something done with, so a plan that leaves one
// unused leaves a part of the request undone, and its task would report
// success anyway ("Post a shortened version of <url> in #marketing" run as
// shorten_url alone, the post never made).
//
// The builtin planner, for each sub-goal (see planValues):
//   - A step whose tool takes none of the sub-goal's values, when a tool
//     takes one, runs that tool instead: a value's kind says what the step
//     works on better than words the search matched ("Shrink <url> for
//     #events" matched a code hosting tool).
//   - A value the step leaves unused goes to a step of its own, after it:
//     a tool that takes it and whose other required values the step's
//     output gives (wired forward, see wireParam) or the user is asked for.
//     Tools that take only values of specific kinds go first, those that
//     also want free text after them, so that data flows from the first
//     to the second ("give #ops a tidy version of <url>": shorten, then
//     post the short link).
//
// And every plan, a model's or the builtin planner's, is checked: a value
// no step takes, literally or as an input the user is asked for, makes the
// plan invalid (see valuesLeftUnused). A model gets it back to repair, the
// builtin planner gives up on the request with why: asking or failing is
// better than a success that did half of what was asked.

// requestValue is a value of a specific kind that a request gives.
type requestValue struct {
	text string
	kind string // shapeURL, shapeEmail or shapeTag
}

// tagInText finds "#name" words: after a space or punctuation, never
// within a URL (its fragment).
var tagInText = regexp.MustCompile(`(?:^|[\s(,;:])(#\p{L}[\p{L}\p{N}_.-]*)`)

// requestValues are the URLs, email addresses and "#name" tags of text, in
// that order, each once.
func requestValues(text string) []requestValue {
	var out []requestValue
	add := func(v, kind string) {
		if v != "" && !slices.ContainsFunc(out, func(o requestValue) bool { return o.text == v }) {
			out = append(out, requestValue{v, kind})
		}
	}
	urls := urlPattern.FindAllString(text, -1)
	for _, u := range urls {
		add(strings.TrimRight(u, slotTrimRight), shapeURL)
	}
	for _, e := range emailPattern.FindAllString(text, -1) {
		if !slices.ContainsFunc(urls, func(u string) bool { return strings.Contains(u, e) }) {
			add(e, shapeEmail)
		}
	}
	for _, m := range tagInText.FindAllStringSubmatch(text, -1) {
		add(strings.TrimRight(m[1], ".-"), shapeTag)
	}
	return out
}

// describe names v for a message: its kind and the value, without a
// secret it may hold.
func (v requestValue) describe() string {
	switch v.kind {
	case shapeURL:
		return "the URL " + withoutSecrets(v.text)
	case shapeEmail:
		return "the address " + withoutSecrets(v.text)
	}
	return v.text
}

// channelWords are parameter name words that take a "#name".
var channelWords = []string{"channel", "hashtag", "room", "topic", "tag"}

// paramTakes reports whether parameter p takes a value of v's kind: by
// its kind (a URL, an email address), by the shape it shows ("such as
// #general") or, for a "#name", by its name (a channel).
func paramTakes(p slotParam, v requestValue) bool {
	switch {
	case v.kind == shapeURL && (p.kind == slotURL || p.prop.Format == "uri" || p.prop.Format == "url"):
		return true
	case v.kind == shapeEmail && (p.kind == slotEmail || p.prop.Format == "email"):
		return true
	case v.kind == shapeTag && slices.ContainsFunc(p.keys, func(k string) bool { return slices.Contains(channelWords, k) }):
		return p.prop.is("string")
	}
	return p.shape != nil && slices.ContainsFunc(p.shape.examples, func(es exampleShape) bool { return es.what == v.kind })
}

// toolTakes reports whether a tool of input schema has a parameter that
// takes v.
func toolTakes(schema json.RawMessage, v requestValue) bool {
	params, _ := schemaParams(schema)
	return slices.ContainsFunc(params, func(p slotParam) bool { return paramTakes(p, v) })
}

// argumentsHold reports whether one of the string values of a step's
// arguments (at any depth) holds v's text: the step works on v.
func argumentsHold(args json.RawMessage, v requestValue) bool {
	var doc any
	if json.Unmarshal(args, &doc) != nil {
		return false
	}
	var holds func(x any) bool
	holds = func(x any) bool {
		switch t := x.(type) {
		case string:
			return strings.Contains(strings.ToLower(t), strings.ToLower(v.text))
		case []any:
			return slices.ContainsFunc(t, holds)
		case map[string]any:
			for _, e := range t {
				if holds(e) {
					return true
				}
			}
		}
		return false
	}
	return holds(doc)
}

// asksFor reports whether a step asks the user for a value of v's kind:
// a parameter that takes v is a plan input.
func asksFor(args, schema json.RawMessage, v requestValue) bool {
	var doc map[string]json.RawMessage
	if json.Unmarshal(args, &doc) != nil {
		return false
	}
	params, _ := schemaParams(schema)
	for _, p := range params {
		var s string
		if json.Unmarshal(doc[p.name], &s) == nil && strings.HasPrefix(strings.TrimSpace(s), "{{inputs.") && paramTakes(p, v) {
			return true
		}
	}
	return false
}

// valuesLeftUnused are the values of request (see requestValues) that no
// step of plan takes, literally or by asking the user for a value of its
// kind.
func (p *Planner) valuesLeftUnused(ctx context.Context, plan *agentsmcp.Plan, request string) []requestValue {
	var unused []requestValue
	for _, v := range requestValues(request) {
		used := slices.ContainsFunc(plan.Steps, func(s agentsmcp.PlanStep) bool {
			if argumentsHold(s.Arguments, v) {
				return true
			}
			info, err := p.Gatherer.Catalog.Tool(ctx, s.Tool)
			return err == nil && asksFor(s.Arguments, info.InputSchema, v)
		})
		if !used {
			unused = append(unused, v)
		}
	}
	return unused
}

// checkValuesTaken is EINVALID when plan leaves a value of request unused
// (see valuesLeftUnused), naming each: a model repairs its plan, the
// builtin planner gives up on the request.
func (p *Planner) checkValuesTaken(ctx context.Context, plan *agentsmcp.Plan, request string) error {
	unused := p.valuesLeftUnused(ctx, plan, request)
	if len(unused) == 0 {
		return nil
	}
	var named []string
	for _, v := range unused {
		named = append(named, v.describe())
	}
	return agentsmcp.Errorf(agentsmcp.EINVALID, "the request gives %s, which no step takes: a part of the request would not be done. Add a step with a tool that takes it (its other values wired from an earlier step's output, or asked as inputs)",
		joinAnd(named))
}

// freeParams counts the required parameters of schema that take free text
// or a value of no kind: what a tool wants beyond specific values.
func freeParams(schema json.RawMessage) int {
	params, _ := schemaParams(schema)
	n := 0
	for _, p := range params {
		if p.required && (p.kind == slotText || p.kind == slotNone) {
			n++
		}
	}
	return n
}

// valueTakers are the usable tools that take v and may serve goal: the
// goal's candidates first, then the search's matches, then the catalog by
// name; never one of the agents' own, a server tool, a destructive tool,
// one on cool-down or down, one of skip, or, with intent, one whose effect
// is not what goal asks for (see servesIntent): a step after another
// serves a part of the goal whose verb may be another.
func (p *Planner) valueTakers(ctx context.Context, k *Knowledge, goal string, v requestValue, skip []string, intent bool) []*ToolFacts {
	var names []string
	for _, m := range k.Candidates[goal] {
		names = append(names, m.Name)
	}
	if matches, err := p.Gatherer.Catalog.SearchTools(ctx, goal, 20); err == nil {
		for _, m := range matches {
			names = append(names, m.Name)
		}
	}
	if all, err := p.Gatherer.Catalog.ListTools(ctx); err == nil {
		var rest []string
		for _, t := range all {
			rest = append(rest, t.Name)
		}
		slices.Sort(rest)
		names = append(names, rest...)
	}
	want := effect(0)
	if intent {
		want = requestEffect(goal)
	}
	var out []*ToolFacts
	for _, name := range names {
		if slices.Contains(skip, name) || isAgentTool(name) || slices.Contains(p.Gatherer.ServerTools, name) ||
			slices.ContainsFunc(out, func(f *ToolFacts) bool { return f.Name == name }) {
			continue
		}
		f := p.toolFacts(ctx, k, name)
		if f == nil || !f.Usable() || f.Destructive || f.Reliability.CoolingDown || !toolTakes(f.InputSchema, v) ||
			!servesIntent(want, toolEffects(f.Name, f.Description)) {
			continue
		}
		out = append(out, f)
	}
	return out
}

// takerFor is the tool that should take the first value of vals a tool
// takes: of the takers of every value, the one that wants the fewest free
// values (see freeParams), the earlier value and the better ranked taker
// first; nil when no tool takes any.
func (p *Planner) takerFor(ctx context.Context, k *Knowledge, goal string, vals []requestValue, skip []string, intent bool) *ToolFacts {
	type taker struct {
		f          *ToolFacts
		free, rank int
	}
	var all []taker
	for _, v := range vals {
		for _, f := range p.valueTakers(ctx, k, goal, v, skip, intent) {
			all = append(all, taker{f, freeParams(f.InputSchema), len(all)})
		}
	}
	if len(all) == 0 {
		return nil
	}
	best := slices.MinFunc(all, func(a, b taker) int { return cmp.Or(cmp.Compare(a.free, b.free), cmp.Compare(a.rank, b.rank)) })
	return best.f
}

// pendingValues are the values of goal that no step of plan holds yet.
func pendingValues(goal string, plan *agentsmcp.Plan) []requestValue {
	var out []requestValue
	for _, v := range requestValues(goal) {
		if !slices.ContainsFunc(plan.Steps, func(s agentsmcp.PlanStep) bool { return argumentsHold(s.Arguments, v) }) {
			out = append(out, v)
		}
	}
	return out
}

// stepTakesAny reports whether a tool, its arguments filled for goal,
// takes one of vals: it holds one, or asks for a value of its kind.
func stepTakesAny(f *ToolFacts, goal, request string, sources []flowSource, vals []requestValue) bool {
	args, _, _ := fillStepArgumentsFlow(f.InputSchema, goal, request, "dry-run", stepFlow{tool: &f.ToolInfo, sources: sources}, newInputsSchema())
	return slices.ContainsFunc(vals, func(v requestValue) bool { return argumentsHold(args, v) || asksFor(args, f.InputSchema, v) })
}

// followUps plans, after step s (of tool f), one step for each value of
// vals that s leaves unused and a tool takes (see the file's comment): it
// takes from the request the values it takes, and the rest from s's
// output or the user. It returns the steps, in order; a value no tool
// takes is left for checkValuesTaken to report.
func (p *Planner) followUps(ctx context.Context, k *Knowledge, goal string, s *agentsmcp.PlanStep, f *ToolFacts, vals []requestValue, ids map[string]bool, inputs *inputsSchema) []agentsmcp.PlanStep {
	var out []agentsmcp.PlanStep
	prev, prevFacts := s, f
	skip := []string{f.Name}
	for _, v := range vals {
		if argumentsHold(s.Arguments, v) || asksFor(s.Arguments, f.InputSchema, v) ||
			slices.ContainsFunc(out, func(o agentsmcp.PlanStep) bool { return argumentsHold(o.Arguments, v) }) {
			continue
		}
		t := p.takerFor(ctx, k, goal, []requestValue{v}, skip, false)
		if t == nil {
			continue
		}
		// The values it takes, and nothing else of the request: the rest
		// is what the step before produced.
		var given []string
		for _, w := range vals {
			if toolTakes(t.InputSchema, w) && !argumentsHold(s.Arguments, w) {
				given = append(given, w.text)
			}
		}
		fs := agentsmcp.PlanStep{ID: uniqueStepID(t.Name, ids), Tool: t.Name, DependsOn: []string{prev.ID}, NeedsConfirmation: t.Destructive}
		args, taken, _ := fillStepArgumentsFlow(t.InputSchema, strings.Join(given, " "), k.Request, fs.ID,
			stepFlow{tool: &t.ToolInfo, sources: []flowSource{{step: prev.ID, tool: prevFacts, refersBack: true}}}, inputs)
		fs.Arguments = args
		fs.Description = describeStep(fmt.Sprintf("then, with the result of %s: %s", prev.ID, goal), taken)
		tune(&fs, t)
		out = append(out, fs)
		prev, prevFacts = &out[len(out)-1], t
		skip = append(skip, t.Name)
	}
	return out
}

// namesWhatIsAsked reports whether word j of the request names what is
// asked for rather than a value: "the lat/long of Rome", "its owner/repo
// for …", where the word after an article or possessive is the attribute
// and what follows "of" or "for" the thing it belongs to. Such a word
// never fills a parameter whole, whatever its shape.
func (f *slotFinder) namesWhatIsAsked(j int) bool {
	if j == 0 || j+1 >= len(f.words) {
		return false
	}
	before, after := f.words[j-1].lower, f.words[j+1].lower
	return slices.Contains([]string{"the", "its", "their", "his", "her", "my", "your", "our", "a", "an"}, before) &&
		(after == "of" || after == "for")
}

// stepBefore is a step to run before the one of best for goal, when goal
// gives several values, best takes some but would ask the user for free
// text, and a tool that wants no free text takes one best leaves unused:
// its output is what best's free text is ("Announce <url> in #general,
// but short": shorten, then post the short link). It takes from the
// request the values it takes; nil when there is no such step.
func (p *Planner) stepBefore(ctx context.Context, k *Knowledge, goal string, best *ToolFacts, vals []requestValue, sources []flowSource, ids map[string]bool, inputs *inputsSchema) (*agentsmcp.PlanStep, *ToolFacts) {
	if len(vals) < 2 {
		return nil, nil
	}
	args, _, asked := fillStepArgumentsFlow(best.InputSchema, goal, k.Request, "dry-run", stepFlow{tool: &best.ToolInfo, sources: sources}, newInputsSchema())
	if !slices.ContainsFunc(asked, func(a slotParam) bool { return a.kind == slotText || a.kind == slotNone }) {
		return nil, nil
	}
	var left []requestValue
	for _, v := range vals {
		if !argumentsHold(args, v) && !asksFor(args, best.InputSchema, v) {
			left = append(left, v)
		}
	}
	if len(left) == 0 {
		return nil, nil
	}
	t := p.takerFor(ctx, k, goal, left, []string{best.Name}, false)
	if t == nil || freeParams(t.InputSchema) > 0 {
		return nil, nil
	}
	var given []string
	for _, v := range left {
		if toolTakes(t.InputSchema, v) {
			given = append(given, v.text)
		}
	}
	s := agentsmcp.PlanStep{ID: uniqueStepID(t.Name, ids), Tool: t.Name, NeedsConfirmation: t.Destructive}
	sargs, taken, _ := fillStepArgumentsFlow(t.InputSchema, strings.Join(given, " "), k.Request, s.ID, stepFlow{tool: &t.ToolInfo}, inputs)
	s.Arguments, s.Description = sargs, describeStep("first, for: "+goal, taken)
	tune(&s, t)
	return &s, t
}
