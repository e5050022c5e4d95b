package agents

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/agents/planlang"
	"github.com/agents-mcp/agents-mcp/internal/redact"
	"github.com/agents-mcp/agents-mcp/internal/storedform"
	"github.com/agents-mcp/agents-mcp/internal/toolperf"
)

// This file repairs a plan within its task: when a step's tool fails for
// good (its retries ran out, or it answered with a permanent error), the
// runner asks a StepRepairer for another tool that serves the step's
// sub-goal before it fails the task. The plan is shared and never
// changes: the replacement is stored in the step's state (RepairedTool,
// RepairedArguments), so that a resume on any replica runs the repaired
// step, and the learner counts the replacement as the tool that worked.
//
// The candidates and their arguments are found offline, the same for every
// planner; the model of the request waiting for the task, when it has one,
// chooses among them (ExecutorOptions.RepairLLM), with the builtin choice as
// its fallback.

// Repairs are bounded: a step is repaired at most once (a replacement that
// fails too ends the step, so a task cannot cycle through the catalog), and
// a task at most maxRepairsPerTask times (a task whose tools fail one
// after the other has a wrong plan, not bad luck).
const (
	maxRepairsPerStep = 1
	maxRepairsPerTask = 3
)

// StepRepairer chooses a replacement for a step whose tool failed for
// good. ENOTFOUND (or any error) when there is none: the step then fails.
type StepRepairer interface {
	RepairStep(ctx context.Context, req RepairRequest) (*StepRepair, error)
}

// RepairRequest describes the step to repair.
type RepairRequest struct {
	Request     string // the task's request
	StepID      string
	Description string // the step's sub-goal, as the plan describes it
	Tool        string // the tool that failed
	// Arguments are the failed call's arguments before their references
	// were resolved: mapped onto the replacement, references and all, so
	// that secret inputs stay in the task's (sealed) inputs.
	Arguments json.RawMessage
	Error     string   // what the tool failed with
	Exclude   []string // tools never to choose (the failed one among them)
	// MayUse says whether the task's creator may call a tool; nil allows
	// every tool.
	MayUse func(tool string) bool
	// Inputs are the names of the plan's declared inputs and of the task's
	// inputs: a value the replacement still needs is asked under a name
	// none of them has.
	Inputs []string
	// LLM chooses among the candidates (see Repairer); nil: the builtin
	// choice.
	LLM agentsmcp.LLM
}

// StepRepair is the replacement of a step.
type StepRepair struct {
	Tool      string
	Arguments json.RawMessage
	// Known are the replacement's arguments taken from the failed call,
	// "new = old" each; Filled those taken from the sub-goal or the
	// request; Asked the inputs the user is asked for; Refused the moves
	// of the failed call's values that were not made, and why (a value
	// without the shape its new parameter shows: see shape.go).
	Known, Filled, Asked, Refused []string
	// By is the backend that chose the replacement (LLMBuiltin, or the
	// model's); Reason the model's reason; Note why a model's choice was
	// not used, when it was not.
	By, Reason, Note string

	guessed     bool                   // a value moved by its type alone (see mapArguments)
	askedParams map[string]string      // parameter → the input that asks for it
	askedShapes map[string]*valueShape // parameter → the shape its value must have
}

// Repairer is the StepRepairer of every planner. Its candidates are the
// usable tools for the step's sub-goal, searched like the thought agent
// searches (excluding the failed tool and the tools on cool-down), plus
// the other tools of the failed tool's upstream (see siblings), ranked by
// search score × estimated reliability × fit, where fit counts the
// required values the failed call or the sub-goal already give (as
// requestFit does for a request) and the failed call's values it takes; a
// tool that takes none of them (when there were some) is not a
// replacement. The arguments are mapped onto each candidate's schema: the
// failed call's values by parameter name, then by slot kind (a city fills
// a location), then slot filling from the sub-goal and the request; what
// is still missing is a task input, asked from the user, never invented.
//
// Without a model (RepairRequest.LLM nil) the best ranked candidate is the
// replacement. With one, the model chooses among the best candidates (see
// modelRepair), which it may also all reject; when it cannot answer
// validly, the builtin choice stands, and the repair says so.
type Repairer struct {
	Gatherer *Gatherer
	// Attempts bounds the model's tries at a valid answer; default 2.
	Attempts int
}

var _ StepRepairer = (*Repairer)(nil)

// repairCandidates is how many search results the repairer weighs, and
// modelCandidates how many of the best it shows a model.
const (
	repairCandidates = 8
	modelCandidates  = 5
)

