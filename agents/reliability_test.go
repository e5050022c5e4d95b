package agents_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/agents"
	"github.com/agents-mcp/agents-mcp/internal/toolperf"
	"github.com/agents-mcp/agents-mcp/memory/sqlite"
	"github.com/agents-mcp/agents-mcp/remote"
	"github.com/agents-mcp/agents-mcp/router"
	"github.com/agents-mcp/agents-mcp/router/toolsearch"
)

// outageUpstream is a real go-sdk MCP server behind streamable HTTP with
// two tools for one need: the one worded like the requests always answers
// "service unavailable (503)"; the other, worded differently, works.
type outageUpstream struct {
	failing, working atomic.Int64 // calls
}

func (u *outageUpstream) serve(t *testing.T) string {
	s := mcp.NewServer(&mcp.Implementation{Name: "weather", Version: "1.0.0"}, nil)
	type cityIn struct {
		City string `json:"city" jsonschema:"the city"`
	}
	type locationIn struct {
		Location string `json:"location" jsonschema:"the place"`
	}
	mcp.AddTool(s, &mcp.Tool{Name: "current_weather", Description: "What is the weather in a city today: the current weather of a city"},
		func(context.Context, *mcp.CallToolRequest, cityIn) (*mcp.CallToolResult, any, error) {
			u.failing.Add(1)
			return nil, nil, errors.New("service unavailable (503)")
		})
	mcp.AddTool(s, &mcp.Tool{Name: "outlook", Description: "conditions and temperature outlook for a location"},
		func(_ context.Context, _ *mcp.CallToolRequest, in locationIn) (*mcp.CallToolResult, any, error) {
			u.working.Add(1)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "sunny in " + in.Location}}}, nil, nil
		})
	srv := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
	t.Cleanup(srv.Close)
	return srv.URL
}

