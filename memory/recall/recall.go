// Package recall answers "what do we remember that resembles this text"
// over the memory store and the vector index, for the memory MCP tools
// (memory/mcptools), the admin API's q parameter and the agents. It has no
// MCP or HTTP imports: its callers are the faces.
//
// [Searcher] is the search. Semantic search embeds the query and asks the
// vector index for the nearest documents, then reads each match from the
// store, which is the source of truth: a match whose document is gone is
// skipped, and every field returned is the stored one. The index is fed
// asynchronously by memory/vectorsync, so a document stored a moment ago
// may not be found by meaning yet (typically well under a second). When the
// embedder or the index fails, search falls back to the store's word filter
// and says so in the result's mode, rather than failing the call.
//
// A filter's Principal confines a search (see agentsmcp.MemoryVisibility),
// and a semantic match is kept only when the stored record, not the index,
// says it belongs to that principal, so a record of another principal never
// comes back, whatever the index holds.
//
// [AgentMemory] is the agents' policy over it: what the thought agent and
// the planner read before they think and plan, with its timeouts, limits
// and the success-rate floor of reused plans.
package recall

import (
	"cmp"
	"context"
	"errors"
	"log/slog"
	"slices"
	"time"

	agentsmcp "github.com/agents-mcp/agents-mcp"
)