// repairCandidate is a possible replacement, with its arguments mapped.
type repairCandidate struct {
	repair *StepRepair
	facts  *ToolFacts
	score  float64
}

// RepairStep implements StepRepairer.
func (rp *Repairer) RepairStep(ctx context.Context, req RepairRequest) (*StepRepair, error) {
	goal := stepGoal(req.Description, req.Request)
	cands, rejected, err := rp.candidates(ctx, req, goal)
	if err != nil {
		return nil, err
	}
	if len(cands) == 0 {
		return nil, agentsmcp.Errorf(agentsmcp.ENOTFOUND, "no other usable tool serves %q%s", goal, rejected.closest())
	}
	best := cands[0].repair
	best.By = LLMBuiltin
	if req.LLM != nil {
		chosen, err := rp.modelRepair(ctx, req, goal, cands)
		switch {
		case err == nil && chosen == nil:
			return nil, agentsmcp.Errorf(agentsmcp.ENOTFOUND, "the model judged that no candidate serves %q", goal)
		case err == nil:
			best = chosen
		default:
			best.Note = "the model's choice could not be used (" + storedform.TruncateUTF8(agentsmcp.ErrorMessage(err), 200) + "), so the builtin one stands"
		}
	}
	if len(best.Arguments) > agentsmcp.MaxStepArgumentsBytes {
		return nil, agentsmcp.Errorf(agentsmcp.EINVALID, "the arguments of %s would be %d bytes; the limit is %d", best.Tool, len(best.Arguments), agentsmcp.MaxStepArgumentsBytes)
	}
	return best, nil
}

// candidates are the possible replacements of req's tool, best first,
// and the tools weighed and turned down, with why. Beyond the search's
// matches and the siblings, the tools that served the request's family
// before and the catalog's tools that the sub-goal can drive (see
// fittingTools) are weighed; a tool that takes none of the failed call's
// values, or a sibling that does not take them all, is still a
// replacement when it can serve with the user's help (see mayAsk), ranked
// below those that take them.
func (rp *Repairer) candidates(ctx context.Context, req RepairRequest, goal string) ([]repairCandidate, *repairRejections, error) {
	g := rp.Gatherer
	matches, err := g.Catalog.SearchTools(ctx, goal, repairCandidates)
	if err != nil {
		return nil, nil, err
	}
	var old json.RawMessage
	var source string
	var near map[string]float64
	if info, err := g.Catalog.Tool(ctx, req.Tool); err == nil {
		old, source = info.InputSchema, info.Source
		if near, err = rp.nearTool(ctx, info); err != nil {
			return nil, nil, err
		}
	}
	var oldArgs map[string]json.RawMessage
	_ = json.Unmarshal(req.Arguments, &oldArgs)
	siblings, err := rp.siblings(ctx, source, matches, near)
	if err != nil {
		return nil, nil, err
	}
	served := rp.familyTools(ctx, req, matches)
	fitting := rp.fittingTools(ctx, goal, slices.Concat(matches, siblings, served))
	origin := func(m *agentsmcp.ToolMatch) candidateOrigin {
		switch {
		case slices.ContainsFunc(served, func(s *agentsmcp.ToolMatch) bool { return s.Name == m.Name }):
			return fromFamily // served the family: whichever way it was found
		case slices.Contains(siblings, m):
			return fromSibling
		case slices.Contains(fitting, m):
			return fromFitting
		}
		return fromSearch
	}
	rejected := &repairRejections{}
	var out, asking []repairCandidate
	for _, m := range slices.Concat(matches, siblings, served, fitting) {
		if isAgentTool(m.Name) || g.offTopicServerTool(goal, m.ToolInfo) || slices.Contains(req.Exclude, m.Name) || (req.MayUse != nil && !req.MayUse(m.Name)) ||
			slices.ContainsFunc(out, func(c repairCandidate) bool { return c.facts.Name == m.Name }) ||
			slices.ContainsFunc(asking, func(c repairCandidate) bool { return c.facts.Name == m.Name }) {
			continue
		}
		if why := serverToolFor(g, req.Tool, m.Name); why != "" {
			rejected.add(m.Name, m.Score*serverToolRank, why)
			continue
		}
		sibling := slices.Contains(siblings, m)
		// Of the failed tool's upstream, worded like it and taking the
		// same inputs, however found: the search may find it by its
		// server's name alone.
		_, nearFailed := near[m.Name]
		nearSibling := nearFailed && source != "" && source != localSource && m.Source == source && sameInputs(old, m.InputSchema)
		f := g.newFacts(m.ToolInfo)
		g.addRecord(ctx, f)
		if why := unusable(f); why != "" {
			rejected.add(f.Name, m.Score, why)
			continue
		}
		estimate := f.SuccessRate
		if f.Reliability.ProbeDue {
			estimate = toolperf.Prior(g.Reliability)
		}
		repair, fit := mapArguments(f.InputSchema, old, oldArgs, goal, req.Request, req.StepID, req.Inputs, true)
		if sibling && repair.guessed {
			// A sibling found by its server alone is not known to take
			// the value the way the failed tool did: the user is asked
			// for it, as a first plan of that tool would ask.
			repair, fit = mapArguments(f.InputSchema, old, oldArgs, goal, req.Request, req.StepID, req.Inputs, false)
		}
		repair.Tool = f.Name
		if why := movedOffMeaning(origin(m), f, repair, goal, source); why != "" {
			rejected.add(f.Name, m.Score, why)
			continue
		}
		score := m.Score
		if i := slices.IndexFunc(served, func(s *agentsmcp.ToolMatch) bool { return s.Name == m.Name }); i >= 0 {
			// It served the family: scored as the family's tool however
			// the search ranked it, and preferred to a tool never seen
			// to serve it (evidence over words, as a pattern's tool).
			score = max(score, served[i].Score) * familyRepairBonus
		}
		c := repairCandidate{repair: repair, facts: f, score: score * estimate * fit}
		// It takes none of the values the step was given: it may serve
		// another need that happens to share words with this one. Found
		// by its server alone, a tool must take every value the failed
		// call was given, each by its meaning, to be serving the same
		// need.
		takesNone := len(oldArgs) > 0 && len(repair.Known) == 0
		partialSibling := sibling && (len(oldArgs) == 0 || len(repair.Known) < len(oldArgs) || repair.guessed)
		if takesNone || partialSibling {
			if why := mayAsk(origin(m), nearSibling, f, repair, goal); why != "" {
				rejected.add(f.Name, m.Score, why)
				continue
			}
			asking = append(asking, c)
			continue
		}
		if why := askedOffObject(origin(m), nearSibling, f, repair, goal, source); why != "" {
			rejected.add(f.Name, m.Score, why)
			continue
		}
		out = append(out, c)
	}
	slices.SortStableFunc(out, func(a, b repairCandidate) int { return cmp.Compare(b.score, a.score) })
	slices.SortStableFunc(asking, compareAsking)
	return append(out, asking...), rejected, nil
}

