package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/internal/ferrettest"
)

// Lease settings of the replicas under test: short, so that a takeover
// happens within seconds, and long enough that no lease expires under a live
// replica. A renewal must answer within a third of the TTL; with 2 s, the
// race-instrumented FerretDB on a loaded 2-CPU machine missed that for
// seconds on end, the other replica took over running tasks, and, FerretDB
// updates not being atomic across processes, a step ran twice.
const (
	replicaLeaseTTL       = 6 * time.Second
	replicaResumeInterval = 200 * time.Millisecond
	replicaTasks          = 10
	firstWave             = 4 // tasks that end before the kill
)

// TestReplicasRunEachStepOnceAcrossAKill runs two `serve` processes on one
// database (embedded FerretDB) with a shared upstream, starts tasks through
// both, SIGKILLs one while it has calls in flight, and checks from the
// upstream's own record of calls what the executor promises (docs/scaling.md):
//
//   - while both replicas live, each task runs on the replica that started it,
//     and no step reaches the upstream twice;
//   - the survivor takes over the killed replica's unfinished tasks only once
//     their lease has expired, and finishes them: steps that had ended are not
//     run again, an interrupted call of an idempotent tool is run again, and an
//     interrupted call of a tool that is not idempotent waits for a
//     confirmation (the task pauses) rather than being run again;
//   - once confirmed through resume_task, it runs exactly once more.
func TestReplicasRunEachStepOnceAcrossAKill(t *testing.T) {
	if testing.Short() {
		t.Skip("starts FerretDB and two server processes")
	}
	mongoURI := startReplicaFerretDB(t)
	up := startWorkUpstream(t, "a")

	configFile := filepath.Join(t.TempDir(), "agents-mcp.yaml")
	// One config file for both, as in production; the header tells the
	// upstream which replica calls.
	config := fmt.Sprintf("upstreams:\n  - name: up\n    transport: streamable\n    url: %s/mcp\n    headers: {X-Replica: \"${REPLICA_TEST_NAME}\"}\n", up.url)
	if err := os.WriteFile(configFile, []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	database := fmt.Sprintf("replicas_%d", time.Now().UnixNano())
	env := func(name string) []string {
		return []string{
			"MONGODB_URI=" + mongoURI, "MONGODB_DATABASE=" + database,
			"AGENTS_MCP_CONFIG=" + configFile, "REPLICA_TEST_NAME=" + name,
			"AGENTS_MCP_TASK_LEASE_TTL=" + replicaLeaseTTL.String(),
			"AGENTS_MCP_TASK_RESUME_INTERVAL=" + replicaResumeInterval.String(),
			"AGENTS_MCP_LLM=sampling", // plans come from the test client's "model"
		}
	}
	replicas := map[string]*serverProcess{
		"a": startServerProcess(t, t.TempDir(), env("a")...), // killed mid-way
		"b": startServerProcess(t, t.TempDir(), env("b")...), // the survivor
	}
	for name, p := range replicas {
		if !strings.Contains(p.logs.String(), `"name":"tasks.lease_ttl","value":"`+replicaLeaseTTL.String()+`","source":"env:AGENTS_MCP_TASK_LEASE_TTL"`) {
			t.Fatalf("replica %s does not log the lease setting:\n%s", name, p.logs.String())
		}
	}
	t.Cleanup(func() {
		if !t.Failed() {
			return
		}
		for n, p := range replicas {
			for _, l := range strings.Split(p.logs.String(), "\n") {
				if strings.Contains(l, "WARN") || strings.Contains(l, "ERROR") || strings.Contains(l, "level\":\"W") || strings.Contains(l, "level\":\"E") {
					t.Log(n + ": " + l)
				}
			}
		}
	})
	book := newPlanBook(replicaTasks)
	clients := map[string]*mcp.ClientSession{"a": book.connect(t, replicas["a"]), "b": book.connect(t, replicas["b"])}

	// Task tNN runs on a for odd NN, on b for even; its plan is made
	// through the other replica, so that plans are shared through the store
	// too. The last task runs on a: its two root steps are surely in flight
	// when a dies.
	runsOn := func(i int) string { return map[bool]string{true: "a", false: "b"}[i%2 == 1] }
	other := map[string]string{"a": "b", "b": "a"}
	planIDs := make([]string, replicaTasks)
	for i := range replicaTasks {
		out := callTool(t, clients[other[runsOn(i)]], "generate_plan", map[string]any{"request": book.request(i)})
		var res struct{ Plan agentsmcp.Plan }
		decodeReplicaResult(t, out, &res)
		if len(res.Plan.Steps) != len(book.plans[i].Steps) {
			t.Fatalf("plan of t%02d has %d steps, want %d: %+v", i, len(res.Plan.Steps), len(book.plans[i].Steps), res.Plan)
		}
		planIDs[i] = res.Plan.ID
	}

	// The first wave ends before the kill: the survivor must leave a's
	// finished tasks alone. The second runs into it.
	owners := map[string]string{} // replica name -> lease owner
	startedOn := map[string]string{}
	taskIDs := make([]string, replicaTasks)
	for i := range replicaTasks {
		switch i {
		case firstWave:
			for id, task := range waitReplicaTasks(t, clients["a"], taskIDs[:firstWave], 20*time.Second) {
				if task.Status != agentsmcp.TaskSucceeded {
					t.Fatalf("first-wave task %s is %s: %s", id, task.Status, task.Error)
				}
			}
		case replicaTasks - 1:
			up.holdDoomed() // from now on, a's calls end only when a dies
		}
		name := runsOn(i)
		out := callTool(t, clients[name], "execute_task", map[string]any{"planId": planIDs[i]})
		var res struct{ Task agentsmcp.Task }
		decodeReplicaResult(t, out, &res)
		task := res.Task
		pid := "-" + strconv.Itoa(replicas[name].cmd.Process.Pid) + "-"
		if !strings.Contains(task.Lease.Owner, pid) {
			t.Fatalf("task %s started on %s (pid%s) is leased by %q", task.ID, name, pid, task.Lease.Owner)
		}
		if o, seen := owners[name]; seen && o != task.Lease.Owner {
			t.Fatalf("replica %s has two owner names: %q, %q", name, o, task.Lease.Owner)
		}
		owners[name] = task.Lease.Owner
		taskIDs[i], startedOn[task.ID] = task.ID, name
	}
	up.allStarted()

	// Kill a once it has a call of each tool in flight.
	select {
	case <-up.trigger:
	case <-time.After(20 * time.Second):
		t.Fatalf("replica a never had a work and a probe call in flight at once; calls: %v", up.snapshot())
	}
	killedAt := time.Now()
	if err := replicas["a"].cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = replicas["a"].cmd.Wait()
	up.killed()
	t.Logf("killed replica a at %s", killedAt.Format("15:04:05.000"))

	// The lease a left on each of its unfinished tasks: nobody may take the
	// task before it expires. A finished task may still show a's lease
	// (the release follows the final write, and a may die in between):
	// nothing resumes it.
	lastLease := map[string]time.Time{}
	survivor := clients["b"]
	for _, id := range taskIDs {
		task := getReplicaTask(t, survivor, id)
		if task.Lease.Owner == owners["a"] && !task.Status.Terminal() {
			lastLease[id] = task.Lease.ExpiresAt
		}
	}
	if len(lastLease) == 0 {
		t.Fatal("replica a held no lease when it was killed")
	}

	tasks := waitReplicaTasks(t, survivor, taskIDs, 30*time.Second)
	calls := up.snapshot()

	// a can only have called while alive; b's calls are dated by their
	// arrival, which follows their sending.
	bothAlive := func(c workCall) bool { return c.Replica == "a" || c.Start.Before(killedAt) }
	// Each (task, step) as the upstream saw it.
	type key struct{ task, step string }
	byStep := map[key][]workCall{}
	for _, c := range calls {
		byStep[key{c.Task, c.Step}] = append(byStep[key{c.Task, c.Step}], c)
	}
	taskOf, nameOf := map[string]string{}, map[string]string{} // tNN <-> task id
	for i, id := range taskIDs {
		taskOf[fmt.Sprintf("t%02d", i)], nameOf[id] = id, fmt.Sprintf("t%02d", i)
	}
	for _, c := range calls {
		id := taskOf[c.Task]
		switch {
		case id == "":
			t.Errorf("call for an unknown task: %+v", c)
		case bothAlive(c) && c.Replica != startedOn[id]:
			t.Errorf("while both replicas lived, %s/%s of a task started on %s was called by %s", c.Task, c.Step, startedOn[id], c.Replica)
		}
	}
	for k, cs := range byStep {
		var before int
		for _, c := range cs {
			if bothAlive(c) {
				before++
			}
		}
		if before > 1 {
			t.Errorf("%s/%s ran %d times while both replicas lived: %+v", k.task, k.step, before, cs)
		}
	}

	moved, interruptedWork, rerunProbes := 0, 0, 0
	confirm := map[string][]string{} // task id -> steps to confirm
	for i, id := range taskIDs {
		name := fmt.Sprintf("t%02d", i)
		task := tasks[id]
		resumed := eventsOf(task, "resumed")
		if startedOn[id] == "b" || lastLease[id].IsZero() {
			// Never left its replica: ended where it started.
			if task.Status != agentsmcp.TaskSucceeded || len(resumed) > 0 {
				t.Errorf("%s (%s, started on %s, not held by a at the kill) is %s with resume events %+v: %s", name, id, startedOn[id], task.Status, resumed, task.Error)
			}
		} else {
			moved++
			if len(resumed) != 1 || !strings.Contains(resumed[0].Message, "resumed by "+owners["b"]) {
				t.Errorf("%s (%s) was held by a at the kill; want one takeover by %s, got %+v", name, id, owners["b"], resumed)
			} else if at := resumed[0].At; at.Before(lastLease[id]) || at.After(lastLease[id].Add(replicaResumeInterval+5*time.Second)) {
				t.Errorf("%s was taken over at %s; a's lease expired at %s", name, at.Format("15:04:05.000"), lastLease[id].Format("15:04:05.000"))
			}
		}
		for j, s := range task.Steps {
			tool := book.plans[i].Steps[j].Tool
			cs := byStep[key{name, s.StepID}]
			// The survivor found the step running: its outcome was not
			// stored, whether or not its call had answered.
			interrupted := hasStepEvent(task, "step_interrupted", s.StepID)
			inFlight := len(cs) > 0 && cs[0].InFlightAtKill
			switch {
			case s.Status == agentsmcp.StepWaitingConfirmation:
				// Not idempotent, and it may have had its effect: it waits.
				if tool != "up__work" || !interrupted || len(cs) > 1 || (len(cs) == 1 && cs[0].Replica != "a") {
					t.Errorf("%s/%s (%s) waits for a confirmation with %d call(s) %+v: %s", name, s.StepID, tool, len(cs), cs, s.Error)
				}
				if len(cs) == 1 {
					interruptedWork++
				}
				confirm[id] = append(confirm[id], s.StepID)
			case s.Status == agentsmcp.StepPending && task.Status == agentsmcp.TaskPaused:
				// Behind a step that waits.
				if len(cs) != 0 {
					t.Errorf("%s/%s is pending but was called %d time(s)", name, s.StepID, len(cs))
				}
			case s.Status != agentsmcp.StepSucceeded:
				t.Errorf("%s/%s is %s: %s", name, s.StepID, s.Status, s.Error)
			case tool == "up__probe" && interrupted && len(cs) == 2 && cs[0].Replica == "a" && cs[1].Replica == "b":
				rerunProbes++ // idempotent: run again by the survivor
			case len(cs) != 1:
				t.Errorf("%s/%s (%s) succeeded after %d calls (interrupted by the kill: %v): %+v", name, s.StepID, tool, len(cs), interrupted, cs)
			}
			rerun := len(cs) == 2 && cs[1].Replica == "b"
			if inFlight && (!interrupted || (tool == "up__work" && s.Status != agentsmcp.StepWaitingConfirmation) || (tool == "up__probe" && !rerun)) {
				t.Errorf("%s/%s (%s) was in flight on a at the kill, yet it is %s (interrupted: %v)", name, s.StepID, tool, s.Status, interrupted)
			}
		}
		if (task.Status == agentsmcp.TaskPaused) != (len(confirm[id]) > 0) {
			t.Errorf("%s is %s with steps waiting for a confirmation %v", name, task.Status, confirm[id])
		}
	}
	t.Logf("%d task(s) moved from a to b; %d interrupted work call(s) wait for a confirmation; %d interrupted probe call(s) ran again", moved, interruptedWork, rerunProbes)
	if moved == 0 || interruptedWork == 0 || rerunProbes == 0 {
		t.Fatalf("the kill did not exercise the takeover: %d moved, %d interrupted work, %d probes run again", moved, interruptedWork, rerunProbes)
	}
	if t.Failed() {
		// A lease that expired under a live replica explains most failures:
		// the store answered renewals too slowly for the TTL.
		t.Fatalf("lease renewals that failed:\na: %s\nb: %s", leaseRenewalFailures(replicas["a"]), leaseRenewalFailures(replicas["b"]))
	}

	// A resume that does not confirm them (no answer at all) runs nothing.
	before := len(up.snapshot())
	for id := range confirm {
		callTool(t, survivor, "resume_task", map[string]any{"taskId": id})
	}
	for id, task := range waitReplicaTasks(t, survivor, taskIDs, 20*time.Second) {
		if len(confirm[id]) > 0 && task.Status != agentsmcp.TaskPaused {
			t.Errorf("%s is %s after a resume without confirmations; want paused", nameOf[id], task.Status)
		}
	}
	if after := up.snapshot(); len(after) != before {
		t.Fatalf("a resume without confirmations ran %+v", after[before:])
	}

	// The user confirms the interrupted steps: each runs once more, on b,
	// and the steps behind them run; nothing else is called again.
	confirmed := map[key]bool{}
	for id, steps := range confirm {
		callTool(t, survivor, "resume_task", map[string]any{"taskId": id, "confirm": steps})
		for _, s := range steps {
			confirmed[key{nameOf[id], s}] = true
		}
	}
	final := waitReplicaTasks(t, survivor, taskIDs, 20*time.Second)
	for i, id := range taskIDs {
		if task := final[id]; task.Status != agentsmcp.TaskSucceeded {
			t.Errorf("t%02d is %s after the confirmations: %s", i, task.Status, task.Error)
		}
	}
	for _, c := range up.snapshot()[len(calls):] {
		k := key{c.Task, c.Step}
		switch {
		case c.Replica != "b":
			t.Errorf("%s/%s was called by %s after the confirmations", c.Task, c.Step, c.Replica)
		case confirmed[k]:
			delete(confirmed, k) // its one run after the confirmation
			byStep[k] = append(byStep[k], c)
		case len(byStep[k]) > 0:
			t.Errorf("%s/%s ran again after the confirmations, unconfirmed: before %+v, now %+v", c.Task, c.Step, byStep[k], c)
		default:
			byStep[k] = append(byStep[k], c) // behind a confirmed step: its first run
		}
	}
	for k := range confirmed {
		t.Errorf("%s/%s was confirmed but did not run again", k.task, k.step)
	}
	for i, plan := range book.plans {
		for _, s := range plan.Steps {
			if k := (key{fmt.Sprintf("t%02d", i), s.ID}); len(byStep[k]) == 0 {
				t.Errorf("%s/%s succeeded without calling the upstream", k.task, k.step)
			}
		}
	}
}

// leaseRenewalFailures lists the lease renewals a replica logged as failed,
// other than those cancelled because their task ended.
func leaseRenewalFailures(p *serverProcess) string {
	var out []string
	for _, line := range strings.Split(p.logs.String(), "\n") {
		if strings.Contains(line, "renewing a task lease failed") && !strings.Contains(line, "context canceled") {
			out = append(out, line)
		}
	}
	if len(out) == 0 {
		return "none"
	}
	return fmt.Sprintf("%d, the first: %s", len(out), out[0])
}

// startReplicaFerretDB starts a FerretDB process for the test, as the
// memory/mongo tests do, and returns its URI.
func startReplicaFerretDB(t *testing.T) string {
	t.Helper()
	return ferrettest.StartT(t)
}

// workCall is one call the upstream received.
type workCall struct {
	Task, Step, Tool, Replica string
	Start                     time.Time
	// InFlightAtKill: the call had not answered when its replica was
	// killed, so the replica cannot have stored its outcome.
	InFlightAtKill bool
	done           bool
}

// workUpstream is a real MCP server over streamable HTTP with two tools
// that have effects: work (not idempotent) and probe (idempotent). It
// records every call by its arguments and the calling replica (the
// X-Replica header). Once holding, the calls of the doomed replica do not
// answer until it is killed, so that the kill lands while they are in
// flight.
type workUpstream struct {
	url    string
	doomed string

	mu       sync.Mutex
	calls    []*workCall
	holding  bool
	started  bool // every task has been started
	died     bool
	trigger  chan struct{} // closed when the doomed replica may be killed
	fired    bool
	released chan struct{} // closed when the doomed replica has died
}

func startWorkUpstream(t *testing.T, doomed string) *workUpstream {
	t.Helper()
	up := &workUpstream{doomed: doomed, trigger: make(chan struct{}), released: make(chan struct{})}
	srv := mcp.NewServer(&mcp.Implementation{Name: "replicas-upstream", Version: "1"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "work", Description: "Does one step of work that changes something; running it twice does it twice.",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: false, IdempotentHint: false, DestructiveHint: new(false)}}, up.handler("work", 300*time.Millisecond))
	mcp.AddTool(srv, &mcp.Tool{Name: "probe", Description: "Checks something; running it twice has the effect of running it once.",
		Annotations: &mcp.ToolAnnotations{IdempotentHint: true, DestructiveHint: new(false)}}, up.handler("probe", 500*time.Millisecond))
	ts := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	t.Cleanup(ts.Close)
	t.Cleanup(up.release) // before ts.Close: held calls must end
	up.url = ts.URL
	return up
}

