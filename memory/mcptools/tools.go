// Package mcptools exposes memory to MCP clients as local tools:
// query_memory, store_insight, get_similar_tasks, get_successful_plans and
// get_tool_performance (names in docs/interface.md), over the search of
// memory/recall, and the recorder that feeds tool performance.
//
// Memory is confined per principal (see agentsmcp.MemoryVisibility): the
// tools read only the records of the caller's principal unless the
// server's visibility is shared.
package mcptools

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"slices"
	"strconv"
	"time"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/internal/toolperf"
	"github.com/agents-mcp/agents-mcp/localtools"
	"github.com/agents-mcp/agents-mcp/memory/recall"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The tool names, as docs/interface.md lists them.
const (
	QueryMemoryName        = "query_memory"
	StoreInsightName       = "store_insight"
	GetSimilarTasksName    = "get_similar_tasks"
	GetSuccessfulPlansName = "get_successful_plans"
	GetToolPerformanceName = "get_tool_performance"
)

// MemoryTools are the memory tools' dependencies.
type MemoryTools struct {
	Recall          *recall.Searcher
	ToolPerformance agentsmcp.ToolPerformanceService
	// Visibility says whose learnings, insights and plan patterns a caller
	// reads: under VisibilityPrincipal (and the zero value) only those its
	// own principal produced, under VisibilityShared every principal's.
	// What a caller writes always records its principal. Tool performance
	// is not confined: it counts every call of a tool, whoever made it.
	Visibility agentsmcp.MemoryVisibility
	// Written is called after a write that the vector index must learn
	// about (memory/vectorsync's Syncer.Notify); may be nil.
	Written func()
	Logger  *slog.Logger
}

// MaxResults bounds the limit argument of every memory tool.
const MaxResults = 50

// Register adds the memory tools to l.
func (t *MemoryTools) Register(l *localtools.Provider) error {
	readOnly := &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: new(false)}
	return errors.Join(
		localtools.Add(l, &mcp.Tool{
			Name:  QueryMemoryName,
			Title: "Query memory",
			Description: "Search what agents-mcp remembers by meaning: past tasks (learnings), insights and plan patterns similar to a query, " +
				"optionally filtered. Results are ranked by similarity, best first; mode says whether ranking was semantic or fell back to word matching.",
			InputSchema: json.RawMessage(queryMemorySchema),
			Annotations: readOnly,
		}, t.queryMemory),
		localtools.Add(l, &mcp.Tool{
			Name:        StoreInsightName,
			Title:       "Store insight",
			Description: "Record an insight worth reusing (an observation, best practice, pitfall or preference), with what it applies to and how confident you are.",
			InputSchema: json.RawMessage(storeInsightSchema),
			Annotations: &mcp.ToolAnnotations{DestructiveHint: new(false), OpenWorldHint: new(false)},
		}, t.storeInsight),
		localtools.Add(l, &mcp.Tool{
			Name:        GetSimilarTasksName,
			Title:       "Similar past tasks",
			Description: "Past tasks similar to a request, with their outcome, plan steps, duration, errors and retries.",
			InputSchema: json.RawMessage(similarTasksSchema),
			Annotations: readOnly,
		}, t.similarTasks),
		localtools.Add(l, &mcp.Tool{
			Name:        GetSuccessfulPlansName,
			Title:       "Successful plans",
			Description: "Plan patterns (tool sequences) that succeeded for goals similar to the given one, with their success rate and use count.",
			InputSchema: json.RawMessage(successfulPlansSchema),
			Annotations: readOnly,
		}, t.successfulPlans),
		localtools.Add(l, &mcp.Tool{
			Name:        GetToolPerformanceName,
			Title:       "Tool performance",
			Description: "Per-tool call counts, success rate, p50/p95 latency and most common errors; one tool by name, or every tool, most called first.",
			InputSchema: json.RawMessage(toolPerformanceSchema),
			Annotations: readOnly,
		}, t.toolPerformance),
	)
}