// repairAnswer is the JSON a model answers a repair with.
type repairAnswer struct {
	Tool   string            `json:"tool"`
	Values map[string]string `json:"values"`
	Reason string            `json:"reason"`
}

// promptRepairCandidate is a candidate as the repair prompt shows it.
type promptRepairCandidate struct {
	Name, Health, Performance, Description, Schema, Proposed, Asked string
}

// modelRepair asks req.LLM to choose among the best candidates: the
// replacement, nil when the model judges that none serves, or an error
// when it gave no valid answer. The model chooses the tool; the arguments
// stay the mapped ones (values are never invented, and secrets the failed
// call carried are shown to the model redacted, never taken back from
// it), except that it may give a value the mapping would ask for when the
// request states it word for word.
func (rp *Repairer) modelRepair(ctx context.Context, req RepairRequest, goal string, cands []repairCandidate) (*StepRepair, error) {
	shown := cands[:min(len(cands), modelCandidates)]
	data := map[string]any{
		"Request": req.Request, "StepID": req.StepID, "Goal": goal, "Tool": req.Tool,
		"Error":     storedform.TruncateUTF8(errorClassOf(stripGaveUp(req.Error)), 500),
		"Arguments": string(redact.Arguments(req.Arguments)),
	}
	var list []promptRepairCandidate
	for _, c := range shown {
		list = append(list, promptRepairCandidate{
			Name: c.facts.Name, Health: c.facts.Health, Performance: c.facts.Performance(),
			Description: storedform.TruncateUTF8(c.facts.Description, 500), Schema: string(c.facts.InputSchema),
			Proposed: string(redact.Arguments(c.repair.Arguments)), Asked: strings.Join(slices.Sorted(maps.Keys(c.repair.askedParams)), ", "),
		})
	}
	data["Candidates"] = list
	llmReq := &agentsmcp.LLMRequest{
		System:   stepRepairPrompt,
		Messages: []agentsmcp.LLMMessage{{Role: agentsmcp.LLMRoleUser, Content: render(stepRepairContext, data)}},
		Purpose:  "step-repair",
	}
	attempts := rp.Attempts
	if attempts <= 0 {
		attempts = 2
	}
	var answer repairAnswer
	var chosen *StepRepair
	_, _, err := completeJSON(ctx, req.LLM, llmReq, attempts, &answer, func() error {
		chosen = nil
		if strings.TrimSpace(answer.Tool) == "" {
			return nil
		}
		i := slices.IndexFunc(shown, func(c repairCandidate) bool { return c.facts.Name == answer.Tool })
		if i < 0 {
			return agentsmcp.Errorf(agentsmcp.EINVALID, "tool %q is not one of the candidates", answer.Tool)
		}
		r, err := withRequestValues(shown[i].repair, answer.Values, req.Request)
		if err != nil {
			return err
		}
		chosen = r
		return nil
	})
	if err != nil {
		return nil, err
	}
	if chosen != nil {
		chosen.By, chosen.Reason = backendOf(req.LLM), storedform.TruncateUTF8(answer.Reason, 300)
	}
	return chosen, nil
}