type workArgs struct {
	Task string `json:"task" jsonschema:"the task this call belongs to"`
	Step string `json:"step" jsonschema:"the step this call belongs to"`
}

func (up *workUpstream) handler(tool string, takes time.Duration) mcp.ToolHandlerFor[workArgs, any] {
	return func(ctx context.Context, req *mcp.CallToolRequest, args workArgs) (*mcp.CallToolResult, any, error) {
		c := &workCall{Task: args.Task, Step: args.Step, Tool: tool, Replica: req.Extra.Header.Get("X-Replica"), Start: time.Now()}
		up.mu.Lock()
		// Sent before the kill, received after it: its answer finds nobody.
		c.InFlightAtKill = c.Replica == up.doomed && up.died
		up.calls = append(up.calls, c)
		up.checkTrigger()
		up.mu.Unlock()

		select {
		case <-time.After(takes):
		case <-ctx.Done():
		}
		up.mu.Lock()
		hold := c.Replica == up.doomed && up.holding
		up.mu.Unlock()
		if hold {
			select {
			case <-up.released:
			case <-ctx.Done():
			case <-time.After(30 * time.Second):
			}
		}
		up.mu.Lock()
		c.done = true
		up.mu.Unlock()
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: tool + " done: " + args.Task + "/" + args.Step}}}, nil, nil
	}
}

