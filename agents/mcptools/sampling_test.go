package mcptools_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/agents"
	"github.com/agents-mcp/agents-mcp/agents/mcptools"
	"github.com/agents-mcp/agents-mcp/internal/agentstest"
	"github.com/agents-mcp/agents-mcp/internal/mcpwire"
	"github.com/agents-mcp/agents-mcp/localtools"
)

// Sampling for clients of MCP 2026-07-28 through MRTR (sampling.go): the
// agents' tools over the real stack (SQLite, router, executor), called as
// a 2026-07-28 client calls them, with each call encoded as JSON-RPC
// params so that the inputResponses are decoded as go-sdk decodes them
// off the wire. The client's model is fakeClientModel.

// fakeClientModel stands for the model of the client: a thought that
// recommends fetch_page, and a plan that fetches the request's URL with
// it. With badFirstPlan its first plan names a tool that does not exist,
// so that planning asks it again to repair its answer.
type fakeClientModel struct {
	badFirstPlan bool

	mu    sync.Mutex
	asked []*mcp.CreateMessageParams
}

func (m *fakeClientModel) answer(p *mcp.CreateMessageParams) string {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.asked = append(m.asked, p)
	if strings.Contains(p.SystemPrompt, "thought agent") {
		return `{"subGoals":["fetch the web page"],"reasoning":"one fetch","approaches":["fetch it"],"constraints":[],"assumptions":[],"uncertainties":[],"confidence":0.9,"recommendedTools":[{"tool":"fetch_page","reason":"it downloads pages"}]}`
	}
	tool := "fetch_page"
	if m.badFirstPlan && m.plans() == 1 {
		tool = "no_such_tool"
	}
	return fmt.Sprintf(`{"goal":"fetch a page","steps":[{"id":"get","tool":%q,"arguments":{"url":"https://example.com/a"},"description":"fetch it"}]}`, tool)
}

// plans counts the plan requests asked so far; m.mu is held.
func (m *fakeClientModel) plans() int {
	n := 0
	for _, p := range m.asked {
		if !strings.Contains(p.SystemPrompt, "thought agent") {
			n++
		}
	}
	return n
}

// samplingRig is the agents' tools, registered on a local provider, over
// newStack.
type samplingRig struct {
	*agentstest.Stack
	tools  *mcptools.Tools
	local  *localtools.Provider
	states *mcptools.RequestStates
}

func newSamplingRig(t *testing.T, mode string) *samplingRig {
	t.Helper()
	s := agentstest.NewStack(t, agentstest.FetchTools(t))
	states := &mcptools.RequestStates{Key: []byte(strings.Repeat("s", mcptools.RequestStateKeySize)), TTL: time.Minute}
	tools := &mcptools.Tools{Thinker: s.Thinker, Planner: s.Planner, Executor: s.Exec, Thoughts: s.DB, Plans: s.DB, Tasks: s.DB,
		LLM: agents.LLMChooser{Mode: mode}, RequestStates: states}
	local := localtools.New()
	if err := tools.Register(local); err != nil {
		t.Fatal(err)
	}
	return &samplingRig{Stack: s, tools: tools, local: local, states: states}
}

const fetchRequest = "fetch the web page https://example.com/a"

// call2026 calls tool as a client of MCP 2026-07-28 whose request
// declares caps, with the requestState and inputResponses of a retry.
func (r *samplingRig) call2026(ctx context.Context, tool string, args, caps map[string]any, state string, responses map[string]any) (*mcp.CallToolResult, error) {
	params := map[string]any{"name": tool, "arguments": args, "_meta": map[string]any{
		mcp.MetaKeyProtocolVersion:    "2026-07-28",
		mcp.MetaKeyClientCapabilities: caps,
	}}
	if state != "" {
		params["requestState"] = state
	}
	if responses != nil {
		params["inputResponses"] = responses
	}
	b, err := json.Marshal(params)
	if err != nil {
		return nil, err
	}
	var raw mcp.CallToolParamsRaw
	if err := json.Unmarshal(b, &raw); err != nil {
		return nil, err
	}
	return r.local.CallTool(ctx, &mcp.CallToolRequest{Params: &raw})
}

var samplingCaps = map[string]any{"sampling": map[string]any{}}

// round is one input_required answer of a driven call.
type round struct {
	key     string
	request *mcp.CreateMessageParams
	state   string
}