// Schemas are written by hand so that they carry the bounds and enums a
// client needs; the router validates every call against them before the
// handler runs.
const (
	limitProp  = `"limit":{"type":"integer","minimum":1,"maximum":50,"description":"Most results per page (default 10)"}`
	cursorProp = `"cursor":{"type":"string","maxLength":32,"description":"nextCursor of the previous page"}`
	textProp   = `{"type":"string","minLength":1,"maxLength":8192`

	queryMemorySchema = `{"type":"object","properties":{` +
		`"query":` + textProp + `,"description":"What to look for, in plain words"},` +
		`"kinds":{"type":"array","items":{"enum":["learnings","insights","patterns"]},"uniqueItems":true,"minItems":1,"description":"What to search (default all three)"},` +
		`"outcome":{"enum":["success","partial","failure","cancelled"],"description":"Learnings only: how the task ended"},` +
		`"tool":{"type":"string","maxLength":200,"description":"Learnings only: tasks that used this tool"},` +
		`"insightType":{"enum":["observation","best_practice","pitfall","preference"],"description":"Insights only: this type"},` +
		limitProp + `,` + cursorProp + `},"required":["query"],"additionalProperties":false}`

	storeInsightSchema = `{"type":"object","properties":{` +
		`"text":{"type":"string","minLength":1,"maxLength":16384,"description":"The insight, at most 16 KiB"},` +
		`"type":{"enum":["observation","best_practice","pitfall","preference"],"description":"Default observation"},` +
		`"appliesTo":{"type":"array","items":{"type":"string","minLength":1,"maxLength":200},"maxItems":100,"description":"Tools, upstreams or tags it is about"},` +
		`"confidence":{"type":"number","minimum":0,"maximum":1,"description":"Default 0.5"},` +
		`"evidence":{"type":"array","items":{"type":"string","minLength":1,"maxLength":200},"maxItems":100,"description":"Ids of supporting tasks or learnings"}},` +
		`"required":["text"],"additionalProperties":false}`

	similarTasksSchema = `{"type":"object","properties":{` +
		`"query":` + textProp + `,"description":"The request to compare with"},` +
		`"outcome":{"enum":["success","partial","failure","cancelled"]},` +
		`"tool":{"type":"string","maxLength":200,"description":"Only tasks that used this tool"},` +
		limitProp + `,` + cursorProp + `},"required":["query"],"additionalProperties":false}`

	successfulPlansSchema = `{"type":"object","properties":{` +
		`"goal":` + textProp + `,"description":"The goal to plan for"},` +
		`"minSuccessRate":{"type":"number","minimum":0,"maximum":1,"description":"Default 0: any pattern that succeeded at least once"},` +
		limitProp + `,` + cursorProp + `},"required":["goal"],"additionalProperties":false}`

	toolPerformanceSchema = `{"type":"object","properties":{` +
		`"tool":{"type":"string","minLength":1,"maxLength":200,"description":"One tool; omit for every tool"},` +
		limitProp + `,` + cursorProp + `},"additionalProperties":false}`
)

// page is the offset window of one call: results [offset, offset+limit).
type page struct{ offset, limit int }

// pageOf reads limit and cursor. Cursors are offsets into a ranking that
// is recomputed per call, so a page may repeat or skip an item when memory
// changed in between; ranked search has no stabler order to resume from.
func pageOf(limit int, cursor string, maxOffset int) (page, error) {
	p := page{limit: 10}
	if limit > 0 {
		p.limit = min(limit, MaxResults)
	}
	if cursor != "" {
		n, err := strconv.Atoi(cursor)
		if err != nil || n < 0 || n >= maxOffset {
			return p, agentsmcp.Errorf(agentsmcp.EINVALID, "cursor %q is not one this tool returned", cursor)
		}
		p.offset = n
	}
	return p, nil
}

// want is how many ranked results the page needs: one more than it shows,
// to know whether there is a next page.
func (p page) want() int { return min(p.offset+p.limit+1, recall.MaxMatches) }

// cut returns the page's window of n items and the next cursor.
func (p page) cut(n int) (from, to int, next string) {
	from, to = min(p.offset, n), min(p.offset+p.limit, n)
	if to < n {
		next = strconv.Itoa(to)
	}
	return from, to, next
}

// QueryMemoryArgs are the arguments of query_memory.
type QueryMemoryArgs struct {
	Query       string   `json:"query"`
	Kinds       []string `json:"kinds,omitempty"`
	Outcome     string   `json:"outcome,omitempty"`
	Tool        string   `json:"tool,omitempty"`
	InsightType string   `json:"insightType,omitempty"`
	Limit       int      `json:"limit,omitempty"`
	Cursor      string   `json:"cursor,omitempty"`
}