// checkTrigger fires the kill once every task has started and the doomed
// replica has a work and a probe call in flight; up.mu is held.
func (up *workUpstream) checkTrigger() {
	if up.fired || !up.started || up.died {
		return
	}
	var work, probe bool
	for _, c := range up.calls {
		if c.Replica == up.doomed && !c.done {
			work = work || c.Tool == "work"
			probe = probe || c.Tool == "probe"
		}
	}
	if work && probe {
		up.fired = true
		close(up.trigger)
	}
}

func (up *workUpstream) holdDoomed() {
	up.mu.Lock()
	up.holding = true
	up.mu.Unlock()
}

func (up *workUpstream) allStarted() {
	up.mu.Lock()
	up.started = true
	up.checkTrigger()
	up.mu.Unlock()
}

// killed records that the doomed replica has died: its calls still running,
// and any that it sent but that arrive only now, are interrupted ones.
func (up *workUpstream) killed() {
	up.mu.Lock()
	for _, c := range up.calls {
		if c.Replica == up.doomed && !c.done {
			c.InFlightAtKill = true
		}
	}
	up.died = true
	up.mu.Unlock()
	up.release()
}

func (up *workUpstream) release() {
	up.mu.Lock()
	defer up.mu.Unlock()
	select {
	case <-up.released:
	default:
		close(up.released)
	}
}

