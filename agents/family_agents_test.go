package agents_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
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

// weatherUpstream is a go-sdk MCP server with two tools for the weather of
// a city: current_weather, worded like the requests, always answers an
// error result; conditions, worded otherwise, works. It records the cities
// conditions was asked for.
type weatherUpstream struct {
	onlyConditions bool // serve conditions alone

	mu     sync.Mutex
	cities []string
	failed int
}

type cityIn struct {
	City string `json:"city" jsonschema:"the city"`
}

func (w *weatherUpstream) server() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "weather", Version: "1.0.0"}, nil)
	if !w.onlyConditions {
		mcp.AddTool(s, &mcp.Tool{Name: "current_weather", Description: "current weather in a city today"},
			func(context.Context, *mcp.CallToolRequest, cityIn) (*mcp.CallToolResult, any, error) {
				w.mu.Lock()
				w.failed++
				w.mu.Unlock()
				return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "service unavailable (503)"}}}, nil, nil
			})
	}
	mcp.AddTool(s, &mcp.Tool{Name: "conditions", Description: "weather conditions today and temperature outlook for a city"},
		func(_ context.Context, _ *mcp.CallToolRequest, in cityIn) (*mcp.CallToolResult, any, error) {
			w.mu.Lock()
			w.cities = append(w.cities, in.City)
			w.mu.Unlock()
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "18°C, clear in " + in.City}}}, nil, nil
		})
	return s
}

// familyStack is the agents over real parts: SQLite, a go-sdk upstream
// behind a remote pool and the router, the learner, and recall over a
// vector index fed by the syncer.
type familyStack struct {
	*stack
	syncer *vectorsync.Syncer
}

