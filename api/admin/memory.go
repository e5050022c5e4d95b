package admin

import (
	"context"
	"net/http"
	"time"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/internal/storedform"
	"github.com/agents-mcp/agents-mcp/internal/toolperf"
	"github.com/agents-mcp/agents-mcp/internal/validate"
	"github.com/agents-mcp/agents-mcp/memory/recall"
)

// This file serves what the server remembers: learnings, tool performance,
// plan patterns and insights. The admin API is not confined by the memory
// visibility (agentsmcp.MemoryVisibility): it lists every principal's
// learnings, insights and patterns, and ?principal= selects one principal's.

// LearningItem is a learning as lists return it: with q, Score is its
// similarity to the query (0 when the search fell back to words).
type LearningItem struct {
	*agentsmcp.Learning
	Score *float64 `json:"score,omitempty"`
}

// InsightItem is an insight as lists return it (see [LearningItem]).
type InsightItem struct {
	*agentsmcp.Insight
	Score *float64 `json:"score,omitempty"`
}

// PatternItem is a plan pattern as lists return it, with its success
// rate, and with q its similarity to the query.
type PatternItem struct {
	*agentsmcp.PlanPattern
	SuccessRate float64  `json:"successRate"`
	Score       *float64 `json:"score,omitempty"`
}

// ToolStats is one tool's performance: the stored counters and histogram,
// and the figures derived from them.
type ToolStats struct {
	*agentsmcp.ToolPerformance
	SuccessRate float64 `json:"successRate"`
	P50Ms       float64 `json:"p50Ms"`
	P95Ms       float64 `json:"p95Ms"`
}

// GET /learnings: q ranks by meaning through Recall; without q, the
// store's filters page newest first.
func (h *Handler) listLearnings(w http.ResponseWriter, r *http.Request) error {
	if h.opts.Learnings == nil {
		return unavailable("learnings")
	}
	p, err := queryParams(r, "q", "tool", "status", "upstream", "principal", "since", "until", "limit", "cursor")
	if err != nil {
		return err
	}
	f := agentsmcp.LearningFilter{Tool: p.str("tool"), Source: p.str("upstream"), Principal: p.str("principal")}
	if f.Outcome, err = oneOf(p, "status", agentsmcp.Outcomes); err != nil {
		return err
	}
	if f.Since, f.Until, err = p.window(); err != nil {
		return err
	}
	return memoryList[recall.LearningMatch, *agentsmcp.Learning, LearningItem]{
		similar: func(ctx context.Context, q *recall.Query, want int) ([]recall.LearningMatch, string, error) {
			return h.opts.Recall.SimilarLearnings(ctx, q, f, want)
		},
		lexical: func(ctx context.Context, q string, want int) ([]recall.LearningMatch, error) {
			return recall.LexicalLearnings(ctx, h.opts.Learnings, q, f, want)
		},
		ranked: func(m *recall.LearningMatch) LearningItem { return LearningItem{Learning: m.Learning, Score: &m.Score} },
		page: func(ctx context.Context, limit int, cursor string) ([]*agentsmcp.Learning, string, error) {
			f.Limit, f.Cursor = limit, cursor
			return h.opts.Learnings.FindLearnings(ctx, f)
		},
		item: func(l *agentsmcp.Learning) LearningItem { return LearningItem{Learning: l} },
	}.serve(h, w, r, p)
}

// GET /learnings/{id}
func (h *Handler) getLearning(w http.ResponseWriter, r *http.Request) error {
	if h.opts.Learnings == nil {
		return unavailable("learnings")
	}
	return getByID(h, w, r, agentsmcp.LearningIDPrefix, "learning", h.opts.Learnings.FindLearningByID)
}

