package agents

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/internal/storedform"
)

// This file widens a repair's reach: beyond the tools that take the failed
// call's values, a repair weighs the tools that served the request's
// family before and those it can drive with the user's help, and asks for
// what they lack (a plan input, as a first plan would) rather than end the
// step. When nothing can serve, it says which tools came closest and why
// each was turned down.

// candidateOrigin is how a repair found a candidate.
type candidateOrigin int

const (
	fromSearch  candidateOrigin = iota // the search for the sub-goal
	fromSibling                        // another tool of the failed tool's upstream
	fromFamily                         // it served the request's task family before
	fromFitting                        // the sub-goal gives every required parameter (see fittingTools)
)

// maxRepairAsked is how many values a replacement that takes none of the
// failed call's values may ask the user for: one or two values are a
// question; more mean the tool does something else.
const maxRepairAsked = 2

// familyTools are the tools that served the task family of req's request
// before: the only tool of a past task of the family that succeeded
// (several-step tasks say nothing of which step a tool served). Read like
// the planner reads the family (see StoredRecall), scored like the best
// search match, since they are the family's own evidence.
func (rp *Repairer) familyTools(ctx context.Context, req RepairRequest, matches []*agentsmcp.ToolMatch) []*agentsmcp.ToolMatch {
	g := rp.Gatherer
	if g.Memory == nil {
		return nil
	}
	var past []*agentsmcp.Learning
	if sr, ok := g.Memory.(StoredRecall); ok {
		past, _ = sr.RecentLearnings(ctx, recentLearnings)
	} else {
		past, _ = g.Memory.SimilarLearnings(ctx, req.Request, 5)
	}
	k := &Knowledge{Request: req.Request, Family: g.Families.resolve(ctx, req.Request, past, "")}
	score := siblingScore
	for _, m := range matches {
		score = max(score, m.Score)
	}
	var out []*agentsmcp.ToolMatch
	for _, l := range past {
		if l.Outcome != agentsmcp.OutcomeSuccess || len(l.Steps) != 1 || !k.inFamily(l.Goal) ||
			slices.ContainsFunc(out, func(m *agentsmcp.ToolMatch) bool { return m.Name == l.Steps[0] }) {
			continue
		}
		info, err := g.Catalog.Tool(ctx, l.Steps[0])
		if err != nil {
			continue // gone since
		}
		out = append(out, &agentsmcp.ToolMatch{ToolInfo: *info, Score: score, Why: "served this task family before"})
	}
	return out
}

// fittingTools are the catalog's tools, beyond have, that the sub-goal
// can drive (see the package function fittingTools), scored below every
// match, at most three.
func (rp *Repairer) fittingTools(ctx context.Context, goal string, have []*agentsmcp.ToolMatch) []*agentsmcp.ToolMatch {
	all, err := rp.Gatherer.Catalog.ListTools(ctx)
	if err != nil {
		return nil
	}
	return fittingTools(all, goal, have, siblingScore/2, 3)
}

// unusable says why a tool cannot be called now, or "".
func unusable(f *ToolFacts) string {
	switch {
	case !f.Usable():
		return fmt.Sprintf("its upstream %s is down", f.Source)
	case f.Reliability.CoolingDown:
		return fmt.Sprintf("on cool-down after %d failures", f.Reliability.ConsecutiveFailures)
	}
	return ""
}

