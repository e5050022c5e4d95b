package agents_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
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
	"github.com/agents-mcp/agents-mcp/localtools"
	"github.com/agents-mcp/agents-mcp/remote"
)

type fxPairIn struct {
	Pair string `json:"pair" jsonschema:"currency pair such as USD/EUR"`
}

// fxUpstream is a real go-sdk MCP server behind streamable HTTP on
// loopback, published to s's router through a remote pool. Its
// lookup_fx_rate takes a currency pair; with failingConvert it also has a
// convert_currency (amount, from, to) that always fails, so that a repair
// must move its values onto the pair. received returns the pairs the
// upstream was called with, as it received them.
func fxUpstream(t *testing.T, s *stack, failingConvert bool) (received func() []string) {
	t.Helper()
	var mu sync.Mutex
	var pairs []string
	srv := mcp.NewServer(&mcp.Implementation{Name: "fx", Version: "1.0.0"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "lookup_fx_rate", Description: "convert currencies: the exchange rate of a currency pair"},
		func(_ context.Context, _ *mcp.CallToolRequest, in fxPairIn) (*mcp.CallToolResult, map[string]any, error) {
			mu.Lock()
			pairs = append(pairs, in.Pair)
			mu.Unlock()
			return nil, map[string]any{"pair": in.Pair, "rate": 0.92}, nil
		})
	tools := 1
	if failingConvert {
		tools++
		mcp.AddTool(srv, &mcp.Tool{Name: "convert_currency", Description: "convert an amount of money from one currency to another"},
			func(context.Context, *mcp.CallToolRequest, convertIn) (*mcp.CallToolResult, map[string]any, error) {
				return nil, nil, errors.New("invalid request: this converter is retired")
			})
	}
	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	t.Cleanup(hs.Close)
	pool := remote.NewPool(remote.Options{Registry: s.router})
	t.Cleanup(func() { _ = pool.Close(context.Background()) })
	if err := pool.AddFromConfig(context.Background(), agentsmcp.UpstreamConfig{Name: "fx", Transport: remote.TransportStreamable, URL: hs.URL}); err != nil {
		t.Fatal(err)
	}
	if st, _ := pool.Status("fx"); st.Tools != tools {
		t.Fatalf("upstream status %+v, want %d tools", st, tools)
	}
	return func() []string {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(pairs)
	}
}

// historyHas reports whether task's history has an event of type typ
// whose message holds text.
func historyHas(task *agentsmcp.Task, typ, text string) bool {
	return slices.ContainsFunc(task.History, func(e agentsmcp.TaskEvent) bool { return e.Type == typ && strings.Contains(e.Message, text) })
}

