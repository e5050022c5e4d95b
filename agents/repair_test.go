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
	"github.com/agents-mcp/agents-mcp/agents/openai"
	"github.com/agents-mcp/agents-mcp/agents/openai/openaitest"
	"github.com/agents-mcp/agents-mcp/internal/toolperf"
	"github.com/agents-mcp/agents-mcp/localtools"
	"github.com/agents-mcp/agents-mcp/memory/mcptools"
	"github.com/agents-mcp/agents-mcp/memory/sqlite"
	"github.com/agents-mcp/agents-mcp/remote"
	"github.com/agents-mcp/agents-mcp/router"
	"github.com/agents-mcp/agents-mcp/router/toolsearch"
)

// repairTool is a tool of repairUpstream: one string parameter; it fails
// every call with a 503 (a retryable error, the same every time) or
// answers with what it was given.
type repairTool struct {
	name, description, param string
	fails                    bool
	extra                    string // a second required parameter, when not empty
	destructive              bool
}

// repairUpstream is a real go-sdk MCP server behind streamable HTTP whose
// tools record the arguments of every call.
type repairUpstream struct {
	mu    sync.Mutex
	calls map[string][]string // tool → the value of its parameter, per call
}

func (u *repairUpstream) serve(t *testing.T, tools ...repairTool) string {
	u.calls = map[string][]string{}
	s := mcp.NewServer(&mcp.Implementation{Name: "weather", Version: "1.0.0"}, nil)
	for _, tool := range tools {
		schema := json.RawMessage(`{"type":"object","properties":{"` + tool.param + `":{"type":"string","description":"the ` + tool.param + `"}},"required":["` + tool.param + `"]}`)
		if tool.extra != "" {
			schema = json.RawMessage(`{"type":"object","properties":{"` + tool.param + `":{"type":"string","description":"the ` + tool.param + `"},"` +
				tool.extra + `":{"type":"string","description":"the ` + tool.extra + `"}},"required":["` + tool.param + `","` + tool.extra + `"]}`)
		}
		var annotations *mcp.ToolAnnotations
		if tool.destructive {
			yes := true
			annotations = &mcp.ToolAnnotations{DestructiveHint: &yes}
		}
		s.AddTool(&mcp.Tool{Name: tool.name, Description: tool.description, InputSchema: schema, Annotations: annotations},
			func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				var args map[string]string
				_ = json.Unmarshal(req.Params.Arguments, &args)
				call := args[tool.param]
				if tool.extra != "" {
					call += " " + args[tool.extra]
				}
				u.mu.Lock()
				u.calls[tool.name] = append(u.calls[tool.name], call)
				u.mu.Unlock()
				if tool.fails {
					return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "service unavailable (503)"}}}, nil
				}
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "sunny in " + args[tool.param]}}}, nil
			})
	}
	srv := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
	t.Cleanup(srv.Close)
	return srv.URL
}

func (u *repairUpstream) callsOf(tool string) []string {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]string(nil), u.calls[tool]...)
}

// repairHarness runs requests with the builtin thought agent, planner and
// executor (with the builtin repairer) over SQLite, the router and a real
// upstream.
type repairHarness struct {
	t  *testing.T
	db *sqlite.DB
	up *repairUpstream
	ex *agents.Executor
	// replica starts another executor on the same store and upstream: a
	// second replica.
	replica func() *agents.Executor
	thinker *agents.Thinker
	planner *agents.Planner
	// repairLLM is the model repairs ask (ExecutorOptions.RepairLLM); set
	// it before the run. Nil: the builtin choice.
	repairLLM agentsmcp.LLM
}

func newRepairHarness(t *testing.T, tools ...repairTool) *repairHarness {
	return newRepairHarnessNamed(t, "weather", tools...)
}

// newRepairHarnessNamed is newRepairHarness with an upstream named name:
// its tools are name__<tool>.
func newRepairHarnessNamed(t *testing.T, name string, tools ...repairTool) *repairHarness {
	return newRepairHarnessWith(t, name, false, tools...)
}

