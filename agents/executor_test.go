package agents_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/agents"
	"github.com/agents-mcp/agents-mcp/internal/agentstest"
	"github.com/agents-mcp/agents-mcp/internal/testutil"
	"github.com/agents-mcp/agents-mcp/localtools"
	"github.com/agents-mcp/agents-mcp/memory/sqlite"
	"github.com/agents-mcp/agents-mcp/router"
)

// The toolbox, the harness and the steps are shared with the tests of
// the MCP face (agents/mcptools): internal/agentstest.
type (
	toolbox = agentstest.Toolbox
	pathIn  = agentstest.PathIn
)

// harness is agentstest.Harness under the names these tests use.
type harness struct {
	*agentstest.Harness
	t      testing.TB
	store  *sqlite.DB
	tools  *toolbox
	router *router.Router
	exec   *agents.Executor
}

func newHarness(t testing.TB, tune func(*agents.ExecutorOptions)) *harness {
	t.Helper()
	h := agentstest.NewHarness(t, tune)
	return &harness{Harness: h, t: t, store: h.Store, tools: h.Tools, router: h.Router, exec: h.Exec}
}

func (h *harness) plan(inputs string, steps ...agentsmcp.PlanStep) *agentsmcp.Plan {
	h.t.Helper()
	return h.Plan(inputs, steps...)
}

func (h *harness) run(p *agentsmcp.Plan, inputs string, caller agents.Caller) *agentsmcp.Task {
	h.t.Helper()
	return h.Run(p, inputs, caller)
}

func (h *harness) wait(id string) *agentsmcp.Task {
	h.t.Helper()
	return h.Wait(id)
}

var step = agentstest.Step

var stateOf = agentstest.StateOf

func TestParallelBranchesAndReferences(t *testing.T) {
	h := newHarness(t, nil)
	p := h.plan("",
		step("start", "echo", `{"value":{"ms":150,"names":["left","right"]}}`),
		step("left", "sleep", `{"ms":"{{steps.start.output.value.ms}}","label":"{{steps.start.output.value.names[0]}}"}`, "start"),
		step("right", "sleep", `{"ms":"{{steps.start.output.value.ms}}","label":"{{ steps.start.output.value.names[1] }}"}`, "start"),
		step("join", "echo", `{"value":"{{steps.left.output.label}} and {{steps.right.output.label}}: {{steps.left.output}}"}`, "left", "right"),
	)
	started := time.Now()
	task := h.run(p, "", nil)
	took := time.Since(started)
	if task.Status != agentsmcp.TaskSucceeded {
		t.Fatalf("task %s: %s %+v", task.Status, task.Error, task.Steps)
	}
	if h.tools.MaxSeen() < 2 {
		t.Errorf("the two independent branches never ran at the same time (max %d at once)", h.tools.MaxSeen())
	}
	if took > 280*time.Millisecond*3 { // two sequential sleeps would be 300 ms; allow a loaded machine
		t.Logf("took %v", took)
	}
	var join struct {
		Value string `json:"value"`
	}
	if err := json.Unmarshal(stateOf(task, "join").Output, &join); err != nil {
		t.Fatal(err)
	}
	if want := `left and right: {"label":"left","slept":150}`; join.Value != want {
		t.Errorf("join output %q, want %q", join.Value, want)
	}
	// The whole-value reference kept its type: sleep received the number.
	if got := string(stateOf(task, "left").Output); !strings.Contains(got, `"slept":150`) {
		t.Errorf("left output %s", got)
	}
	for _, s := range task.Steps {
		if s.Attempts != 1 || s.StartedAt.IsZero() || s.EndedAt.IsZero() {
			t.Errorf("step %s: attempts %d, started %v, ended %v", s.StepID, s.Attempts, s.StartedAt, s.EndedAt)
		}
	}
	if !stateOf(task, "join").StartedAt.After(stateOf(task, "left").EndedAt.Add(-time.Millisecond)) {
		t.Error("join started before its dependencies ended")
	}
}