// sampleRequest checks that res asks exactly one sampling request, under
// key, and returns the round.
func sampleRequest(t *testing.T, res *mcp.CallToolResult, key string) round {
	t.Helper()
	if !asksInput(res) || res.RequestState == "" || len(res.InputRequests) != 1 {
		b, _ := json.Marshal(res)
		t.Fatalf("answered %s, want input_required with one sampling request and a requestState", b)
	}
	p, ok := res.InputRequests[key].(*mcp.CreateMessageParams)
	if !ok {
		t.Fatalf("input requests %v, want one sampling request %q", res.InputRequests, key)
	}
	return round{key: key, request: p, state: res.RequestState}
}

// modelAnswer is a sampling result as a client sends it.
func modelAnswer(text string) map[string]any {
	return map[string]any{"role": "assistant", "model": "fake-client-model", "content": map[string]any{"type": "text", "text": text}}
}

// drive calls tool and answers every sampling round with model until the
// call answers otherwise; between rounds, before (when set) runs with the
// round's number.
func (r *samplingRig) drive(t *testing.T, ctx context.Context, tool string, args map[string]any, model *fakeClientModel, before func(n int)) (*mcp.CallToolResult, []round) {
	t.Helper()
	res, err := r.call2026(ctx, tool, args, samplingCaps, "", nil)
	var rounds []round
	for err == nil && asksInput(res) {
		if len(rounds) > mcptools.MaxSamplingRounds {
			t.Fatalf("more than %d rounds", mcptools.MaxSamplingRounds)
		}
		rd := sampleRequest(t, res, fmt.Sprintf("sample.%d", len(rounds)+1))
		rounds = append(rounds, rd)
		if before != nil {
			before(len(rounds))
		}
		res, err = r.call2026(ctx, tool, args, samplingCaps, rd.state, map[string]any{rd.key: modelAnswer(model.answer(rd.request))})
	}
	if err != nil {
		t.Fatalf("%s after %d rounds: %v", tool, len(rounds), err)
	}
	return res, rounds
}

func taskResult(t *testing.T, res *mcp.CallToolResult) *mcptools.TaskResult {
	t.Helper()
	if res.IsError {
		b, _ := json.Marshal(res)
		t.Fatalf("tool error: %s", b)
	}
	var out mcptools.TaskResult
	b, _ := json.Marshal(res.StructuredContent)
	if err := json.Unmarshal(b, &out); err != nil || out.Task == nil {
		t.Fatalf("result %s: %v", b, err)
	}
	return &out
}

func isThoughtRequest(p *mcp.CreateMessageParams) bool {
	return strings.Contains(p.SystemPrompt, "thought agent")
}

// TestRunTaskAsksA2026ClientsModelThroughMRTR: run_task from a
// 2026-07-28 client that declares sampling thinks with its model (round
// 1), plans with it (round 2), repairs the invalid plan with it (round 3,
// the model shown its answer and what was wrong), then runs the plan:
// the task succeeds with the model's tool, one thought is stored however
// many rounds ran after thinking, and no request is asked twice.
func TestRunTaskAsksA2026ClientsModelThroughMRTR(t *testing.T) {
	for _, mode := range []string{agents.LLMAuto, agents.LLMSampling} {
		t.Run(mode, func(t *testing.T) {
			r := newSamplingRig(t, mode)
			model := &fakeClientModel{badFirstPlan: true}
			res, rounds := r.drive(t, t.Context(), "run_task", map[string]any{"request": fetchRequest}, model, nil)
			if len(rounds) != 3 || !isThoughtRequest(rounds[0].request) || isThoughtRequest(rounds[1].request) || isThoughtRequest(rounds[2].request) {
				t.Fatalf("%d rounds, want thought, plan, plan repair", len(rounds))
			}
			repair := rounds[2].request.Messages
			if len(repair) != 3 || repair[1].Role != "assistant" || !strings.Contains(repair[2].Content.(*mcp.TextContent).Text, "no_such_tool") {
				t.Errorf("the repair request does not show the model its answer and the problem: %d messages", len(repair))
			}
			out := taskResult(t, res)
			plan, err := r.DB.FindPlanByID(t.Context(), out.PlanID)
			if err != nil || plan.Steps[0].Tool != "fetch_page" || out.Task.Status != agentsmcp.TaskSucceeded || !strings.Contains(string(out.Task.Steps[0].Output), "example.com/a") {
				t.Fatalf("task %s (%s) of plan %+v: %v", out.Task.Status, out.Task.Error, plan, err)
			}
			th, err := r.DB.FindThoughtByID(t.Context(), out.ThoughtID)
			if err != nil || len(th.RecommendedTools) != 1 || th.RecommendedTools[0].Tool != "fetch_page" || th.Reasoning != "one fetch" {
				t.Errorf("thought %+v, %v: want the client model's", th, err)
			}
			all, _, err := r.DB.FindThoughts(t.Context(), agentsmcp.ThoughtFilter{})
			if err != nil || len(all) != 1 {
				t.Errorf("%d thoughts stored (%v), want 1", len(all), err)
			}
		})
	}
}

