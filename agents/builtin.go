package agents

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	agentsmcp "github.com/agents-mcp/agents-mcp"
)

// This file is the builtin planner: deterministic and offline. It plans
// from memory and tool search alone, so `make run` needs no model.

// builtinPlan reuses the plan of a past request of the same task family
// that succeeded, when its tools are still usable; otherwise it composes one step per
// sub-goal with the best tool for it. Arguments come from the request
// where the schema allows; the rest become plan inputs.
func (p *Planner) builtinPlan(ctx context.Context, k *Knowledge, report *PlanReport) (*agentsmcp.Plan, error) {
	family := k.Family.Family
	for _, past := range p.pastPlans(ctx, k, 3) {
		if PlanFamily(past.plan) != family {
			continue
		}
		plan, err := p.reuse(ctx, k, past.plan)
		if err != nil {
			continue // its tools changed: compose afresh
		}
		report.ReusedPlan = past.plan.ID
		return plan, nil
	}
	plan := &agentsmcp.Plan{Request: k.Request, Goal: family}
	// A pattern that worked for this family, one tool per sub-goal, decides
	// the tools; the search decides otherwise.
	var pattern []string
	if pat := k.provenPattern(ctx, p.Gatherer.Catalog); pat != nil && len(pat.Steps) == len(k.SubGoals) {
		pattern = pat.Steps
		report.Pattern = pat.ID
	}
	inputs := newInputsSchema()
	ids := map[string]bool{}
	var prev *agentsmcp.PlanStep
	var prevFacts *ToolFacts
	for i, g := range k.SubGoals {
		best, _ := bestTool(k, g)
		if pattern != nil {
			best = p.toolFacts(ctx, k, pattern[i])
		}
		if best == nil {
			return nil, agentsmcp.Errorf(agentsmcp.EINVALID, "no usable tool matches %q; connect an upstream that provides one, or rephrase the request", g)
		}
		s := agentsmcp.PlanStep{ID: uniqueStepID(best.Name, ids), Tool: best.Name, Description: clipText(g), NeedsConfirmation: best.Destructive}
		var chainFrom *agentsmcp.PlanStep
		if sequentialAfter(k.Request, k.SubGoals, i) && prev != nil {
			chainFrom = prev
			s.DependsOn = []string{prev.ID}
		}
		args := fillArguments(best.InputSchema, g, k.Request, s.ID, chainFrom, prevFacts, inputs)
		s.Arguments = args
		tune(&s, best)
		plan.Steps = append(plan.Steps, s)
		prev, prevFacts = &plan.Steps[len(plan.Steps)-1], best
	}
	plan.Inputs = inputs.raw()
	if err := p.Check(ctx, plan); err != nil {
		return nil, err
	}
	return plan, nil
}

// toolFacts returns what k knows of tool, looking it up in the catalog
// when it was not among the search's candidates; nil if it is gone.
func (p *Planner) toolFacts(ctx context.Context, k *Knowledge, tool string) *ToolFacts {
	if f := k.Tools[tool]; f != nil {
		return f
	}
	info, err := p.Gatherer.Catalog.Tool(ctx, tool)
	if err != nil {
		return nil
	}
	f := &ToolFacts{ToolInfo: *info, SuccessRate: 0.5}
	k.Tools[tool] = f
	return f
}

// reuse adapts a past plan to a new request of the same family: the same
// steps and dependencies; literal arguments that came from the old
// request are taken from the new one (or asked for), the others kept.
func (p *Planner) reuse(ctx context.Context, k *Knowledge, old *agentsmcp.Plan) (*agentsmcp.Plan, error) {
	plan := &agentsmcp.Plan{Request: k.Request, Goal: k.Family.Family}
	inputs := newInputsSchema()
	inputs.merge(old.Inputs)
	for i, s := range old.Steps {
		// The step's sub-goal in the new request, when the two line up.
		text := k.Request
		if len(k.SubGoals) == len(old.Steps) {
			text = k.SubGoals[i]
		}
		info, err := p.Gatherer.Catalog.Tool(ctx, s.Tool)
		if err != nil || info.Health == agentsmcp.HealthDown {
			return nil, agentsmcp.Errorf(agentsmcp.EINVALID, "tool %s is gone or down", s.Tool)
		}
		var args map[string]json.RawMessage
		_ = json.Unmarshal(s.Arguments, &args)
		fresh := map[string]json.RawMessage{}
		_ = json.Unmarshal(fillArguments(info.InputSchema, text, k.Request, s.ID, nil, nil, inputs), &fresh)
		for name, v := range args {
			var literal string
			if json.Unmarshal(v, &literal) == nil && strings.Contains(literal, "{{") {
				continue // a reference: still right
			}
			if fromRequest(v, old.Request) {
				if f, ok := fresh[name]; ok {
					args[name] = f
				}
			}
		}
		if args == nil {
			args = fresh
		}
		b, _ := json.Marshal(args)
		s.Arguments, s.Description = b, clipText(text)
		plan.Steps = append(plan.Steps, s)
	}
	plan.Inputs = inputs.raw()
	if err := p.Check(ctx, plan); err != nil {
		return nil, err
	}
	return plan, nil
}