func TestRetriesTransientFailuresOnly(t *testing.T) {
	h := newHarness(t, nil)
	p := h.plan("",
		step("flaky", "flaky", `{"key":"a","failures":2}`),
		step("broken", "broken", `{"path":""}`),
		step("after-broken", "echo", `{"value":1}`, "broken"),
		step("after-after", "echo", `{"value":2}`, "after-broken"),
	)
	task := h.run(p, "", nil)
	if task.Status != agentsmcp.TaskFailed {
		t.Fatalf("task %s, want failed", task.Status)
	}
	if s := stateOf(task, "flaky"); s.Status != agentsmcp.StepSucceeded || s.Attempts != 3 {
		t.Errorf("flaky: %s after %d attempts, want succeeded after 3", s.Status, s.Attempts)
	}
	if n := countEvents(task, "step_retrying", "flaky"); n != 2 {
		t.Errorf("%d retry events for flaky, want 2", n)
	}
	if s := stateOf(task, "broken"); s.Status != agentsmcp.StepFailed || s.Attempts != 1 || !strings.Contains(s.Error, "path is empty") {
		t.Errorf("broken: %+v, want failed once with the tool's error", s)
	}
	for _, id := range []string{"after-broken", "after-after"} {
		s := stateOf(task, id)
		if s.Status != agentsmcp.StepSkipped || !strings.Contains(s.Error, "dependency") {
			t.Errorf("%s: %s %q, want skipped naming its dependency", id, s.Status, s.Error)
		}
	}
	if h.tools.CallsOf("echo") != 0 {
		t.Error("a skipped step ran")
	}
	if !strings.Contains(task.Error, "broken") {
		t.Errorf("task error %q does not name the failed step", task.Error)
	}
}

func TestTheSameToolErrorTwiceStopsRetrying(t *testing.T) {
	h := newHarness(t, nil)
	s := step("outage", "outage", `{}`)
	s.Retry = &agentsmcp.RetryPolicy{MaxAttempts: 5, InitialBackoff: time.Millisecond}
	task := h.run(h.plan("", s), "", nil)
	st := stateOf(task, "outage")
	if st.Status != agentsmcp.StepFailed || st.Attempts != 2 || h.tools.CallsOf("outage") != 2 {
		t.Errorf("outage: %s after %d attempts (%d calls), want failed after 2 of the 5 allowed", st.Status, st.Attempts, h.tools.CallsOf("outage"))
	}
	if !strings.Contains(st.Error, "service unavailable (503)") || !strings.Contains(st.Error, "permanent") {
		t.Errorf("outage error %q, want the tool's error classed permanent", st.Error)
	}
}

func countEvents(t *agentsmcp.Task, typ, stepID string) int {
	n := 0
	for _, e := range t.History {
		if e.Type == typ && e.StepID == stepID {
			n++
		}
	}
	return n
}

func TestStepTimeoutIsRetriedThenFails(t *testing.T) {
	h := newHarness(t, nil)
	s := step("slow", "sleep", `{"ms":2000}`)
	s.Timeout = 50 * time.Millisecond
	s.Retry = &agentsmcp.RetryPolicy{MaxAttempts: 2, InitialBackoff: time.Millisecond}
	started := time.Now()
	task := h.run(h.plan("", s), "", nil)
	if took := time.Since(started); took > 1500*time.Millisecond {
		t.Errorf("took %v: the timeout did not cut the calls", took)
	}
	st := stateOf(task, "slow")
	if st.Status != agentsmcp.StepFailed || st.Attempts != 2 || !strings.Contains(st.Error, "timed out") {
		t.Errorf("slow: %+v, want failed after 2 timed-out attempts", st)
	}
}