// withRequestValues is repair with values a model gave for parameters it
// would ask for: each must be a parameter the repair asks for, and text of
// the request. The repair itself is left as it is.
func withRequestValues(repair *StepRepair, values map[string]string, request string) (*StepRepair, error) {
	if len(values) == 0 {
		return repair, nil
	}
	var args map[string]json.RawMessage
	if err := json.Unmarshal(repair.Arguments, &args); err != nil {
		return nil, err
	}
	c := *repair
	c.Asked = slices.Clone(repair.Asked)
	for param, v := range values {
		input, asked := repair.askedParams[param]
		switch {
		case !asked:
			return nil, agentsmcp.Errorf(agentsmcp.EINVALID, "values.%s: the repair asks for no such parameter; give values only for those it would ask for", param)
		case strings.TrimSpace(v) == "" || !strings.Contains(strings.ToLower(request), strings.ToLower(strings.TrimSpace(v))):
			return nil, agentsmcp.Errorf(agentsmcp.EINVALID, "values.%s: %q is not text of the request; leave it out and the user is asked", param, v)
		case repair.askedShapes[param].problem(strings.TrimSpace(v)) != "":
			return nil, agentsmcp.Errorf(agentsmcp.EINVALID, "values.%s: %s; leave it out and the user is asked", param, repair.askedShapes[param].problem(strings.TrimSpace(v)))
		}
		args[param], _ = json.Marshal(strings.TrimSpace(v))
		c.Asked = slices.DeleteFunc(c.Asked, func(n string) bool { return n == input })
		c.Filled = append(slices.Clone(c.Filled), fmt.Sprintf("%s = %q (the model, from the request)", param, strings.TrimSpace(v)))
	}
	c.Arguments, _ = json.Marshal(args)
	return &c, nil
}

// siblings are the tools of upstream source that the search did not find
// among matches, scored below all of them: an upstream's tools for one need
// are often worded apart ("convert an amount of money" and "price a sum in
// a target denomination"), so that a search for the sub-goal misses the
// alternative that would serve it. RepairStep keeps one only when it takes
// every value the failed call was given. None for local tools, whose
// source is not one server's.
func (rp *Repairer) siblings(ctx context.Context, source string, matches []*agentsmcp.ToolMatch, near map[string]float64) ([]*agentsmcp.ToolMatch, error) {
	if source == "" || source == localSource {
		return nil, nil
	}
	all, err := rp.Gatherer.Catalog.ListTools(ctx)
	if err != nil {
		return nil, err
	}
	score := siblingScore
	for _, m := range matches {
		score = min(score, m.Score/2)
	}
	var out []*agentsmcp.ToolMatch
	for _, info := range all {
		if info.Source != source || slices.ContainsFunc(matches, func(m *agentsmcp.ToolMatch) bool { return m.Name == info.Name }) {
			continue
		}
		m := &agentsmcp.ToolMatch{ToolInfo: *info, Score: score, Why: "another tool of " + source}
		if s, ok := near[info.Name]; ok {
			// Worded like the failed tool: the nearer, the better, and
			// still below every match of the sub-goal.
			m.Score, m.Why = score*(1+s), m.Why+", worded like the failed tool"
		}
		out = append(out, m)
	}
	slices.SortStableFunc(out, func(a, b *agentsmcp.ToolMatch) int { return cmp.Compare(b.Score, a.Score) })
	return out, nil
}

