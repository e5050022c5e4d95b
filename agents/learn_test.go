package agents_test

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/agents"
	"github.com/agents-mcp/agents-mcp/internal/redact"
	"github.com/agents-mcp/agents-mcp/internal/storedform"
	"github.com/agents-mcp/agents-mcp/localtools"
	"github.com/agents-mcp/agents-mcp/memory/sqlite"
	"github.com/agents-mcp/agents-mcp/router"
	"github.com/agents-mcp/agents-mcp/router/toolsearch"
)

// Learn is an OnEnd.
var _ = agents.ExecutorOptions{OnEnd: (&agents.Learner{}).Learn}

// learnFixture is a learner over a real SQLite store, counting Written.
type learnFixture struct {
	db      *sqlite.DB
	learner *agents.Learner
	written atomic.Int32
}

func newLearnFixture(t *testing.T, catalog agentsmcp.ToolCatalog) *learnFixture {
	t.Helper()
	db, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "learn.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	f := &learnFixture{db: db}
	f.learner = &agents.Learner{Learnings: db, Patterns: db, Insights: db, Catalog: catalog, Written: func() { f.written.Add(1) }}
	return f
}

func (f *learnFixture) learn(t *testing.T, task *agentsmcp.Task, plan *agentsmcp.Plan) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	f.learner.Learn(ctx, task, plan)
}

func (f *learnFixture) learnings(t *testing.T) []*agentsmcp.Learning {
	t.Helper()
	items, _, err := f.db.FindLearnings(context.Background(), agentsmcp.LearningFilter{Limit: agentsmcp.MaxPageSize})
	if err != nil {
		t.Fatal(err)
	}
	return items
}

func (f *learnFixture) insights(t *testing.T, filter agentsmcp.InsightFilter) []*agentsmcp.Insight {
	t.Helper()
	filter.Limit = agentsmcp.MaxPageSize
	items, _, err := f.db.FindInsights(context.Background(), filter)
	if err != nil {
		t.Fatal(err)
	}
	return items
}

func (f *learnFixture) patterns(t *testing.T) []*agentsmcp.PlanPattern {
	t.Helper()
	items, _, err := f.db.FindPatterns(context.Background(), agentsmcp.PatternFilter{Limit: agentsmcp.MaxPageSize})
	if err != nil {
		t.Fatal(err)
	}
	return items
}

// learnCatalog answers Tool with a source per tool; other tools are
// unknown.
type learnCatalog map[string]string

func (c learnCatalog) Tool(_ context.Context, name string) (*agentsmcp.ToolInfo, error) {
	src, ok := c[name]
	if !ok {
		return nil, agentsmcp.Errorf(agentsmcp.ENOTFOUND, "no tool %q", name)
	}
	return &agentsmcp.ToolInfo{Name: name, Source: src, Health: agentsmcp.HealthReady}, nil
}

func (c learnCatalog) ListTools(context.Context) ([]*agentsmcp.ToolInfo, error) { return nil, nil }

func (c learnCatalog) SearchTools(context.Context, string, int) ([]*agentsmcp.ToolMatch, error) {
	return nil, nil
}

var learnT0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func learnAt(sec int) time.Time { return learnT0.Add(time.Duration(sec) * time.Second) }

func learnPlanStep(id, tool, args string, deps ...string) agentsmcp.PlanStep {
	s := agentsmcp.PlanStep{ID: id, Tool: tool, DependsOn: deps}
	if args != "" {
		s.Arguments = json.RawMessage(args)
	}
	return s
}

// learnState is a step that ran from second start to second end.
func learnState(id string, status agentsmcp.StepStatus, attempts, start, end int, errText string) agentsmcp.StepState {
	s := agentsmcp.StepState{StepID: id, Status: status, Attempts: attempts, Error: errText, EndedAt: learnAt(end)}
	if start >= 0 {
		s.StartedAt = learnAt(start)
	}
	return s
}

func learnTask(request string, status agentsmcp.TaskStatus, ended int, steps ...agentsmcp.StepState) *agentsmcp.Task {
	return &agentsmcp.Task{
		ID: agentsmcp.NewID(agentsmcp.TaskIDPrefix), PlanID: agentsmcp.NewID(agentsmcp.PlanIDPrefix),
		Request: request, Status: status, Steps: steps, CreatedAt: learnT0, EndedAt: learnAt(ended),
	}
}

