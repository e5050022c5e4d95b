package mcptools_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/internal/toolperf"
	"github.com/agents-mcp/agents-mcp/localtools"
	"github.com/agents-mcp/agents-mcp/memory/embed"
	"github.com/agents-mcp/agents-mcp/memory/mcptools"
	"github.com/agents-mcp/agents-mcp/memory/recall"
	"github.com/agents-mcp/agents-mcp/memory/sqlite"
	"github.com/agents-mcp/agents-mcp/memory/vectors"
	"github.com/agents-mcp/agents-mcp/memory/vectorsync"
	"github.com/agents-mcp/agents-mcp/router"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// switchableEmbedder is a fake of a remote embedder that can be made to
// hang, to test the fallback; otherwise it is the offline hash embedder.
type switchableEmbedder struct {
	embed.Hash
	hang  atomic.Bool
	calls atomic.Int32
}

func (e *switchableEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	e.calls.Add(1)
	if e.hang.Load() {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	return e.Hash.Embed(ctx, texts)
}

type env struct {
	db       *sqlite.DB
	syncer   *vectorsync.Syncer
	embedder *switchableEmbedder
	cs       *mcp.ClientSession
	router   *router.Router
}

func newEnv(t *testing.T) *env { t.Helper(); return newEnvWith(t, "") }

// newEnvWith is newEnv with the tools' memory visibility.
func newEnvWith(t *testing.T, visibility agentsmcp.MemoryVisibility) *env {
	t.Helper()
	ctx := t.Context()
	db, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "m.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	index := vectors.NewFlat(embed.HashDimensions)
	e := &env{db: db, embedder: &switchableEmbedder{}}
	e.syncer, err = vectorsync.New(vectorsync.Config{Outbox: db, Index: index, Embedder: e.embedder,
		Sources: []vectorsync.Source{vectorsync.Learnings(db), vectorsync.Insights(db), vectorsync.Patterns(db)}})
	if err != nil {
		t.Fatal(err)
	}
	tools := &mcptools.MemoryTools{
		Recall: &recall.Searcher{Index: index, Embedder: e.embedder, Learnings: db, Insights: db, Patterns: db,
			QueryTimeout: 100 * time.Millisecond},
		ToolPerformance: db,
		Visibility:      visibility,
	}
	r := router.New(router.Options{})
	e.router = r
	local := localtools.New()
	if err := tools.Register(local); err != nil {
		t.Fatal(err)
	}
	if err := r.AddProvider(ctx, local); err != nil {
		t.Fatal(err)
	}
	st, ct := mcp.NewInMemoryTransports()
	ss, err := r.Server().Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	e.cs, err = mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.cs.Close() })
	return e
}