// MemoryItem is one result of query_memory: exactly one of Learning,
// Insight and Pattern is set, as Kind says.
type MemoryItem struct {
	Kind     string                 `json:"kind"`
	ID       string                 `json:"id"`
	Score    float64                `json:"score"`
	Learning *agentsmcp.Learning    `json:"learning,omitempty"`
	Insight  *agentsmcp.Insight     `json:"insight,omitempty"`
	Pattern  *agentsmcp.PlanPattern `json:"pattern,omitempty"`
}

// QueryMemoryResult is the structured result of query_memory.
type QueryMemoryResult struct {
	Mode       string       `json:"mode"`
	Items      []MemoryItem `json:"items"`
	NextCursor string       `json:"nextCursor,omitempty"`
}

func (t *MemoryTools) queryMemory(ctx context.Context, _ *mcp.CallToolRequest, a QueryMemoryArgs) (*mcp.CallToolResult, *QueryMemoryResult, error) {
	p, err := pageOf(a.Limit, a.Cursor, recall.MaxMatches)
	if err != nil {
		return nil, nil, t.fail(err)
	}
	kinds := a.Kinds
	if len(kinds) == 0 {
		kinds = []string{agentsmcp.NamespaceLearnings, agentsmcp.NamespaceInsights, agentsmcp.NamespacePatterns}
	}
	q := recall.NewQuery(a.Query)
	scope := recall.ReaderScope(ctx, t.Visibility)
	res := &QueryMemoryResult{Mode: recall.ModeSemantic, Items: []MemoryItem{}}
	note := func(mode string) {
		if mode == recall.ModeLexical {
			res.Mode = recall.ModeLexical
		}
	}
	var items []MemoryItem
	for _, kind := range kinds {
		switch kind {
		case agentsmcp.NamespaceLearnings:
			ls, mode, err := t.Recall.SimilarLearnings(ctx, q, agentsmcp.LearningFilter{Outcome: agentsmcp.Outcome(a.Outcome), Tool: a.Tool, Principal: scope}, p.want())
			if err != nil {
				return nil, nil, t.fail(err)
			}
			note(mode)
			for _, l := range ls {
				items = append(items, MemoryItem{Kind: kind, ID: l.Learning.ID, Score: l.Score, Learning: l.Learning})
			}
		case agentsmcp.NamespaceInsights:
			ins, mode, err := t.Recall.SimilarInsights(ctx, q, agentsmcp.InsightFilter{Type: agentsmcp.InsightType(a.InsightType), Principal: scope}, p.want())
			if err != nil {
				return nil, nil, t.fail(err)
			}
			note(mode)
			for _, in := range ins {
				items = append(items, MemoryItem{Kind: kind, ID: in.Insight.ID, Score: in.Score, Insight: in.Insight})
			}
		case agentsmcp.NamespacePatterns:
			ps, mode, err := t.Recall.SimilarPatterns(ctx, q, agentsmcp.PatternFilter{Principal: scope}, 0, p.want())
			if err != nil {
				return nil, nil, t.fail(err)
			}
			note(mode)
			for _, sp := range ps {
				items = append(items, MemoryItem{Kind: kind, ID: sp.Pattern.ID, Score: sp.Score, Pattern: sp.Pattern})
			}
		}
	}
	// Best first across kinds; ties in a stable, documented order.
	slices.SortStableFunc(items, func(x, y MemoryItem) int {
		return cmp.Or(cmp.Compare(y.Score, x.Score), cmp.Compare(x.Kind, y.Kind), cmp.Compare(y.ID, x.ID))
	})
	from, to, next := p.cut(len(items))
	res.Items = append(res.Items, items[from:to]...)
	res.NextCursor = next
	return nil, res, nil
}

// StoreInsightArgs are the arguments of store_insight.
type StoreInsightArgs struct {
	Text       string   `json:"text"`
	Type       string   `json:"type,omitempty"`
	AppliesTo  []string `json:"appliesTo,omitempty"`
	Confidence *float64 `json:"confidence,omitempty"`
	Evidence   []string `json:"evidence,omitempty"`
}

// StoreInsightResult is the structured result of store_insight.
type StoreInsightResult struct {
	Insight *agentsmcp.Insight `json:"insight"`
}

