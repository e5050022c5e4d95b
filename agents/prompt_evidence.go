package agents

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// This file is what the model prompts show beyond the tools and memory:
// the understanding the builtin planner acts on, so that a model plans
// from the same evidence. For each sub-goal, its candidates with why each
// matched (the search's score and reason: its words, its meaning, the
// family it served, the values the sub-goal gives); for each tool, the
// values the request gives for its parameters, composed where the
// parameter shows a composed shape, and those the user would be asked
// for; the values of specific kinds that every plan must use (see
// request_values.go); and the past request whose task family the request
// joined.

// promptCandidates is one sub-goal's candidates as the prompts show them.
type promptCandidates struct {
	Goal    string
	Matches string
}

// candidatesWhy renders, per sub-goal, its candidates best first with their
// score and why they matched.
func candidatesWhy(k *Knowledge) []promptCandidates {
	var out []promptCandidates
	for _, g := range k.SubGoals {
		var parts []string
		for _, m := range k.Candidates[g] {
			why := m.Why
			if why == "" {
				why = "its words or meaning"
			}
			parts = append(parts, fmt.Sprintf("%s (score %.2f: %s)", m.Name, m.Score, clip(why)))
		}
		if len(parts) == 0 {
			parts = []string{"none found"}
		}
		out = append(out, promptCandidates{Goal: g, Matches: strings.Join(parts, "; ")})
	}
	if len(k.Related) > 0 {
		var parts []string
		for _, name := range slices.Sorted(maps.Keys(k.Related)) {
			parts = append(parts, name+" ("+k.Related[name]+")")
		}
		out = append(out, promptCandidates{Goal: "beside the candidates, to use with them", Matches: strings.Join(parts, "; ")})
	}
	return out
}

// toolValues says what the request gives for the parameters of tool f,
// read from the first sub-goal f is a candidate of (the request when
// none): each value taken, with where it came from ("pair = 'USD/EUR'
// composed from 'USD' and 'EUR' in the request"), and each required value
// the user would be asked for, with the shape it must have. "" when the
// tool takes nothing.
func toolValues(k *Knowledge, f *ToolFacts) string {
	goal := k.Request
	for _, g := range k.SubGoals {
		for _, m := range k.Candidates[g] {
			if m.Name == f.Name {
				goal = g
				break
			}
		}
	}
	_, taken, asked := fillStepArgumentsFlow(f.InputSchema, goal, k.Request, "prompt", stepFlow{tool: &f.ToolInfo}, newInputsSchema())
	var parts []string
	if len(taken) > 0 {
		parts = append(parts, "the request gives "+strings.Join(taken, "; "))
	}
	if len(asked) > 0 {
		var names []string
		for _, p := range asked {
			n := p.name
			if key := p.shape.key(); key != "" {
				n += " (" + key + ")"
			}
			names = append(names, n)
		}
		parts = append(parts, "ask the user for "+joinAnd(names))
	}
	return clip(strings.Join(parts, "; "))
}

// requestValuesText lists the request's values of specific kinds, "" for
// none.
func requestValuesText(request string) string {
	var named []string
	for _, v := range requestValues(request) {
		named = append(named, v.describe())
	}
	return strings.Join(named, ", ")
}
