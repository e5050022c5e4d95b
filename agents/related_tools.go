package agents

import (
	"fmt"
	"slices"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/internal/redact"
)

// This file lists, beside a sub-goal's candidates, the tools a plan may
// need with them that the search cannot find by words: those that take a
// value of a specific kind the sub-goal gives (its URL, its "#channel"),
// and those that return a value a candidate needs and the sub-goal does
// not give, from values it does ("look up a person … and return their
// email address"). The builtin planner reaches them itself (see
// request_values.go and lookupsFor); a model sees them only if the
// prompts list them, so they join the known tools (Knowledge.Tools) with
// why, never the candidates: none of them is the step a sub-goal is
// about, and the best tool is picked among the candidates alone.

// relatedTools adds to k, for each sub-goal, the catalog's tools (all)
// that take one of its values, and those that return a value one of its
// candidates lacks, at most two per value; each with why in k.Related.
func (g *Gatherer) relatedTools(k *Knowledge, all []*agentsmcp.ToolInfo) {
	add := func(t *agentsmcp.ToolInfo, why string) {
		if _, known := k.Tools[t.Name]; known {
			return
		}
		f := g.newFacts(*t)
		k.Tools[t.Name] = f
		if k.Related == nil {
			k.Related = map[string]string{}
		}
		k.Related[t.Name] = why
	}
	usable := func(t *agentsmcp.ToolInfo) bool {
		return !isAgentTool(t.Name) && !slices.Contains(g.ServerTools, t.Name) && !t.Destructive && t.Health != agentsmcp.HealthDown
	}
	for _, goal := range k.SubGoals {
		for _, v := range requestValues(goal) {
			n := 0
			for _, t := range all {
				if n < 2 && usable(t) && toolTakes(t.InputSchema, v) {
					add(t, fmt.Sprintf("takes %s, which the request gives", v.describe()))
					n++
				}
			}
		}
		for _, m := range k.Candidates[goal] {
			_, _, asked := fillStepArgumentsFlow(m.InputSchema, goal, k.Request, "related", stepFlow{tool: &m.ToolInfo}, newInputsSchema())
			for _, want := range asked {
				switch want.kind {
				case slotNone, slotText, slotEnum, slotEndpoint:
					continue
				}
				if redact.IsSecretName(want.name) {
					continue
				}
				n := 0
				for _, t := range all {
					if n < 2 && t.Name != m.Name && usable(t) && saysItReturns(t, want) && givesEveryInput(t.InputSchema, goal) {
						add(t, fmt.Sprintf("returns %s, which %s needs and the request does not give; the request gives what it takes", want.name, m.Name))
						n++
					}
				}
			}
		}
	}
}