// familyRepairBonus weighs a candidate that served the request's family
// before, as the planner weighs a tool of a proven pattern.
const familyRepairBonus = 1.5

// localSource is the ToolInfo.Source of the tools of this process.
const localSource = "local"

// siblingScore is the search score of a sibling when the search found
// nothing to rank it below.
const siblingScore = 0.01

// takenFromRequest is the note describeStep adds to a sub-goal.
var takenFromRequest = regexp.MustCompile(`\s*\(taken from the request: .*\)$`)

// stepGoal is the sub-goal of a step: its description without the note
// of the values taken from the request, or the request when it has none.
func stepGoal(description, request string) string {
	if goal := strings.TrimSpace(takenFromRequest.ReplaceAllString(description, "")); goal != "" {
		return goal
	}
	return request
}

// mapArguments maps a failed call's arguments (oldArgs, of a tool with
// input schema old) onto a tool with input schema schema, and returns the
// repair with its fit: (1 + required values given) / (1 + required), times
// (1 + the failed call's values used) / (1 + its values), halved when a
// value moved by its type alone (the one value left onto the one value
// missing). A tool that
// needs values nobody gave, or leaves aside what the failed call was given,
// most likely does something else.
//
// With guess false, no value moves by its type alone: the parameter it
// would fill is asked instead.
func mapArguments(schema, old json.RawMessage, oldArgs map[string]json.RawMessage, goal, request, stepID string, inputs []string, guess bool) (*StepRepair, float64) {
	params, required := schemaParams(schema)
	oldParams, _ := schemaParams(old)
	oldKinds := map[string]slotParam{}
	for _, p := range oldParams {
		oldKinds[p.name] = p
	}
	oldNames := make([]string, 0, len(oldArgs))
	for n, v := range oldArgs {
		if len(v) == 0 || string(v) == "null" || string(v) == `""` {
			continue
		}
		oldNames = append(oldNames, n)
		if _, ok := oldKinds[n]; !ok {
			oldKinds[n] = classifySlot(n, schemaProperty{Type: "string"}, false)
		}
	}
	slices.Sort(oldNames)
	repair := &StepRepair{}
	args := map[string]json.RawMessage{}
	used := map[string]bool{}
	take := func(p slotParam, from string) {
		args[p.name], used[from] = oldArgs[from], true
		repair.Known = append(repair.Known, p.name+" = "+from)
	}
	fits := func(p slotParam, from string) bool {
		why := moveProblem(p, oldKinds[from], oldArgs[from])
		if why != "" && !slices.Contains(repair.Refused, p.name+" = "+from+": "+why) {
			repair.Refused = append(repair.Refused, p.name+" = "+from+": "+why)
		}
		return why == ""
	}
	var rest []slotParam
	for _, p := range params {
		if slices.Contains(oldNames, p.name) && !used[p.name] && fits(p, p.name) {
			take(p, p.name)
			continue
		}
		if from := sameKind(p, oldNames, oldKinds, used, fits); from != "" {
			take(p, from)
			continue
		}
		rest = append(rest, p)
	}
	// Slot filling, from the sub-goal first and then the whole request.
	for _, text := range []string{goal, request} {
		if len(rest) == 0 || text == "" {
			break
		}
		found := fillSlots(text, rest)
		var left []slotParam
		for _, p := range rest {
			if fill, ok := found[p.name]; ok {
				b, _ := json.Marshal(fill.value)
				args[p.name] = b
				repair.Filled = append(repair.Filled, fill.note)
				// A value composed of the failed call's values takes them
				// by their meaning: "USD" and "EUR" of from and to make the
				// pair USD/EUR.
				if from := composedOf(fill.parts, oldNames, oldArgs, used); len(from) > 0 {
					for _, n := range from {
						used[n] = true
					}
					repair.Known = append(repair.Known, p.name+" = "+strings.Join(from, " + ")+" (composed)")
				}
			} else {
				left = append(left, p)
			}
		}
		rest = left
	}
	// The one value of the failed call left for the one required value
	// still missing: both tools serve the same sub-goal, so what the one
	// needed is what the other does (a tracking number, a waybill code).
	var unused []string
	for _, n := range oldNames {
		if !used[n] {
			unused = append(unused, n)
		}
	}
	if missing := slices.DeleteFunc(slices.Clone(rest), func(p slotParam) bool { return !p.required }); guess && len(missing) == 1 && len(unused) == 1 &&
		sameType(missing[0], oldKinds[unused[0]]) && fits(missing[0], unused[0]) {
		take(missing[0], unused[0])
		repair.guessed = true
		rest = slices.DeleteFunc(rest, func(p slotParam) bool { return p.name == missing[0].name })
	}
	given := required
	taken := slices.Clone(inputs)
	for _, p := range rest {
		if !p.required {
			continue
		}
		given--
		name := inputName(p.name, stepID, taken)
		taken = append(taken, name)
		b, _ := json.Marshal("{{inputs." + name + "}}")
		args[p.name] = b
		repair.Asked = append(repair.Asked, name)
		if repair.askedParams == nil {
			repair.askedParams = map[string]string{}
		}
		repair.askedParams[p.name] = name
		if p.shape != nil {
			if repair.askedShapes == nil {
				repair.askedShapes = map[string]*valueShape{}
			}
			repair.askedShapes[p.name] = p.shape
		}
	}
	repair.Arguments, _ = json.Marshal(args)
	usedCount := 0
	for range used {
		usedCount++
	}
	fit := float64(1+given) / float64(1+required) * float64(1+usedCount) / float64(1+len(oldNames))
	if repair.guessed {
		fit /= 2 // a value matched by its type alone is a weaker sign than one matched by meaning
	}
	return repair, fit
}