// TestSamplingRoundsComeBeforeTheMCPTask: in task mode (ADR 0010) the
// sampling rounds answer input_required and create no task; the round
// that completes the plan creates the task, which the router turns into
// the CreateTaskResult.
func TestSamplingRoundsComeBeforeTheMCPTask(t *testing.T) {
	r := newSamplingRig(t, agents.LLMAuto)
	model := &fakeClientModel{}
	var modes []*mcpwire.TaskMode
	ctx := func() context.Context {
		m := &mcpwire.TaskMode{}
		modes = append(modes, m)
		return mcpwire.WithTaskMode(t.Context(), m)
	}
	args := map[string]any{"request": fetchRequest}
	res, err := r.call2026(ctx(), "run_task", args, samplingCaps, "", nil)
	for n := 1; err == nil && asksInput(res); n++ {
		rd := sampleRequest(t, res, fmt.Sprintf("sample.%d", n))
		if id := modes[len(modes)-1].CreatedID(); id != "" {
			t.Fatalf("round %d created task %s", n, id)
		}
		res, err = r.call2026(ctx(), "run_task", args, samplingCaps, rd.state, map[string]any{rd.key: modelAnswer(model.answer(rd.request))})
	}
	if err != nil {
		t.Fatal(err)
	}
	out := taskResult(t, res)
	if len(modes) != 3 || modes[2].CreatedID() != out.Task.ID {
		t.Fatalf("%d calls; the last created %q, want task %s after 2 rounds", len(modes), modes[len(modes)-1].CreatedID(), out.Task.ID)
	}
}

