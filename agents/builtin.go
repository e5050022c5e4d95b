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
	"github.com/agents-mcp/agents-mcp/internal/redact"
	"github.com/agents-mcp/agents-mcp/internal/storedform"
)

// This file is the builtin planner: deterministic and offline. It plans
// from memory and tool search alone, so `make run` needs no model.

// builtinPlan reuses the plan of a past request of the same task family
// that succeeded, when its tools are still usable; otherwise it composes one step per
// sub-goal with the best tool for it. Arguments come from the request
// where the schema allows; the rest become plan inputs.
func (p *Planner) builtinPlan(ctx context.Context, k *Knowledge, report *PlanReport) (*agentsmcp.Plan, error) {
	family := k.Family.Family
	// A probe that is due goes first: past plans and patterns would keep
	// a tool that recovered from ever being tried again.
	probing := p.claimProbes(k)
	for _, past := range p.pastPlans(ctx, k, 3) {
		if probing || PlanFamily(past.plan) != family || p.usesAvoided(ctx, k, past.plan.Steps) {
			continue
		}
		if why := p.changesIntent(ctx, k, past.plan.Steps); why != "" {
			report.ReuseRefused = append(report.ReuseRefused, past.plan.ID+": "+why)
			continue
		}
		plan, err := p.reuse(ctx, k, past.plan)
		if err != nil {
			continue // its tools changed: compose afresh
		}
		if err := p.checkValuesTaken(ctx, plan, k.Request); err != nil {
			report.ReuseRefused = append(report.ReuseRefused, past.plan.ID+": "+agentsmcp.ErrorMessage(err))
			continue
		}
		report.ReusedPlan = past.plan.ID
		return plan, nil
	}
	plan := &agentsmcp.Plan{Request: k.Request, Goal: family}
	// A pattern that worked for this family, one tool per sub-goal, decides
	// the tools; the search decides otherwise.
	var pattern []string
	if pat := k.provenPattern(ctx, p.Gatherer.Catalog); !probing && pat != nil && len(pat.Steps) == len(k.SubGoals) && !p.usesAvoided(ctx, k, toolSteps(pat.Steps)) {
		if why := p.changesIntent(ctx, k, toolSteps(pat.Steps)); why != "" {
			report.ReuseRefused = append(report.ReuseRefused, "pattern "+pat.ID+": "+why)
		} else {
			pattern = pat.Steps
			report.Pattern = pat.ID
		}
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
		// The sub-goal's URLs, addresses and channels say what its step
		// works on (see request_values.go).
		vals := pendingValues(g, plan)
		if len(vals) > 0 && (best == nil || !stepTakesAny(best, g, k.Request, nil, vals)) {
			if t := p.takerFor(ctx, k, g, vals, nil, true); t != nil {
				best = t
			}
		}
		if best == nil {
			return nil, p.noUsableTool(ctx, k, g)
		}
		s := agentsmcp.PlanStep{ID: uniqueStepID(best.Name, ids), Tool: best.Name, Description: clipText(g), NeedsConfirmation: best.Destructive}
		var sources []flowSource
		if sequentialAfter(k.Request, k.SubGoals, i) && prev != nil {
			s.DependsOn = []string{prev.ID}
			sources = append(sources, flowSource{step: prev.ID, tool: prevFacts, refersBack: referencesEarlier.MatchString(g)})
		}
		// Chaining backwards (see dataflow.go): lookups go first.
		for _, l := range p.lookupsFor(ctx, k, g, best, sources) {
			ls := agentsmcp.PlanStep{ID: uniqueStepID(l.tool.Name, ids), Tool: l.tool.Name}
			largs, ltaken, _ := fillStepArgumentsFlow(l.tool.InputSchema, g, k.Request, ls.ID, stepFlow{tool: &l.tool.ToolInfo}, inputs)
			ls.Arguments, ls.Description = largs, describeStep("look up "+l.param+" for: "+g, ltaken)
			tune(&ls, l.tool)
			plan.Steps = append(plan.Steps, ls)
			s.DependsOn = append(s.DependsOn, ls.ID)
			sources = append([]flowSource{{step: ls.ID, tool: l.tool, provides: l.param}}, sources...)
		}
		if before, t := p.stepBefore(ctx, k, g, best, vals, sources, ids, inputs); before != nil {
			plan.Steps = append(plan.Steps, *before)
			s.DependsOn = append(s.DependsOn, before.ID)
			sources = append([]flowSource{{step: before.ID, tool: t, refersBack: true}}, sources...)
		}
		args, taken, _ := fillStepArgumentsFlow(best.InputSchema, g, k.Request, s.ID, stepFlow{tool: &best.ToolInfo, sources: sources}, inputs)
		s.Arguments, s.Description = args, describeStep(g, taken)
		tune(&s, best)
		plan.Steps = append(plan.Steps, s)
		prev, prevFacts = &plan.Steps[len(plan.Steps)-1], best
		// A value the step leaves unused: a step of its own, after it.
		for _, fs := range p.followUps(ctx, k, g, prev, best, vals, ids, inputs) {
			plan.Steps = append(plan.Steps, fs)
			prev, prevFacts = &plan.Steps[len(plan.Steps)-1], p.toolFacts(ctx, k, fs.Tool)
		}
	}
	plan.Inputs = inputs.raw()
	if err := p.checkValuesTaken(ctx, plan, k.Request); err != nil {
		return nil, err
	}
	if err := p.Check(ctx, plan); err != nil {
		return nil, err
	}
	return plan, nil
}