// GET /tools/performance: every tool, most called first, paged by offset;
// or ?tool= for one (an empty list for a tool never called).
func (h *Handler) listToolPerformance(w http.ResponseWriter, r *http.Request) error {
	if h.opts.ToolPerformance == nil {
		return unavailable("tool performance")
	}
	p, err := queryParams(r, "tool", "limit", "cursor")
	if err != nil {
		return err
	}
	ctx, cancel := h.requestContext(r)
	defer cancel()
	if tool := p.str("tool"); tool != "" {
		if p.has("cursor") {
			return invalidf("cursor does not apply with tool")
		}
		perf, err := h.opts.ToolPerformance.FindToolPerformance(ctx, tool)
		switch {
		case agentsmcp.ErrorCode(err) == agentsmcp.ENOTFOUND:
			writeJSON(w, http.StatusOK, newPage([]ToolStats{}, "", ""))
			return nil
		case err != nil:
			return err
		}
		writeJSON(w, http.StatusOK, newPage([]ToolStats{statsOf(perf)}, "", ""))
		return nil
	}
	pg, err := offsetPageOf(p)
	if err != nil {
		return err
	}
	all, err := h.opts.ToolPerformance.ListToolPerformance(ctx)
	if err != nil {
		return err
	}
	from, to, next := pg.cutOffset(len(all))
	items := make([]ToolStats, 0, to-from)
	for _, perf := range all[from:to] {
		items = append(items, statsOf(perf))
	}
	writeJSON(w, http.StatusOK, newPage(items, next, ""))
	return nil
}

func statsOf(p *agentsmcp.ToolPerformance) ToolStats {
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	return ToolStats{ToolPerformance: p, SuccessRate: toolperf.SuccessRate(p), P50Ms: ms(toolperf.Percentile(p, 0.5)), P95Ms: ms(toolperf.Percentile(p, 0.95))}
}

// GET /patterns: q ranks goals by meaning (patterns that succeeded at
// least once, at least minSuccessRate of the time); without q, every
// pattern reaching minSuccessRate, most successes first.
func (h *Handler) listPatterns(w http.ResponseWriter, r *http.Request) error {
	if h.opts.Patterns == nil {
		return unavailable("plan patterns")
	}
	p, err := queryParams(r, "q", "minSuccessRate", "principal", "limit", "cursor")
	if err != nil {
		return err
	}
	f := agentsmcp.PatternFilter{Principal: p.str("principal")}
	minRate, err := p.fraction("minSuccessRate")
	if err != nil {
		return err
	}
	return memoryList[recall.PatternMatch, *agentsmcp.PlanPattern, PatternItem]{
		similar: func(ctx context.Context, q *recall.Query, want int) ([]recall.PatternMatch, string, error) {
			return h.opts.Recall.SimilarPatterns(ctx, q, f, minRate, want)
		},
		lexical: func(ctx context.Context, q string, want int) ([]recall.PatternMatch, error) {
			return recall.LexicalPatterns(ctx, h.opts.Patterns, q, f, minRate, want)
		},
		ranked: func(m *recall.PatternMatch) PatternItem {
			return PatternItem{PlanPattern: m.Pattern, SuccessRate: m.Pattern.SuccessRate(), Score: &m.Score}
		},
		page: func(ctx context.Context, limit int, cursor string) ([]*agentsmcp.PlanPattern, string, error) {
			f.Cursor = cursor
			return filterPatterns(ctx, h.opts.Patterns, f, storedform.PageSize(limit), minRate)
		},
		item: func(pat *agentsmcp.PlanPattern) PatternItem {
			return PatternItem{PlanPattern: pat, SuccessRate: pat.SuccessRate()}
		},
	}.serve(h, w, r, p)
}

// insightInput is the body of POST /insights. Type defaults to
// observation and Confidence to 0.5, as for the store_insight tool.
type insightInput struct {
	Text       string                `json:"text"`
	Type       agentsmcp.InsightType `json:"type"`
	AppliesTo  []string              `json:"appliesTo"`
	Confidence *float64              `json:"confidence"`
	Evidence   []string              `json:"evidence"`
}

// GET /insights
func (h *Handler) listInsights(w http.ResponseWriter, r *http.Request) error {
	if h.opts.Insights == nil {
		return unavailable("insights")
	}
	p, err := queryParams(r, "q", "type", "appliesTo", "principal", "limit", "cursor")
	if err != nil {
		return err
	}
	f := agentsmcp.InsightFilter{AppliesTo: p.str("appliesTo"), Principal: p.str("principal")}
	if f.Type, err = oneOf(p, "type", agentsmcp.InsightTypes); err != nil {
		return err
	}
	return memoryList[recall.InsightMatch, *agentsmcp.Insight, InsightItem]{
		similar: func(ctx context.Context, q *recall.Query, want int) ([]recall.InsightMatch, string, error) {
			return h.opts.Recall.SimilarInsights(ctx, q, f, want)
		},
		lexical: func(ctx context.Context, q string, want int) ([]recall.InsightMatch, error) {
			return recall.LexicalInsights(ctx, h.opts.Insights, q, f, want)
		},
		ranked: func(m *recall.InsightMatch) InsightItem { return InsightItem{Insight: m.Insight, Score: &m.Score} },
		page: func(ctx context.Context, limit int, cursor string) ([]*agentsmcp.Insight, string, error) {
			f.Limit, f.Cursor = limit, cursor
			return h.opts.Insights.FindInsights(ctx, f)
		},
		item: func(in *agentsmcp.Insight) InsightItem { return InsightItem{Insight: in} },
	}.serve(h, w, r, p)
}