// Searcher answers "what do we remember that resembles this text". Its
// services are required; Logger may be nil.
type Searcher struct {
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

// MaxMatches bounds the matches of one search: how many nearest neighbours
// it reads, and so the results a caller can page through.
const MaxMatches = agentsmcp.MaxPageSize

// maxCandidates bounds how many nearest neighbours one search reads; pages
// of results are cut from them.
const maxCandidates = MaxMatches

// maxConfinedCandidates bounds the nearest neighbours a search confined to
// one principal asks the index for. The index does not know principals, so
// such a search asks for maxCandidates, and for four times more (up to
// this bound) while the matches of other principals leave it short.
const maxConfinedCandidates = 5 * maxCandidates

// Query is a search text. It is embedded at most once, however many kinds
// of memory one call searches with it; create one per call.
type Query struct {
	Text string

	embedded bool
	vector   []float32
	err      error
}

// NewQuery returns a query for text.
func NewQuery(text string) *Query { return &Query{Text: text} }

func (r *Searcher) timeout() time.Duration {
	if r.QueryTimeout <= 0 {
		return 5 * time.Second
	}
	return r.QueryTimeout
}

// embed returns q's vector, embedding it on first use within QueryTimeout;
// a failure is remembered too, so a failing embedder costs one timeout per
// call, not one per kind.
func (r *Searcher) embed(ctx context.Context, q *Query) ([]float32, error) {
	if q.embedded {
		return q.vector, q.err
	}
	q.embedded = true
	ctx, cancel := context.WithTimeout(ctx, r.timeout())
	defer cancel()
	vs, err := r.Embedder.Embed(ctx, []string{q.Text})
	switch {
	case err != nil:
		q.err = err
	case len(vs) != 1:
		q.err = agentsmcp.Errorf(agentsmcp.EINTERNAL, "embedder returned %d vectors for one text", len(vs))
	default:
		q.vector = vs[0]
	}
	return q.vector, q.err
}

// hit is a document read back from the store with its similarity.
type hit[T any] struct {
	score float64
	doc   T
}

// nearest returns up to max documents of namespace nearest to q whose
// metadata has filter and that keep accepts, best first, each read from
// the store by load (documents gone from the store are skipped). keep
// decides on the stored document only. confined says that keep selects one
// principal's documents, which the index cannot select: nearest then asks
// the index for more neighbours (up to maxConfinedCandidates) while it
// found fewer than max and the index may hold more. An error from the
// embedder or the index means semantic search is unavailable; the caller
// falls back to the store's word filter.
func nearest[T any](ctx context.Context, r *Searcher, namespace string, q *Query, filter map[string]string, max int, confined bool,
	load func(context.Context, string) (T, error), keep func(T) bool) ([]hit[T], error) {
	vec, err := r.embed(ctx, q)
	if err != nil {
		return nil, err
	}
	var out []hit[T]
	seen := map[string]bool{}
	for topK := maxCandidates; ; topK = min(topK*4, maxConfinedCandidates) {
		qctx, cancel := context.WithTimeout(ctx, r.timeout())
		ms, err := r.Index.Query(qctx, namespace, agentsmcp.VectorQuery{Values: vec, TopK: topK, Filter: filter})
		cancel()
		if err != nil {
			return nil, err
		}
		for _, m := range ms {
			if len(out) == max {
				break
			}
			if seen[m.ID] {
				continue // read in a previous round
			}
			seen[m.ID] = true
			d, err := load(ctx, m.ID)
			if agentsmcp.ErrorCode(err) == agentsmcp.ENOTFOUND {
				continue
			} else if err != nil {
				return nil, &storeError{err}
			}
			if keep(d) {
				out = append(out, hit[T]{score: float64(m.Score), doc: d})
			}
		}
		// Rounds after the first may rank a match read before below one
		// read now (an approximate index); results stay best first.
		slices.SortStableFunc(out, func(x, y hit[T]) int { return cmp.Compare(y.score, x.score) })
		if !confined || len(out) >= max || len(ms) < topK || topK >= maxConfinedCandidates {
			return out[:min(len(out), max)], nil
		}
	}
}

// storeError marks a failure of the store while reading matches back: not
// a reason to fall back to the store's word filter, but the call's error.
type storeError struct{ err error }

func (e *storeError) Error() string { return e.err.Error() }
func (e *storeError) Unwrap() error { return e.err }

// semanticFailed reports whether err means "answer lexically" (the embedder
// or index failed) rather than "fail the call" (the store failed).
func semanticFailed(err error) bool {
	var se *storeError
	return err != nil && !errors.As(err, &se)
}

func (r *Searcher) logFallback(what string, err error) {
	if r.Logger != nil {
		r.Logger.Warn("semantic search unavailable; answering from word filters", "search", what, "err", err)
	}
}

// LearningMatch is a learning with its similarity to the query (0 in
// lexical mode). Its JSON is an item of get_similar_tasks (the memory
// tools serve it as it is: see docs/interface.md).
type LearningMatch struct {
	Score    float64             `json:"score"`
	Learning *agentsmcp.Learning `json:"learning"`
}

// SimilarLearnings returns up to max learnings most similar to q that
// match f (its Text, Cursor and Limit are ignored), best first. A Principal
// in f confines the search to that principal's learnings.
func (r *Searcher) SimilarLearnings(ctx context.Context, q *Query, f agentsmcp.LearningFilter, max int) ([]LearningMatch, string, error) {
	var filter map[string]string
	if f.Outcome != "" {
		filter = map[string]string{"outcome": string(f.Outcome)}
	}
	hits, err := nearest(ctx, r, agentsmcp.NamespaceLearnings, q, filter, max, f.Principal != "", r.Learnings.FindLearningByID,
		func(l *agentsmcp.Learning) bool { return matchesLearning(l, f) })
	if semanticFailed(err) {
		r.logFallback("learnings", err)
		out, ferr := LexicalLearnings(ctx, r.Learnings, q.Text, f, max)
		if ferr != nil {
			return nil, "", ferr
		}
		return out, ModeLexical, nil
	} else if err != nil {
		return nil, "", err
	}
	out := make([]LearningMatch, len(hits))
	for i, h := range hits {
		out[i] = LearningMatch{Score: h.score, Learning: h.doc}
	}
	return out, ModeSemantic, nil
}

func matchesLearning(l *agentsmcp.Learning, f agentsmcp.LearningFilter) bool {
	switch {
	case f.Principal != "" && l.Principal != f.Principal,
		f.Outcome != "" && l.Outcome != f.Outcome,
		f.Tool != "" && !slices.Contains(l.Tools, f.Tool),
		f.Source != "" && !slices.Contains(l.Sources, f.Source),
		!f.Since.IsZero() && l.CreatedAt.Before(f.Since),
		!f.Until.IsZero() && !l.CreatedAt.Before(f.Until):
		return false
	}
	return true
}

// InsightMatch is an insight with its similarity to the query.
type InsightMatch struct {
	Score   float64            `json:"score"`
	Insight *agentsmcp.Insight `json:"insight"`
}

// SimilarInsights returns up to max insights most similar to q that match
// f (Text, Cursor and Limit ignored), best first. A Principal in f confines
// the search to that principal's insights.
func (r *Searcher) SimilarInsights(ctx context.Context, q *Query, f agentsmcp.InsightFilter, max int) ([]InsightMatch, string, error) {
	var filter map[string]string
	if f.Type != "" {
		filter = map[string]string{"type": string(f.Type)}
	}
	hits, err := nearest(ctx, r, agentsmcp.NamespaceInsights, q, filter, max, f.Principal != "", r.Insights.FindInsightByID,
		func(in *agentsmcp.Insight) bool {
			return (f.Principal == "" || in.Principal == f.Principal) &&
				(f.Type == "" || in.Type == f.Type) && (f.AppliesTo == "" || slices.Contains(in.AppliesTo, f.AppliesTo))
		})
	if semanticFailed(err) {
		r.logFallback("insights", err)
		out, ferr := LexicalInsights(ctx, r.Insights, q.Text, f, max)
		if ferr != nil {
			return nil, "", ferr
		}
		return out, ModeLexical, nil
	} else if err != nil {
		return nil, "", err
	}
	out := make([]InsightMatch, len(hits))
	for i, h := range hits {
		out[i] = InsightMatch{Score: h.score, Insight: h.doc}
	}
	return out, ModeSemantic, nil
}

// PatternMatch is a plan pattern with its similarity to the goal.
type PatternMatch struct {
	Score   float64                `json:"score"`
	Pattern *agentsmcp.PlanPattern `json:"pattern"`
}

// SimilarPatterns returns up to max patterns matching f (its Text, Cursor
// and Limit are ignored) whose goal is most similar to q and that succeeded
// at least minSuccessRate of the time, best first. A Principal in f
// confines the search to that principal's patterns.
func (r *Searcher) SimilarPatterns(ctx context.Context, q *Query, f agentsmcp.PatternFilter, minSuccessRate float64, max int) ([]PatternMatch, string, error) {
	keep := func(p *agentsmcp.PlanPattern) bool {
		return (f.Principal == "" || p.Principal == f.Principal) && keepPattern(p, minSuccessRate)
	}
	hits, err := nearest(ctx, r, agentsmcp.NamespacePatterns, q, nil, max, f.Principal != "", r.Patterns.FindPatternByID, keep)
	if semanticFailed(err) {
		r.logFallback("patterns", err)
		out, ferr := LexicalPatterns(ctx, r.Patterns, q.Text, f, minSuccessRate, max)
		if ferr != nil {
			return nil, "", ferr
		}
		return out, ModeLexical, nil
	} else if err != nil {
		return nil, "", err
	}
	out := make([]PatternMatch, len(hits))
	for i, h := range hits {
		out[i] = PatternMatch{Score: h.score, Pattern: h.doc}
	}
	return out, ModeSemantic, nil
}

// The store's word filter alone, the answers of [ModeLexical]: Searcher's
// fallback, and the whole search of a server without a vector index.

// LexicalLearnings returns up to max learnings matching f whose query or
// goal holds every word of text (f's Text, Cursor and Limit are ignored).
func LexicalLearnings(ctx context.Context, s agentsmcp.LearningService, text string, f agentsmcp.LearningFilter, max int) ([]LearningMatch, error) {
	f.Text, f.Cursor, f.Limit = text, "", max
	ls, _, err := s.FindLearnings(ctx, f)
	if err != nil {
		return nil, err
	}
	out := make([]LearningMatch, len(ls))
	for i, l := range ls {
		out[i] = LearningMatch{Learning: l}
	}
	return out, nil
}

// LexicalInsights returns up to max insights matching f whose text holds
// every word of text (f's Text, Cursor and Limit are ignored).
func LexicalInsights(ctx context.Context, s agentsmcp.InsightService, text string, f agentsmcp.InsightFilter, max int) ([]InsightMatch, error) {
	f.Text, f.Cursor, f.Limit = text, "", max
	ins, _, err := s.FindInsights(ctx, f)
	if err != nil {
		return nil, err
	}
	out := make([]InsightMatch, len(ins))
	for i, in := range ins {
		out[i] = InsightMatch{Insight: in}
	}
	return out, nil
}

// LexicalPatterns returns up to max patterns matching f whose goal holds
// every word of text and that succeeded at least once and minSuccessRate
// of the time (f's Text, Cursor and Limit are ignored).
func LexicalPatterns(ctx context.Context, s agentsmcp.PatternService, text string, f agentsmcp.PatternFilter, minSuccessRate float64, max int) ([]PatternMatch, error) {
	f.Text, f.Cursor, f.Limit = text, "", agentsmcp.MaxPageSize
	ps, _, err := s.FindPatterns(ctx, f)
	if err != nil {
		return nil, err
	}
	var out []PatternMatch
	for _, p := range ps {
		if keepPattern(p, minSuccessRate) && len(out) < max {
			out = append(out, PatternMatch{Pattern: p})
		}
	}
	return out, nil
}

func keepPattern(p *agentsmcp.PlanPattern, minSuccessRate float64) bool {
	return p.Successes > 0 && p.SuccessRate() >= minSuccessRate
}

// ReaderScope is a reader's Principal filter under v: "" under
// [agentsmcp.VisibilityShared], else [agentsmcp.MemoryOwnerFrom](ctx).
func ReaderScope(ctx context.Context, v agentsmcp.MemoryVisibility) string {
	if v == agentsmcp.VisibilityShared {
		return ""
	}
	return agentsmcp.MemoryOwnerFrom(ctx)
}