// snapshot returns the calls so far in the order they arrived.
func (up *workUpstream) snapshot() []workCall {
	up.mu.Lock()
	defer up.mu.Unlock()
	out := make([]workCall, len(up.calls))
	for i, c := range up.calls {
		out[i] = *c
	}
	return out
}

// planBook is the test client's "model": asked through MCP sampling for the
// plan of task tNN, it answers with that task's plan. Two root steps (work
// and probe) run in parallel, then a chain and fan of work steps; 4 to 6
// steps in all.
type planBook struct {
	plans   []agentsmcp.Plan
	answers []string
}

var planRequestRE = regexp.MustCompile(`^Request: replica test (t\d\d)\b`)

func newPlanBook(n int) *planBook {
	b := &planBook{}
	for i := range n {
		name := fmt.Sprintf("t%02d", i)
		step := func(id, tool string, deps ...string) agentsmcp.PlanStep {
			args, _ := json.Marshal(workArgs{Task: name, Step: id})
			return agentsmcp.PlanStep{ID: id, Tool: tool, Arguments: args, DependsOn: deps}
		}
		steps := []agentsmcp.PlanStep{step("s1", "up__work"), step("s2", "up__probe"), step("s3", "up__work", "s1", "s2"), step("s4", "up__work", "s3")}
		switch i % 3 {
		case 1:
			steps = append(steps, step("s5", "up__work", "s3"))
		case 2:
			steps = append(steps, step("s5", "up__work", "s3"), step("s6", "up__work", "s4", "s5"))
		}
		var list []any
		for _, s := range steps {
			list = append(list, map[string]any{"id": s.ID, "tool": s.Tool, "arguments": s.Arguments, "dependsOn": s.DependsOn})
		}
		text, _ := json.Marshal(map[string]any{"goal": "replica test", "steps": list})
		b.plans = append(b.plans, agentsmcp.Plan{Steps: steps})
		b.answers = append(b.answers, string(text))
	}
	return b
}