func TestLearnSucceededTask(t *testing.T) {
	f := newLearnFixture(t, learnCatalog{"files__read_file": "files", "files__write_file": "files", "echo": "local"})
	plan := &agentsmcp.Plan{Request: "Copy the 3 newest reports from /data to /backup", Steps: []agentsmcp.PlanStep{
		learnPlanStep("read", "files__read_file", `{"path":"/data/a.txt"}`),
		learnPlanStep("say", "echo", `{"value":"{{steps.read.output}}"}`, "read"),
		learnPlanStep("write", "files__write_file", `{"path":"/backup/a.txt"}`, "read"),
	}}
	// "write" started before "say": execution order is not plan order.
	task := learnTask(plan.Request, agentsmcp.TaskSucceeded, 5,
		learnState("read", agentsmcp.StepSucceeded, 1, 1, 2, ""),
		learnState("say", agentsmcp.StepSucceeded, 1, 3, 4, ""),
		learnState("write", agentsmcp.StepSucceeded, 1, 2, 3, ""),
	)
	f.learn(t, task, plan)

	ls := f.learnings(t)
	if len(ls) != 1 {
		t.Fatalf("%d learnings, want 1", len(ls))
	}
	l := ls[0]
	goal := agents.GoalOf(plan.Request)
	if goal != "copy <num> newest reports <path> <path>" {
		t.Errorf("goal %q", goal)
	}
	want := agentsmcp.Learning{
		ID: l.ID, TaskID: task.ID, PlanID: task.PlanID, Query: plan.Request, Goal: goal,
		Steps:   []string{"files__read_file", "files__write_file", "echo"},
		Tools:   []string{"files__read_file", "files__write_file", "echo"},
		Sources: []string{"files"},
		Outcome: agentsmcp.OutcomeSuccess, Duration: 5 * time.Second, Retries: 0, CreatedAt: l.CreatedAt,
	}
	if !learningEqual(l, &want) {
		t.Errorf("learning\n got %+v\nwant %+v", *l, want)
	}
	pats := f.patterns(t)
	if len(pats) != 1 || pats[0].Goal != goal || !slices.Equal(pats[0].Steps, want.Steps) || pats[0].Uses != 1 || pats[0].Successes != 1 {
		t.Errorf("patterns %+v", pats)
	}
	if ins := f.insights(t, agentsmcp.InsightFilter{}); len(ins) != 0 {
		t.Errorf("insights from a clean success: %+v", ins)
	}
	if n := f.written.Load(); n != 1 {
		t.Errorf("Written called %d times, want 1", n)
	}

	// The same task again: nothing more is learned, nothing written.
	f.learn(t, task, plan)
	if ls := f.learnings(t); len(ls) != 1 {
		t.Errorf("%d learnings after learning the task twice", len(ls))
	}
	if pats := f.patterns(t); len(pats) != 1 || pats[0].Uses != 1 {
		t.Errorf("pattern counted twice: %+v", pats)
	}
	if n := f.written.Load(); n != 1 {
		t.Errorf("Written called %d times, want 1", n)
	}
}

// A task whose step was repaired ran another plan than its own: its
// learning leads to the plan only through the task, which holds the
// repair.
func TestLearnRepairedTaskRecordsNoPlan(t *testing.T) {
	f := newLearnFixture(t, learnCatalog{"files__read_file": "files", "echo": "local"})
	plan := &agentsmcp.Plan{Request: "read the report", Steps: []agentsmcp.PlanStep{
		learnPlanStep("read", "files__read_file", `{"path":"/data/a.txt"}`),
	}}
	repaired := learnState("read", agentsmcp.StepSucceeded, 2, 1, 2, "")
	repaired.RepairedTool, repaired.RepairedArguments = "echo", json.RawMessage(`{"value":"a"}`)
	task := learnTask(plan.Request, agentsmcp.TaskSucceeded, 3, repaired)
	f.learn(t, task, plan)
	if ls := f.learnings(t); len(ls) != 1 || ls[0].TaskID != task.ID || ls[0].PlanID != "" {
		t.Fatalf("learnings %+v, want one with its task and no plan", ls)
	}
}

