package agents

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	agentsmcp "github.com/agents-mcp/agents-mcp"
)

// This file is the planner's last resort before "no usable tool": tools of
// the catalog that the search missed but the request can drive, and, when
// there is none, which tools came closest and why each was turned down.

// requiredGaps returns the required parameters of schema and those of
// them that text does not give (see fillSlots), in schema order.
func requiredGaps(schema json.RawMessage, text string) (required, missing []string) {
	required, missing, _ = requiredValues(schema, text)
	return required, missing
}

// requiredValues is requiredGaps, and how many of the request's values the
// required parameters it gives take: one each, or as many as the parts of
// a value composed from them (see compose.go: "LHR-JFK" from "LHR to JFK"
// takes two).
func requiredValues(schema json.RawMessage, text string) (required, missing []string, values int) {
	var doc struct {
		Properties map[string]json.RawMessage `json:"properties"`
		Required   []string                   `json:"required"`
	}
	if json.Unmarshal(schema, &doc) != nil {
		return nil, nil, 0
	}
	params := make([]slotParam, 0, len(doc.Required))
	for _, name := range doc.Required {
		var sp schemaProperty
		_ = json.Unmarshal(doc.Properties[name], &sp)
		params = append(params, classifySlot(name, sp, true))
	}
	found := fillSlots(text, params)
	for _, name := range doc.Required {
		fill, ok := found[name]
		if !ok {
			missing = append(missing, name)
			continue
		}
		values += max(1, len(fill.parts))
	}
	return doc.Required, missing, values
}

// fittingTools are the tools of the catalog, beyond those in have, whose
// every required parameter goal gives: a request worded unlike every
// description can still drive them. A tool needs two of the request's
// values at least (two required parameters, or one composed of two parts
// in the shape it shows: "route such as LHR-JFK" from "AMS to SIN"): one
// value found (a city, a name) is too weak a sign that the request is
// about the tool ("book a flight to Rome" gives a weather tool's city).
// Each comes as a match
// scored below every search match (score), so that a word in common still
// wins, best fit first by name; at most max.
func fittingTools(tools []*agentsmcp.ToolInfo, goal string, have []*agentsmcp.ToolMatch, score float64, max int) []*agentsmcp.ToolMatch {
	var out []*agentsmcp.ToolMatch
	for _, t := range tools {
		if len(out) == max {
			break
		}
		if isAgentTool(t.Name) || slices.ContainsFunc(have, func(m *agentsmcp.ToolMatch) bool { return m.Name == t.Name }) {
			continue
		}
		required, missing, values := requiredValues(t.InputSchema, goal)
		if values < 2 || len(missing) > 0 {
			continue
		}
		out = append(out, &agentsmcp.ToolMatch{ToolInfo: *t, Score: score,
			Why: "no word in common; the request gives every required parameter (" + strings.Join(required, ", ") + ")"})
	}
	return out
}

// rejection is why a tool was not planned for a sub-goal.
func rejection(f *ToolFacts, goal string) string {
	switch r := f.Reliability; {
	case !f.Usable():
		return fmt.Sprintf("its upstream %s is down", f.Source)
	case r.CoolingDown:
		return fmt.Sprintf("on cool-down after %d failures", r.ConsecutiveFailures)
	}
	if _, missing := requiredGaps(f.InputSchema, goal); len(missing) > 0 {
		return "needs " + joinAnd(missing) + ", which the request does not give"
	}
	return "no word in common with the request"
}

// noUsableTool is the planner's answer when no tool can take sub-goal
// goal: it names the closest tools (the search's candidates first, then
// the catalog's, those the request gives most of first) and why each was
// turned down, at most three.
func (p *Planner) noUsableTool(ctx context.Context, k *Knowledge, goal string) error {
	var closest []string
	add := func(f *ToolFacts) {
		if len(closest) < 3 {
			closest = append(closest, f.Name+": "+rejection(f, goal))
		}
	}
	named := map[string]bool{}
	for _, m := range k.Candidates[goal] {
		if f := k.Tools[m.Name]; f != nil && !named[f.Name] {
			named[f.Name] = true
			add(f)
		}
	}
	if tools, err := p.Gatherer.Catalog.ListTools(ctx); err == nil && len(closest) < 3 {
		type near struct {
			info  *agentsmcp.ToolInfo
			given float64
		}
		var nears []near
		for _, t := range tools {
			if isAgentTool(t.Name) || named[t.Name] {
				continue
			}
			required, missing := requiredGaps(t.InputSchema, goal)
			if len(required) == 0 {
				continue // it takes nothing from the request
			}
			nears = append(nears, near{t, float64(len(required)-len(missing)) / float64(len(required))})
		}
		slices.SortStableFunc(nears, func(a, b near) int { return cmp.Compare(b.given, a.given) })
		for _, n := range nears[:min(len(nears), 3-len(closest))] {
			f := p.Gatherer.newFacts(*n.info)
			p.Gatherer.addRecord(ctx, f)
			add(f)
		}
	}
	msg := fmt.Sprintf("no usable tool matches %q", clipText(goal))
	if len(closest) > 0 {
		msg += "; closest: " + strings.Join(closest, "; ")
	}
	return agentsmcp.Errorf(agentsmcp.EINVALID, "%s. Connect an upstream that provides one, or rephrase the request", msg)
}

// joinAnd joins words as prose: "a", "a and b", "a, b and c".
func joinAnd(words []string) string {
	if len(words) <= 1 {
		return strings.Join(words, "")
	}
	return strings.Join(words[:len(words)-1], ", ") + " and " + words[len(words)-1]
}