func (t *MemoryTools) storeInsight(ctx context.Context, req *mcp.CallToolRequest, a StoreInsightArgs) (*mcp.CallToolResult, *StoreInsightResult, error) {
	in := &agentsmcp.Insight{
		Text:       a.Text,
		Type:       agentsmcp.InsightType(cmp.Or(a.Type, string(agentsmcp.InsightObservation))),
		AppliesTo:  a.AppliesTo,
		Confidence: 0.5,
		Evidence:   a.Evidence,
		Source:     "mcp",
		Principal:  agentsmcp.MemoryOwnerFrom(ctx),
	}
	if a.Confidence != nil {
		in.Confidence = *a.Confidence
	}
	// The router puts the caller in ctx for every call, the executor's
	// steps included; a direct caller's token says it too.
	if p := agentsmcp.PrincipalFrom(ctx); p != nil && p.ID != "" && p.ID != agentsmcp.AnonymousPrincipal {
		in.Source = p.ID
	} else if req != nil && req.Extra != nil && req.Extra.TokenInfo != nil && req.Extra.TokenInfo.UserID != "" {
		in.Source = req.Extra.TokenInfo.UserID
	}
	if err := t.Recall.Insights.CreateInsight(ctx, in); err != nil {
		return nil, nil, t.fail(err)
	}
	if t.Written != nil {
		t.Written()
	}
	return nil, &StoreInsightResult{Insight: in}, nil
}

// SimilarTasksArgs are the arguments of get_similar_tasks.
type SimilarTasksArgs struct {
	Query   string `json:"query"`
	Outcome string `json:"outcome,omitempty"`
	Tool    string `json:"tool,omitempty"`
	Limit   int    `json:"limit,omitempty"`
	Cursor  string `json:"cursor,omitempty"`
}

// SimilarTasksResult is the structured result of get_similar_tasks.
type SimilarTasksResult struct {
	Mode       string                 `json:"mode"`
	Tasks      []recall.LearningMatch `json:"tasks"`
	NextCursor string                 `json:"nextCursor,omitempty"`
}

func (t *MemoryTools) similarTasks(ctx context.Context, _ *mcp.CallToolRequest, a SimilarTasksArgs) (*mcp.CallToolResult, *SimilarTasksResult, error) {
	p, err := pageOf(a.Limit, a.Cursor, recall.MaxMatches)
	if err != nil {
		return nil, nil, t.fail(err)
	}
	f := agentsmcp.LearningFilter{Outcome: agentsmcp.Outcome(a.Outcome), Tool: a.Tool, Principal: recall.ReaderScope(ctx, t.Visibility)}
	ls, mode, err := t.Recall.SimilarLearnings(ctx, recall.NewQuery(a.Query), f, p.want())
	if err != nil {
		return nil, nil, t.fail(err)
	}
	from, to, next := p.cut(len(ls))
	return nil, &SimilarTasksResult{Mode: mode, Tasks: append([]recall.LearningMatch{}, ls[from:to]...), NextCursor: next}, nil
}

// SuccessfulPlansArgs are the arguments of get_successful_plans.
type SuccessfulPlansArgs struct {
	Goal           string  `json:"goal"`
	MinSuccessRate float64 `json:"minSuccessRate,omitempty"`
	Limit          int     `json:"limit,omitempty"`
	Cursor         string  `json:"cursor,omitempty"`
}

// PlanMatch is one result of get_successful_plans.
type PlanMatch struct {
	Score       float64                `json:"score"`
	SuccessRate float64                `json:"successRate"`
	Pattern     *agentsmcp.PlanPattern `json:"pattern"`
}

// SuccessfulPlansResult is the structured result of get_successful_plans.
type SuccessfulPlansResult struct {
	Mode       string      `json:"mode"`
	Plans      []PlanMatch `json:"plans"`
	NextCursor string      `json:"nextCursor,omitempty"`
}