func learningEqual(a, b *agentsmcp.Learning) bool {
	return a.ID == b.ID && a.TaskID == b.TaskID && a.PlanID == b.PlanID && a.Query == b.Query && a.Goal == b.Goal &&
		slices.Equal(a.Steps, b.Steps) && slices.Equal(a.Tools, b.Tools) && slices.Equal(a.Sources, b.Sources) &&
		a.Outcome == b.Outcome && a.Duration == b.Duration && slices.Equal(a.Errors, b.Errors) &&
		a.Retries == b.Retries && a.CreatedAt.Equal(b.CreatedAt)
}

func TestLearnUpstreamsWithoutCatalog(t *testing.T) {
	f := newLearnFixture(t, nil)
	plan := &agentsmcp.Plan{Request: "search issues", Goal: "search issues", Steps: []agentsmcp.PlanStep{
		learnPlanStep("a", "gh__search", `{"q":"x"}`), learnPlanStep("b", "echo", `{"value":1}`), learnPlanStep("c", "gh__get", `{"id":1}`),
	}}
	task := learnTask(plan.Request, agentsmcp.TaskSucceeded, 4,
		learnState("a", agentsmcp.StepSucceeded, 1, 1, 2, ""),
		learnState("b", agentsmcp.StepSucceeded, 1, 2, 3, ""),
		learnState("c", agentsmcp.StepSucceeded, 1, 3, 4, ""),
	)
	f.learn(t, task, plan)
	ls := f.learnings(t)
	if len(ls) != 1 || !slices.Equal(ls[0].Sources, []string{"gh"}) || ls[0].Goal != "search issues" {
		t.Fatalf("learnings %+v", ls)
	}
}