// fromRequest reports whether a literal argument value appears in the
// request it was planned for: it was the user's data, not a constant.
func fromRequest(v json.RawMessage, request string) bool {
	var s string
	if json.Unmarshal(v, &s) == nil {
		return s != "" && strings.Contains(request, s)
	}
	t := strings.TrimSpace(string(v))
	return t != "" && t != "null" && t != "true" && t != "false" && regexp.MustCompile(`(^|\D)`+regexp.QuoteMeta(t)+`(\D|$)`).MatchString(request)
}

// tune sets a step's timeout and retries from its tool's record: slow
// tools get time, unreliable ones more attempts.
func tune(s *agentsmcp.PlanStep, f *ToolFacts) {
	if f.P95 > 0 {
		s.Timeout = min(max(4*f.P95, 30*time.Second), 10*time.Minute)
	}
	if f.Calls >= 5 && f.SuccessRate < 0.8 {
		s.Retry = &agentsmcp.RetryPolicy{MaxAttempts: 4, InitialBackoff: 500 * time.Millisecond, MaxBackoff: 10 * time.Second}
	}
}

var stepIDUnsafe = regexp.MustCompile(`[^a-z0-9_-]+`)

func uniqueStepID(tool string, taken map[string]bool) string {
	base := tool
	if i := strings.LastIndex(base, agentsmcp.NamespaceSeparator); i >= 0 {
		base = base[i+len(agentsmcp.NamespaceSeparator):]
	}
	base = strings.Trim(stepIDUnsafe.ReplaceAllString(strings.ToLower(base), "-"), "-")
	if base == "" {
		base = "step"
	}
	base = agentsmcp.TruncateUTF8(base, 56)
	id := base
	for n := 2; taken[id]; n++ {
		id = fmt.Sprintf("%s-%d", base, n)
	}
	taken[id] = true
	return id
}

func clipText(s string) string { return agentsmcp.TruncateUTF8(s, agentsmcp.MaxQueryTextBytes) }

// inputsSchema collects the plan's inputs as a JSON Schema object.
type inputsSchema struct {
	properties map[string]json.RawMessage
	required   []string
}

func newInputsSchema() *inputsSchema { return &inputsSchema{properties: map[string]json.RawMessage{}} }

func (in *inputsSchema) merge(raw json.RawMessage) {
	var doc struct {
		Properties map[string]json.RawMessage `json:"properties"`
		Required   []string                   `json:"required"`
	}
	if json.Unmarshal(raw, &doc) != nil {
		return
	}
	for k, v := range doc.Properties {
		in.properties[k] = v
	}
	for _, r := range doc.Required {
		if !slices.Contains(in.required, r) {
			in.required = append(in.required, r)
		}
	}
}

// add declares a required input named after the argument, unique, and
// returns its name.
func (in *inputsSchema) add(name, stepID string, schema json.RawMessage) string {
	if _, taken := in.properties[name]; taken {
		name = strings.ReplaceAll(stepID, "-", "_") + "_" + name
	}
	in.properties[name] = schema
	in.required = append(in.required, name)
	return name
}

func (in *inputsSchema) raw() json.RawMessage {
	if len(in.properties) == 0 {
		return nil
	}
	b, _ := json.Marshal(map[string]any{"type": "object", "properties": in.properties, "required": in.required})
	return b
}

// What requests hold, for argument filling.
var (
	quotedPattern = regexp.MustCompile(`"([^"]+)"|'([^']+)'|“([^”]+)”`)
	urlPattern    = regexp.MustCompile(`https?://[^\s"'<>]+`)
	pathPattern   = regexp.MustCompile(`(?:^|\s)((?:~|\.{1,2})?/[^\s"'<>,;]*)`)
	numberPattern = regexp.MustCompile(`(?:^|[^\w./-])(-?\d+(?:\.\d+)?)(?:$|[^\w/])`)
)