// toolFacts returns what k knows of tool, looking it up in the catalog
// and tool performance when it was not among the search's candidates; nil
// if it is gone.
func (p *Planner) toolFacts(ctx context.Context, k *Knowledge, tool string) *ToolFacts {
	if f := k.Tools[tool]; f != nil {
		return f
	}
	info, err := p.Gatherer.Catalog.Tool(ctx, tool)
	if err != nil {
		return nil
	}
	f := p.Gatherer.newFacts(*info)
	p.Gatherer.addRecord(ctx, f)
	k.Tools[tool] = f
	return f
}

// claimProbes claims the probe of each sub-goal's best tool whose
// cool-down ended, and reports whether one was claimed. A probe another
// plan claimed already leaves the tool on cool-down for this plan.
func (p *Planner) claimProbes(k *Knowledge) bool {
	claimed := false
	for _, g := range k.SubGoals {
		for range k.Candidates[g] {
			best, _ := bestTool(k, g)
			if best == nil || !best.Reliability.ProbeDue {
				break
			}
			if p.Gatherer.claimProbe(best) {
				claimed = true
				break
			}
			best.Reliability.ProbeDue, best.Reliability.CoolingDown = false, true
		}
	}
	return claimed
}

// usesAvoided reports whether one of steps calls a tool on cool-down, or
// one with a pitfall recorded on a request of this family (it failed
// there, maybe since the plan or pattern worked): composing afresh then
// weighs that evidence against the alternatives, where reuse would not.
func (p *Planner) usesAvoided(ctx context.Context, k *Knowledge, steps []agentsmcp.PlanStep) bool {
	for _, s := range steps {
		if f := p.toolFacts(ctx, k, s.Tool); f != nil && (f.Reliability.CoolingDown || f.FailedInFamily != "") {
			return true
		}
	}
	return false
}