func TestLearnFailedStepWithEmptyArgument(t *testing.T) {
	const errText = `invalid arguments: "path" must not be empty (code 17)`
	const class = `invalid arguments: <text> must not be empty (code <num>)`
	for _, tc := range []struct {
		name     string
		args     string
		inputs   string
		withEcho bool // a step that succeeded before the failure
		outcome  agentsmcp.Outcome
		want     string
	}{
		{"literal empty, some steps succeeded", `{"path":"","recursive":true}`, "", true, agentsmcp.OutcomePartial,
			`files__read_file fails with "` + class + `" when argument path is empty`},
		{"literal null, nothing succeeded", `{"recursive":true,"path":null}`, "", false, agentsmcp.OutcomeFailure,
			`files__read_file fails with "` + class + `" when argument path is empty`},
		{"input supplied empty", `{"path":"{{inputs.dir}}"}`, `{"dir":""}`, false, agentsmcp.OutcomeFailure,
			`files__read_file fails with "` + class + `" when argument path is empty`},
		{"input missing, nested", `{"options":{"root":"{{inputs.dir}}"},"path":"a"}`, `{}`, false, agentsmcp.OutcomeFailure,
			`files__read_file fails with "` + class + `" when argument options.root is empty`},
		{"no empty argument", `{"path":"/etc/x"}`, "", false, agentsmcp.OutcomeFailure,
			`files__read_file failed with "` + class + `"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newLearnFixture(t, nil)
			steps := []agentsmcp.PlanStep{learnPlanStep("read", "files__read_file", tc.args)}
			states := []agentsmcp.StepState{learnState("read", agentsmcp.StepFailed, 1, 2, 3, errText)}
			if tc.withEcho {
				steps = append(steps, learnPlanStep("hello", "echo", `{"value":1}`))
				states = append(states, learnState("hello", agentsmcp.StepSucceeded, 1, 1, 2, ""))
			}
			plan := &agentsmcp.Plan{Request: "read the file", Steps: steps}
			task := learnTask(plan.Request, agentsmcp.TaskFailed, 3, states...)
			if tc.inputs != "" {
				task.Inputs = json.RawMessage(tc.inputs)
			}
			f.learn(t, task, plan)

			ls := f.learnings(t)
			if len(ls) != 1 || ls[0].Outcome != tc.outcome || !slices.Equal(ls[0].Errors, []string{errText}) {
				t.Fatalf("learnings %+v", ls)
			}
			ins := f.insights(t, agentsmcp.InsightFilter{})
			if len(ins) != 1 {
				t.Fatalf("insights %+v", ins)
			}
			in := ins[0]
			family := agents.FamilyOf(plan.Request)
			if in.Text != tc.want || in.Type != agentsmcp.InsightPitfall || in.Confidence != 0.6 || in.Source != "agent" ||
				!slices.Equal(in.AppliesTo, []string{"files__read_file", "family:" + family}) || !slices.Equal(in.Evidence, []string{task.ID}) {
				t.Errorf("insight %+v\nwant text %s", *in, tc.want)
			}
			pats := f.patterns(t)
			if len(pats) != 1 || pats[0].Uses != 1 || pats[0].Successes != 0 {
				t.Errorf("patterns %+v", pats)
			}
			if n := f.written.Load(); n != 1 {
				t.Errorf("Written called %d times, want 1", n)
			}
		})
	}
}

// Learnings and insights are read by everyone with memory access: a secret
// in the request or in a tool's error does not reach them.
func TestLearnKeepsSecretsOutOfSharedKnowledge(t *testing.T) {
	const secret = "hunter2-a8f0c1d9"
	f := newLearnFixture(t, nil)
	plan := &agentsmcp.Plan{Request: "log in with password=" + secret + " and read the file", Steps: []agentsmcp.PlanStep{
		learnPlanStep("read", "files__read_file", `{"path":""}`),
	}}
	task := learnTask(plan.Request, agentsmcp.TaskFailed, 3,
		learnState("read", agentsmcp.StepFailed, 1, 1, 2, "login refused for token="+secret))
	f.learn(t, task, plan)
	ls := f.learnings(t)
	ins := f.insights(t, agentsmcp.InsightFilter{})
	if len(ls) != 1 || len(ins) != 1 {
		t.Fatalf("learnings %+v, insights %+v", ls, ins)
	}
	for what, text := range map[string]string{"query": ls[0].Query, "errors": strings.Join(ls[0].Errors, "\n"), "insight": ins[0].Text} {
		if strings.Contains(text, secret) || !strings.Contains(text, redact.Marker) {
			t.Errorf("%s %q: want the secret redacted", what, text)
		}
	}
	if !strings.HasPrefix(ls[0].Query, "log in with password=") {
		t.Errorf("query %q: the rest of the request should stay", ls[0].Query)
	}
}

func TestLearnDoesNotRepeatAnInsight(t *testing.T) {
	f := newLearnFixture(t, nil)
	plan := &agentsmcp.Plan{Request: "summarise the log", Steps: []agentsmcp.PlanStep{learnPlanStep("open", "logs__open", `{"file":""}`)}}
	// Equivalent failures: the errors differ only in values.
	for i, errText := range []string{
		`open "/var/log/a.log": permission denied after 3 tries (gave up after 3 attempts)`,
		`open "/srv/b.log": permission denied after 5 tries (gave up after 2 attempts)`,
	} {
		task := learnTask(plan.Request, agentsmcp.TaskFailed, 2, learnState("open", agentsmcp.StepFailed, 3, 1, 2, errText))
		f.learn(t, task, plan)
		if n := f.written.Load(); n != int32(i+1) {
			t.Errorf("after task %d, Written called %d times", i+1, n)
		}
	}
	ins := f.insights(t, agentsmcp.InsightFilter{AppliesTo: "logs__open"})
	want := `logs__open fails with "open <text>: permission denied after <num> tries" when argument file is empty`
	if len(ins) != 1 || ins[0].Text != want {
		t.Errorf("insights %+v\nwant one: %s", ins, want)
	}
	if ls := f.learnings(t); len(ls) != 2 {
		t.Errorf("%d learnings, want 2", len(ls))
	}
	if pats := f.patterns(t); len(pats) != 1 || pats[0].Uses != 2 || pats[0].Successes != 0 {
		t.Errorf("patterns %+v", pats)
	}
}

func TestLearnRetriedStepObservation(t *testing.T) {
	f := newLearnFixture(t, nil)
	plan := &agentsmcp.Plan{Request: "ping the service", Steps: []agentsmcp.PlanStep{
		learnPlanStep("ping", "net__ping", `{"host":"a"}`), learnPlanStep("once", "echo", `{"value":1}`),
	}}
	task := learnTask(plan.Request, agentsmcp.TaskSucceeded, 9,
		learnState("ping", agentsmcp.StepSucceeded, 3, 1, 8, ""), learnState("once", agentsmcp.StepSucceeded, 1, 8, 9, ""))
	task.History = []agentsmcp.TaskEvent{
		{At: learnAt(2), Type: "step_retrying", StepID: "ping", Message: "attempt 1 failed: upstream 503 unavailable; retrying in 200ms"},
		{At: learnAt(4), Type: "step_retrying", StepID: "ping", Message: "attempt 2 failed: service temporarily unavailable, try again in 30s; retrying in 400ms"},
	}
	f.learn(t, task, plan)
	ins := f.insights(t, agentsmcp.InsightFilter{})
	want := "net__ping needed 3 attempts (transient: service temporarily unavailable, try again in <num>s)"
	if len(ins) != 1 || ins[0].Text != want || ins[0].Type != agentsmcp.InsightObservation || ins[0].Confidence != 0.4 {
		t.Fatalf("insights %+v\nwant %s", ins, want)
	}
	if ls := f.learnings(t); len(ls) != 1 || ls[0].Retries != 2 || ls[0].Outcome != agentsmcp.OutcomeSuccess {
		t.Errorf("learnings %+v", ls)
	}
}

func TestLearnCancelledTaskRecordsNoPattern(t *testing.T) {
	f := newLearnFixture(t, nil)
	plan := &agentsmcp.Plan{Request: "index everything", Steps: []agentsmcp.PlanStep{
		learnPlanStep("a", "echo", `{"value":1}`), learnPlanStep("b", "search__index", `{"all":true}`, "a"), learnPlanStep("c", "echo", `{"value":2}`, "b"),
	}}
	task := learnTask(plan.Request, agentsmcp.TaskCancelled, 6,
		learnState("a", agentsmcp.StepSucceeded, 1, 1, 2, ""),
		learnState("b", agentsmcp.StepCancelled, 1, 2, 6, "cancelled while running"),
		learnState("c", agentsmcp.StepCancelled, 0, -1, 6, "cancelled by the user"),
	)
	f.learn(t, task, plan)
	ls := f.learnings(t)
	if len(ls) != 1 || ls[0].Outcome != agentsmcp.OutcomeCancelled || !slices.Equal(ls[0].Steps, []string{"echo", "search__index"}) {
		t.Fatalf("learnings %+v", ls)
	}
	if pats := f.patterns(t); len(pats) != 0 {
		t.Errorf("a cancelled task recorded patterns %+v", pats)
	}
	if n := f.written.Load(); n != 1 {
		t.Errorf("Written called %d times, want 1", n)
	}
}

func TestLearnOutcomes(t *testing.T) {
	for _, tc := range []struct {
		name   string
		status agentsmcp.TaskStatus
		states []agentsmcp.StepStatus
		want   agentsmcp.Outcome
	}{
		{"all succeeded", agentsmcp.TaskSucceeded, []agentsmcp.StepStatus{agentsmcp.StepSucceeded, agentsmcp.StepSucceeded}, agentsmcp.OutcomeSuccess},
		{"a step rejected", agentsmcp.TaskSucceeded, []agentsmcp.StepStatus{agentsmcp.StepSucceeded, agentsmcp.StepSkipped}, agentsmcp.OutcomePartial},
		{"failed after a success", agentsmcp.TaskFailed, []agentsmcp.StepStatus{agentsmcp.StepSucceeded, agentsmcp.StepFailed}, agentsmcp.OutcomePartial},
		{"failed at once", agentsmcp.TaskFailed, []agentsmcp.StepStatus{agentsmcp.StepFailed, agentsmcp.StepSkipped}, agentsmcp.OutcomeFailure},
		{"cancelled", agentsmcp.TaskCancelled, []agentsmcp.StepStatus{agentsmcp.StepSucceeded, agentsmcp.StepCancelled}, agentsmcp.OutcomeCancelled},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newLearnFixture(t, nil)
			plan := &agentsmcp.Plan{Request: "do two things", Steps: []agentsmcp.PlanStep{learnPlanStep("a", "echo", ""), learnPlanStep("b", "echo", "")}}
			task := learnTask(plan.Request, tc.status, 3,
				learnState("a", tc.states[0], 1, 1, 2, ""), learnState("b", tc.states[1], 1, 2, 3, ""))
			f.learn(t, task, plan)
			if ls := f.learnings(t); len(ls) != 1 || ls[0].Outcome != tc.want {
				t.Errorf("learnings %+v, want outcome %s", ls, tc.want)
			}
		})
	}
}

func TestLearnIgnoresUnfinishedTasks(t *testing.T) {
	f := newLearnFixture(t, nil)
	plan := &agentsmcp.Plan{Request: "wait", Steps: []agentsmcp.PlanStep{learnPlanStep("a", "echo", "")}}
	task := learnTask(plan.Request, agentsmcp.TaskPaused, 0, agentsmcp.StepState{StepID: "a", Status: agentsmcp.StepWaitingInput})
	f.learn(t, task, plan)
	f.learner.Learn(context.Background(), nil, nil) // no panic
	if ls := f.learnings(t); len(ls) != 0 || f.written.Load() != 0 {
		t.Errorf("learned from a paused task: %+v, Written %d", ls, f.written.Load())
	}
}

func TestLearnLongPlanIsNotAPattern(t *testing.T) {
	f := newLearnFixture(t, nil)
	plan := &agentsmcp.Plan{Request: "many steps"}
	task := learnTask(plan.Request, agentsmcp.TaskSucceeded, 200)
	for i := range agentsmcp.MaxListItems + 5 {
		id := "s" + string(rune('a'+i/26)) + string(rune('a'+i%26))
		plan.Steps = append(plan.Steps, learnPlanStep(id, "echo", ""))
		task.Steps = append(task.Steps, learnState(id, agentsmcp.StepSucceeded, 1, i, i+1, ""))
	}
	f.learn(t, task, plan)
	ls := f.learnings(t)
	if len(ls) != 1 || len(ls[0].Steps) != agentsmcp.MaxListItems || !slices.Equal(ls[0].Tools, []string{"echo"}) {
		t.Fatalf("learnings %+v", ls)
	}
	if pats := f.patterns(t); len(pats) != 0 {
		t.Errorf("patterns %+v", pats)
	}
}

func TestGoalOf(t *testing.T) {
	same := [][]string{
		{
			"find the 3 largest files under /data",
			"find the 5 largest files under /srv",
			"Please find the 10 largest files in ~/photos.",
			"Find the 3 largest files under C:\\Users\\ada",
		},
		{
			`summarise "quarterly report" for me`,
			"summarise 'annual review' for me",
			"Summarise “board minutes”",
		},
		{
			"fetch https://example.com/a.json and save it to /tmp/a.json",
			"Fetch http://other.org/feed then save it into ./feed.xml",
		},
		{
			"convert report.csv to json",
			"convert sales-2024.csv to JSON",
			"convert data/q3.csv to json",
		},
		{
			"email bob@example.com the report of 2024-01-05",
			"email ann@corp.io the report of 12/03/2025",
		},
		{
			"what's the weather in paris",
			"whats the weather in paris?",
		},
	}
	for _, group := range same {
		want := agents.GoalOf(group[0])
		for _, r := range group[1:] {
			if got := agents.GoalOf(r); got != want {
				t.Errorf("GoalOf(%q) = %q; GoalOf(%q) = %q: want the same goal", r, got, group[0], want)
			}
		}
	}
	for req, want := range map[string]string{
		"find the 3 largest files under /data": "find <num> largest files <path>",
		`summarise "quarterly report" for me`:  "summarise <text>",
		"convert report.csv to json":           "convert <path> json",
		"the":                                  "the",
		"":                                     "",
	} {
		if got := agents.GoalOf(req); got != want {
			t.Errorf("GoalOf(%q) = %q, want %q", req, got, want)
		}
	}
	different := [][2]string{
		{"find the 3 largest files under /data", "find the 3 smallest files under /data"},
		{"delete /tmp/x", "list /tmp/x"},
		{"convert csv to json", "convert json to csv"},
		{"list files with errors", "list files without errors"},
		{"turn the lights on", "turn the lights off"},
		{"read report.csv", `read "report"`},
	}
	for _, d := range different {
		if a, b := agents.GoalOf(d[0]), agents.GoalOf(d[1]); a == b {
			t.Errorf("GoalOf(%q) = GoalOf(%q) = %q: want different goals", d[0], d[1], a)
		}
	}
}

func TestGoalOfIsBounded(t *testing.T) {
	long := make([]byte, 3*agentsmcp.MaxQueryTextBytes)
	for i := range long {
		long[i] = 'a' + byte(i%7)
		if i%5 == 4 {
			long[i] = ' '
		}
	}
	if g := agents.GoalOf(string(long)); len(g) > agentsmcp.MaxQueryTextBytes || g == "" {
		t.Errorf("goal of %d bytes", len(g))
	}
}

func TestLearnErrorClass(t *testing.T) {
	for in, want := range map[string]string{
		"":                       "error",
		"  \n second line":       "error",
		"boom\nstack trace":      "boom",
		`file "a.txt" not found`: "file <text> not found",
		"GET https://api.x.io/v1/items?id=3: 502":  "GET <url> <num>",
		"open /var/log/app.log: permission denied": "open <path>: permission denied",
		"task tsk_01HZX3Q4R5S6T7V8W9 is locked":    "task <id> is locked",
		"it's utf8 and mp3, 4 times":               "it's utf8 and mp3, <num> times",
	} {
		if got := agents.ErrorClass(in); got != want {
			t.Errorf("ErrorClass(%q) = %q, want %q", in, got, want)
		}
	}
	long := agents.ErrorClass(strings.Repeat("word ", 100))
	if len(long) > agents.MaxErrorClassBytes {
		t.Errorf("class of %d bytes", len(long))
	}
}

// TestLearnFromTheExecutor runs a real task through the executor with the
// learner as OnEnd: the retry observation is read from the history the
// runner writes.
func TestLearnFromTheExecutor(t *testing.T) {
	f := newLearnFixture(t, nil)
	local := localtools.New()
	var mu sync.Mutex
	failures := 1
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(localtools.Add(local, &mcp.Tool{Name: "learn_flaky", Description: "fails once, transiently"},
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, map[string]any, error) {
			mu.Lock()
			defer mu.Unlock()
			if failures > 0 {
				failures--
				return nil, nil, errors.New("service temporarily unavailable, try again")
			}
			return nil, map[string]any{"ok": true}, nil
		}))
	must(localtools.Add(local, &mcp.Tool{Name: "learn_broken", Description: "fails on an empty path"},
		func(_ context.Context, _ *mcp.CallToolRequest, in struct {
			Path string `json:"path"`
		}) (*mcp.CallToolResult, map[string]any, error) {
			return nil, nil, errors.New("bad argument: path is empty")
		}))
	r := router.New(router.Options{Version: "test"})
	must(r.AddProvider(context.Background(), local))
	ex := agents.NewExecutor(agents.ExecutorOptions{
		Tasks: f.db, Plans: f.db, Tools: r, Catalog: toolsearch.NewCatalog(r, nil, nil), OnEnd: f.learner.Learn,
		Retry: agentsmcp.RetryPolicy{MaxAttempts: 3, InitialBackoff: time.Millisecond, MaxBackoff: 5 * time.Millisecond},
	})
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = ex.Close(ctx)
	})
	plan := &agentsmcp.Plan{Request: "check the 2 services", Steps: []agentsmcp.PlanStep{
		learnPlanStep("warm", "learn_flaky", `{}`),
		learnPlanStep("check", "learn_broken", `{"path":""}`, "warm"),
	}}
	must(f.db.CreatePlan(context.Background(), plan))
	task, err := ex.Start(context.Background(), plan, nil, nil, nil)
	must(err)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	task, err = ex.Wait(ctx, task.ID)
	must(err)
	if task.Status != agentsmcp.TaskFailed {
		t.Fatalf("task %s: %+v", task.Status, task.Steps)
	}

	ls := f.learnings(t)
	if len(ls) != 1 || ls[0].TaskID != task.ID || ls[0].Outcome != agentsmcp.OutcomePartial || ls[0].Retries != 1 ||
		!slices.Equal(ls[0].Steps, []string{"learn_flaky", "learn_broken"}) || len(ls[0].Sources) != 0 {
		t.Errorf("learnings %+v", ls)
	}
	texts := map[string]bool{}
	for _, in := range f.insights(t, agentsmcp.InsightFilter{}) {
		texts[in.Text] = true
	}
	for _, want := range []string{
		`learn_flaky needed 2 attempts (transient: service temporarily unavailable, try again)`,
		`learn_broken fails with "bad argument: path is empty" when argument path is empty`,
	} {
		if !texts[want] {
			t.Errorf("no insight %q among %v", want, texts)
		}
	}
	if n := f.written.Load(); n != 1 {
		t.Errorf("Written called %d times, want 1", n)
	}
}

// What a task teaches belongs to the principal that started it: its
// learning, its plan pattern and its insights. Another principal's same
// failure is its own insight, not hidden as a repeat of the first's.
func TestLearnWritesAsThePrincipalOfTheTask(t *testing.T) {
	f := newLearnFixture(t, nil)
	local := localtools.New()
	if err := localtools.Add(local, &mcp.Tool{Name: "learn_vault", Description: "fails on an empty path"},
		func(_ context.Context, _ *mcp.CallToolRequest, in struct {
			Path string `json:"path"`
		}) (*mcp.CallToolResult, map[string]any, error) {
			return nil, nil, errors.New("bad argument: path is empty")
		}); err != nil {
		t.Fatal(err)
	}
	r := router.New(router.Options{Version: "test"})
	if err := r.AddProvider(context.Background(), local); err != nil {
		t.Fatal(err)
	}
	ex := agents.NewExecutor(agents.ExecutorOptions{Tasks: f.db, Plans: f.db, Tools: r, OnEnd: f.learner.Learn})
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = ex.Close(ctx)
	})
	plan := &agentsmcp.Plan{Request: "read the vault", Steps: []agentsmcp.PlanStep{learnPlanStep("read", "learn_vault", `{"path":""}`)}}
	if err := f.db.CreatePlan(context.Background(), plan); err != nil {
		t.Fatal(err)
	}
	run := func(p *agentsmcp.Principal) {
		t.Helper()
		ctx := agentsmcp.WithPrincipal(context.Background(), p)
		task, err := ex.Start(ctx, plan, nil, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		wctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		if task, err = ex.Wait(wctx, task.ID); err != nil || task.Status != agentsmcp.TaskFailed {
			t.Fatalf("task %+v: %v", task, err)
		}
	}
	alice := &agentsmcp.Principal{ID: "key:aaaaaaaaaaaa"}
	bob := &agentsmcp.Principal{ID: "jwt:bob"}
	run(alice)
	run(bob)
	for _, p := range []*agentsmcp.Principal{alice, bob} {
		ls, _, err := f.db.FindLearnings(context.Background(), agentsmcp.LearningFilter{Principal: p.ID})
		if err != nil || len(ls) != 1 {
			t.Errorf("learnings of %s: %v, %v; want one", p.ID, ls, err)
		}
		ps, _, err := f.db.FindPatterns(context.Background(), agentsmcp.PatternFilter{Principal: p.ID})
		if err != nil || len(ps) != 1 || ps[0].Uses != 1 || ps[0].ID != storedform.PatternID(p.ID, ps[0].Goal, []string{"learn_vault"}) {
			t.Errorf("patterns of %s: %+v, %v; want one use of its own", p.ID, ps, err)
		}
		if ins := f.insights(t, agentsmcp.InsightFilter{Principal: p.ID}); len(ins) != 1 {
			t.Errorf("insights of %s: %+v; want its own pitfall", p.ID, ins)
		}
	}
	if ls := f.learnings(t); len(ls) != 2 {
		t.Errorf("%d learnings in all, want 2", len(ls))
	}
}

// The same failure in two task families is a pitfall of each: the second
// family's plans must see it too.
func TestLearnRepeatsAnInsightInAnotherFamily(t *testing.T) {
	f := newLearnFixture(t, nil)
	const errText = "service unavailable (503) (gave up after 2 attempts)"
	for _, request := range []string{"What is the weather in Paris today?", "What is the weather in Lima today?", "Show the forecast for Oslo"} {
		plan := &agentsmcp.Plan{Request: request, Steps: []agentsmcp.PlanStep{learnPlanStep("get", "weather__now", `{"city":"x"}`)}}
		f.learn(t, learnTask(request, agentsmcp.TaskFailed, 2, learnState("get", agentsmcp.StepFailed, 2, 1, 2, errText)), plan)
	}
	var tags []string
	for _, in := range f.insights(t, agentsmcp.InsightFilter{AppliesTo: "weather__now"}) {
		tags = append(tags, in.AppliesTo[1])
	}
	slices.Sort(tags)
	if want := []string{"family:show forecast <name>", "family:weather <name> <date>"}; !slices.Equal(tags, want) {
		t.Errorf("pitfalls tagged %q, want one per family: %q", tags, want)
	}
}