// mayAsk says why a candidate that does not take the failed call's values
// (all of them, for a sibling) cannot replace it even with the user's
// help, or "" when it can: found by the search, the family or the
// sub-goal's values, or a tool of the failed tool's upstream worded like
// the failed tool (nearSibling: see nearTool), not by its upstream alone;
// of the effect the sub-goal asks for (see requestEffect), about what the
// sub-goal is about when only the search found it and it is no such
// sibling (see sharesObject), taking something from the request or the
// user, and asking at most maxRepairAsked values.
func mayAsk(origin candidateOrigin, nearSibling bool, f *ToolFacts, repair *StepRepair, goal string) string {
	if origin == fromSibling && !nearSibling {
		return "another tool of its upstream, not worded like the failed tool with the same inputs, that does not take every value the failed call was given, each by its meaning"
	}
	want, has := requestEffect(goal), toolEffects(f.Name, f.Description)
	if !servesIntent(want, has) {
		return fmt.Sprintf("it %s, and the request asks for a tool that %s", effectName(has), effectName(want))
	}
	if origin == fromSearch && !nearSibling && !sharesObject(goal, f) {
		return "its name and description share no word with the request but a verb (the search found it by its server or a synonym of the verb)"
	}
	asked := slices.Sorted(maps.Keys(repair.askedParams))
	switch {
	case len(asked) > maxRepairAsked:
		return "takes none of the failed call's values and needs " + joinAnd(asked) + ", which neither the failed call nor the request gives"
	case len(asked) == 0 && len(repair.Filled) == 0 && origin != fromFamily:
		return "takes none of the values the step was given"
	}
	return ""
}

// askedOffObject says why a candidate that takes some of the failed
// call's values but would ask the user for another cannot replace it, ""
// when it can: found by the search alone (no sibling worded like the
// failed tool, no tool of the family, not driven by the sub-goal's
// values) and of another upstream than the failed tool's (one of the same
// upstream serves the same need, as movedOffMeaning holds), it shares no
// word with what the sub-goal is about (see sharesObject). A value it takes by name ("text") says nothing of what it
// does: "How do you say 'thank you' in Japanese?" is no post to a channel
// the user would be asked for, as mayAsk already holds for a tool that
// takes none of the values.
func askedOffObject(origin candidateOrigin, nearSibling bool, f *ToolFacts, repair *StepRepair, goal, failedSource string) string {
	sameUpstream := failedSource != "" && failedSource != localSource && f.Source == failedSource
	if origin != fromSearch || nearSibling || sameUpstream || len(repair.askedParams) == 0 || sharesObject(goal, f) {
		return ""
	}
	asked := slices.Sorted(maps.Keys(repair.askedParams))
	return "it would ask for " + joinAnd(asked) + ", and its name and description share no word with the request but a verb (the search found it by a synonym of the verb)"
}

// compareAsking orders the candidates that ask: fewer values asked first,
// then by score.
func compareAsking(a, b repairCandidate) int {
	return cmp.Or(cmp.Compare(len(a.repair.Asked), len(b.repair.Asked)), cmp.Compare(b.score, a.score))
}

// repairRejections are the tools a repair weighed and turned down, in the
// order weighed, each once.
type repairRejections struct {
	tools []rejectedTool
}

type rejectedTool struct {
	name, why string
	score     float64
}

func (r *repairRejections) add(name string, score float64, why string) {
	if !slices.ContainsFunc(r.tools, func(t rejectedTool) bool { return t.name == name }) {
		r.tools = append(r.tools, rejectedTool{name, why, score})
	}
}

// closest names the three best scored rejected tools and why each was
// turned down, as "; closest: a: why; b: why", or "" when none was
// weighed.
func (r *repairRejections) closest() string {
	if r == nil || len(r.tools) == 0 {
		return ""
	}
	tools := slices.Clone(r.tools)
	slices.SortStableFunc(tools, func(a, b rejectedTool) int { return cmp.Compare(b.score, a.score) })
	var parts []string
	for _, t := range tools[:min(len(tools), 3)] {
		parts = append(parts, t.name+": "+t.why)
	}
	return "; closest: " + strings.Join(parts, "; ")
}