// TestSamplingStateIsRefusedWhenChangedOrMoved: a changed requestState,
// one brought to another call, and an answer that is not a sampling
// result are refused with -32602.
func TestSamplingStateIsRefusedWhenChangedOrMoved(t *testing.T) {
	r := newSamplingRig(t, agents.LLMAuto)
	model := &fakeClientModel{}
	args := map[string]any{"request": fetchRequest}
	res, err := r.call2026(t.Context(), "run_task", args, samplingCaps, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	rd := sampleRequest(t, res, "sample.1")
	answer := map[string]any{rd.key: modelAnswer(model.answer(rd.request))}
	tampered := []byte(rd.state)
	tampered[len(tampered)/2] ^= 1
	for _, c := range []struct {
		name, tool string
		args       map[string]any
		state      string
		responses  map[string]any
		saying     string
	}{
		{"changed", "run_task", args, string(tampered), answer, "failed verification"},
		{"another request", "run_task", map[string]any{"request": "fetch the web page https://example.com/b"}, rd.state, answer, "another call"},
		{"another tool", "generate_thoughts", args, rd.state, answer, "another call"},
		{"not a sampling result", "run_task", args, rd.state, map[string]any{rd.key: map[string]any{"action": "accept", "content": map[string]any{}}}, "sampling result"},
	} {
		_, err := r.call2026(t.Context(), c.tool, c.args, samplingCaps, c.state, c.responses)
		var werr *jsonrpc.Error
		if !errors.As(err, &werr) || werr.Code != jsonrpc.CodeInvalidParams || !strings.Contains(werr.Message, c.saying) {
			t.Errorf("%s: %v, want -32602 saying %q", c.name, err, c.saying)
		}
	}
	// The state still serves the call it was issued to.
	if res, err := r.call2026(t.Context(), "run_task", args, samplingCaps, rd.state, answer); err != nil || !asksInput(res) {
		t.Fatalf("the genuine retry: %v", err)
	}
}

// TestSamplingRoundsSurviveChangingRecords: between the rounds the
// tools' records change (a call of fetch_page is recorded, as on any busy
// gateway), so the replayed thought request shows other figures than the
// one the client answered. It is still the same question: its answer is
// used, and the run needs no more rounds than with nothing recorded.
func TestSamplingRoundsSurviveChangingRecords(t *testing.T) {
	r := newSamplingRig(t, agents.LLMAuto)
	model := &fakeClientModel{}
	res, rounds := r.drive(t, t.Context(), "run_task", map[string]any{"request": fetchRequest}, model, func(n int) {
		if err := r.DB.RecordToolCall(context.Background(), agentsmcp.ToolCall{Tool: "fetch_page", Duration: time.Second}); err != nil {
			t.Fatal(err)
		}
	})
	if len(rounds) != 2 || !isThoughtRequest(rounds[0].request) || isThoughtRequest(rounds[1].request) {
		t.Fatalf("%d rounds, want the thought, then the plan", len(rounds))
	}
	if plan := rounds[1].request.Messages[0].Content.(*mcp.TextContent).Text; !strings.Contains(plan, "calls in all") {
		t.Errorf("the plan request does not show the calls recorded between the rounds")
	}
	if out := taskResult(t, res); out.Task.Status != agentsmcp.TaskSucceeded {
		t.Fatalf("task %s", out.Task.Status)
	}
}

// TestSamplingRoundsAreDeterministic: with the same records and answers,
// every round renders the same requests, even when the clock of the
// estimates moves between rounds (recorded calls weigh less with age,
// and the prompts show it): two first calls ask the same request, and a
// plan request asked half a day after the thought shows what it would
// have shown at once.
func TestSamplingRoundsAreDeterministic(t *testing.T) {
	// rig is a stack with three recorded calls of fetch_page, and a way to
	// move the clock of its estimates.
	rig := func() (*samplingRig, func(time.Duration)) {
		r := newSamplingRig(t, agents.LLMAuto)
		for range 3 {
			if err := r.DB.RecordToolCall(context.Background(), agentsmcp.ToolCall{Tool: "fetch_page", Duration: time.Second}); err != nil {
				t.Fatal(err)
			}
		}
		var mu sync.Mutex
		clock := time.Now()
		r.Thinker.Gatherer.Now = func() time.Time { mu.Lock(); defer mu.Unlock(); return clock }
		return r, func(d time.Duration) { mu.Lock(); clock = clock.Add(d); mu.Unlock() }
	}
	r, _ := rig()
	args := map[string]any{"request": fetchRequest}
	first := func() *mcp.CreateMessageParams {
		res, err := r.call2026(t.Context(), "run_task", args, samplingCaps, "", nil)
		if err != nil {
			t.Fatal(err)
		}
		return sampleRequest(t, res, "sample.1").request
	}
	a, b := first(), first()
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	if string(ja) != string(jb) {
		t.Fatalf("two first calls asked different requests:\n%s\n%s", ja, jb)
	}
	if !strings.Contains(string(ja), "3.0 succeeded") {
		t.Fatalf("the prompt does not show the recorded calls: %s", ja)
	}
	// Two stacks alike: on one the plan is asked at once, on the other
	// half a day after the thought.
	_, still := r.drive(t, t.Context(), "run_task", args, &fakeClientModel{}, nil)
	late, move := rig()
	_, moving := late.drive(t, t.Context(), "run_task", args, &fakeClientModel{}, func(int) { move(12 * time.Hour) })
	if len(still) != 2 || len(moving) != 2 {
		t.Fatalf("%d and %d rounds, want thought and plan", len(still), len(moving))
	}
	js, _ := json.Marshal(still[1].request)
	jm, _ := json.Marshal(moving[1].request)
	if string(js) != string(jm) {
		t.Errorf("the plan request asked half a day after the thought shows other figures than one asked at once:\n%s\n%s", js, jm)
	}
}

// TestSamplingThroughMRTRIsBounded: a client that never answers is asked
// again each round, up to MaxSamplingRounds requests; the next retry
// fails, saying why.
func TestSamplingThroughMRTRIsBounded(t *testing.T) {
	r := newSamplingRig(t, agents.LLMAuto)
	args := map[string]any{"request": fetchRequest}
	res, err := r.call2026(t.Context(), "run_task", args, samplingCaps, "", nil)
	for n := 1; n <= mcptools.MaxSamplingRounds; n++ {
		if err != nil {
			t.Fatalf("round %d: %v", n, err)
		}
		rd := sampleRequest(t, res, fmt.Sprintf("sample.%d", n))
		res, err = r.call2026(t.Context(), "run_task", args, samplingCaps, rd.state, map[string]any{})
	}
	if err != nil || !res.IsError || !strings.Contains(fmt.Sprint(res.Content[0].(*mcp.TextContent).Text), "more than 16 sampling requests") {
		b, _ := json.Marshal(res)
		t.Fatalf("after %d rounds: %s %v, want a tool error about the bound", mcptools.MaxSamplingRounds, b, err)
	}
}

// TestSamplingFor2026ClientsPerMode: AGENTS_MCP_LLM sampling refuses a
// 2026-07-28 request that does not declare sampling, and auto plans it
// with the builtin planner, asking nothing; generate_thoughts and
// generate_plan ask a request that declares it, as run_task does.
func TestSamplingFor2026ClientsPerMode(t *testing.T) {
	args := map[string]any{"request": fetchRequest}
	res, err := newSamplingRig(t, agents.LLMSampling).call2026(t.Context(), "run_task", args, map[string]any{}, "", nil)
	if err != nil || !res.IsError || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, "does not declare the sampling capability") {
		b, _ := json.Marshal(res)
		t.Errorf("sampling mode without the capability: %s %v", b, err)
	}
	auto := newSamplingRig(t, agents.LLMAuto)
	res, err = auto.call2026(t.Context(), "run_task", args, map[string]any{}, "", nil)
	if err != nil || asksInput(res) || !taskResult(t, res).Task.Status.Terminal() {
		t.Fatalf("auto without the capability: %v", err)
	}

	model := &fakeClientModel{}
	res, rounds := auto.drive(t, t.Context(), "generate_thoughts", args, model, nil)
	var th mcptools.ThoughtResult
	b, _ := json.Marshal(res.StructuredContent)
	if err := json.Unmarshal(b, &th); err != nil || len(rounds) != 1 || th.Report.Backend != agents.LLMSampling || th.Thought.Reasoning != "one fetch" {
		t.Fatalf("generate_thoughts: %d rounds, %s", len(rounds), b)
	}
	res, rounds = auto.drive(t, t.Context(), "generate_plan", map[string]any{"thoughtId": th.Thought.ID}, model, nil)
	var pl mcptools.PlanResult
	b, _ = json.Marshal(res.StructuredContent)
	if err := json.Unmarshal(b, &pl); err != nil || len(rounds) != 1 || pl.Report.Backend != agents.LLMSampling || pl.Plan.Steps[0].Tool != "fetch_page" || pl.Plan.ThoughtID != th.Thought.ID {
		t.Fatalf("generate_plan: %d rounds, %s", len(rounds), b)
	}
}

