package agents

import (
	"context"
	"fmt"
	"slices"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/internal/storedform"
)

// This file makes the tools that served requests with the same entities
// candidates of a one-step request whose words the search does not tie to
// them: "What is 'see you tomorrow' in Korean?" (a quoted text and a name)
// after "Translate 'good morning' into French" and "Render 'happy
// birthday' in German" were served. The entities say what the request
// carries (see sameShape); they join no family (the words may ask for
// something else), but the tools are weighed, below the search's matches,
// so that a request worded unlike every description still meets them.

// sameShapeTools bounds the tools one request gets this way (and the
// tools whose evidence it records, found by the search or not).
const sameShapeTools = 2

// sameShapeIntent reports whether a past request that asked for effect past
// may lend its tool to a request that asks for want. A request that names
// no effect (want 0: "What is 'see you tomorrow' in Korean?") takes only the
// tools of requests that read or named none either: the entities alone must
// not hand it a tool that sends, writes or removes.
func sameShapeIntent(want, past effect) bool {
	if want == 0 {
		return past&^effectRead == 0
	}
	return servesIntent(want, past)
}

// addSameShapeTools adds to a one-step request's candidates the tools
// that served the most recent successful one-step tasks of recalled
// (most recent first) whose family key has the request's entities and
// whose request asks for an effect the request's serves (sameShapeIntent), at most
// sameShapeTools of them, each scored half the sub-goal's last candidate.
// The agents' and the server's own tools are never added.
func (g *Gatherer) addSameShapeTools(ctx context.Context, k *Knowledge, recalled []*agentsmcp.Learning) {
	if len(k.SubGoals) != 1 {
		return
	}
	goal, own, want := k.SubGoals[0], FamilyOf(k.Request), requestEffect(k.Request)
	var added []*agentsmcp.ToolMatch
	for _, l := range recalled {
		if len(k.sameEntities) == sameShapeTools {
			break
		}
		if l.Outcome != agentsmcp.OutcomeSuccess || len(l.Steps) != 1 || !sameShape(own, LearningFamily(l)) || !sameShapeIntent(want, requestEffect(l.Query)) {
			continue
		}
		tool := l.Steps[0]
		if _, seen := k.sameEntities[tool]; seen || isAgentTool(tool) || slices.Contains(g.ServerTools, tool) {
			continue
		}
		if slices.ContainsFunc(k.Candidates[goal], func(x *agentsmcp.ToolMatch) bool { return x.Name == tool }) {
			k.servedSameEntities(tool, l.Query) // found by the search too: the evidence still counts (see entity_evidence.go)
			continue
		}
		info, err := g.Catalog.Tool(ctx, tool)
		if err != nil || info.Health == agentsmcp.HealthDown {
			continue // gone since, or not the caller's
		}
		k.servedSameEntities(tool, l.Query)
		added = append(added, &agentsmcp.ToolMatch{ToolInfo: *info,
			Why: fmt.Sprintf("served %q, a request with the same entities", storedform.TruncateUTF8(l.Query, 80))})
	}
	if len(added) == 0 {
		return
	}
	score := 0.01
	if kept := k.Candidates[goal]; len(kept) > 0 {
		score = kept[len(kept)-1].Score / 2
	}
	for _, m := range added {
		m.Score = score
		if _, seen := k.Tools[m.Name]; !seen {
			k.Tools[m.Name] = g.newFacts(m.ToolInfo)
		}
	}
	k.Candidates[goal] = append(k.Candidates[goal], added...)
}