// sharesObject reports whether a tool's own text (its name without the
// upstream's prefix, its description) has a word of goal that is not a
// verb of effectVerbs: what the request is about ("weather"), not only
// what it does to it ("show"), which many tools of an upstream share. A
// search's score alone cannot tell: it counts the upstream's name and the
// verb's synonyms. Words are compared without a plural s.
func sharesObject(goal string, f *ToolFacts) bool {
	name := f.Name
	if i := strings.LastIndex(name, agentsmcp.NamespaceSeparator); i >= 0 {
		name = name[i+len(agentsmcp.NamespaceSeparator):]
	}
	own := map[string]bool{}
	for _, w := range append(nameWords(name), strings.Fields(GoalOf(f.Description))...) {
		own[strings.TrimSuffix(w, "s")] = true
	}
	for _, w := range strings.Fields(GoalOf(goal)) {
		if isPlaceholder(w) || effectVerbs[w] != 0 || politeness[w] || familyDateWords[w] {
			continue
		}
		if own[strings.TrimSuffix(w, "s")] {
			return true
		}
	}
	return false
}

// nearTools is how many tools the search for the failed tool's own words
// weighs (see nearTool).
const nearTools = 8

// nearTool are the tools the catalog's search ranks for the failed tool's
// own text (its name's words and its description), the failed tool aside,
// each with 1/(1+rank): what is worded like the tool the plan chose for
// the sub-goal. A sibling among them that takes the same inputs (see
// sameInputs) is a replacement that may ask for what it lacks ("latitude
// and longitude of a place" for "coordinates of a street address"), where
// a sibling worded or shaped otherwise (another need of the same
// upstream) is not. The search may rank every tool of an upstream whose
// name the failed tool's text holds ("translate"): the inputs then tell.
func (rp *Repairer) nearTool(ctx context.Context, failed *agentsmcp.ToolInfo) (map[string]float64, error) {
	name := failed.Name
	if i := strings.LastIndex(name, agentsmcp.NamespaceSeparator); i >= 0 {
		name = name[i+len(agentsmcp.NamespaceSeparator):]
	}
	text := strings.TrimSpace(strings.Join(nameWords(name), " ") + ": " + failed.Description)
	matches, err := rp.Gatherer.Catalog.SearchTools(ctx, storedform.TruncateUTF8(text, agentsmcp.MaxQueryTextBytes), nearTools+1)
	if err != nil {
		return nil, err
	}
	near := map[string]float64{}
	rank := 0
	for _, m := range matches {
		if m.Name == failed.Name {
			continue
		}
		rank++
		near[m.Name] = 1 / float64(1+rank)
	}
	return near, nil
}

// serverToolRank scales the score of a server tool turned down (see
// serverToolFor) among the closest tools a replacement_not_found names:
// after the tools of the upstreams.
const serverToolRank = 0.01

// serverToolFor says why candidate, one of the server's own tools (memory,
// insights, tool search: Gatherer.ServerTools), never replaces failed, a
// tool of another kind; "" when candidate is not one of them or failed is
// one too. Those tools take any text: a repair onto one "succeeds" with
// nothing of what the step asked done.
func serverToolFor(g *Gatherer, failed, candidate string) string {
	if !slices.Contains(g.ServerTools, candidate) || slices.Contains(g.ServerTools, failed) {
		return ""
	}
	return "one of this server's own tools (memory, insights, tool search), never a replacement for a tool of an upstream"
}

// sameInputs reports whether two input schemas require as many values, of
// the same JSON types (a string for a string, a number for a number),
// whatever their names: the shape of a tool that serves the same need in
// other words ("address" and "place"; "text, target_language" and
// "phrase, tongue"), where another need of the upstream asks for other
// inputs ("network" for "city, units").
func sameInputs(a, b json.RawMessage) bool {
	types := func(schema json.RawMessage) []string {
		params, _ := schemaParams(schema)
		var out []string
		for _, p := range params {
			if !p.required {
				continue
			}
			t := "other"
			for _, name := range []string{"string", "integer", "number", "boolean", "array", "object"} {
				if p.prop.is(name) {
					t = name
					break
				}
			}
			if t == "integer" {
				t = "number"
			}
			out = append(out, t)
		}
		slices.Sort(out)
		return out
	}
	ta, tb := types(a), types(b)
	return len(ta) > 0 && slices.Equal(ta, tb)
}
