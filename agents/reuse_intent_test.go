package agents_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/agents"
	"github.com/agents-mcp/agents-mcp/internal/testutil"
	"github.com/agents-mcp/agents-mcp/memory/embed"
	"github.com/agents-mcp/agents-mcp/memory/recall"
	"github.com/agents-mcp/agents-mcp/memory/sqlite"
	"github.com/agents-mcp/agents-mcp/memory/vectors"
	"github.com/agents-mcp/agents-mcp/memory/vectorsync"
	"github.com/agents-mcp/agents-mcp/remote"
	"github.com/agents-mcp/agents-mcp/router"
	"github.com/agents-mcp/agents-mcp/router/toolsearch"
)

// notesUpstream is a go-sdk MCP server with a memory's two tools, one that
// reads and one that writes; it records what store_insight was given.
type notesUpstream struct {
	mu     sync.Mutex
	stored []string
}

type queryIn struct {
	Query string `json:"query" jsonschema:"what to search for"`
}

type insightIn struct {
	Text string `json:"text" jsonschema:"the insight"`
}

func (n *notesUpstream) server() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "notes", Version: "1.0.0"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "query_memory", Description: "Search the memory for insights about a topic"},
		func(context.Context, *mcp.CallToolRequest, queryIn) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "[]"}}}, nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "store_insight", Description: "Store an insight in the memory"},
		func(_ context.Context, _ *mcp.CallToolRequest, in insightIn) (*mcp.CallToolResult, any, error) {
			n.mu.Lock()
			n.stored = append(n.stored, in.Text)
			n.mu.Unlock()
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "stored"}}}, nil, nil
		})
	return s
}

// newServerStack is newFamilyStack over any upstream server (named
// upstream), with families, and recall over a vector index that only the
// test's Drain brings up to date.
func newServerStack(t *testing.T, upstream string, server func() *mcp.Server, families *agents.Families) *familyStack {
	t.Helper()
	ctx := t.Context()
	db, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "agents.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	srv := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server() }, nil))
	t.Cleanup(srv.Close)
	r := router.New(router.Options{Version: "test", OnToolCall: func(c router.ToolCallRecord) {
		_ = db.RecordToolCall(context.Background(), agentsmcp.ToolCall{Tool: c.Tool, Duration: c.Duration, Error: c.Error})
	}})
	pool := remote.NewPool(remote.Options{Registry: r})
	t.Cleanup(func() { _ = pool.Close(context.Background()) })
	if err := pool.AddFromConfig(ctx, agentsmcp.UpstreamConfig{Name: upstream, Transport: remote.TransportStreamable, URL: srv.URL}); err != nil {
		t.Fatal(err)
	}
	index := vectors.NewFlat(embed.HashDimensions)
	syncer, err := vectorsync.New(vectorsync.Config{Outbox: db, Index: index, Embedder: embed.Hash{},
		Sources: []vectorsync.Source{vectorsync.Learnings(db), vectorsync.Insights(db), vectorsync.Patterns(db)}})
	if err != nil {
		t.Fatal(err)
	}
	searcher := &recall.Searcher{Index: index, Embedder: embed.Hash{}, Learnings: db, Insights: db, Patterns: db}
	catalog := toolsearch.NewCatalog(r, nil, nil)
	g := &agents.Gatherer{Catalog: catalog, Memory: &recall.AgentMemory{Searcher: searcher, Family: agents.FamilyOf, FamilyTag: agents.FamilyTag}, Performance: db, Families: families}
	learner := &agents.Learner{Learnings: db, Patterns: db, Insights: db, Catalog: catalog}
	ex := agents.NewExecutor(agents.ExecutorOptions{Tasks: db, Plans: db, Tools: r, Catalog: catalog, OnEnd: learner.Learn,
		Retry: agentsmcp.RetryPolicy{MaxAttempts: 2, InitialBackoff: time.Millisecond}})
	t.Cleanup(func() { _ = ex.Close(context.Background()) })
	return &familyStack{syncer: syncer, stack: &stack{db: db, router: r, exec: ex,
		thinker: &agents.Thinker{Gatherer: g, Thoughts: db},
		planner: &agents.Planner{Gatherer: g, Validator: r, Plans: db, Tasks: db}}}
}

// plan thinks and plans request with the builtin planner.
func (s *familyStack) plan(t *testing.T, request string) (*agentsmcp.Plan, *agents.PlanReport) {
	t.Helper()
	th, _, err := s.thinker.Think(t.Context(), request, nil)
	if err != nil {
		t.Fatal(err)
	}
	plan, report, err := s.planner.Plan(t.Context(), agents.PlanRequest{Request: request, Thought: th})
	if err != nil {
		t.Fatal(err)
	}
	return plan, report
}

// execute runs plan with every input it declares set to value, and waits
// until the task ended and its learning is stored (not until the vector
// index has it: the test drains the syncer when it wants).
func (s *familyStack) execute(t *testing.T, plan *agentsmcp.Plan, value string) *agentsmcp.Task {
	t.Helper()
	ctx := t.Context()
	var schema struct {
		Properties map[string]json.RawMessage `json:"properties"`
	}
	_ = json.Unmarshal(plan.Inputs, &schema)
	inputs := map[string]string{}
	for name := range schema.Properties {
		inputs[name] = value
	}
	in, _ := json.Marshal(inputs)
	task, err := s.exec.Start(ctx, plan, in, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	wctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	if task, err = s.exec.Wait(wctx, task.ID); err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, 10*time.Second, "task "+task.ID+" is learned", func() bool {
		ls, _, err := s.db.FindLearnings(ctx, agentsmcp.LearningFilter{Limit: 100})
		if err != nil {
			t.Fatal(err)
		}
		return slices.ContainsFunc(ls, func(l *agentsmcp.Learning) bool { return l.TaskID == task.ID })
	})
	return task
}