func newFamilyStack(t *testing.T, up *weatherUpstream) *familyStack {
	t.Helper()
	ctx := t.Context()
	db, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "agents.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	srv := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return up.server() }, nil))
	t.Cleanup(srv.Close)
	r := router.New(router.Options{Version: "test", OnToolCall: func(c router.ToolCallRecord) {
		_ = db.RecordToolCall(context.Background(), agentsmcp.ToolCall{Tool: c.Tool, Duration: c.Duration, Error: c.Error})
	}})
	pool := remote.NewPool(remote.Options{Registry: r})
	t.Cleanup(func() { _ = pool.Close(context.Background()) })
	if err := pool.AddFromConfig(ctx, agentsmcp.UpstreamConfig{Name: "weather", Transport: remote.TransportStreamable, URL: srv.URL}); err != nil {
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
	g := &agents.Gatherer{Catalog: catalog, Memory: &recall.AgentMemory{Searcher: searcher, Family: agents.FamilyOf, FamilyTag: agents.FamilyTag}, Performance: db, Families: &agents.Families{Embedder: embed.Hash{}}}
	learner := &agents.Learner{Learnings: db, Patterns: db, Insights: db, Catalog: catalog}
	ex := agents.NewExecutor(agents.ExecutorOptions{Tasks: db, Plans: db, Tools: r, Catalog: catalog, OnEnd: learner.Learn,
		Retry: agentsmcp.RetryPolicy{MaxAttempts: 2, InitialBackoff: time.Millisecond}})
	t.Cleanup(func() { _ = ex.Close(context.Background()) })
	return &familyStack{syncer: syncer, stack: &stack{db: db, router: r, exec: ex,
		thinker: &agents.Thinker{Gatherer: g, Thoughts: db},
		planner: &agents.Planner{Gatherer: g, Validator: r, Plans: db, Tasks: db}}}
}

// run thinks, plans and executes request with the builtin planner, giving
// the city as the input the plan asks for, and waits until the learner's
// records are in the vector index.
func (s *familyStack) run(t *testing.T, request, city string) (*agentsmcp.Thought, *agentsmcp.Plan, *agents.PlanReport, *agentsmcp.Task) {
	t.Helper()
	ctx := t.Context()
	th, _, err := s.thinker.Think(ctx, request, nil)
	if err != nil {
		t.Fatal(err)
	}
	plan, report, err := s.planner.Plan(ctx, agents.PlanRequest{Request: request, Thought: th})
	if err != nil {
		t.Fatal(err)
	}
	inputs, _ := json.Marshal(map[string]string{"city": city})
	task, err := s.exec.Start(ctx, plan, inputs, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	wctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	if task, err = s.exec.Wait(wctx, task.ID); err != nil {
		t.Fatal(err)
	}
	// The learner runs as the task ends; its records reach the index when
	// the outbox is drained.
	testutil.Eventually(t, 10*time.Second, "task "+task.ID+" is learned", func() bool {
		ls, _, err := s.db.FindLearnings(ctx, agentsmcp.LearningFilter{Limit: 100})
		if err != nil {
			t.Fatal(err)
		}
		return slices.ContainsFunc(ls, func(l *agentsmcp.Learning) bool { return l.TaskID == task.ID })
	})
	if _, err := s.syncer.Drain(ctx); err != nil {
		t.Fatal(err)
	}
	return th, plan, report, task
}

// What is learned on one request of a family serves the others: a tool
// that failed on "the weather in Paris" is avoided for "the weather in
// Lima", and the plan that worked for Lima is reused for Oslo. Keyed by
// the exact goal ("weather paris today" vs "weather lima today"), neither
// carried over.
func TestFamilySharesPitfallsAndPlans(t *testing.T) {
	up := &weatherUpstream{}
	s := newFamilyStack(t, up)
	const failing, working = "weather__current_weather", "weather__conditions"

	_, plan1, _, task1 := s.run(t, "What is the weather in Paris today?", "Paris")
	if plan1.Steps[0].Tool != failing {
		t.Fatalf("the first plan uses %s; the test needs %s to rank first", plan1.Steps[0].Tool, failing)
	}
	if task1.Status != agentsmcp.TaskFailed {
		t.Fatalf("first task %s, want failed", task1.Status)
	}
	if plan1.Goal != "weather <name> <date>" {
		t.Errorf("the plan's goal is %q, want the family weather <name> <date>", plan1.Goal)
	}

	th2, plan2, _, task2 := s.run(t, "What is the weather in Lima today?", "Lima")
	if plan2.Steps[0].Tool != working {
		t.Fatalf("the plan for Lima uses %s, which failed for Paris; want %s", plan2.Steps[0].Tool, working)
	}
	if task2.Status != agentsmcp.TaskSucceeded {
		t.Fatalf("Lima task %s: %s", task2.Status, task2.Error)
	}
	if c := strings.Join(th2.Constraints, "\n"); !strings.Contains(c, "avoid "+failing) {
		t.Errorf("the Lima thought does not tell to avoid %s: %q", failing, th2.Constraints)
	}
	if !strings.Contains(th2.Reasoning, `"weather <name> <date>"`) {
		t.Errorf("the Lima thought does not name its family: %q", th2.Reasoning)
	}

	failedBefore := up.failed
	_, plan3, report3, task3 := s.run(t, "What is the weather in Oslo today?", "Oslo")
	if report3.ReusedPlan != plan2.ID {
		t.Errorf("the Oslo plan reused %q, want the Lima plan %s", report3.ReusedPlan, plan2.ID)
	}
	if plan3.Steps[0].Tool != working || task3.Status != agentsmcp.TaskSucceeded {
		t.Errorf("the Oslo plan uses %s, task %s: %s", plan3.Steps[0].Tool, task3.Status, task3.Error)
	}
	up.mu.Lock()
	defer up.mu.Unlock()
	if !slices.Equal(up.cities, []string{"Lima", "Oslo"}) || up.failed != failedBefore {
		t.Errorf("conditions was asked for %q, current_weather failed %d more times; want Lima and Oslo, no failure", up.cities, up.failed-failedBefore)
	}
	patterns, _, err := s.db.FindPatterns(t.Context(), agentsmcp.PatternFilter{})
	if err != nil {
		t.Fatal(err)
	}
	var found bool
	for _, p := range patterns {
		if p.Goal == "weather <name> <date>" && slices.Equal(p.Steps, []string{working}) && p.Successes == 2 {
			found = true
		}
	}
	if !found {
		t.Errorf("patterns %+v: want %s recorded twice under the family", patterns, working)
	}
}

// A plan that worked for one city is reused for another city on another
// day, and for a city written in lower case: one family. Keyed by the
// exact goal, "weather lima today" and "weather oslo tomorrow" shared
// nothing.
func TestFamilyReusesAPlanAcrossEntities(t *testing.T) {
	up := &weatherUpstream{onlyConditions: true}
	s := newFamilyStack(t, up)
	_, plan1, _, task1 := s.run(t, "What is the weather in Lima today?", "Lima")
	if task1.Status != agentsmcp.TaskSucceeded {
		t.Fatalf("Lima task %s: %s", task1.Status, task1.Error)
	}
	_, plan2, report2, task2 := s.run(t, "What is the weather in Oslo tomorrow?", "Oslo")
	if report2.ReusedPlan != plan1.ID || plan2.Goal != plan1.Goal {
		t.Errorf("the Oslo plan reused %q (goal %q), want the Lima plan %s (goal %q)", report2.ReusedPlan, plan2.Goal, plan1.ID, plan1.Goal)
	}
	if task2.Status != agentsmcp.TaskSucceeded {
		t.Fatalf("Oslo task %s: %s", task2.Status, task2.Error)
	}
	// A lower-case city is not a name to FamilyOf; the request joins the
	// family one entity away.
	_, plan3, report3, task3 := s.run(t, "what is the weather in bergen today", "Bergen")
	if report3.FamilyJoined == "" || plan3.Goal != plan1.Goal || report3.ReusedPlan == "" || task3.Status != agentsmcp.TaskSucceeded {
		t.Errorf("the Bergen plan joined %q, goal %q, reused %q, task %s; want it in the family of %q, a plan reused",
			report3.FamilyJoined, plan3.Goal, report3.ReusedPlan, task3.Status, plan1.Goal)
	}
	up.mu.Lock()
	defer up.mu.Unlock()
	if !slices.Equal(up.cities, []string{"Lima", "Oslo", "Bergen"}) {
		t.Errorf("conditions was asked for %q, want Lima, Oslo, then Bergen", up.cities)
	}
}