// sameType reports whether two parameters take the same JSON type.
func sameType(a, b slotParam) bool {
	for _, t := range []string{"string", "integer", "number", "boolean"} {
		if a.prop.is(t) {
			return b.prop.is(t) || (t == "integer" || t == "number") && (b.prop.is("integer") || b.prop.is("number"))
		}
	}
	return false
}

// schemaParams classifies the properties of an input schema, by name, and
// counts the required ones.
func schemaParams(schema json.RawMessage) ([]slotParam, int) {
	var doc struct {
		Properties map[string]json.RawMessage `json:"properties"`
		Required   []string                   `json:"required"`
	}
	_ = json.Unmarshal(schema, &doc)
	params := make([]slotParam, 0, len(doc.Properties))
	required := 0
	for name, raw := range doc.Properties {
		var sp schemaProperty
		_ = json.Unmarshal(raw, &sp)
		req := slices.Contains(doc.Required, name)
		if req {
			required++
		}
		params = append(params, classifySlot(name, sp, req))
	}
	slices.SortFunc(params, func(a, b slotParam) int { return cmp.Compare(a.name, b.name) })
	return params, required
}

// sameKind is the unused old argument whose parameter means what p does:
// of p's kind, or a bare endpoint of its role (a "source" takes a "from"
// currency), and of its role when both have one; numbers only when both
// are amounts (a sum takes an amount, a limit does not); identifiers only
// of one thing (an order_id takes an order_number, a waybill a tracking
// number, but a customer_id no order_id). Kinds too loose to say two
// parameters mean the same (none, enum) match only by name.
//
// A value that does not fit p (see moveProblem) is not moved.
func sameKind(p slotParam, oldNames []string, oldKinds map[string]slotParam, used map[string]bool, fits func(p slotParam, from string) bool) string {
	if p.kind == slotNone || p.kind == slotEnum {
		return ""
	}
	for _, n := range oldNames {
		o := oldKinds[n]
		if used[n] || (o.role != roleNone && p.role != roleNone && o.role != p.role) {
			continue
		}
		if !sameKindAs(p, o) || !fits(p, n) {
			continue
		}
		return n
	}
	return ""
}

// sameKindAs reports whether old parameter o means what p does (see
// sameKind), their values aside.
func sameKindAs(p, o slotParam) bool {
	switch {
	case p.kind == slotNumber || o.kind == slotNumber:
		return p.kind == o.kind && isAmount(p) && isAmount(o)
	case p.kind == slotIdentifier || o.kind == slotIdentifier:
		return p.kind == o.kind && sameThing(p, o)
	case p.kind == o.kind && p.kind != slotEndpoint:
		return true
	case (p.kind == slotEndpoint || o.kind == slotEndpoint) && p.role != roleNone && p.role == o.role:
		return true
	}
	return false
}