// POST /insights: 201 with the stored insight, recorded as coming from
// the caller (Source and Principal).
func (h *Handler) createInsight(w http.ResponseWriter, r *http.Request) error {
	if h.opts.Insights == nil {
		return unavailable("insights")
	}
	if _, err := queryParams(r); err != nil {
		return err
	}
	var in insightInput
	if err := decodeBody(r, &in); err != nil {
		return err
	}
	ins := &agentsmcp.Insight{Text: in.Text, Type: in.Type, AppliesTo: in.AppliesTo, Confidence: 0.5, Evidence: in.Evidence}
	if ins.Type == "" {
		ins.Type = agentsmcp.InsightObservation
	}
	if in.Confidence != nil {
		ins.Confidence = *in.Confidence
	}
	if p := agentsmcp.PrincipalFrom(r.Context()); p != nil {
		ins.Source = p.ID
	}
	ins.Principal = agentsmcp.MemoryOwnerFrom(r.Context())
	if err := validate.Insight(ins); err != nil {
		return err
	}
	ctx, cancel := h.requestContext(r)
	defer cancel()
	if err := h.opts.Insights.CreateInsight(ctx, ins); err != nil {
		return err
	}
	h.written()
	w.Header().Set("Location", Prefix+"/insights/"+ins.ID)
	writeJSON(w, http.StatusCreated, ins)
	return nil
}

// GET /insights/{id}
func (h *Handler) getInsight(w http.ResponseWriter, r *http.Request) error {
	if h.opts.Insights == nil {
		return unavailable("insights")
	}
	return getByID(h, w, r, agentsmcp.InsightIDPrefix, "insight", h.opts.Insights.FindInsightByID)
}

// DELETE /insights/{id}: 204.
func (h *Handler) deleteInsight(w http.ResponseWriter, r *http.Request) error {
	if h.opts.Insights == nil {
		return unavailable("insights")
	}
	if _, err := queryParams(r); err != nil {
		return err
	}
	if err := noBody(r); err != nil {
		return err
	}
	id, err := pathID(r, agentsmcp.InsightIDPrefix, "insight")
	if err != nil {
		return err
	}
	ctx, cancel := h.requestContext(r)
	defer cancel()
	if err := h.opts.Insights.DeleteInsight(ctx, id); err != nil {
		return err
	}
	h.written()
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// memoryList lists one kind of memory for a GET: with q, ranked by meaning
// through Recall (or by words when the server has no vector index), paged
// by rank; without q, the store's own filtered page, newest first. M is a
// ranked match, R a stored record, I the item the list answers.
type memoryList[M, R, I any] struct {
	similar func(ctx context.Context, q *recall.Query, want int) ([]M, string, error)
	lexical func(ctx context.Context, q string, want int) ([]M, error)
	ranked  func(*M) I
	// page reads one page of the store; limit 0 means the default size.
	page func(ctx context.Context, limit int, cursor string) ([]R, string, error)
	item func(R) I
}

func (l memoryList[M, R, I]) serve(h *Handler, w http.ResponseWriter, r *http.Request, p *params) error {
	ctx, cancel := h.requestContext(r)
	defer cancel()
	if q := p.str("q"); q != "" {
		pg, err := rankPageOf(p)
		if err != nil {
			return err
		}
		var found []M
		mode := recall.ModeLexical
		if h.opts.Recall != nil {
			found, mode, err = l.similar(ctx, recall.NewQuery(q), pg.want())
		} else {
			found, err = l.lexical(ctx, q, pg.want())
		}
		if err != nil {
			return err
		}
		writeRanked(w, pg, found, mode, l.ranked)
		return nil
	}
	limit, err := p.limit()
	if err != nil {
		return err
	}
	records, next, err := l.page(ctx, limit, p.str("cursor"))
	if err != nil {
		return err
	}
	items := make([]I, len(records))
	for i, rec := range records {
		items[i] = l.item(rec)
	}
	writeJSON(w, http.StatusOK, newPage(items, next, ""))
	return nil
}