// call calls a tool and decodes its structured result into out; it returns
// the error text of an isError result.
func (e *env) call(t *testing.T, name string, args any, out any) string {
	t.Helper()
	res, err := e.cs.CallTool(t.Context(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if res.IsError {
		return res.Content[0].(*mcp.TextContent).Text
	}
	b, _ := json.Marshal(res.StructuredContent)
	if err := json.Unmarshal(b, out); err != nil {
		t.Fatalf("%s: decode %s: %v", name, b, err)
	}
	return ""
}

func (e *env) drain(t *testing.T) {
	t.Helper()
	if _, err := e.syncer.Drain(t.Context()); err != nil {
		t.Fatal(err)
	}
}

func TestStoreInsightThenQueryMemory(t *testing.T) {
	e := newEnv(t)
	var stored mcptools.StoreInsightResult
	if msg := e.call(t, mcptools.StoreInsightName, map[string]any{
		"text": "server-filesystem search_files is slow on large trees; list the directory first", "type": "pitfall",
		"appliesTo": []string{"files__search_files"}, "confidence": 0.8,
	}, &stored); msg != "" {
		t.Fatal(msg)
	}
	in := stored.Insight
	if !strings.HasPrefix(in.ID, "ins_") || in.Type != agentsmcp.InsightPitfall || in.Confidence != 0.8 || in.Source != "mcp" {
		t.Fatalf("stored %+v", in)
	}
	if err := e.db.CreateInsight(t.Context(), &agentsmcp.Insight{Text: "weekly reports go to the finance channel", Type: agentsmcp.InsightPreference}); err != nil {
		t.Fatal(err)
	}
	if err := e.db.CreateLearning(t.Context(), &agentsmcp.Learning{Query: "find large files in the project tree", Outcome: agentsmcp.OutcomeSuccess, Tools: []string{"files__search_files"}}); err != nil {
		t.Fatal(err)
	}
	e.drain(t)

	var got mcptools.QueryMemoryResult
	if msg := e.call(t, mcptools.QueryMemoryName, map[string]any{"query": "searching files in a large directory tree is slow", "kinds": []string{"insights"}}, &got); msg != "" {
		t.Fatal(msg)
	}
	if got.Mode != recall.ModeSemantic || len(got.Items) != 2 || got.Items[0].ID != in.ID || got.Items[0].Insight.Text != in.Text {
		t.Fatalf("query_memory = %+v, want the pitfall first, semantically", got)
	}
	if got.Items[0].Score <= got.Items[1].Score {
		t.Errorf("scores not descending: %v, %v", got.Items[0].Score, got.Items[1].Score)
	}
	// Filters and kinds: only pitfalls, then every kind.
	got = mcptools.QueryMemoryResult{}
	e.call(t, mcptools.QueryMemoryName, map[string]any{"query": "weekly reports", "insightType": "preference", "kinds": []string{"insights"}}, &got)
	if len(got.Items) != 1 || got.Items[0].Insight.Type != agentsmcp.InsightPreference {
		t.Errorf("type-filtered query = %+v", got.Items)
	}
	got = mcptools.QueryMemoryResult{}
	e.call(t, mcptools.QueryMemoryName, map[string]any{"query": "large files in a tree"}, &got)
	kinds := map[string]int{}
	for _, it := range got.Items {
		kinds[it.Kind]++
	}
	if kinds["learnings"] != 1 || kinds["insights"] != 2 {
		t.Errorf("all-kinds query returned %v", kinds)
	}
}

// An insight stored by an in-process call (an executor's step) names the
// principal the router was given, as one stored over MCP with a credential
// does.
func TestStoreInsightNamesTheCallingPrincipal(t *testing.T) {
	e := newEnv(t)
	ctx := agentsmcp.WithPrincipal(t.Context(), &agentsmcp.Principal{ID: "key:0123456789ab", Scopes: agentsmcp.Scopes})
	res, err := e.router.CallTool(ctx, &mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{
		Name: mcptools.StoreInsightName, Arguments: json.RawMessage(`{"text":"stored by a task step"}`)}})
	if err != nil || res.IsError {
		t.Fatalf("store_insight: %v %+v", err, res)
	}
	var out mcptools.StoreInsightResult
	b, _ := json.Marshal(res.StructuredContent)
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	if out.Insight.Source != "key:0123456789ab" {
		t.Errorf("source %q, want the principal's id", out.Insight.Source)
	}
}

func TestQueryMemoryPagesAndRejectsBadInput(t *testing.T) {
	e := newEnv(t)
	for i := range 5 {
		if err := e.db.CreateInsight(t.Context(), &agentsmcp.Insight{Text: "retry flaky upstream calls " + strings.Repeat("again ", i), Type: agentsmcp.InsightBestPractice}); err != nil {
			t.Fatal(err)
		}
	}
	e.drain(t)
	seen := map[string]bool{}
	cursor := ""
	for pages := 0; ; pages++ {
		if pages > 5 {
			t.Fatal("paging does not end")
		}
		args := map[string]any{"query": "retry flaky upstreams", "limit": 2}
		if cursor != "" {
			args["cursor"] = cursor
		}
		var got mcptools.QueryMemoryResult
		if msg := e.call(t, mcptools.QueryMemoryName, args, &got); msg != "" {
			t.Fatal(msg)
		}
		if len(got.Items) > 2 {
			t.Fatalf("page of %d items, limit 2", len(got.Items))
		}
		for _, it := range got.Items {
			if seen[it.ID] {
				t.Fatalf("%s on two pages", it.ID)
			}
			seen[it.ID] = true
		}
		if cursor = got.NextCursor; cursor == "" {
			break
		}
	}
	if len(seen) != 5 {
		t.Errorf("pages visited %d insights, want 5", len(seen))
	}

	for _, tc := range []struct {
		tool string
		args map[string]any
		want string
	}{
		{mcptools.QueryMemoryName, map[string]any{}, "query"},
		{mcptools.QueryMemoryName, map[string]any{"query": "x", "limit": 500}, "limit"},
		{mcptools.QueryMemoryName, map[string]any{"query": "x", "kinds": []string{"secrets"}}, "kinds"},
		{mcptools.QueryMemoryName, map[string]any{"query": "x", "cursor": "not-a-cursor"}, "cursor"},
		{mcptools.StoreInsightName, map[string]any{"text": strings.Repeat("é", 9000)}, "16384"},
		{mcptools.StoreInsightName, map[string]any{"text": "x", "confidence": 2}, "confidence"},
		{mcptools.StoreInsightName, map[string]any{"text": "x", "type": "rumour"}, "type"},
	} {
		var ignored any
		msg := e.call(t, tc.tool, tc.args, &ignored)
		if !strings.Contains(msg, tc.want) {
			t.Errorf("%s %v: error %q, want one mentioning %q", tc.tool, tc.args, msg, tc.want)
		}
	}
}

func TestHungEmbedderFallsBackToWords(t *testing.T) {
	e := newEnv(t)
	if err := e.db.CreateLearning(t.Context(), &agentsmcp.Learning{Query: "deploy the billing service", Outcome: agentsmcp.OutcomeFailure, Errors: []string{"timeout"}}); err != nil {
		t.Fatal(err)
	}
	e.drain(t)
	e.embedder.hang.Store(true)
	start := time.Now()
	var got mcptools.SimilarTasksResult
	if msg := e.call(t, mcptools.GetSimilarTasksName, map[string]any{"query": "billing"}, &got); msg != "" {
		t.Fatal(msg)
	}
	if time.Since(start) > 5*time.Second {
		t.Errorf("fallback took %v; the query timeout is 100ms", time.Since(start))
	}
	if got.Mode != recall.ModeLexical || len(got.Tasks) != 1 || got.Tasks[0].Learning.Outcome != agentsmcp.OutcomeFailure {
		t.Fatalf("get_similar_tasks with a hung embedder = %+v, want the lexical match", got)
	}
	// One query over every kind waits for the embedder once, not per kind.
	e.embedder.calls.Store(0)
	var all mcptools.QueryMemoryResult
	if msg := e.call(t, mcptools.QueryMemoryName, map[string]any{"query": "billing"}, &all); msg != "" {
		t.Fatal(msg)
	}
	if n := e.embedder.calls.Load(); n != 1 || all.Mode != recall.ModeLexical || len(all.Items) != 1 {
		t.Errorf("query_memory over three kinds: %d embedder calls, mode %q, %d items; want 1 call and the lexical match", n, all.Mode, len(all.Items))
	}
}

func TestSuccessfulPlansAndToolPerformance(t *testing.T) {
	e := newEnv(t)
	ctx := t.Context()
	for i, ok := range []bool{true, true, false} {
		if _, err := e.db.RecordPatternUse(ctx, "", "summarise the largest files", []string{"files__list", "files__read"}, ok, time.Time{}); err != nil {
			t.Fatal(i, err)
		}
	}
	if _, err := e.db.RecordPatternUse(ctx, "", "summarise the largest files", []string{"files__grep"}, false, time.Time{}); err != nil {
		t.Fatal(err)
	}
	e.drain(t)
	var plans mcptools.SuccessfulPlansResult
	if msg := e.call(t, mcptools.GetSuccessfulPlansName, map[string]any{"goal": "summarise big files"}, &plans); msg != "" {
		t.Fatal(msg)
	}
	if len(plans.Plans) != 1 || plans.Plans[0].Pattern.Uses != 3 || plans.Plans[0].SuccessRate < 0.66 || plans.Plans[0].SuccessRate > 0.67 {
		t.Fatalf("get_successful_plans = %+v, want only the pattern that succeeded, 2 of 3", plans)
	}
	plans = mcptools.SuccessfulPlansResult{}
	e.call(t, mcptools.GetSuccessfulPlansName, map[string]any{"goal": "summarise big files", "minSuccessRate": 0.9}, &plans)
	if len(plans.Plans) != 0 {
		t.Errorf("minSuccessRate 0.9 kept %+v", plans.Plans)
	}

	for i, d := range []time.Duration{3 * time.Millisecond, 40 * time.Millisecond, 45 * time.Millisecond, 2 * time.Second} {
		c := agentsmcp.ToolCall{Tool: "files__read", Duration: d}
		if i == 3 {
			c.Error = "upstream timed out"
		}
		if err := e.db.RecordToolCall(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.db.RecordToolCall(ctx, agentsmcp.ToolCall{Tool: "files__list", Duration: time.Millisecond}); err != nil {
		t.Fatal(err)
	}
	var perf mcptools.ToolPerformanceResult
	if msg := e.call(t, mcptools.GetToolPerformanceName, map[string]any{"tool": "files__read"}, &perf); msg != "" {
		t.Fatal(msg)
	}
	if len(perf.Tools) != 1 {
		t.Fatalf("tool performance = %+v", perf)
	}
	s := perf.Tools[0]
	if s.Calls != 4 || s.Errors != 1 || s.SuccessRate != 0.75 || s.P50Ms != 50 || s.P95Ms != 2500 || s.CommonErrors[toolperf.ErrorClassTimeout] != 1 {
		t.Errorf("files__read figures = %+v", s)
	}
	perf = mcptools.ToolPerformanceResult{}
	e.call(t, mcptools.GetToolPerformanceName, map[string]any{"limit": 1}, &perf)
	if len(perf.Tools) != 1 || perf.Tools[0].Tool != "files__read" || perf.NextCursor == "" {
		t.Errorf("first page = %+v, want the most called tool and a cursor", perf)
	}
	perf2 := mcptools.ToolPerformanceResult{}
	e.call(t, mcptools.GetToolPerformanceName, map[string]any{"limit": 1, "cursor": perf.NextCursor}, &perf2)
	if len(perf2.Tools) != 1 || perf2.Tools[0].Tool != "files__list" || perf2.NextCursor != "" {
		t.Errorf("second page = %+v", perf2)
	}
	perf = mcptools.ToolPerformanceResult{}
	if msg := e.call(t, mcptools.GetToolPerformanceName, map[string]any{"tool": "never__called"}, &perf); msg != "" || len(perf.Tools) != 0 {
		t.Errorf("unknown tool: %q, %+v; want an empty list", msg, perf)
	}
}