// sameThing reports whether two identifiers name one thing: a word of
// their names in common other than "number" or "code" ("order"), or both
// a shipment's (their synonyms are the shipment nouns).
func sameThing(a, b slotParam) bool {
	if a.synonyms != nil && b.synonyms != nil {
		return true
	}
	return slices.ContainsFunc(a.keys, func(k string) bool {
		return slices.Contains(b.keys, k) && !slices.Contains(slotWordsIdentifierWeak, k) && !slices.Contains(slotWordsIdentifierName, k)
	})
}

// isAmount reports whether a number parameter is an amount of something.
func isAmount(p slotParam) bool {
	return slices.ContainsFunc(p.keys, func(w string) bool { return slices.Contains(slotWordsAmount, w) })
}

var inputNameUnsafe = regexp.MustCompile(`[^A-Za-z0-9_-]+`)

// inputName is the name of the task input that asks for parameter param:
// the parameter's name, or prefixed with the step's when taken.
func inputName(param, stepID string, taken []string) string {
	name := strings.Trim(inputNameUnsafe.ReplaceAllString(param, "_"), "_-")
	if name == "" || !planlang.InputNamePattern.MatchString(name) {
		name = "value"
	}
	if !slices.Contains(taken, name) {
		return name
	}
	prefixed := storedform.TruncateUTF8(strings.ReplaceAll(stepID, "-", "_")+"_"+name, 60)
	for n := 2; slices.Contains(taken, prefixed) || !planlang.InputNamePattern.MatchString(prefixed); n++ {
		prefixed = fmt.Sprintf("%s_%d", storedform.TruncateUTF8(name, 56), n)
	}
	return prefixed
}

// eventStepRepaired is the type of the history event of a repair; its
// message ends with repairedErrorNote and the class of the failed tool's
// error, which the learner quotes in the failed tool's pitfall.
const (
	eventStepRepaired = "step_repaired"
	repairedErrorNote = "; it failed with: "
)

// repairsDone counts the task's repaired steps.
func (r *runner) repairsDone() int {
	n := 0
	for _, s := range r.task.Steps {
		if s.RepairedTool != "" {
			n++
		}
	}
	return n
}

// mayRepair reports whether step i, which failed for good, may be
// repaired: a repairer is set, the task goes on, and neither the step's
// nor the task's repairs are used up.
func (r *runner) mayRepair(i int) bool {
	switch {
	case r.e.opts.Repairer == nil || r.cancelWhy != "" || r.stopping.Load() || r.lost:
		return false
	case r.task.Steps[i].RepairedTool != "": // one replacement a step: maxRepairsPerStep
		return false
	}
	return r.repairsDone() < maxRepairsPerTask
}

// repairTimeout bounds the search for a replacement, a model's answer
// included.
const repairTimeout = time.Minute

// repairRequest describes step i, which failed with errText, to the
// repairer, with the model of the request waiting for the task (see
// ExecutorOptions.RepairLLM). Built in the runner's goroutine: it reads the
// task state.
func (r *runner) repairRequest(i int, errText string) RepairRequest {
	step := r.plan.Steps[i]
	var inputs []string
	for n := range declaredInputs(r.plan.Inputs) {
		inputs = append(inputs, n)
	}
	for n := range planlang.InputNames(r.task.Inputs) {
		inputs = append(inputs, n)
	}
	slices.Sort(inputs)
	return RepairRequest{
		Request: r.task.Request, StepID: step.ID, Description: step.Description,
		Tool: r.stepTool(i), Arguments: r.stepArguments(i), Error: errText,
		Exclude: slices.Compact([]string{step.Tool, r.stepTool(i)}),
		MayUse:  r.creator.MayUseTool, // a nil creator may use every tool
		Inputs:  slices.Compact(inputs),
		LLM:     r.repairLLM(),
	}
}

// repairLLM is the model a repair may ask, for the caller waiting now.
func (r *runner) repairLLM() agentsmcp.LLM {
	choose := r.e.opts.RepairLLM
	if choose == nil {
		return nil
	}
	var session *mcp.ServerSession
	if c := r.currentCaller(); c != nil {
		session = c.Session()
	}
	return choose(session)
}

// callerValues are the values of the request waiting for the task, or
// the background.
func (r *runner) callerValues() context.Context {
	if c := r.currentCaller(); c != nil && c.Request() != nil {
		return c.Request()
	}
	return context.Background()
}