// newRepairHarnessWith is newRepairHarnessNamed; with serverTools, the
// router also serves the real memory tools (their handlers read an empty
// memory), listed as the Gatherer's ServerTools as cmd lists them.
func newRepairHarnessWith(t *testing.T, name string, serverTools bool, tools ...repairTool) *repairHarness {
	ctx := context.Background()
	db, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "agents.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	r := router.New(router.Options{Version: "test", OnToolCall: func(c router.ToolCallRecord) {
		_ = db.RecordToolCall(context.Background(), agentsmcp.ToolCall{Tool: c.Tool, Duration: c.Duration, Error: c.Error, At: time.Now()})
	}})
	up := &repairUpstream{}
	url := up.serve(t, tools...) // closed after the pool (cleanups run last first)
	pool := remote.NewPool(remote.Options{Registry: r})
	t.Cleanup(func() { _ = pool.Close(context.Background()) })
	if err := pool.AddFromConfig(ctx, agentsmcp.UpstreamConfig{Name: name, Transport: remote.TransportStreamable, URL: url}); err != nil {
		t.Fatal(err)
	}
	catalog := toolsearch.NewCatalog(r, nil, nil)
	g := &agents.Gatherer{Catalog: catalog, Memory: storeMemory{DB: db}, Performance: db}
	if serverTools {
		l := localtools.New()
		if err := (&mcptools.MemoryTools{}).Register(l); err != nil {
			t.Fatal(err)
		}
		if err := r.AddProvider(ctx, l); err != nil {
			t.Fatal(err)
		}
		g.ServerTools = []string{mcptools.QueryMemoryName, mcptools.StoreInsightName, mcptools.GetSimilarTasksName,
			mcptools.GetSuccessfulPlansName, mcptools.GetToolPerformanceName}
	}
	learner := &agents.Learner{Learnings: db, Patterns: db, Insights: db, Catalog: catalog}
	h := &repairHarness{t: t, db: db, up: up}
	replica := func() *agents.Executor {
		ex := agents.NewExecutor(agents.ExecutorOptions{Tasks: db, Plans: db, Tools: r, Catalog: catalog, OnEnd: learner.Learn,
			Repairer: &agents.Repairer{Gatherer: g, Attempts: 3}, RepairLLM: func(*mcp.ServerSession) agentsmcp.LLM { return h.repairLLM },
			Retry: agentsmcp.RetryPolicy{MaxAttempts: 3, InitialBackoff: time.Millisecond, MaxBackoff: 5 * time.Millisecond}})
		t.Cleanup(func() { _ = ex.Close(context.Background()) })
		return ex
	}
	h.ex, h.replica = replica(), replica
	h.thinker = &agents.Thinker{Gatherer: g, Thoughts: db}
	h.planner = &agents.Planner{Gatherer: g, Validator: r, Plans: db, Tasks: db}
	return h
}

// run plans request, runs it with every plan input set to city, and
// returns the plan and the task as stored.
func (h *repairHarness) run(request, city string) (*agentsmcp.Plan, *agentsmcp.Task) {
	return h.runAs(context.Background(), request, city)
}