func (t *MemoryTools) successfulPlans(ctx context.Context, _ *mcp.CallToolRequest, a SuccessfulPlansArgs) (*mcp.CallToolResult, *SuccessfulPlansResult, error) {
	p, err := pageOf(a.Limit, a.Cursor, recall.MaxMatches)
	if err != nil {
		return nil, nil, t.fail(err)
	}
	f := agentsmcp.PatternFilter{Principal: recall.ReaderScope(ctx, t.Visibility)}
	ps, mode, err := t.Recall.SimilarPatterns(ctx, recall.NewQuery(a.Goal), f, a.MinSuccessRate, p.want())
	if err != nil {
		return nil, nil, t.fail(err)
	}
	from, to, next := p.cut(len(ps))
	res := &SuccessfulPlansResult{Mode: mode, Plans: []PlanMatch{}, NextCursor: next}
	for _, sp := range ps[from:to] {
		res.Plans = append(res.Plans, PlanMatch{Score: sp.Score, SuccessRate: sp.Pattern.SuccessRate(), Pattern: sp.Pattern})
	}
	return nil, res, nil
}

// ToolPerformanceArgs are the arguments of get_tool_performance.
type ToolPerformanceArgs struct {
	Tool   string `json:"tool,omitempty"`
	Limit  int    `json:"limit,omitempty"`
	Cursor string `json:"cursor,omitempty"`
}

// ToolFigures is one tool's figures as get_tool_performance reports them.
type ToolFigures struct {
	Tool         string           `json:"tool"`
	Calls        int64            `json:"calls"`
	Errors       int64            `json:"errors"`
	SuccessRate  float64          `json:"successRate"`
	P50Ms        float64          `json:"p50Ms"`
	P95Ms        float64          `json:"p95Ms"`
	CommonErrors map[string]int64 `json:"commonErrors"`
	LastCallAt   time.Time        `json:"lastCallAt"`
}

// ToolPerformanceResult is the structured result of get_tool_performance.
type ToolPerformanceResult struct {
	Tools      []ToolFigures `json:"tools"`
	NextCursor string        `json:"nextCursor,omitempty"`
}

func statsOf(p *agentsmcp.ToolPerformance) ToolFigures {
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	errs := p.CommonErrors
	if errs == nil {
		errs = map[string]int64{}
	}
	return ToolFigures{
		Tool: p.Tool, Calls: p.Calls, Errors: p.Errors, SuccessRate: toolperf.SuccessRate(p),
		P50Ms: ms(toolperf.Percentile(p, 0.5)), P95Ms: ms(toolperf.Percentile(p, 0.95)), CommonErrors: errs, LastCallAt: p.LastCallAt,
	}
}

func (t *MemoryTools) toolPerformance(ctx context.Context, _ *mcp.CallToolRequest, a ToolPerformanceArgs) (*mcp.CallToolResult, *ToolPerformanceResult, error) {
	if a.Tool != "" {
		perf, err := t.ToolPerformance.FindToolPerformance(ctx, a.Tool)
		if agentsmcp.ErrorCode(err) == agentsmcp.ENOTFOUND {
			return nil, &ToolPerformanceResult{Tools: []ToolFigures{}}, nil // never called: no figures
		} else if err != nil {
			return nil, nil, t.fail(err)
		}
		return nil, &ToolPerformanceResult{Tools: []ToolFigures{statsOf(perf)}}, nil
	}
	p, err := pageOf(a.Limit, a.Cursor, math.MaxInt)
	if err != nil {
		return nil, nil, t.fail(err)
	}
	all, err := t.ToolPerformance.ListToolPerformance(ctx)
	if err != nil {
		return nil, nil, t.fail(err)
	}
	from, to, next := p.cut(len(all))
	res := &ToolPerformanceResult{Tools: []ToolFigures{}, NextCursor: next}
	for _, perf := range all[from:to] {
		res.Tools = append(res.Tools, statsOf(perf))
	}
	return nil, res, nil
}

// fail turns err into the tool's error result text: the message of an
// application error (invalid input, a store that is unavailable), and a
// generic text for anything else, which is logged instead of shown.
func (t *MemoryTools) fail(err error) error {
	code := agentsmcp.ErrorCode(err)
	if code == agentsmcp.EINTERNAL && t.Logger != nil {
		t.Logger.Error("memory tool failed", "err", err)
	}
	switch code {
	case agentsmcp.EUNAVAILABLE:
		return fmt.Errorf("memory is unavailable right now, try again: %s", agentsmcp.ErrorMessage(err))
	case agentsmcp.EQUOTA:
		// Kept as it is: a quota refusal is an isError result on MCP and
		// HTTP 429 on the REST bridge (see localtools.Add).
		return agentsmcp.Errorf(code, "%s", agentsmcp.ErrorMessage(err))
	}
	return errors.New(agentsmcp.ErrorMessage(err))
}