// findRepair asks the repairer for a replacement of step i and reports to
// the runner. base carries the values of the request waiting for the task,
// if any, so that a model asked through sampling is asked on that
// request's stream.
func (r *runner) findRepair(base context.Context, i int, req RepairRequest) {
	ctx, cancel := context.WithTimeout(base, repairTimeout)
	defer cancel()
	if r.creator != nil {
		ctx = agentsmcp.WithPrincipal(ctx, r.creator)
	}
	repair, err := r.e.opts.Repairer.RepairStep(ctx, req)
	found := stepRepairFound{index: i, failed: req.Error, repair: repair}
	if err != nil || repair == nil {
		found.repair, found.why = nil, "no replacement"
		if err != nil {
			found.why = agentsmcp.ErrorMessage(err)
		}
	}
	r.send(found)
}

// applyRepair ends step i as failed when no replacement was found (or the
// task is being cancelled), and otherwise stores the replacement and makes
// the step pending again: the next schedule checks the new tool against
// the creator's allowlist, asks for its confirmation when it is
// destructive, and for the inputs it still lacks.
func (r *runner) applyRepair(ev stepRepairFound, now time.Time) {
	i := ev.index
	s := &r.task.Steps[i]
	if ev.repair == nil || r.cancelWhy != "" || r.lost {
		if ev.why != "" {
			r.event("replacement_not_found", s.StepID, ev.why)
		}
		r.endStep(i, agentsmcp.StepFailed, nil, ev.failed, now)
		return
	}
	failedTool := r.stepTool(i)
	s.RepairedTool, s.RepairedArguments = ev.repair.Tool, ev.repair.Arguments
	s.Status, s.Error, s.Attempts, s.Confirmed = agentsmcp.StepPending, "", 0, false
	s.StartedAt, s.EndedAt = time.Time{}, time.Time{}
	r.refs[i], r.refErrs[i] = planlang.FindRefs(s.RepairedArguments)
	r.askedConfirms = slices.DeleteFunc(r.askedConfirms, func(k int) bool { return k == i })
	r.askedInput = false
	msg := fmt.Sprintf("step %s failed with tool %s; repaired with tool %s", s.StepID, failedTool, s.RepairedTool)
	if len(ev.repair.Known) > 0 {
		msg += "; arguments from the failed call: " + strings.Join(ev.repair.Known, ", ")
	}
	if len(ev.repair.Filled) > 0 {
		msg += "; from the request: " + strings.Join(ev.repair.Filled, "; ")
	}
	if len(ev.repair.Asked) > 0 {
		msg += "; asks for: " + strings.Join(ev.repair.Asked, ", ")
	}
	if len(ev.repair.Refused) > 0 {
		msg += "; not moved: " + strings.Join(ev.repair.Refused, "; ")
	}
	switch {
	case ev.repair.Note != "":
		msg += "; " + ev.repair.Note
	case ev.repair.By != "" && ev.repair.By != LLMBuiltin:
		msg += "; chosen by the model (" + ev.repair.By + ")"
		if ev.repair.Reason != "" {
			msg += ": " + ev.repair.Reason
		}
	}
	msg += repairedErrorNote + errorClassOf(stripGaveUp(ev.failed))
	r.event(eventStepRepaired, s.StepID, msg)
	r.progress(fmt.Sprintf("step %s repaired with %s", s.StepID, s.RepairedTool))
}

// repairedPlan is p as task t ran it: each repaired step calls its
// replacement with its repaired arguments, and the inputs the repairs ask
// for are declared, so that a plan reused for the family starts with the
// tools that worked. p itself when t repaired nothing.
func repairedPlan(p *agentsmcp.Plan, t *agentsmcp.Task) *agentsmcp.Plan {
	if len(t.Steps) != len(p.Steps) || !slices.ContainsFunc(t.Steps, func(s agentsmcp.StepState) bool { return s.RepairedTool != "" }) {
		return p
	}
	c := *p
	c.Steps = slices.Clone(p.Steps)
	inputs := newInputsSchema()
	inputs.merge(p.Inputs)
	for i, s := range t.Steps {
		if s.RepairedTool == "" || s.StepID != c.Steps[i].ID {
			continue
		}
		c.Steps[i].Tool, c.Steps[i].Arguments = s.RepairedTool, s.RepairedArguments
		refs, _ := planlang.FindRefs(s.RepairedArguments)
		for _, ref := range refs {
			if _, ok := inputs.properties[ref.Name]; ref.Kind == planlang.RefInput && !ok {
				inputs.properties[ref.Name] = json.RawMessage(fmt.Sprintf(`{"type":"string","title":%q}`, ref.Name))
				inputs.required = append(inputs.required, ref.Name)
			}
		}
	}
	c.Inputs = inputs.raw()
	return &c
}
