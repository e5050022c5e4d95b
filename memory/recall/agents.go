package recall

import (
	"context"
	"slices"
	"time"

	agentsmcp "github.com/agents-mcp/agents-mcp"
)

// The policy of [AgentMemory].
const (
	// InsightsTimeout bounds [AgentMemory.RelevantInsights] as a whole:
	// its store reads and its semantic search. Past it, the agents plan
	// with the insights found so far.
	InsightsTimeout = 10 * time.Second
	// InsightsPerTool is how many insights about each candidate tool
	// RelevantInsights reads (its pitfalls decide between tools).
	InsightsPerTool = 3
	// MinPatternSuccessRate is the success-rate floor of the plan
	// patterns the planner may reuse: they succeeded at least half the
	// time.
	MinPatternSuccessRate = 0.5
)

// AgentMemory is what the thought agent and the planner recall before
// they think and plan (the agents' Memory interface), over a [Searcher]:
// semantic, with its lexical fallback. Like the memory tools, it reads
// under Visibility: the agents run in the call of the principal who asked,
// and learn from that principal's past tasks only, unless memory is
// shared.
//
// Family and FamilyTag are the agents' task families (agents.FamilyOf and
// agents.FamilyTag, which cmd/agents-mcp wires in): the key under which
// the learner stores patterns and tags insights. Both are required.
type AgentMemory struct {
	Searcher   *Searcher
	Visibility agentsmcp.MemoryVisibility
	// Family returns the task family of a request.
	Family func(request string) string
	// FamilyTag returns the AppliesTo entry of the insights learned in a
	// task family.
	FamilyTag func(family string) string

	recent recentCache
}

// SimilarLearnings returns up to max learnings whose request resembles
// text, most similar first.
func (m *AgentMemory) SimilarLearnings(ctx context.Context, text string, max int) ([]*agentsmcp.Learning, error) {
	f := agentsmcp.LearningFilter{Principal: ReaderScope(ctx, m.Visibility)}
	hits, _, err := m.Searcher.SimilarLearnings(ctx, NewQuery(text), f, max)
	if err != nil {
		return nil, err
	}
	out := make([]*agentsmcp.Learning, len(hits))
	for i, h := range hits {
		out[i] = h.Learning
	}
	return out, nil
}

// RelevantInsights returns up to max insights, each once: those learned in
// the task family of text first (up to half of max), then
// [InsightsPerTool] about each of tools, in order, then those resembling
// text. It stops at [InsightsTimeout]; on an error it returns what it found
// before, with the error.
func (m *AgentMemory) RelevantInsights(ctx context.Context, text string, tools []string, max int) ([]*agentsmcp.Insight, error) {
	ctx, cancel := context.WithTimeout(ctx, InsightsTimeout)
	defer cancel()
	scope := ReaderScope(ctx, m.Visibility)
	var out []*agentsmcp.Insight
	add := func(in *agentsmcp.Insight) {
		if len(out) < max && !slices.ContainsFunc(out, func(x *agentsmcp.Insight) bool { return x.ID == in.ID }) {
			out = append(out, in)
		}
	}
	store := m.Searcher.Insights
	family, _, err := store.FindInsights(ctx, agentsmcp.InsightFilter{AppliesTo: m.FamilyTag(m.Family(text)), Principal: scope, Limit: max / 2})
	if err != nil {
		return out, err
	}
	for _, in := range family {
		add(in)
	}
	for _, tool := range tools {
		ins, _, err := store.FindInsights(ctx, agentsmcp.InsightFilter{AppliesTo: tool, Principal: scope, Limit: InsightsPerTool})
		if err != nil {
			return out, err
		}
		for _, in := range ins {
			add(in)
		}
	}
	hits, _, err := m.Searcher.SimilarInsights(ctx, NewQuery(text), agentsmcp.InsightFilter{Principal: scope}, max)
	for _, h := range hits {
		add(h.Insight)
	}
	return out, err
}

// SuccessfulPatterns returns up to max plan patterns whose goal resembles
// the task family of text and that succeeded at least
// [MinPatternSuccessRate] of the time, most similar first.
func (m *AgentMemory) SuccessfulPatterns(ctx context.Context, text string, max int) ([]*agentsmcp.PlanPattern, error) {
	f := agentsmcp.PatternFilter{Principal: ReaderScope(ctx, m.Visibility)}
	hits, _, err := m.Searcher.SimilarPatterns(ctx, NewQuery(m.Family(text)), f, MinPatternSuccessRate, max)
	if err != nil {
		return nil, err
	}
	out := make([]*agentsmcp.PlanPattern, len(hits))
	for i, h := range hits {
		out[i] = h.Pattern
	}
	return out, nil
}

// RecentLearnings returns up to max of the learnings the caller may read,
// most recent first, read from the store (not the vector index): the
// agents decide task families and plan reuse on them, so that a plan does
// not depend on how far the index has caught up.
//
// With a store that is a [LearningsMarker], the answer is kept and
// brought up to date with the learnings stored since (see recentCache);
// the learnings it returns are then shared with later calls, so callers
// must treat them as read-only.
func (m *AgentMemory) RecentLearnings(ctx context.Context, max int) ([]*agentsmcp.Learning, error) {
	f := agentsmcp.LearningFilter{Principal: ReaderScope(ctx, m.Visibility), Limit: max}
	if store, ok := m.Searcher.Learnings.(LearningsMarker); ok && max > 0 {
		return m.recentLearnings(ctx, store, f)
	}
	ls, _, err := m.Searcher.Learnings.FindLearnings(ctx, f)
	return ls, err
}

// FamilyPatterns returns up to max plan patterns the caller may read whose
// goal is family and that succeeded at least [MinPatternSuccessRate] of
// the time, most successful first, read from the store (not the vector
// index), like RecentLearnings.
func (m *AgentMemory) FamilyPatterns(ctx context.Context, family string, max int) ([]*agentsmcp.PlanPattern, error) {
	ps, _, err := m.Searcher.Patterns.FindPatterns(ctx, agentsmcp.PatternFilter{Text: family, Principal: ReaderScope(ctx, m.Visibility), Limit: agentsmcp.MaxPageSize})
	if err != nil {
		return nil, err
	}
	var out []*agentsmcp.PlanPattern
	for _, p := range ps {
		if p.Goal == family && keepPattern(p, MinPatternSuccessRate) && len(out) < max {
			out = append(out, p)
		}
	}
	return out, nil
}