// asksInput reports whether res is an input_required result: go-sdk
// marks it so on the way out, after the tool handler returns.
func asksInput(res *mcp.CallToolResult) bool {
	return res != nil && len(res.InputRequests) > 0
}

// TestSamplingStateIsBoundedInSize: answers that would make the state
// carry more than MaxSamplingAnswerBytes end the call with a tool error
// that says so, rather than a state that grows with every round.
func TestSamplingStateIsBoundedInSize(t *testing.T) {
	r := newSamplingRig(t, agents.LLMAuto)
	model := &fakeClientModel{}
	args := map[string]any{"request": fetchRequest}
	res, err := r.call2026(t.Context(), "run_task", args, samplingCaps, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	thought := sampleRequest(t, res, "sample.1")
	res, err = r.call2026(t.Context(), "run_task", args, samplingCaps, thought.state, map[string]any{thought.key: modelAnswer(model.answer(thought.request))})
	if err != nil {
		t.Fatal(err)
	}
	plan := sampleRequest(t, res, "sample.2")
	// Not a plan: the model is asked to repair it, which would carry it on.
	huge := strings.Repeat("x", mcptools.MaxSamplingAnswerBytes+1)
	res, err = r.call2026(t.Context(), "run_task", args, samplingCaps, plan.state, map[string]any{plan.key: modelAnswer(huge)})
	if err != nil || !res.IsError || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, "bytes in all") {
		b, _ := json.Marshal(res)
		t.Fatalf("after a huge answer: %.300s %v, want a tool error about the size", b, err)
	}
}