func planTools(p *agentsmcp.Plan) []string {
	var out []string
	for _, s := range p.Steps {
		out = append(out, s.Tool)
	}
	return out
}

// TestReuseRefusesAnotherIntent: a request that asks to store joins the
// family of one that was served by query_memory (its family threshold is
// loose, and the past request had no verb). The past plan reads; the
// request writes: the plan is not reused, and the new one stores, at the
// upstream.
func TestReuseRefusesAnotherIntent(t *testing.T) {
	up := &notesUpstream{}
	s := newServerStack(t, "notes", up.server, &agents.Families{Embedder: embed.Hash{}, MinSimilarity: 0.5})
	first, _ := s.plan(t, "Any topic in memory about the demo folder?")
	if !slices.Equal(planTools(first), []string{"notes__query_memory"}) {
		t.Fatalf("the first plan calls %v; the test needs query_memory", planTools(first))
	}
	if task := s.execute(t, first, "demo folder"); task.Status != agentsmcp.TaskSucceeded {
		t.Fatalf("first task %s: %s", task.Status, task.Error)
	}
	if _, err := s.syncer.Drain(t.Context()); err != nil {
		t.Fatal(err)
	}
	const store = "Store an insight about the demo folder"
	plan, report := s.plan(t, store)
	if report.FamilyJoined == "" {
		t.Fatalf("%q joined no family (goal %q); the test needs it to join the first request's", store, plan.Goal)
	}
	if report.ReusedPlan != "" || !slices.Equal(planTools(plan), []string{"notes__store_insight"}) {
		t.Fatalf("%q: reused %q, tools %v; want no reuse and store_insight (refused: %q)", store, report.ReusedPlan, planTools(plan), report.ReuseRefused)
	}
	if len(report.ReuseRefused) == 0 {
		t.Errorf("the report does not say why the family's plan was not reused")
	}
	t.Logf("refused: %q", report.ReuseRefused)
	if task := s.execute(t, plan, "the upstream serves only the demo folder"); task.Status != agentsmcp.TaskSucceeded {
		t.Fatalf("store task %s: %s", task.Status, task.Error)
	}
	up.mu.Lock()
	defer up.mu.Unlock()
	if len(up.stored) != 1 {
		t.Errorf("store_insight was called %d time(s); want once", len(up.stored))
	}
}

// TestBuiltinPlanIsDeterministicWhateverTheIndex: the same request and the
// same stored state give the same plan, whether the vector index has
// indexed the past task yet or not: planned right after the past task was
// stored, and again once the index caught up, the plan reuses the same
// past plan with the same steps.
func TestBuiltinPlanIsDeterministicWhateverTheIndex(t *testing.T) {
	up := &weatherUpstream{onlyConditions: true}
	s := newServerStack(t, "weather", up.server, &agents.Families{Embedder: embed.Hash{}})
	first, _ := s.plan(t, "What is the weather in Lima today?")
	if task := s.execute(t, first, "Lima"); task.Status != agentsmcp.TaskSucceeded {
		t.Fatalf("first task %s: %s", task.Status, task.Error)
	}
	const oslo = "What is the weather in Oslo tomorrow?"
	lagging, lagReport := s.plan(t, oslo) // the index has not indexed the Lima task
	if _, err := s.syncer.Drain(t.Context()); err != nil {
		t.Fatal(err)
	}
	caughtUp, upReport := s.plan(t, oslo)
	if lagReport.ReusedPlan != upReport.ReusedPlan || lagReport.FamilyJoined != upReport.FamilyJoined || lagReport.Pattern != upReport.Pattern {
		t.Errorf("index lagging: reused %q, joined %q, pattern %q; caught up: reused %q, joined %q, pattern %q; want the same",
			lagReport.ReusedPlan, lagReport.FamilyJoined, lagReport.Pattern, upReport.ReusedPlan, upReport.FamilyJoined, upReport.Pattern)
	}
	if upReport.ReusedPlan != first.ID {
		t.Errorf("the plan reused %q; want the Lima plan %s", upReport.ReusedPlan, first.ID)
	}
	if len(lagging.Steps) != len(caughtUp.Steps) {
		t.Fatalf("steps %+v and %+v", lagging.Steps, caughtUp.Steps)
	}
	for i := range lagging.Steps {
		a, b := lagging.Steps[i], caughtUp.Steps[i]
		if a.ID != b.ID || a.Tool != b.Tool || string(a.Arguments) != string(b.Arguments) || a.Description != b.Description {
			t.Errorf("step %d: %+v with the index lagging, %+v caught up", i, a, b)
		}
	}
	if string(lagging.Inputs) != string(caughtUp.Inputs) || lagging.Goal != caughtUp.Goal {
		t.Errorf("inputs %s / %s, goal %q / %q", lagging.Inputs, caughtUp.Inputs, lagging.Goal, caughtUp.Goal)
	}
}
