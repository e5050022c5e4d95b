// Package mcptools exposes memory to MCP clients as local tools of the
// router: query_memory, store_insight, get_similar_tasks,
// get_successful_plans and get_tool_performance (names in INTERFACE.md).
//
// Semantic search embeds the query and asks the vector index for the
// nearest documents, then reads each match from the store, which is the
// source of truth: a match whose document is gone is skipped, and every
// field returned is the stored one. The index is fed asynchronously by
// memory/vectorsync, so a document stored a moment ago may not be found by
// meaning yet (typically well under a second). When the embedder or the
// index fails, search falls back to the store's word filter and says so in
// the result's mode, rather than failing the call.
package mcptools

import (
	"context"
	"log/slog"
	"slices"
	"time"

	agentsmcp "github.com/agents-mcp/agents-mcp"
)

// Recall answers "what do we remember that resembles this text".
type Recall struct {
	Index     agentsmcp.VectorIndex
	Embedder  agentsmcp.Embedder
	Learnings agentsmcp.LearningService
	Insights  agentsmcp.InsightService
	Patterns  agentsmcp.PatternService
	// QueryTimeout bounds embedding the query and querying the index
	// (default 5 s); past it, search falls back to words.
	QueryTimeout time.Duration
	Logger       *slog.Logger
}

// Search modes reported with results.
const (
	ModeSemantic = "semantic" // ranked by vector similarity
	ModeLexical  = "lexical"  // the embedder or index failed: store word filter, newest first
)

// maxCandidates bounds how many nearest neighbours one search reads; pages
// of results are cut from them.
const maxCandidates = agentsmcp.MaxPageSize

// scored is a document id with its similarity.
type scored struct {
	id    string
	score float64
}