func (b *planBook) request(i int) string { return fmt.Sprintf("replica test t%02d: do the work", i) }

func (b *planBook) sample(_ context.Context, req *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
	for _, m := range req.Params.Messages {
		text, ok := m.Content.(*mcp.TextContent)
		if !ok {
			continue
		}
		if match := planRequestRE.FindStringSubmatch(text.Text); match != nil {
			i, _ := strconv.Atoi(strings.TrimPrefix(match[1], "t"))
			if i < len(b.answers) {
				return &mcp.CreateMessageResult{Model: "plan-book", Role: "assistant", Content: &mcp.TextContent{Text: b.answers[i]}}, nil
			}
		}
	}
	return nil, fmt.Errorf("the prompt names no task of the plan book")
}

// connect opens a stateful session (sampling needs one) that answers
// sampling requests from the plan book.
func (b *planBook) connect(t *testing.T, p *serverProcess) *mcp.ClientSession {
	t.Helper()
	client := mcp.NewClient(&mcp.Implementation{Name: "replicas-test", Version: "1"}, &mcp.ClientOptions{CreateMessageHandler: b.sample})
	cs, err := client.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: p.base + "/mcp"}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatalf("connect: %v\n%s", err, p.logs.String())
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func decodeReplicaResult(t *testing.T, out map[string]any, into any) {
	t.Helper()
	b, err := json.Marshal(out)
	if err == nil {
		err = json.Unmarshal(b, into)
	}
	if err != nil {
		t.Fatalf("decode %v: %v", out, err)
	}
}