// TestComposedValueReachesTheUpstream: "Convert 100 USD to EUR" against
// lookup_fx_rate(pair: "currency pair such as USD/EUR"), through the
// builtin planner and the executor: the upstream receives pair "USD/EUR",
// never "USD", and the task's history says where the value came from. A
// request that lacks a part asks for the pair instead, refuses an answer
// without its shape, and runs with one that has it.
func TestComposedValueReachesTheUpstream(t *testing.T) {
	s := newStack(t, func(*localtools.Provider) {})
	received := fxUpstream(t, s, false)
	ctx := context.Background()

	_, plan, _, task := s.runRequest(t, "Convert 100 USD to EUR", nil)
	if len(plan.Steps) != 1 || plan.Steps[0].Tool != "fx__lookup_fx_rate" {
		t.Fatalf("plan steps %+v, want one step with fx__lookup_fx_rate", plan.Steps)
	}
	if task.Status != agentsmcp.TaskSucceeded {
		t.Fatalf("task %s: %s", task.Status, task.Error)
	}
	if got := received(); !slices.Equal(got, []string{"USD/EUR"}) {
		t.Fatalf("the upstream received pairs %q; want [USD/EUR]", got)
	}
	if note := "pair = 'USD/EUR' composed from 'USD' and 'EUR' in the request"; !historyHas(task, "values_filled", note) {
		t.Errorf("the task's history %+v does not say %q", task.History, note)
	}

	th, _, err := s.thinker.Think(ctx, "Convert 100 USD", nil)
	if err != nil {
		t.Fatal(err)
	}
	plan, _, err = s.planner.Plan(ctx, agents.PlanRequest{Request: "Convert 100 USD", Thought: th})
	if err != nil {
		t.Fatal(err)
	}
	if len(plan.Steps) != 1 || plan.Steps[0].Tool != "fx__lookup_fx_rate" || !strings.Contains(string(plan.Steps[0].Arguments), "{{inputs.") {
		t.Fatalf("plan steps %+v: the pair the request lacks must be asked for", plan.Steps)
	}
	task, err = s.exec.Start(ctx, plan, nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	wctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	if task, err = s.exec.Wait(wctx, task.ID); err != nil || task.Status != agentsmcp.TaskPaused || task.Steps[0].Status != agentsmcp.StepWaitingInput {
		t.Fatalf("task %s, step %s, err %v: want paused, waiting for the pair", task.Status, task.Steps[0].Status, err)
	}
	if got := received(); len(got) != 1 {
		t.Fatalf("the upstream was called with %q while the pair was missing", got[1:])
	}
	var input string
	for name := range declaredInputNames(plan.Inputs) {
		input = name
	}
	if _, err := s.exec.Resume(ctx, task.ID, agents.ResumeRequest{Inputs: json.RawMessage(`{"` + input + `":"USD"}`)}, nil); agentsmcp.ErrorCode(err) != agentsmcp.EINVALID {
		t.Errorf("an answer without the pair's shape: err %v; want EINVALID", err)
	}
	if _, err := s.exec.Resume(ctx, task.ID, agents.ResumeRequest{Inputs: json.RawMessage(`{"` + input + `":"USD/GBP"}`)}, nil); err != nil {
		t.Fatal(err)
	}
	if task, err = s.exec.Wait(wctx, task.ID); err != nil || task.Status != agentsmcp.TaskSucceeded {
		t.Fatalf("task %s (%s), err %v", task.Status, task.Error, err)
	}
	if got := received(); !slices.Equal(got, []string{"USD/EUR", "USD/GBP"}) {
		t.Errorf("the upstream received pairs %q; want [USD/EUR USD/GBP]", got)
	}
}

// declaredInputNames are the properties of a plan's inputs schema.
func declaredInputNames(schema json.RawMessage) map[string]bool {
	var doc struct {
		Properties map[string]json.RawMessage `json:"properties"`
	}
	_ = json.Unmarshal(schema, &doc)
	names := map[string]bool{}
	for n := range doc.Properties {
		names[n] = true
	}
	return names
}

// TestRepairComposesThePairFromTheFailedCall: convert_currency (amount,
// from, to) fails for good; the repair moves its values onto
// lookup_fx_rate by meaning, composing the pair from the source and
// target, never pair = from; the upstream receives "USD/EUR", and the
// repair's event says how.
func TestRepairComposesThePairFromTheFailedCall(t *testing.T) {
	s := newStack(t, func(*localtools.Provider) {})
	received := fxUpstream(t, s, true)
	ctx := context.Background()
	plan := &agentsmcp.Plan{Request: "Convert 100 USD to EUR", Goal: "convert", Steps: []agentsmcp.PlanStep{{
		ID: "convert", Tool: "fx__convert_currency", Description: "Convert 100 USD to EUR",
		Arguments: json.RawMessage(`{"amount":100,"from":"USD","to":"EUR"}`),
	}}}
	if err := s.planner.Check(ctx, plan); err != nil {
		t.Fatal(err)
	}
	if err := s.db.CreatePlan(ctx, plan); err != nil {
		t.Fatal(err)
	}
	ex := agents.NewExecutor(agents.ExecutorOptions{Tasks: s.db, Plans: s.db, Tools: s.router, Catalog: s.planner.Gatherer.Catalog,
		Repairer: &agents.Repairer{Gatherer: s.planner.Gatherer},
		Retry:    agentsmcp.RetryPolicy{MaxAttempts: 1, InitialBackoff: time.Millisecond}})
	t.Cleanup(func() { _ = ex.Close(context.Background()) })
	task, err := ex.Start(ctx, plan, nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	wctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	if task, err = ex.Wait(wctx, task.ID); err != nil || task.Status != agentsmcp.TaskSucceeded {
		t.Fatalf("task %s (%s), err %v; history %+v", task.Status, task.Error, err, task.History)
	}
	if task.Steps[0].RepairedTool != "fx__lookup_fx_rate" || string(task.Steps[0].RepairedArguments) != `{"pair":"USD/EUR"}` {
		t.Errorf("repaired with %s %s; want fx__lookup_fx_rate {\"pair\":\"USD/EUR\"}", task.Steps[0].RepairedTool, task.Steps[0].RepairedArguments)
	}
	if got := received(); !slices.Equal(got, []string{"USD/EUR"}) {
		t.Errorf("the upstream received pairs %q; want [USD/EUR]", got)
	}
	if note := "pair = 'USD/EUR' composed from 'USD' and 'EUR' in the request"; !historyHas(task, "step_repaired", note) {
		t.Errorf("the repair's event does not say %q: %+v", note, task.History)
	}
}

// TestModelPlanWithAValueWithoutItsShapeIsSentBack: a model (a fake, over
// a real HTTP server speaking the OpenAI API) that fills the pair with
// "USD" gets its plan back, with the reason naming the pair's shape, like
// any invalid plan; its next answer, with "USD/EUR", is the plan, and the
// upstream receives that pair.
func TestModelPlanWithAValueWithoutItsShapeIsSentBack(t *testing.T) {
	s := newStack(t, func(*localtools.Provider) {})
	received := fxUpstream(t, s, false)
	fake := openaitest.NewFakeServer(t)
	fake.Enqueue(
		openaitest.Text(`{"goal":"convert","steps":[{"id":"rate","tool":"fx__lookup_fx_rate","arguments":{"pair":"USD"}}]}`, 10, 5),
		openaitest.Text(`{"goal":"convert","steps":[{"id":"rate","tool":"fx__lookup_fx_rate","arguments":{"pair":"USD/EUR"}}]}`, 10, 5),
	)
	llm, err := openai.New(openai.Config{BaseURL: fake.URL, APIKey: "test-key", Model: "m"})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	th, _, err := s.thinker.Think(ctx, "Convert 100 USD to EUR", nil)
	if err != nil {
		t.Fatal(err)
	}
	plan, report, err := s.planner.Plan(ctx, agents.PlanRequest{Request: "Convert 100 USD to EUR", Thought: th, LLM: llm})
	if err != nil {
		t.Fatal(err)
	}
	if report.Attempts != 2 || string(plan.Steps[0].Arguments) != `{"pair":"USD/EUR"}` {
		t.Fatalf("attempts %d, arguments %s; want the second answer", report.Attempts, plan.Steps[0].Arguments)
	}
	reqs := fake.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests to the model; want 2", len(reqs))
	}
	back := reqs[1].Messages[len(reqs[1].Messages)-1].Content
	if !strings.Contains(back, `argument /pair: "USD" does not have the shape of its example USD/EUR`) {
		t.Errorf("the plan sent back does not say why: %s", back)
	}
	task, err := s.exec.Start(ctx, plan, nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	wctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	if task, err = s.exec.Wait(wctx, task.ID); err != nil || task.Status != agentsmcp.TaskSucceeded {
		t.Fatalf("task %s (%s), err %v", task.Status, task.Error, err)
	}
	if got := received(); !slices.Equal(got, []string{"USD/EUR"}) {
		t.Errorf("the upstream received pairs %q; want [USD/EUR]", got)
	}
}