// runAs is run on behalf of the principal ctx carries.
func (h *repairHarness) runAs(ctx context.Context, request, city string) (*agentsmcp.Plan, *agentsmcp.Task) {
	t := h.t
	t.Helper()
	th, _, err := h.thinker.Think(ctx, request, nil)
	if err != nil {
		t.Fatal(err)
	}
	plan, _, err := h.planner.Plan(ctx, agents.PlanRequest{Request: request, Thought: th})
	if err != nil {
		t.Fatalf("%s: %v", request, err)
	}
	var schema struct {
		Properties map[string]json.RawMessage `json:"properties"`
	}
	_ = json.Unmarshal(plan.Inputs, &schema)
	inputs := map[string]string{}
	for name := range schema.Properties {
		inputs[name] = city
	}
	in, _ := json.Marshal(inputs)
	task, err := h.ex.Start(ctx, plan, in, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	return plan, h.wait(task.ID)
}

// wait returns task id as stored once it ended or paused.
func (h *repairHarness) wait(id string) *agentsmcp.Task {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if _, err := h.ex.Wait(ctx, id); err != nil {
		h.t.Fatal(err)
	}
	stored, err := h.db.FindTaskByID(ctx, id)
	if err != nil {
		h.t.Fatal(err)
	}
	return stored
}

func repairEvents(task *agentsmcp.Task) []agentsmcp.TaskEvent {
	var out []agentsmcp.TaskEvent
	for _, e := range task.History {
		if strings.Contains(e.Type, "repair") {
			out = append(out, e)
		}
	}
	return out
}

const (
	failingWeather = "weather__current_weather"
	workingWeather = "weather__outlook"
)

// TestFailedStepIsRepaired: the tool worded like the request always fails
// with a 503; another, worded differently and taking a location rather
// than a city, works. The first request of the family succeeds by a repair
// that carries the city over, and the next one plans with the working tool.
func TestFailedStepIsRepaired(t *testing.T) {
	h := newRepairHarness(t,
		repairTool{name: "current_weather", description: "What is the weather in a city today: the current weather of a city", param: "city", fails: true},
		repairTool{name: "outlook", description: "conditions and temperature outlook for a location", param: "location"},
	)
	plan, task := h.run("What is the weather in Paris today?", "Paris")
	if len(plan.Steps) != 1 || plan.Steps[0].Tool != failingWeather {
		t.Fatalf("the first plan is %+v; the test needs the failing tool to rank first by its wording", plan.Steps)
	}
	if task.Status != agentsmcp.TaskSucceeded {
		t.Fatalf("the first task %s: %s; want it repaired and succeeded (history %+v)", task.Status, task.Error, task.History)
	}
	events := repairEvents(task)
	for _, e := range task.History {
		t.Logf("%s %s: %s", e.Type, e.StepID, e.Message)
	}
	if len(events) != 1 || !strings.Contains(events[0].Message, failingWeather) || !strings.Contains(events[0].Message, workingWeather) {
		t.Fatalf("repair events %+v; want one naming %s and %s", events, failingWeather, workingWeather)
	}
	s := task.Steps[0]
	if s.RepairedTool != workingWeather {
		t.Errorf("stored step: repaired tool %q; want %s", s.RepairedTool, workingWeather)
	}
	// The location is the city the failed call had, carried over by its
	// kind, not found again in the request.
	if !strings.Contains(events[0].Message, "location = city") {
		t.Errorf("the repair %q does not say the location came from the failed call's city", events[0].Message)
	}
	if got := h.up.callsOf("outlook"); len(got) != 1 || got[0] != "Paris" {
		t.Errorf("calls of the working tool: %q; want one with location Paris", got)
	}
	failedCity := h.up.callsOf("current_weather")
	if len(failedCity) == 0 || failedCity[0] != "Paris" {
		t.Errorf("calls of the failing tool: %q", failedCity)
	}

	// The family's next request plans directly with the tool that worked.
	failingBefore := len(h.up.callsOf("current_weather"))
	plan, task = h.run("What is the weather in Lisbon today?", "Lisbon")
	if plan.Steps[0].Tool != workingWeather || task.Status != agentsmcp.TaskSucceeded || len(repairEvents(task)) != 0 {
		t.Errorf("the second request planned %s, ended %s with %d repair(s); want %s, succeeded, none", plan.Steps[0].Tool, task.Status, len(repairEvents(task)), workingWeather)
	}
	if n := len(h.up.callsOf("current_weather")) - failingBefore; n != 0 {
		t.Errorf("the second request called the failing tool %d time(s)", n)
	}
	if got := h.up.callsOf("outlook"); len(got) != 2 || got[1] != "Lisbon" {
		t.Errorf("calls of the working tool: %q; want the second with Lisbon", got)
	}
}

// TestRepairIsBounded: every tool for the need fails. The step is
// repaired once, its replacement fails too, and the task fails without a
// second repair, whatever other tool is left.
func TestRepairIsBounded(t *testing.T) {
	h := newRepairHarness(t,
		repairTool{name: "current_weather", description: "What is the weather in a city today: the current weather of a city", param: "city", fails: true},
		repairTool{name: "outlook", description: "conditions and temperature outlook for a location", param: "location", fails: true},
		repairTool{name: "forecast", description: "weather forecast for a place", param: "place", fails: true},
	)
	plan, task := h.run("What is the weather in Paris today?", "Paris")
	if plan.Steps[0].Tool != failingWeather {
		t.Fatalf("the plan uses %s; the test needs %s first", plan.Steps[0].Tool, failingWeather)
	}
	if task.Status != agentsmcp.TaskFailed {
		t.Fatalf("task %s; want failed", task.Status)
	}
	if events := repairEvents(task); len(events) != 1 {
		t.Errorf("repair events %+v; want exactly one", events)
	}
	called := 0
	for _, tool := range []string{"current_weather", "outlook", "forecast"} {
		if len(h.up.callsOf(tool)) > 0 {
			called++
		}
	}
	if called != 2 {
		t.Errorf("%d tools were called; want the planned one and one replacement", called)
	}
	if task.Steps[0].RepairedTool == "" || task.Steps[0].Status != agentsmcp.StepFailed {
		t.Errorf("step state %+v; want failed, with its replacement recorded", task.Steps[0])
	}
}

// TestRepairedStepAsksAndConfirms: the replacement needs a value neither
// the failed call nor the request gives, and is destructive. The task asks
// for the value (a plan input, not an invented one), then for the
// confirmation of the new tool, and runs it once both are given, on
// another replica: the repair is in the stored task.
func TestRepairedStepAsksAndConfirms(t *testing.T) {
	h := newRepairHarness(t,
		repairTool{name: "current_weather", description: "What is the weather in a city today: the current weather of a city", param: "city", fails: true},
		repairTool{name: "outlook", description: "conditions and temperature outlook for a location", param: "location", extra: "units", destructive: true},
	)
	ctx := context.Background()
	plan, task := h.run("What is the weather in Paris today?", "Paris")
	if plan.Steps[0].Tool != failingWeather {
		t.Fatalf("the plan uses %s; the test needs %s first", plan.Steps[0].Tool, failingWeather)
	}
	step := plan.Steps[0].ID
	if task.Status != agentsmcp.TaskPaused || task.Steps[0].Status != agentsmcp.StepWaitingInput || !strings.Contains(task.Steps[0].Error, "units") {
		t.Fatalf("after the repair: task %s, step %+v; want paused, waiting for units", task.Status, task.Steps[0])
	}
	if err := h.ex.Close(ctx); err != nil {
		t.Fatal(err)
	}
	h.ex = h.replica()
	if _, err := h.ex.Resume(ctx, task.ID, agents.ResumeRequest{Inputs: json.RawMessage(`{"units":"metric"}`)}, nil); err != nil {
		t.Fatal(err)
	}
	task = h.wait(task.ID)
	if task.Steps[0].Status != agentsmcp.StepWaitingConfirmation || len(h.up.callsOf("outlook")) != 0 {
		t.Fatalf("after the inputs: step %+v, %d call(s) of the replacement; want it waiting for a confirmation, not called", task.Steps[0], len(h.up.callsOf("outlook")))
	}
	if !strings.Contains(task.Steps[0].Error, workingWeather) {
		t.Errorf("the confirmation question %q does not name the replacement", task.Steps[0].Error)
	}
	if _, err := h.ex.Resume(ctx, task.ID, agents.ResumeRequest{Confirm: []string{step}}, nil); err != nil {
		t.Fatal(err)
	}
	task = h.wait(task.ID)
	if task.Status != agentsmcp.TaskSucceeded {
		t.Fatalf("task %s: %s", task.Status, task.Error)
	}
	if got := h.up.callsOf("outlook"); len(got) != 1 || got[0] != "Paris metric" {
		t.Errorf("calls of the replacement: %q; want one with Paris and metric", got)
	}
	if n := len(h.up.callsOf("current_weather")); n != 2 {
		t.Errorf("the failed tool was called %d times; want its 2 calls before the repair, none after", n)
	}
}

// TestRepairKeepsTheCreatorsAllowlist: a replacement the task's creator
// may not call is never chosen; the step fails as it did.
func TestRepairKeepsTheCreatorsAllowlist(t *testing.T) {
	h := newRepairHarness(t,
		repairTool{name: "current_weather", description: "What is the weather in a city today: the current weather of a city", param: "city", fails: true},
		repairTool{name: "outlook", description: "conditions and temperature outlook for a location", param: "location"},
	)
	ctx := agentsmcp.WithPrincipal(context.Background(), &agentsmcp.Principal{ID: "key:0123456789ab", Scopes: agentsmcp.Scopes, Tools: []string{failingWeather}})
	plan, task := h.runAs(ctx, "What is the weather in Paris today?", "Paris")
	if plan.Steps[0].Tool != failingWeather {
		t.Fatalf("the plan uses %s; the test needs %s first", plan.Steps[0].Tool, failingWeather)
	}
	if task.Status != agentsmcp.TaskFailed || len(repairEvents(task)) != 0 || len(h.up.callsOf("outlook")) != 0 {
		t.Errorf("task %s with %d repair(s), %d call(s) of a tool outside the allowlist; want failed, none, none", task.Status, len(repairEvents(task)), len(h.up.callsOf("outlook")))
	}
}

// TestRepairFindsAToolWordedApart: the upstream's only other tool for the
// need shares no word with the request, so the search for the sub-goal
// does not find it; the repair weighs the failed tool's upstream siblings
// that take every value the failed call had, and finds it. The tool it
// left becomes a pitfall of the family, and the family's next request
// plans with the sibling directly, even though no search finds it.
func TestRepairFindsAToolWordedApart(t *testing.T) {
	h := newRepairHarnessNamed(t, "meteo",
		repairTool{name: "current_weather", description: "What is the weather in a city today: the current weather of a city", param: "city", fails: true},
		repairTool{name: "sky_report", description: "sky cover and readings, now", param: "town"},
		repairTool{name: "list_stations", description: "stations of a network", param: "network"},
	)
	const failingMeteo = "meteo__current_weather"
	ctx := context.Background()
	if matches, err := h.planner.Gatherer.Catalog.SearchTools(ctx, "What is the weather in Paris today", 8); err != nil {
		t.Fatal(err)
	} else {
		for _, m := range matches {
			if m.Name == "meteo__sky_report" {
				t.Fatalf("the search finds the sibling (score %.3f); the test needs a tool worded apart", m.Score)
			}
		}
	}
	plan, task := h.run("What is the weather in Paris today?", "Paris")
	if plan.Steps[0].Tool != failingMeteo {
		t.Fatalf("the plan uses %s; the test needs %s first", plan.Steps[0].Tool, failingMeteo)
	}
	if task.Status != agentsmcp.TaskSucceeded || task.Steps[0].RepairedTool != "meteo__sky_report" {
		t.Fatalf("task %s, step %+v; want it repaired with meteo__sky_report (history %+v)", task.Status, task.Steps[0], task.History)
	}
	if got := h.up.callsOf("sky_report"); len(got) != 1 || got[0] != "Paris" {
		t.Errorf("calls of the sibling: %q; want one with Paris", got)
	}
	if n := len(h.up.callsOf("list_stations")); n != 0 {
		t.Errorf("the sibling that takes none of the values was called %d time(s)", n)
	}
	pitfalls, _, err := h.db.FindInsights(ctx, agentsmcp.InsightFilter{AppliesTo: failingMeteo})
	if err != nil {
		t.Fatal(err)
	}
	family := ""
	for _, in := range pitfalls {
		if in.Type == agentsmcp.InsightPitfall && strings.Contains(in.Text, "repaired with meteo__sky_report") {
			family = strings.Join(in.AppliesTo, " ")
		}
	}
	if !strings.Contains(family, "family:") {
		t.Fatalf("insights about %s: %+v; want a pitfall of the family naming the repair", failingMeteo, pitfalls)
	}

	failingBefore := len(h.up.callsOf("current_weather"))
	plan, task = h.run("What is the weather in Lima today?", "Lima")
	if plan.Steps[0].Tool != "meteo__sky_report" || task.Status != agentsmcp.TaskSucceeded || len(repairEvents(task)) != 0 {
		t.Errorf("the second request planned %s, ended %s with %d repair(s); want meteo__sky_report, succeeded, none", plan.Steps[0].Tool, task.Status, len(repairEvents(task)))
	}
	if n := len(h.up.callsOf("current_weather")) - failingBefore; n != 0 {
		t.Errorf("the second request called the failing tool %d time(s)", n)
	}
}

// TestModelPlanOnCoolingDownToolIsSentBack: a model answers with the tool
// on cool-down although another candidate can serve; the answer goes back
// to it naming the cool-down and the alternative, and its corrected plan
// is the one stored.
func TestModelPlanOnCoolingDownToolIsSentBack(t *testing.T) {
	h := newRepairHarness(t,
		repairTool{name: "current_weather", description: "What is the weather in a city today: the current weather of a city", param: "city", fails: true},
		repairTool{name: "outlook", description: "conditions and temperature outlook for a location", param: "location"},
	)
	ctx := context.Background()
	for range 3 { // a streak long enough for the cool-down (DefaultReliabilityPolicy)
		if err := h.db.RecordToolCall(ctx, agentsmcp.ToolCall{Tool: failingWeather, Error: "service unavailable (503)", At: time.Now()}); err != nil {
			t.Fatal(err)
		}
	}
	fake := openaitest.NewFakeServer(t)
	fake.Enqueue(
		openaitest.Text(`{"goal":"weather","steps":[{"id":"w","tool":"`+failingWeather+`","arguments":{"city":"Paris"}}]}`, 10, 5),
		openaitest.Text(`{"goal":"weather","steps":[{"id":"w","tool":"`+workingWeather+`","arguments":{"location":"Paris"}}]}`, 10, 5),
	)
	llm, err := openai.New(openai.Config{BaseURL: fake.URL, APIKey: "test-key", Model: "m"})
	if err != nil {
		t.Fatal(err)
	}
	plan, report, err := h.planner.Plan(ctx, agents.PlanRequest{Request: "What is the weather in Paris today?", LLM: llm})
	if err != nil {
		t.Fatal(err)
	}
	if report.Attempts != 2 || plan.Steps[0].Tool != workingWeather {
		t.Fatalf("%d attempt(s), plan on %s; want the answer on the cool-down tool sent back once, then %s", report.Attempts, plan.Steps[0].Tool, workingWeather)
	}
	reqs := fake.Requests()
	back := reqs[1].Messages[len(reqs[1].Messages)-1].Content
	if !strings.Contains(back, "ON COOL-DOWN") || !strings.Contains(back, workingWeather) {
		t.Errorf("the answer went back with %q; want it to name the cool-down and %s", back, workingWeather)
	}

	// With no alternative, the tool on cool-down is the model's to use.
	h2 := newRepairHarness(t,
		repairTool{name: "current_weather", description: "What is the weather in a city today: the current weather of a city", param: "city", fails: true},
	)
	for range 3 {
		if err := h2.db.RecordToolCall(ctx, agentsmcp.ToolCall{Tool: failingWeather, Error: "service unavailable (503)", At: time.Now()}); err != nil {
			t.Fatal(err)
		}
	}
	fake.Enqueue(openaitest.Text(`{"goal":"weather","steps":[{"id":"w","tool":"`+failingWeather+`","arguments":{"city":"Paris"}}]}`, 10, 5))
	if _, report, err := h2.planner.Plan(ctx, agents.PlanRequest{Request: "What is the weather in Paris today?", LLM: llm}); err != nil || report.Attempts != 1 {
		t.Errorf("with no alternative: %v after %d attempt(s); want the plan accepted at once", err, report.Attempts)
	}
}

// TestRepairAsksTheModel: with a model, the repair shows it the mapped
// candidates and it chooses; an answer naming a tool that is not a
// candidate, or a value that is not text of the request, goes back to it.
// Its choice is what runs, with the arguments the mapping gave, and the
// history says the model chose. When the model cannot answer validly, the
// builtin choice stands, and the history says so.
func TestRepairAsksTheModel(t *testing.T) {
	tools := []repairTool{
		{name: "current_weather", description: "What is the weather in a city today: the current weather of a city", param: "city", fails: true},
		{name: "outlook", description: "conditions and temperature outlook for a location", param: "location"},
		{name: "forecast", description: "weather forecast for a place and a day", param: "place", extra: "day"},
	}
	h := newRepairHarness(t, tools...)
	fake := openaitest.NewFakeServer(t)
	fake.Enqueue(
		openaitest.Text(`{"tool":"weather__no_such_tool","reason":"?"}`, 10, 5),
		openaitest.Text(`{"tool":"weather__forecast","values":{"day":"tomorrow"},"reason":"a forecast"}`, 10, 5),
		openaitest.Text(`{"tool":"weather__forecast","values":{"day":"today"},"reason":"a forecast for today"}`, 10, 5),
	)
	llm, err := openai.New(openai.Config{BaseURL: fake.URL, APIKey: "test-key", Model: "m"})
	if err != nil {
		t.Fatal(err)
	}
	h.repairLLM = llm
	_, task := h.run("What is the weather in Paris today?", "Paris")
	if task.Status != agentsmcp.TaskSucceeded || task.Steps[0].RepairedTool != "weather__forecast" {
		t.Fatalf("task %s, step %+v; want it repaired with the model's choice, weather__forecast (history %+v)", task.Status, task.Steps[0], task.History)
	}
	if got := h.up.callsOf("forecast"); len(got) != 1 || got[0] != "Paris today" {
		t.Errorf("calls of the model's choice: %q; want one with the failed call's city and the request's day", got)
	}
	events := repairEvents(task)
	if len(events) != 1 || !strings.Contains(events[0].Message, "chosen by the model (openai): a forecast for today") {
		t.Errorf("repair events %+v; want one saying the model chose, with its reason", events)
	}
	reqs := fake.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d model requests; want 3 (two answers sent back)", len(reqs))
	}
	prompt := reqs[0].Messages[len(reqs[0].Messages)-1].Content
	for _, want := range []string{"Failed tool: " + failingWeather, "weather__outlook", "weather__forecast", `proposed arguments: {"location":"Paris"}`, "would ask the user for: day"} {
		if !strings.Contains(prompt, want) {
			t.Errorf("the repair prompt lacks %q:\n%s", want, prompt)
		}
	}
	for i, want := range []string{"weather__no_such_tool", "tomorrow"} {
		if back := reqs[i+1].Messages[len(reqs[i+1].Messages)-1].Content; !strings.Contains(back, want) {
			t.Errorf("answer %d went back with %q; want it to name %q", i+1, back, want)
		}
	}

	// A model that never answers validly: the builtin choice stands.
	h = newRepairHarness(t, tools...)
	fake.Enqueue(openaitest.Text("outlook, I think", 10, 5), openaitest.Text("still prose", 10, 5), openaitest.Text("prose again", 10, 5))
	h.repairLLM = llm
	_, task = h.run("What is the weather in Lisbon today?", "Lisbon")
	// The builtin choice is the forecast, which asks for the day: the
	// model gave it from the request above; the builtin asks the user.
	if task.Status != agentsmcp.TaskPaused || task.Steps[0].RepairedTool != "weather__forecast" || !strings.Contains(task.Steps[0].Error, "day") {
		t.Fatalf("task %s, step %+v; want the builtin choice weather__forecast, waiting for the day", task.Status, task.Steps[0])
	}
	if events := repairEvents(task); len(events) != 1 || !strings.Contains(events[0].Message, "the builtin one stands") {
		t.Errorf("repair events %+v; want one saying the builtin choice stands", events)
	}
}