func getReplicaTask(t *testing.T, cs *mcp.ClientSession, id string) *agentsmcp.Task {
	t.Helper()
	var res struct{ Task *agentsmcp.Task }
	decodeReplicaResult(t, callTool(t, cs, "get_task", map[string]any{"taskId": id}), &res)
	if res.Task == nil || res.Task.ID != id {
		t.Fatalf("get_task %s: %+v", id, res.Task)
	}
	return res.Task
}

// waitReplicaTasks polls until every task has ended or paused.
func waitReplicaTasks(t *testing.T, cs *mcp.ClientSession, ids []string, within time.Duration) map[string]*agentsmcp.Task {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		tasks := map[string]*agentsmcp.Task{}
		var open []string
		for _, id := range ids {
			task := getReplicaTask(t, cs, id)
			tasks[id] = task
			if !task.Status.Terminal() && task.Status != agentsmcp.TaskPaused {
				open = append(open, fmt.Sprintf("%s (%s, lease %q)", id, task.Status, task.Lease.Owner))
			}
		}
		if len(open) == 0 {
			return tasks
		}
		if time.Now().After(deadline) {
			t.Fatalf("tasks still open after %v: %s", within, strings.Join(open, ", "))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func hasStepEvent(task *agentsmcp.Task, typ, step string) bool {
	for _, e := range task.History {
		if e.Type == typ && e.StepID == step {
			return true
		}
	}
	return false
}

func eventsOf(task *agentsmcp.Task, typ string) []agentsmcp.TaskEvent {
	var out []agentsmcp.TaskEvent
	for _, e := range task.History {
		if e.Type == typ {
			out = append(out, e)
		}
	}
	return out
}