// toolSteps are plan steps calling tools, for what reads only their tools.
func toolSteps(tools []string) []agentsmcp.PlanStep {
	steps := make([]agentsmcp.PlanStep, len(tools))
	for i, t := range tools {
		steps[i].Tool = t
	}
	return steps
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
		freshArgs, _, _ := fillStepArgumentsFlow(info.InputSchema, text, k.Request, s.ID, stepFlow{tool: info}, inputs)
		_ = json.Unmarshal(freshArgs, &fresh)
		for name, v := range args {
			var literal string
			if json.Unmarshal(v, &literal) == nil && strings.Contains(literal, "{{") {
				continue // a reference: still right
			}
			if fromRequest(v, old.Request) || userData(v, old.Request) || composedFromRequest(name, v, old.Request, s.Description) {
				// The old request's value: the new request's, or asked, or
				// (an optional parameter it does not give) left out. Never
				// the old value, which belongs to another request.
				if f, ok := fresh[name]; ok {
					args[name] = f
				} else {
					delete(args, name)
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

// userData reports whether a literal argument may have come from the
// user although it is not text of the stored request: it carries a secret
// (stores keep requests redacted, so a secret the request gave is missing
// from it), or the stored request was redacted and the value is text, so
// which of its values came from the request cannot be told. Such a value
// is never carried over to another request.
func userData(v json.RawMessage, storedRequest string) bool {
	var s string
	if json.Unmarshal(v, &s) != nil {
		return false
	}
	return redact.HasSecret(s) || strings.Contains(storedRequest, redact.Marker)
}

// tune sets a step's timeout and retries from its tool's record: slow
// tools get time. Retries never grow with failures: a tool on a failure
// streak (a probe, or the only tool left for the need) gets one attempt,
// since what it failed with so far would most likely come again; the
// others keep the executor's default.
func tune(s *agentsmcp.PlanStep, f *ToolFacts) {
	if f.P95 > 0 {
		s.Timeout = min(max(4*f.P95, 30*time.Second), 10*time.Minute)
	}
	if f.Reliability.ProbeDue || f.Reliability.CoolingDown {
		s.Retry = &agentsmcp.RetryPolicy{MaxAttempts: 1}
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
	base = storedform.TruncateUTF8(base, 56)
	id := base
	for n := 2; taken[id]; n++ {
		id = fmt.Sprintf("%s-%d", base, n)
	}
	taken[id] = true
	return id
}

func clipText(s string) string { return storedform.TruncateUTF8(s, agentsmcp.MaxQueryTextBytes) }

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
)

// schemaProperty is what argument filling reads of a property schema.
type schemaProperty struct {
	Type        any    `json:"type"`
	Description string `json:"description"`
	Title       string `json:"title"`
	Enum        []any  `json:"enum"`
	Format      string `json:"format"`
	// Pattern, Examples and Example (OpenAPI's) show a value's shape
	// (see shapeOf).
	Pattern  string `json:"pattern"`
	Examples []any  `json:"examples"`
	Example  any    `json:"example"`
	// Items, MinItems and MaxItems describe a list (see freetext.go).
	Items    json.RawMessage `json:"items"`
	MinItems *int            `json:"minItems"`
	MaxItems *int            `json:"maxItems"`
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

// fillArguments fills a tool's arguments from the sub-goal (the request
// when empty) with the values it clearly gives (see fillSlots). A required
// argument it does not give is taken from the previous step's output when
// a field of that output names or means it (see wireParam), and is
// otherwise declared as a plan input: values are never invented.
func fillArguments(schema json.RawMessage, goal, request, stepID string, prev *agentsmcp.PlanStep, prevFacts *ToolFacts, inputs *inputsSchema) json.RawMessage {
	args, _ := fillStepArguments(schema, goal, request, stepID, prev, prevFacts, inputs)
	return args
}

// fillStepArguments is fillArguments that also says which values it took
// from the request, one "name = value" each, for the plan to show.
func fillStepArguments(schema json.RawMessage, goal, request, stepID string, prev *agentsmcp.PlanStep, prevFacts *ToolFacts, inputs *inputsSchema) (json.RawMessage, []string) {
	var flow stepFlow
	if prev != nil && prevFacts != nil {
		flow.sources = []flowSource{{step: prev.ID, tool: prevFacts}}
	}
	args, taken, _ := fillStepArgumentsFlow(schema, goal, request, stepID, flow, inputs)
	return args, taken
}

// describeStep is a step's description: its sub-goal, and the values taken
// from the request, so that the plan shows where they came from.
func describeStep(goal string, taken []string) string {
	if len(taken) == 0 {
		return clipText(goal)
	}
	return clipText(goal + " (taken from the request: " + strings.Join(taken, "; ") + ")")
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
		m["description"] = storedform.TruncateUTF8(sp.Description, 500)
	}
	if len(sp.Enum) > 0 {
		m["enum"] = sp.Enum
	}
	if pattern := shapeOf(sp).inputPattern(); pattern != "" && typ == "string" {
		m["pattern"] = pattern // an answer without the shape the parameter shows is refused
	}
	b, _ := json.Marshal(m)
	return b
}
