package agents_test

import (
	"context"
	"strings"
	"testing"
	"time"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/agents"
	"github.com/agents-mcp/agents-mcp/agents/openai"
	"github.com/agents-mcp/agents-mcp/agents/openai/openaitest"
	"github.com/agents-mcp/agents-mcp/internal/agentstest"
	"github.com/agents-mcp/agents-mcp/localtools"
	"github.com/agents-mcp/agents-mcp/memory/sqlite"
	"github.com/agents-mcp/agents-mcp/router"
)

// storeMemory and the stack are shared with the tests of the MCP face:
// internal/agentstest.
type storeMemory = agentstest.StoreMemory

// stack is agentstest.Stack under the names these tests use.
type stack struct {
	*agentstest.Stack
	db      *sqlite.DB
	router  *router.Router
	thinker *agents.Thinker
	planner *agents.Planner
	exec    *agents.Executor
}

func newStack(t *testing.T, register func(*localtools.Provider)) *stack {
	t.Helper()
	s := agentstest.NewStack(t, register)
	return &stack{Stack: s, db: s.DB, router: s.Router, thinker: s.Thinker, planner: s.Planner, exec: s.Exec}
}

// runRequest is run_task without MCP: think, plan, execute, wait.
func (s *stack) runRequest(t *testing.T, request string, llm agentsmcp.LLM) (*agentsmcp.Thought, *agentsmcp.Plan, *agents.PlanReport, *agentsmcp.Task) {
	t.Helper()
	ctx := context.Background()
	th, _, err := s.thinker.Think(ctx, request, llm)
	if err != nil {
		t.Fatal(err)
	}
	plan, report, err := s.planner.Plan(ctx, agents.PlanRequest{Request: request, Thought: th, LLM: llm})
	if err != nil {
		t.Fatal(err)
	}
	task, err := s.exec.Start(ctx, plan, nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	wctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	task, err = s.exec.Wait(wctx, task.ID)
	if err != nil {
		t.Fatal(err)
	}
	return th, plan, report, task
}

type urlIn = agentstest.URLIn

var fetchTools = agentstest.FetchTools

func TestLearningLoopImprovesTheNextPlan(t *testing.T) {
	s := newStack(t, fetchTools(t))

	_, plan1, _, task1 := s.runRequest(t, "fetch the web page https://example.com/a", nil)
	if plan1.Steps[0].Tool != "fetch_web_page_fast" {
		t.Fatalf("first plan uses %s; the test needs the failing tool to rank first", plan1.Steps[0].Tool)
	}
	if got := string(plan1.Steps[0].Arguments); got != `{"url":"https://example.com/a"}` {
		t.Errorf("arguments %s, want the url from the request", got)
	}
	if task1.Status != agentsmcp.TaskFailed {
		t.Fatalf("first task %s, want failed", task1.Status)
	}

	// The same kind of request: the failure is remembered.
	th2, plan2, _, task2 := s.runRequest(t, "fetch the web page https://example.com/b", nil)
	if plan2.Steps[0].Tool != "fetch_page" {
		t.Fatalf("second plan still uses %s after it failed on this goal", plan2.Steps[0].Tool)
	}
	if task2.Status != agentsmcp.TaskSucceeded {
		t.Fatalf("second task %s: %s", task2.Status, task2.Error)
	}
	if !strings.Contains(strings.Join(th2.Constraints, "\n"), "fetch_web_page_fast") {
		t.Errorf("the second thought does not carry the pitfall: %q", th2.Constraints)
	}

	// A third one reuses the plan that worked, with its own url.
	_, plan3, report3, task3 := s.runRequest(t, "fetch the web page https://example.com/c", nil)
	if report3.ReusedPlan != plan2.ID {
		t.Errorf("third plan reused %q, want the successful plan %s", report3.ReusedPlan, plan2.ID)
	}
	if got := string(plan3.Steps[0].Arguments); got != `{"url":"https://example.com/c"}` || task3.Status != agentsmcp.TaskSucceeded {
		t.Errorf("reused plan arguments %s, task %s", got, task3.Status)
	}
	patterns, _, err := s.db.FindPatterns(context.Background(), agentsmcp.PatternFilter{})
	if err != nil || len(patterns) == 0 || patterns[0].Successes < 2 {
		t.Errorf("patterns %v, %v: want the successful plan shape recorded twice", patterns, err)
	}
}

func TestPlanPatternOfTheGoalDecidesTheNextPlan(t *testing.T) {
	s := newStack(t, fetchTools(t))
	s.planner.Tasks = nil // no past plan to reuse: only the pattern can tell
	ctx := context.Background()
	request := "fetch the web page https://example.com/a"

	before, _, err := s.planner.Plan(ctx, agents.PlanRequest{Request: request})
	if err != nil {
		t.Fatal(err)
	}
	if before.Steps[0].Tool != "fetch_web_page_fast" {
		t.Fatalf("without a pattern the plan uses %s; the test needs the search to rank fetch_web_page_fast first", before.Steps[0].Tool)
	}

	// A task of the same goal succeeds with fetch_page: the learner
	// records the pattern.
	worked := &agentsmcp.Plan{Request: "fetch the web page https://example.com/z", Goal: agents.GoalOf(request),
		Steps: []agentsmcp.PlanStep{{ID: "get", Tool: "fetch_page", Arguments: []byte(`{"url":"https://example.com/z"}`)}}}
	if err := s.db.CreatePlan(ctx, worked); err != nil {
		t.Fatal(err)
	}
	task, err := s.exec.Start(ctx, worked, nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	wctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	if task, err = s.exec.Wait(wctx, task.ID); err != nil || task.Status != agentsmcp.TaskSucceeded {
		t.Fatalf("task %v: %v", task, err)
	}

	th, _, err := s.thinker.Think(ctx, request, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(th.Approaches, "\n"), "plan pattern fetch_page") {
		t.Errorf("the thought does not follow the pattern: %q", th.Approaches)
	}
	after, report, err := s.planner.Plan(ctx, agents.PlanRequest{Request: request, Thought: th})
	if err != nil {
		t.Fatal(err)
	}
	if after.Steps[0].Tool != "fetch_page" || report.Pattern == "" {
		t.Errorf("with a successful pattern for the goal the plan uses %s (pattern %q), want fetch_page", after.Steps[0].Tool, report.Pattern)
	}

	// A model sees the pattern in its prompt.
	fake := openaitest.NewFakeServer(t)
	fake.Enqueue(openaitest.Text(`{"goal":"fetch","steps":[{"id":"get","tool":"fetch_page","arguments":{"url":"https://example.com/a"}}]}`, 10, 5))
	llm, err := openai.New(openai.Config{BaseURL: fake.URL, APIKey: "test-key", Model: "m"})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.planner.Plan(ctx, agents.PlanRequest{Request: request, LLM: llm}); err != nil {
		t.Fatal(err)
	}
	prompt := fake.Requests()[0].Messages[len(fake.Requests()[0].Messages)-1].Content
	if !strings.Contains(prompt, "[fetch_page]: 1/1") {
		t.Errorf("the plan prompt does not show the pattern:\n%s", prompt)
	}
}

func TestBuiltinPlanAsksForWhatTheRequestLacks(t *testing.T) {
	s := newStack(t, fetchTools(t))
	plan, _, err := s.planner.Plan(context.Background(), agents.PlanRequest{Request: "download a web page"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(plan.Steps[0].Arguments), "{{inputs.url}}") || !strings.Contains(string(plan.Inputs), `"url"`) {
		t.Errorf("plan %s with inputs %s: the missing url must be an input, not invented", plan.Steps[0].Arguments, plan.Inputs)
	}
}

func TestBuiltinPlanRunsIndependentSubGoalsInParallel(t *testing.T) {
	s := newStack(t, fetchTools(t))
	plan, _, err := s.planner.Plan(context.Background(), agents.PlanRequest{Request: "download a web page https://a.example; download a web page https://b.example then download a web page https://c.example"})
	if err != nil {
		t.Fatal(err)
	}
	if len(plan.Steps) != 3 {
		t.Fatalf("%d steps: %+v", len(plan.Steps), plan.Steps)
	}
	if len(plan.Steps[1].DependsOn) != 0 || len(plan.Steps[2].DependsOn) != 1 {
		t.Errorf("dependencies %v / %v: ';' separates independent goals, 'then' chains", plan.Steps[1].DependsOn, plan.Steps[2].DependsOn)
	}
}

func TestModelPlanIsRepairedUntilValid(t *testing.T) {
	s := newStack(t, fetchTools(t))
	fake := openaitest.NewFakeServer(t)
	valid := `{"goal":"fetch","steps":[{"id":"get","tool":"fetch_page","arguments":{"url":"{{inputs.url}}"}}],"inputs":{"type":"object","properties":{"url":{"type":"string"}},"required":["url"]}}`
	fake.Enqueue(
		openaitest.Text("I think you should fetch it.", 10, 5),
		openaitest.Text(`{"goal":"fetch","steps":[{"id":"get","tool":"no_such_tool","arguments":{}}]}`, 10, 5),
		openaitest.Text(`{"goal":"fetch","steps":[{"id":"get","tool":"fetch_page","arguments":{"url":42}}]}`, 10, 5),
		openaitest.Text(valid, 10, 5),
	)
	llm, err := openai.New(openai.Config{BaseURL: fake.URL, APIKey: "test-key", Model: "m"})
	if err != nil {
		t.Fatal(err)
	}
	s.planner.Attempts = 4
	plan, report, err := s.planner.Plan(context.Background(), agents.PlanRequest{Request: "fetch a page", LLM: llm})
	if err != nil {
		t.Fatal(err)
	}
	if report.Attempts != 4 || report.Backend != "openai" || report.Usage.InputTokens != 40 {
		t.Errorf("report %+v", report)
	}
	if plan.Steps[0].Tool != "fetch_page" || plan.ID == "" {
		t.Errorf("plan %+v", plan)
	}
	reqs := fake.Requests()
	if len(reqs) != 4 {
		t.Fatalf("%d requests", len(reqs))
	}
	last := func(r openaitest.ChatRequest) string { return r.Messages[len(r.Messages)-1].Content }
	for i, want := range []string{"no JSON object", "no_such_tool", "/url"} {
		if !strings.Contains(last(reqs[i+1]), want) {
			t.Errorf("repair request %d does not carry the problem %q: %s", i+1, want, last(reqs[i+1]))
		}
	}
}

func TestModelPlanIsNeverAcceptedInvalid(t *testing.T) {
	s := newStack(t, fetchTools(t))
	fake := openaitest.NewFakeServer(t)
	fake.Handler = func(openaitest.ChatRequest) openaitest.Reply {
		return openaitest.Text(`{"steps":[{"id":"a","tool":"fetch_page","arguments":{"url":"x"},"dependsOn":["a"]}]}`, 1, 1)
	}
	llm, err := openai.New(openai.Config{BaseURL: fake.URL, APIKey: "k", Model: "m"})
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = s.planner.Plan(context.Background(), agents.PlanRequest{Request: "fetch a page", LLM: llm})
	if agentsmcp.ErrorCode(err) != agentsmcp.EINVALID || !strings.Contains(agentsmcp.ErrorMessage(err), "cycle") {
		t.Fatalf("err %v, want EINVALID naming the cycle", err)
	}
	plans, _, _ := s.db.FindPlans(context.Background(), agentsmcp.PlanFilter{})
	if len(plans) != 0 {
		t.Errorf("%d plans stored from invalid answers", len(plans))
	}
}

func TestModelThoughtNamesOnlyRealTools(t *testing.T) {
	s := newStack(t, fetchTools(t))
	fake := openaitest.NewFakeServer(t)
	fake.Enqueue(
		openaitest.Text(`{"subGoals":["fetch"],"confidence":0.8,"recommendedTools":[{"tool":"curl","reason":"r"}]}`, 1, 1),
		openaitest.Text(`{"subGoals":["fetch"],"confidence":0.8,"recommendedTools":[{"tool":"fetch_page","reason":"downloads pages"}]}`, 1, 1),
	)
	llm, _ := openai.New(openai.Config{BaseURL: fake.URL, APIKey: "k", Model: "m"})
	th, report, err := s.thinker.Think(context.Background(), "fetch https://example.com", llm)
	if err != nil {
		t.Fatal(err)
	}
	if th.ID == "" || th.RecommendedTools[0].Tool != "fetch_page" || report.Attempts != 2 {
		t.Errorf("thought %+v report %+v", th, report)
	}
	first := fake.Requests()[0]
	if prompt := first.Messages[len(first.Messages)-1].Content; !strings.Contains(prompt, "fetch_web_page_fast") || !strings.Contains(prompt, "Task family (the request with its values abstracted; what is learned is shared within it): fetch <url>") {
		t.Errorf("the thought prompt does not list the candidate tools and the task family:\n%s", prompt)
	}
}