// schemaProperty is what argument filling reads of a property schema.
type schemaProperty struct {
	Type        any    `json:"type"`
	Description string `json:"description"`
	Title       string `json:"title"`
	Enum        []any  `json:"enum"`
	Format      string `json:"format"`
}

func (sp schemaProperty) is(t string) bool {
	switch v := sp.Type.(type) {
	case string:
		return v == t
	case []any:
		return slices.Contains(v, any(t))
	}
	return false
}

// fillArguments fills a tool's arguments from the sub-goal and the request
// where the schema makes the match unambiguous: URLs, paths, numbers,
// enum values, quoted text, and query-like text. A required argument it
// cannot fill is taken from the previous step's output when that output
// has a field of the same name, and is otherwise declared as a plan input:
// values are never invented.
func fillArguments(schema json.RawMessage, goal, request, stepID string, prev *agentsmcp.PlanStep, prevFacts *ToolFacts, inputs *inputsSchema) json.RawMessage {
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
	numbers := numberPattern.FindAllStringSubmatch(text, -1)
	usedNumber := 0
	args := map[string]any{}
	for _, name := range names {
		var sp schemaProperty
		_ = json.Unmarshal(doc.Properties[name], &sp)
		lname := strings.ToLower(name + " " + sp.Title + " " + sp.Description)
		required := slices.Contains(doc.Required, name)
		var value any
		switch {
		case len(sp.Enum) > 0:
			for _, e := range sp.Enum {
				if s, ok := e.(string); ok && regexp.MustCompile(`(?i)\b`+regexp.QuoteMeta(s)+`\b`).MatchString(text) {
					value = s
					break
				}
			}
		case sp.is("integer") || sp.is("number"):
			if usedNumber < len(numbers) && (required || containsAny(lname, "count", "limit", "number", "top", "max", "size", "amount", "n ", "num")) {
				value = json.Number(numbers[usedNumber][1])
				usedNumber++
			}
		case sp.is("string"):
			switch {
			case containsAny(lname, "url", "uri", "link", "endpoint") || sp.Format == "uri":
				if u := urlPattern.FindString(text); u != "" {
					value = u
				}
			case containsAny(lname, "path", "file", "dir", "folder", "root"):
				if m := pathPattern.FindStringSubmatch(text); m != nil {
					value = strings.TrimRight(m[1], ".")
				}
			case containsAny(lname, "query", "search", "text", "message", "prompt", "content", "question", "topic", "keyword", "input"):
				if q := quotedPattern.FindStringSubmatch(text); q != nil {
					value = firstNonEmpty(q[1:]...)
				} else {
					value = goal
				}
			}
		}
		switch {
		case value != nil:
			args[name] = value
		case !required:
		case prev != nil && prevFacts != nil && outputHas(prevFacts.OutputSchema, name):
			args[name] = fmt.Sprintf("{{steps.%s.output.%s}}", prev.ID, name)
		default:
			input := inputs.add(name, stepID, inputSchemaOf(sp, name))
			args[name] = "{{inputs." + input + "}}"
		}
	}
	b, _ := json.Marshal(args)
	return b
}

func containsAny(s string, words ...string) bool {
	for _, w := range words {
		if strings.Contains(s, w) {
			return true
		}
	}
	return false
}

func firstNonEmpty(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}

func outputHas(schema json.RawMessage, name string) bool {
	var doc struct {
		Properties map[string]json.RawMessage `json:"properties"`
	}
	_ = json.Unmarshal(schema, &doc)
	_, ok := doc.Properties[name]
	return ok
}

// inputSchemaOf is the schema of a plan input standing for a tool
// argument: primitive, so that elicitation can ask for it.
func inputSchemaOf(sp schemaProperty, name string) json.RawMessage {
	typ := "string"
	for _, t := range []string{"string", "integer", "number", "boolean"} {
		if sp.is(t) {
			typ = t
			break
		}
	}
	m := map[string]any{"type": typ, "title": name}
	if sp.Description != "" {
		m["description"] = agentsmcp.TruncateUTF8(sp.Description, 500)
	}
	if len(sp.Enum) > 0 {
		m["enum"] = sp.Enum
	}
	b, _ := json.Marshal(m)
	return b
}