// TestFailingToolIsAvoidedThenProbed runs ten requests of one need with
// the builtin planner over SQLite, the router and a real upstream. The
// clock of the estimates and of the recorded calls is the test's, so that
// the cool-down can pass without waiting.
func TestFailingToolIsAvoidedThenProbed(t *testing.T) {
	ctx := context.Background()
	db, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "agents.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	var offset atomic.Int64
	clock := func() time.Time { return time.Now().Add(time.Duration(offset.Load())) }
	r := router.New(router.Options{Version: "test", OnToolCall: func(c router.ToolCallRecord) {
		_ = db.RecordToolCall(context.Background(), agentsmcp.ToolCall{Tool: c.Tool, Duration: c.Duration, Error: c.Error, At: clock()})
	}})
	up := &outageUpstream{}
	url := up.serve(t) // closed after the pool (cleanups run last first)
	pool := remote.NewPool(remote.Options{Registry: r})
	t.Cleanup(func() { _ = pool.Close(context.Background()) })
	if err := pool.AddFromConfig(ctx, agentsmcp.UpstreamConfig{Name: "weather", Transport: remote.TransportStreamable, URL: url}); err != nil {
		t.Fatal(err)
	}
	catalog := toolsearch.NewCatalog(r, nil, nil)
	g := &agents.Gatherer{Catalog: catalog, Memory: storeMemory{DB: db}, Performance: db, Now: clock}
	learner := &agents.Learner{Learnings: db, Patterns: db, Insights: db, Catalog: catalog}
	ex := agents.NewExecutor(agents.ExecutorOptions{Tasks: db, Plans: db, Tools: r, Catalog: catalog, OnEnd: learner.Learn,
		// Repair, as in production: the tool a repair leaves is a pitfall of
		// the family, which a probe must still get past.
		Repairer: &agents.Repairer{Gatherer: g},
		// The production default number of attempts, with short waits.
		Retry: agentsmcp.RetryPolicy{MaxAttempts: 3, InitialBackoff: time.Millisecond, MaxBackoff: 5 * time.Millisecond}})
	t.Cleanup(func() { _ = ex.Close(context.Background()) })
	thinker := &agents.Thinker{Gatherer: g, Thoughts: db}
	planner := &agents.Planner{Gatherer: g, Validator: r, Plans: db, Tasks: db}

	type outcome struct {
		tool         string
		failingCalls int64
		status       agentsmcp.TaskStatus
	}
	run := func(city string) outcome {
		t.Helper()
		request := "What is the weather in " + city + " today?"
		th, _, err := thinker.Think(ctx, request, nil)
		if err != nil {
			t.Fatal(err)
		}
		plan, _, err := planner.Plan(ctx, agents.PlanRequest{Request: request, Thought: th})
		if err != nil {
			t.Fatalf("%s: %v", request, err)
		}
		// Every input the plan asks for is the city, as a person would
		// answer.
		var schema struct {
			Properties map[string]json.RawMessage `json:"properties"`
		}
		_ = json.Unmarshal(plan.Inputs, &schema)
		inputs := map[string]string{}
		for name := range schema.Properties {
			inputs[name] = city
		}
		in, _ := json.Marshal(inputs)
		before := up.failing.Load()
		task, err := ex.Start(ctx, plan, in, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		wctx, cancel := context.WithTimeout(ctx, 20*time.Second)
		defer cancel()
		if task, err = ex.Wait(wctx, task.ID); err != nil {
			t.Fatal(err)
		}
		return outcome{tool: plan.Steps[0].Tool, failingCalls: up.failing.Load() - before, status: task.Status}
	}

	const failing, working = "weather__current_weather", "weather__outlook"
	cities := []string{"Paris", "Lisbon", "Oslo", "Lima", "Rome", "Berlin", "Madrid", "Vienna", "Prague", "Dublin"}
	var got []outcome
	for i, city := range cities[:7] {
		o := run(city)
		got = append(got, o)
		t.Logf("task %d (%s): %s, %d failing call(s), %s", i+1, city, o.tool, o.failingCalls, o.status)
	}
	if got[0].tool != failing {
		t.Fatalf("the first plan uses %s; the test needs the failing tool to rank first by its wording", got[0].tool)
	}
	// Avoided within a few tasks, and for good while it cools down.
	lastFailing := 0
	for i, o := range got {
		if o.tool == failing {
			lastFailing = i + 1
		}
	}
	if lastFailing > 3 {
		t.Errorf("the failing tool was still chosen by task %d: %+v", lastFailing, got)
	}
	for i, o := range got[lastFailing:] {
		if o.tool != working || o.status != agentsmcp.TaskSucceeded {
			t.Errorf("task %d after the failing tool was dropped: %s, %s; want %s succeeding", lastFailing+i+1, o.tool, o.status, working)
		}
	}
	// Its retries never grow with its record.
	for i := 1; i < lastFailing; i++ {
		if got[i].failingCalls > got[i-1].failingCalls {
			t.Errorf("task %d made %d failing calls, more than task %d's %d", i+1, got[i].failingCalls, i, got[i-1].failingCalls)
		}
	}

	// After the cool-down it is probed, once, then avoided again.
	offset.Store(int64(2 * toolperf.DefaultReliabilityPolicy.MaxCoolDown))
	var after []outcome
	for i, city := range cities[7:] {
		o := run(city)
		after = append(after, o)
		t.Logf("task %d (%s), after the cool-down: %s, %d failing call(s), %s", 8+i, city, o.tool, o.failingCalls, o.status)
	}
	if after[0].tool != failing || after[0].failingCalls != 1 {
		t.Errorf("the first task after the cool-down used %s with %d failing call(s); want one probe of %s", after[0].tool, after[0].failingCalls, failing)
	}
	for i, o := range after[1:] {
		if o.tool != working || o.status != agentsmcp.TaskSucceeded {
			t.Errorf("task %d after the failed probe: %s, %s; want %s succeeding", 9+i, o.tool, o.status, working)
		}
	}
	perf, err := db.FindToolPerformance(ctx, failing)
	if err != nil || perf.Errors > 8 {
		t.Errorf("the failing tool failed %v times in 10 tasks (%v); want a few", perf, err)
	}
}