// nearest embeds text and returns up to k ids of namespace nearest to it
// whose metadata has filter. An error means semantic search is unavailable.
func (r *Recall) nearest(ctx context.Context, namespace, text string, k int, filter map[string]string) ([]scored, error) {
	timeout := r.QueryTimeout
	if timeout <= 0 {
		timeout = 5 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	vs, err := r.Embedder.Embed(ctx, []string{text})
	if err != nil {
		return nil, err
	}
	if len(vs) != 1 {
		return nil, agentsmcp.Errorf(agentsmcp.EINTERNAL, "embedder returned %d vectors for one text", len(vs))
	}
	ms, err := r.Index.Query(ctx, namespace, agentsmcp.VectorQuery{Values: vs[0], TopK: k, Filter: filter})
	if err != nil {
		return nil, err
	}
	out := make([]scored, len(ms))
	for i, m := range ms {
		out[i] = scored{id: m.ID, score: float64(m.Score)}
	}
	return out, nil
}

func (r *Recall) logFallback(what string, err error) {
	if r.Logger != nil {
		r.Logger.Warn("semantic search unavailable; answering from word filters", "search", what, "err", err)
	}
}

// ScoredLearning is a learning with its similarity to the query (0 in
// lexical mode).
type ScoredLearning struct {
	Score    float64             `json:"score"`
	Learning *agentsmcp.Learning `json:"learning"`
}

// SimilarLearnings returns up to max learnings most similar to query that
// match f (its Text, Cursor and Limit are ignored), best first.
func (r *Recall) SimilarLearnings(ctx context.Context, query string, f agentsmcp.LearningFilter, max int) ([]ScoredLearning, string, error) {
	var filter map[string]string
	if f.Outcome != "" {
		filter = map[string]string{"outcome": string(f.Outcome)}
	}
	near, err := r.nearest(ctx, agentsmcp.NamespaceLearnings, query, maxCandidates, filter)
	if err != nil {
		r.logFallback("learnings", err)
		f.Text, f.Cursor, f.Limit = query, "", max
		ls, _, ferr := r.Learnings.FindLearnings(ctx, f)
		if ferr != nil {
			return nil, "", ferr
		}
		out := make([]ScoredLearning, len(ls))
		for i, l := range ls {
			out[i] = ScoredLearning{Learning: l}
		}
		return out, ModeLexical, nil
	}
	var out []ScoredLearning
	for _, n := range near {
		if len(out) == max {
			break
		}
		l, err := r.Learnings.FindLearningByID(ctx, n.id)
		if agentsmcp.ErrorCode(err) == agentsmcp.ENOTFOUND {
			continue
		} else if err != nil {
			return nil, "", err
		}
		if matchesLearning(l, f) {
			out = append(out, ScoredLearning{Score: n.score, Learning: l})
		}
	}
	return out, ModeSemantic, nil
}

func matchesLearning(l *agentsmcp.Learning, f agentsmcp.LearningFilter) bool {
	switch {
	case f.Outcome != "" && l.Outcome != f.Outcome,
		f.Tool != "" && !slices.Contains(l.Tools, f.Tool),
		f.Upstream != "" && !slices.Contains(l.Upstreams, f.Upstream),
		!f.Since.IsZero() && l.CreatedAt.Before(f.Since),
		!f.Until.IsZero() && !l.CreatedAt.Before(f.Until):
		return false
	}
	return true
}

// ScoredInsight is an insight with its similarity to the query.
type ScoredInsight struct {
	Score   float64            `json:"score"`
	Insight *agentsmcp.Insight `json:"insight"`
}

// SimilarInsights returns up to max insights most similar to query that
// match f (Text, Cursor and Limit ignored), best first.
func (r *Recall) SimilarInsights(ctx context.Context, query string, f agentsmcp.InsightFilter, max int) ([]ScoredInsight, string, error) {
	var filter map[string]string
	if f.Type != "" {
		filter = map[string]string{"type": string(f.Type)}
	}
	near, err := r.nearest(ctx, agentsmcp.NamespaceInsights, query, maxCandidates, filter)
	if err != nil {
		r.logFallback("insights", err)
		f.Text, f.Cursor, f.Limit = query, "", max
		ins, _, ferr := r.Insights.FindInsights(ctx, f)
		if ferr != nil {
			return nil, "", ferr
		}
		out := make([]ScoredInsight, len(ins))
		for i, in := range ins {
			out[i] = ScoredInsight{Insight: in}
		}
		return out, ModeLexical, nil
	}
	var out []ScoredInsight
	for _, n := range near {
		if len(out) == max {
			break
		}
		in, err := r.Insights.FindInsightByID(ctx, n.id)
		if agentsmcp.ErrorCode(err) == agentsmcp.ENOTFOUND {
			continue
		} else if err != nil {
			return nil, "", err
		}
		if (f.Type == "" || in.Type == f.Type) && (f.AppliesTo == "" || slices.Contains(in.AppliesTo, f.AppliesTo)) {
			out = append(out, ScoredInsight{Score: n.score, Insight: in})
		}
	}
	return out, ModeSemantic, nil
}

// ScoredPattern is a plan pattern with its similarity to the goal.
type ScoredPattern struct {
	Score   float64                `json:"score"`
	Pattern *agentsmcp.PlanPattern `json:"pattern"`
}

// SimilarPatterns returns up to max patterns whose goal is most similar to
// goal and that succeeded at least minSuccessRate of the time, best first.
func (r *Recall) SimilarPatterns(ctx context.Context, goal string, minSuccessRate float64, max int) ([]ScoredPattern, string, error) {
	keep := func(p *agentsmcp.PlanPattern) bool { return p.Successes > 0 && p.SuccessRate() >= minSuccessRate }
	near, err := r.nearest(ctx, agentsmcp.NamespacePatterns, goal, maxCandidates, nil)
	if err != nil {
		r.logFallback("patterns", err)
		ps, _, ferr := r.Patterns.FindPatterns(ctx, agentsmcp.PatternFilter{Text: goal, Limit: agentsmcp.MaxPageSize})
		if ferr != nil {
			return nil, "", ferr
		}
		var out []ScoredPattern
		for _, p := range ps {
			if keep(p) && len(out) < max {
				out = append(out, ScoredPattern{Pattern: p})
			}
		}
		return out, ModeLexical, nil
	}
	var out []ScoredPattern
	for _, n := range near {
		if len(out) == max {
			break
		}
		p, err := r.Patterns.FindPatternByID(ctx, n.id)
		if agentsmcp.ErrorCode(err) == agentsmcp.ENOTFOUND {
			continue
		} else if err != nil {
			return nil, "", err
		}
		if keep(p) {
			out = append(out, ScoredPattern{Score: n.score, Pattern: p})
		}
	}
	return out, ModeSemantic, nil
}
