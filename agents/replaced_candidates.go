package agents

import (
	"context"
	"fmt"
	"slices"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/internal/storedform"
)

// This file makes a tool that took over from a candidate in a past task a
// candidate too: the evidence a repair left. When a step's tool failed and
// the task then succeeded on another tool (Learning.Tools lists the tool
// left, Learning.Steps the one that served), the second does what the
// first was planned for, however differently the two are worded. The
// next request that finds the first by its words ("Where exactly on the
// map is …" finds geocode_address, on cool-down) gets the second as a
// candidate as well, instead of whatever else the words happen to meet.

// replacementScore is the share of the replaced candidate's score that
// its replacement gets: just below it, so that the candidate keeps the
// first place while it works, and the replacement takes it by its record
// when the candidate fails or cools down.
const replacementScore = 0.9

// replacements maps each tool that a past successful one-step task left
// to the tools that served in its place, most recent first, from past
// (most recent first): a tool on each side at most once.
func replacements(past []*agentsmcp.Learning) map[string][]replacement {
	out := map[string][]replacement{}
	for _, l := range past {
		if l.Outcome != agentsmcp.OutcomeSuccess || len(l.Steps) != 1 {
			continue
		}
		served := l.Steps[0]
		for _, left := range l.Tools {
			if left == served || slices.ContainsFunc(out[left], func(r replacement) bool { return r.tool == served }) {
				continue
			}
			out[left] = append(out[left], replacement{tool: served, query: l.Query})
		}
	}
	return out
}

// replacement is a tool that served a request in place of another.
type replacement struct {
	tool  string // the tool that served
	query string // the request it served
}

// addReplacements adds to each sub-goal's candidates the tools that
// replaced one of them in a past task of recalled (see replacements),
// scored replacementScore × the replaced candidate's score, with why.
// Tools the caller cannot use any more are skipped; the agents' and the
// server's own tools never replace an upstream tool.
func (g *Gatherer) addReplacements(ctx context.Context, k *Knowledge, recalled []*agentsmcp.Learning) {
	byTool := replacements(recalled)
	if len(byTool) == 0 {
		return
	}
	for _, goal := range k.SubGoals {
		kept := k.Candidates[goal]
		var added []*agentsmcp.ToolMatch
		for _, m := range kept {
			for _, r := range byTool[m.Name] {
				has := func(x *agentsmcp.ToolMatch) bool { return x.Name == r.tool }
				if isAgentTool(r.tool) || slices.Contains(g.ServerTools, r.tool) || slices.ContainsFunc(kept, has) || slices.ContainsFunc(added, has) {
					continue
				}
				info, err := g.Catalog.Tool(ctx, r.tool)
				if err != nil {
					continue // gone since, or not the caller's
				}
				added = append(added, &agentsmcp.ToolMatch{ToolInfo: *info, Score: m.Score * replacementScore,
					Why: fmt.Sprintf("served in place of %s when it failed (%q)", m.Name, storedform.TruncateUTF8(r.query, 80))})
			}
		}
		if len(added) == 0 {
			continue
		}
		k.Candidates[goal] = append(kept, added...)
		slices.SortStableFunc(k.Candidates[goal], func(a, b *agentsmcp.ToolMatch) int {
			switch {
			case a.Score > b.Score:
				return -1
			case a.Score < b.Score:
				return 1
			}
			return 0
		})
		for _, m := range added {
			if _, seen := k.Tools[m.Name]; !seen {
				k.Tools[m.Name] = g.newFacts(m.ToolInfo)
			}
		}
	}
}
