package agents

import (
	"slices"

	agentsmcp "github.com/agents-mcp/agents-mcp"
)

// This file weighs a candidate's evidence against what the request gives:
// a tool that shares no word with the request and needs a value the
// request does not hold (it would ask for everything) is matched on weak
// evidence, the search's related words or a low similarity ("Price a
// ticket AMS to SIN" and "count the open issues of a code repository", by
// way of ticket → issue), and loses to a candidate that the request drives
// whole: every required value given, two of them at least, as fittingTools
// takes them ("route such as LHR-JFK" composed from "AMS" and "SIN").

// weakEvidenceWeight scales the score of a candidate on weak evidence
// while another candidate is driven whole by the request (see
// drivenWhole).
const weakEvidenceWeight = 0.25

// drivenWhole reports whether goal gives every required value of f, two
// of the request's values at least (see requiredValues).
func drivenWhole(f *ToolFacts, goal string) bool {
	_, missing, values := requiredValues(f.InputSchema, goal)
	return len(missing) == 0 && values >= 2
}

// weakEvidence reports whether f's match to goal rests on weak evidence
// only: no word of what goal is about in its name or description (see
// sharesObject), and a required value goal does not give.
func weakEvidence(f *ToolFacts, goal string) bool {
	if sharesObject(goal, f) {
		return false
	}
	_, missing := requiredGaps(f.InputSchema, goal)
	return len(missing) > 0
}

// wholeCandidate is the first of goal's usable candidates that goal drives
// whole and whose effect serves want; "" when none. The server's own tools
// are among the candidates only when goal names what they hold (the
// Gatherer drops the others, see offTopicServerTool).
func wholeCandidate(k *Knowledge, goal string, want effect) string {
	for _, m := range k.Candidates[goal] {
		f := k.Tools[m.Name]
		if f == nil || !f.Usable() || f.Reliability.CoolingDown || !servesIntent(want, toolEffects(f.Name, f.Description)) {
			continue
		}
		if drivenWhole(f, goal) {
			return m.Name
		}
	}
	return ""
}

// appendFitting adds to kept, beyond the search's matches, the catalog's
// tools that goal drives whole (see fittingTools): up to per in all when
// the search found fewer, and fittingBeyond more when it found enough, so
// that a tool the request's values fit is weighed even when words of
// other tools crowd the search's list.
func appendFitting(all []*agentsmcp.ToolInfo, goal string, kept []*agentsmcp.ToolMatch, per int) []*agentsmcp.ToolMatch {
	floor := 0.01
	if len(kept) > 0 {
		floor = kept[len(kept)-1].Score / 2
	}
	return append(kept, fittingTools(all, goal, slices.Clip(kept), floor, max(per-len(kept), fittingBeyond))...)
}

// fittingBeyond is how many tools that the request drives whole join a
// sub-goal's candidates beyond the search's full list.
const fittingBeyond = 2