// TestFamilyRecordCountsWhatARepairLeft: the learning of a repaired task
// lists the tool the repair left among the tools used (not among the
// steps), and the next request of the family sees both tools' records
// within the family: the left one failed there, the replacement served.
func TestFamilyRecordCountsWhatARepairLeft(t *testing.T) {
	h := newRepairHarness(t,
		repairTool{name: "current_weather", description: "What is the weather in a city today: the current weather of a city", param: "city", fails: true},
		repairTool{name: "outlook", description: "conditions and temperature outlook for a location", param: "location"},
	)
	ctx := context.Background()
	_, task := h.run("What is the weather in Paris today?", "Paris")
	if task.Status != agentsmcp.TaskSucceeded || task.Steps[0].RepairedTool != workingWeather {
		t.Fatalf("task %s, step %+v; want it repaired with %s", task.Status, task.Steps[0], workingWeather)
	}
	learnings, _, err := h.db.FindLearnings(ctx, agentsmcp.LearningFilter{})
	if err != nil || len(learnings) != 1 {
		t.Fatalf("learnings %+v, %v", learnings, err)
	}
	if l := learnings[0]; !slices.Contains(l.Tools, failingWeather) || slices.Contains(l.Steps, failingWeather) || !slices.Equal(l.Steps, []string{workingWeather}) {
		t.Errorf("learning tools %v, steps %v; want both tools used, the replacement the one step", l.Tools, l.Steps)
	}
	// The same words: this harness recalls by words (storeMemory).
	k, err := h.planner.Gatherer.Gather(ctx, "What is the weather in Paris today?", nil)
	if err != nil {
		t.Fatal(err)
	}
	failing, working := k.Tools[failingWeather], k.Tools[workingWeather]
	if failing == nil || working == nil || failing.InFamily == nil || working.InFamily == nil {
		t.Fatalf("candidates %v; want both tools with a record in the family", k.Tools)
	}
	prior := toolperf.Prior(toolperf.DefaultReliabilityPolicy)
	if failing.InFamily.Estimate >= prior || working.InFamily.Estimate <= prior {
		t.Errorf("in the family: %s %.2f, %s %.2f; want the left tool below the prior %.2f and its replacement above",
			failingWeather, failing.InFamily.Estimate, workingWeather, working.InFamily.Estimate, prior)
	}
	if !strings.Contains(failing.Performance(), "in this task family: 33% (0.0 succeeded, 1.0 failed)") {
		t.Errorf("the prompt line of %s is %q; want its record in the family", failingWeather, failing.Performance())
	}
}