func TestCancelStopsRunningSteps(t *testing.T) {
	h := newHarness(t, nil)
	p := h.plan("", step("block", "block", ""), step("later", "echo", `{"value":1}`, "block"), step("free", "echo", `{"value":2}`))
	task, err := h.exec.Start(context.Background(), p, nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, 10*time.Second, "block is called", func() bool { return h.tools.CallsOf("block") == 1 })
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	got, err := h.exec.Cancel(ctx, task.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != agentsmcp.TaskCancelled {
		t.Fatalf("status %s after Cancel", got.Status)
	}
	if h.tools.Cancelled.Load() != 1 {
		t.Error("the running tool call was not cancelled")
	}
	if s := stateOf(got, "block"); s.Status != agentsmcp.StepCancelled {
		t.Errorf("block: %s", s.Status)
	}
	if s := stateOf(got, "later"); s.Status != agentsmcp.StepCancelled && s.Status != agentsmcp.StepSkipped {
		t.Errorf("later: %s, want cancelled", s.Status)
	}
	// Cancelling again changes nothing.
	again, err := h.exec.Cancel(ctx, task.ID)
	if err != nil || again.Status != agentsmcp.TaskCancelled || again.Version != got.Version {
		t.Errorf("second cancel: %v, %v", again, err)
	}
}

func TestPausesForInputsAndResumeReturnsAtOnce(t *testing.T) {
	h := newHarness(t, nil)
	p := h.plan(`{"type":"object","properties":{"path":{"type":"string","minLength":1}},"required":["path"]}`,
		step("independent", "echo", `{"value":"runs without inputs"}`),
		step("use", "echo", `{"value":"{{inputs.path}}"}`),
		step("slow", "sleep", `{"ms":300}`, "use"),
	)
	task := h.run(p, "", nil)
	if task.Status != agentsmcp.TaskPaused {
		t.Fatalf("status %s, want paused", task.Status)
	}
	if s := stateOf(task, "use"); s.Status != agentsmcp.StepWaitingInput || !strings.Contains(s.Error, "path") {
		t.Errorf("use: %+v", s)
	}
	if s := stateOf(task, "independent"); s.Status != agentsmcp.StepSucceeded {
		t.Errorf("a step that needs no input did not run: %s", s.Status)
	}
	ctx := context.Background()
	if _, err := h.exec.Resume(ctx, task.ID, agents.ResumeRequest{Inputs: json.RawMessage(`{"path":""}`)}, nil); agentsmcp.ErrorCode(err) != agentsmcp.EINVALID {
		t.Errorf("inputs violating the schema: %v, want EINVALID", err)
	}
	started := time.Now()
	resumed, err := h.exec.Resume(ctx, task.ID, agents.ResumeRequest{Inputs: json.RawMessage(`{"path":"/data"}`)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if took := time.Since(started); took > 250*time.Millisecond || resumed.Status.Terminal() {
		t.Errorf("Resume took %v and returned %s: it waited for the task", took, resumed.Status)
	}
	done := h.wait(task.ID)
	if done.Status != agentsmcp.TaskSucceeded {
		t.Fatalf("after resume: %s %s", done.Status, done.Error)
	}
	if got := string(stateOf(done, "use").Output); got != `{"value":"/data"}` {
		t.Errorf("use output %s", got)
	}
	if h.tools.CallsOf("echo") != 2 {
		t.Errorf("echo called %d times, want 2 (no step twice)", h.tools.CallsOf("echo"))
	}
	if _, err := h.exec.Resume(ctx, task.ID, agents.ResumeRequest{}, nil); agentsmcp.ErrorCode(err) != agentsmcp.ECONFLICT {
		t.Errorf("resuming an ended task: %v, want ECONFLICT", err)
	}
}

// A step whose tool asks a person to authorize an integration (ADR 0012)
// needs input: the task pauses with the link as the step's question, not
// failed, and the step runs again once confirmed.
func TestAuthorizationRequestPausesTheStep(t *testing.T) {
	h := newHarness(t, nil)
	task := h.run(h.plan("", step("fetch", "needs_auth", `{}`), step("report", "echo", `{"value":"{{steps.fetch.output.ok}}"}`, "fetch")), "", nil)
	s := stateOf(task, "fetch")
	if task.Status != agentsmcp.TaskPaused || s.Status != agentsmcp.StepWaitingConfirmation ||
		!strings.Contains(s.Error, "http://127.0.0.1:9/authorize?state=s") || s.Attempts != 1 {
		t.Fatalf("status %s, fetch %+v: want paused for authorization", task.Status, s)
	}
	if n := h.tools.CallsOf("needs_auth"); n != 1 {
		t.Errorf("the tool was called %d times: an authorization request is not retried", n)
	}
	h.tools.Authorized.Store(true)
	if _, err := h.exec.Resume(context.Background(), task.ID, agents.ResumeRequest{Confirm: []string{"fetch"}}, nil); err != nil {
		t.Fatal(err)
	}
	done := h.wait(task.ID)
	if done.Status != agentsmcp.TaskSucceeded || h.tools.CallsOf("needs_auth") != 2 {
		t.Fatalf("after authorizing: %s, %d calls", done.Status, h.tools.CallsOf("needs_auth"))
	}
}

func TestDestructiveStepsNeedConfirmation(t *testing.T) {
	h := newHarness(t, nil)
	p := h.plan("",
		step("wipe", "delete_all", `{"path":"/tmp/x"}`),
		step("report", "echo", `{"value":"{{steps.wipe.output.deleted}}"}`, "wipe"),
	)
	task := h.run(p, "", nil)
	if task.Status != agentsmcp.TaskPaused || stateOf(task, "wipe").Status != agentsmcp.StepWaitingConfirmation {
		t.Fatalf("status %s, wipe %s: want paused for confirmation", task.Status, stateOf(task, "wipe").Status)
	}
	if h.tools.CallsOf("delete_all") != 0 {
		t.Fatal("the destructive tool ran without confirmation")
	}
	if _, err := h.exec.Resume(context.Background(), task.ID, agents.ResumeRequest{Confirm: []string{"wipe"}}, nil); err != nil {
		t.Fatal(err)
	}
	done := h.wait(task.ID)
	if done.Status != agentsmcp.TaskSucceeded || h.tools.CallsOf("delete_all") != 1 || !stateOf(done, "wipe").Confirmed {
		t.Fatalf("after confirm: %s, %d calls", done.Status, h.tools.CallsOf("delete_all"))
	}

	// Rejected: skipped with its dependents, and never called.
	task = h.run(h.plan("", step("wipe", "delete_all", `{"path":"/"}`), step("report", "echo", `{"value":1}`, "wipe")), "", nil)
	if _, err := h.exec.Resume(context.Background(), task.ID, agents.ResumeRequest{Reject: []string{"wipe"}}, nil); err != nil {
		t.Fatal(err)
	}
	done = h.wait(task.ID)
	if s := stateOf(done, "wipe"); s.Status != agentsmcp.StepSkipped || !strings.Contains(s.Error, "rejected") {
		t.Errorf("rejected step: %+v", s)
	}
	if s := stateOf(done, "report"); s.Status != agentsmcp.StepSkipped {
		t.Errorf("dependent of a rejected step: %s", s.Status)
	}
	if h.tools.CallsOf("delete_all") != 1 {
		t.Error("a rejected destructive step ran")
	}

	// Confirmed in advance, at Start.
	started, err := h.exec.Start(context.Background(), h.plan("", step("wipe", "delete_all", `{"path":"/y"}`)), nil, []string{"wipe"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if done := h.wait(started.ID); done.Status != agentsmcp.TaskSucceeded {
		t.Errorf("pre-confirmed: %s", done.Status)
	}
}

func TestDestructiveToolThatComesBackDuringATaskStillNeedsConfirmation(t *testing.T) {
	h := newHarness(t, nil)
	// late_wipe's upstream is down when the task starts: the tool is not
	// in the catalog yet.
	p := h.plan("",
		step("wait", "sleep", `{"ms":300}`),
		step("wipe", "late_wipe", `{"path":"/srv"}`, "wait"),
	)
	task, err := h.exec.Start(context.Background(), p, nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	var calls atomic.Int32
	late := localtools.New()
	yes := true
	if err := localtools.Add(late, &mcp.Tool{Name: "late_wipe", Description: "deletes a tree", Annotations: &mcp.ToolAnnotations{DestructiveHint: &yes}},
		func(_ context.Context, _ *mcp.CallToolRequest, in pathIn) (*mcp.CallToolResult, map[string]any, error) {
			calls.Add(1)
			return nil, map[string]any{"deleted": in.Path}, nil
		}); err != nil {
		t.Fatal(err)
	}
	if err := h.router.AddProvider(context.Background(), renamed{late, "late-upstream"}); err != nil {
		t.Fatal(err)
	}
	done := h.wait(task.ID)
	if done.Status != agentsmcp.TaskPaused || stateOf(done, "wipe").Status != agentsmcp.StepWaitingConfirmation || calls.Load() != 0 {
		t.Fatalf("task %s, wipe %s, %d calls: a destructive tool must wait for confirmation even if it was unknown when the task started",
			done.Status, stateOf(done, "wipe").Status, calls.Load())
	}
}

type blobIn struct {
	Bytes int `json:"bytes"`
}

func TestManyLargeOutputsStayWithinWhatTheStoreAccepts(t *testing.T) {
	h := newHarness(t, nil)
	blobs := localtools.New()
	if err := localtools.Add(blobs, &mcp.Tool{Name: "blob", Description: "returns n bytes", Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		func(_ context.Context, _ *mcp.CallToolRequest, in blobIn) (*mcp.CallToolResult, map[string]any, error) {
			return nil, map[string]any{"data": strings.Repeat("x", in.Bytes)}, nil
		}); err != nil {
		t.Fatal(err)
	}
	if err := h.router.AddProvider(context.Background(), renamed{blobs, "blobs"}); err != nil {
		t.Fatal(err)
	}
	// 44 outputs of 200 KB: 8.8 MB, more than a task may hold.
	var steps []agentsmcp.PlanStep
	for i := range 44 {
		steps = append(steps, step(fmt.Sprintf("b%02d", i), "blob", `{"bytes":200000}`))
	}
	steps = append(steps, step("last", "echo", `{"value":"{{steps.b00.output.data}}"}`, "b00", "b43"))
	done := h.wait(h.run(h.plan("", steps...), "", nil).ID)
	if done.Status != agentsmcp.TaskSucceeded {
		t.Fatalf("task %s: %s", done.Status, done.Error)
	}
	whole, cut := 0, 0
	for _, s := range done.Steps[:44] {
		if strings.Contains(string(s.Output), `"truncated":true`) {
			cut++
		} else {
			whole++
		}
	}
	if whole == 0 || cut == 0 {
		t.Errorf("%d outputs stored whole, %d cut: want the first ones whole and the rest cut to previews", whole, cut)
	}
	// last's own output is cut in the store too; its size says what it saw.
	var last struct {
		Bytes int `json:"bytes"`
	}
	if err := json.Unmarshal(stateOf(done, "last").Output, &last); err != nil || last.Bytes < 200000 {
		t.Errorf("the last step's output %.200s: it must have seen b00's whole output (steps of the same run see whole outputs)", stateOf(done, "last").Output)
	}
}

// An interrupted step that may have had its effect waits for its own
// confirmation: resuming the task for anything else must not run it.
func TestInterruptedStepRunsOnlyOnceConfirmed(t *testing.T) {
	h := newHarness(t, nil)
	ctx := context.Background()
	p := h.plan("", step("charge", "flaky", `{"key":"charge","failures":0}`), step("note", "echo", `{"value":1}`))
	// As recoverInterrupted leaves a step whose call was cut by a crash.
	task := &agentsmcp.Task{Request: p.Request, PlanID: p.ID, Status: agentsmcp.TaskPaused, Steps: []agentsmcp.StepState{
		{StepID: "charge", Status: agentsmcp.StepWaitingConfirmation, Attempts: 1, Error: "interrupted while running by a stop of its executor; it may have had effects"},
		{StepID: "note", Status: agentsmcp.StepSucceeded, Attempts: 1, Output: json.RawMessage(`{"value":1}`)},
	}}
	if err := h.store.CreateTask(ctx, task); err != nil {
		t.Fatal(err)
	}
	if _, err := h.exec.Resume(ctx, task.ID, agents.ResumeRequest{Inputs: json.RawMessage(`{}`)}, nil); err != nil {
		t.Fatal(err)
	}
	done := h.wait(task.ID)
	if h.tools.CallsOf("flaky") != 0 || stateOf(done, "charge").Status != agentsmcp.StepWaitingConfirmation || done.Status != agentsmcp.TaskPaused {
		t.Fatalf("a resume without its confirmation: %d calls, step %s, task %s", h.tools.CallsOf("flaky"), stateOf(done, "charge").Status, done.Status)
	}
	if _, err := h.exec.Resume(ctx, task.ID, agents.ResumeRequest{Confirm: []string{"charge"}}, nil); err != nil {
		t.Fatal(err)
	}
	done = h.wait(task.ID)
	if h.tools.CallsOf("flaky") != 1 || done.Status != agentsmcp.TaskSucceeded || h.tools.CallsOf("echo") != 0 {
		t.Fatalf("after the confirmation: %d calls, task %s, echo rerun %d times", h.tools.CallsOf("flaky"), done.Status, h.tools.CallsOf("echo"))
	}
}

// renamed is a provider of local tools under another name, as a second
// upstream would be.
type renamed struct {
	*localtools.Provider
	name string
}

func (r renamed) Name() string { return r.name }

// scriptedCaller is a client that answers every question at once, as a
// user would; it stands for the MCP client, whose real counterpart the
// e2e tests use.
type scriptedCaller struct {
	mu        sync.Mutex
	inputs    json.RawMessage
	confirm   bool
	questions []string
	progress  []int
}

func (c *scriptedCaller) Progress(_ context.Context, done, _ int, _ string) {
	c.mu.Lock()
	c.progress = append(c.progress, done)
	c.mu.Unlock()
}

func (c *scriptedCaller) Elicit(_ context.Context, message string, schema json.RawMessage) (json.RawMessage, bool, error) {
	c.mu.Lock()
	c.questions = append(c.questions, message)
	c.mu.Unlock()
	if strings.Contains(string(schema), `"confirm"`) {
		return json.RawMessage(fmt.Sprintf(`{"confirm":%v}`, c.confirm)), true, nil
	}
	return c.inputs, true, nil
}

func (c *scriptedCaller) Session() *mcp.ServerSession { return nil }
func (c *scriptedCaller) Request() context.Context    { return nil }

func TestAsksTheCallerInsteadOfPausing(t *testing.T) {
	h := newHarness(t, nil)
	p := h.plan(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`,
		step("use", "echo", `{"value":"{{inputs.path}}"}`),
		step("wipe", "delete_all", `{"path":"{{inputs.path}}"}`, "use"),
	)
	caller := &scriptedCaller{inputs: json.RawMessage(`{"path":"/srv"}`), confirm: true}
	task := h.run(p, "", caller)
	if task.Status != agentsmcp.TaskSucceeded {
		t.Fatalf("status %s: %s %+v", task.Status, task.Error, task.Steps)
	}
	if len(caller.questions) != 2 {
		t.Errorf("asked %d questions, want 2 (inputs, confirmation): %q", len(caller.questions), caller.questions)
	}
	if got := string(stateOf(task, "wipe").Output); got != `{"deleted":"/srv"}` {
		t.Errorf("wipe output %s", got)
	}
	if !slices.IsSorted(caller.progress) || caller.progress[len(caller.progress)-1] != 2 {
		t.Errorf("progress %v, want increasing to 2", caller.progress)
	}

	// A user who says no: the step is skipped, never called.
	caller = &scriptedCaller{inputs: json.RawMessage(`{"path":"/srv"}`), confirm: false}
	task = h.run(h.plan("", step("wipe", "delete_all", `{"path":"/"}`)), "", caller)
	if s := stateOf(task, "wipe"); s.Status != agentsmcp.StepSkipped || h.tools.CallsOf("delete_all") != 1 {
		t.Errorf("declined: %+v, %d calls", s, h.tools.CallsOf("delete_all"))
	}
}

func TestOnEndRunsOnceWithTheOutcome(t *testing.T) {
	var ended []*agentsmcp.Task
	var mu sync.Mutex
	h := newHarness(t, func(o *agents.ExecutorOptions) {
		o.OnEnd = func(_ context.Context, t *agentsmcp.Task, _ *agentsmcp.Plan) {
			mu.Lock()
			ended = append(ended, t)
			mu.Unlock()
		}
	})
	task := h.run(h.plan("", step("a", "echo", `{"value":1}`)), "", nil)
	mu.Lock()
	defer mu.Unlock()
	if len(ended) != 1 || ended[0].ID != task.ID || ended[0].Status != agentsmcp.TaskSucceeded {
		t.Errorf("OnEnd saw %v", ended)
	}
}

func TestBoundedParallelism(t *testing.T) {
	h := newHarness(t, func(o *agents.ExecutorOptions) { o.MaxParallel = 3 })
	var steps []agentsmcp.PlanStep
	for i := range 9 {
		steps = append(steps, step(fmt.Sprint("s", i), "sleep", `{"ms":40}`))
	}
	task := h.run(h.plan("", steps...), "", nil)
	if task.Status != agentsmcp.TaskSucceeded {
		t.Fatal(task.Status)
	}
	if h.tools.MaxSeen() != 3 {
		t.Errorf("at most %d steps ran at once, want exactly MaxParallel 3", h.tools.MaxSeen())
	}
}

func TestTwoExecutorsNeverRunATaskTwice(t *testing.T) {
	h := newHarness(t, func(o *agents.ExecutorOptions) { o.Owner = "a" })
	other := agents.NewExecutor(agents.ExecutorOptions{Tasks: h.store, Plans: h.store, Tools: h.router, Owner: "b", ResumeInterval: 10 * time.Millisecond})
	ctx, stop := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { other.Run(ctx) })
	defer func() {
		stop()
		wg.Wait()
		_ = other.Close(context.Background())
	}()
	var ids []string
	for range 10 {
		task, err := h.exec.Start(context.Background(), h.plan("", step("a", "sleep", `{"ms":30}`)), nil, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, task.ID)
	}
	for _, id := range ids {
		if done := h.wait(id); done.Status != agentsmcp.TaskSucceeded || stateOf(done, "a").Attempts != 1 {
			t.Errorf("task %s: %s, attempts %d", id, done.Status, stateOf(done, "a").Attempts)
		}
	}
	if n := h.tools.CallsOf("sleep"); n != 10 {
		t.Errorf("sleep called %d times for 10 tasks", n)
	}
}
