package secrets_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	_ "modernc.org/sqlite"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/internal/redact"
	"github.com/agents-mcp/agents-mcp/internal/view"
	"github.com/agents-mcp/agents-mcp/memory/secrets"
	"github.com/agents-mcp/agents-mcp/memory/sqlite"
)

// The secrets of the tests: an API key under a secret name, a password in
// a name=value pair under an ordinary name, and a provider key in a plan's
// argument.
const (
	apiKey     = "k9f3Qz7LmP2xR8vT"
	password   = "hunter2-horse-battery"
	providerSK = "sk-proj-Abc123Def456Ghi789Jkl012"
)

var secretsOfTests = []string{apiKey, password, providerSK}

func newKey(t *testing.T) []byte {
	key := make([]byte, secrets.KeySize)
	if _, err := rand.Read(key); err != nil {
		t.Fatal(err)
	}
	return key
}

// open returns a real SQLite store in a fresh file, and the file's path.
func open(t *testing.T) (*sqlite.DB, string) {
	path := filepath.Join(t.TempDir(), "agents.db")
	db, err := sqlite.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db, path
}

// rawRows returns every text of the tasks, plans, thoughts and insights tables as
// stored, read with a connection of its own.
func rawRows(t *testing.T, path string) string {
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var all strings.Builder
	for _, q := range []string{
		"SELECT request || inputs || steps || history FROM tasks",
		"SELECT state FROM task_steps", // the step states and history since migration 0013
		"SELECT events FROM task_events",
		"SELECT request || goal || steps || inputs FROM plans",
		"SELECT request || sub_goals || reasoning || approaches || constraints || assumptions || uncertainties || recommended_tools FROM thoughts",
		"SELECT text FROM insights",
	} {
		rows, err := db.Query(q)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var s string
			if err := rows.Scan(&s); err != nil {
				t.Fatal(err)
			}
			all.WriteString(s)
		}
		rows.Close()
	}
	return all.String()
}

func leaks(t *testing.T, what, stored string) {
	t.Helper()
	for _, s := range secretsOfTests {
		if strings.Contains(stored, s) {
			t.Errorf("%s holds the secret %q in clear", what, s)
		}
	}
}

func sampleTask() *agentsmcp.Task {
	return &agentsmcp.Task{
		Request:   "deploy with password=" + password,
		Principal: "key:aaaaaaaaaaaa",
		Inputs:    json.RawMessage(`{"api_key":"` + apiKey + `","note":"use password=` + password + `","city":"Paris","retries":3}`),
		Steps:     []agentsmcp.StepState{{StepID: "call", Status: agentsmcp.StepPending}},
	}
}

func samplePlan() *agentsmcp.Plan {
	return &agentsmcp.Plan{
		Request: "call the API with " + providerSK,
		Steps: []agentsmcp.PlanStep{{ID: "call", Tool: "api__call",
			Arguments:   json.RawMessage(`{"auth":{"token":"` + providerSK + `"},"q":"weather","key":"{{inputs.api_key}}"}`),
			Description: "call with " + providerSK}},
	}
}

func TestSealedAtRestAndOpenedForTheExecutor(t *testing.T) {
	ctx := context.Background()
	db, path := open(t)
	sealer, err := secrets.New(newKey(t))
	if err != nil {
		t.Fatal(err)
	}
	tasks := &secrets.Tasks{TaskService: db, Sealer: sealer}
	plans := &secrets.Plans{PlanService: db, Sealer: sealer}
	thoughts := &secrets.Thoughts{ThoughtService: db}

	task := sampleTask()
	given := bytes.Clone(task.Inputs)
	if err := tasks.CreateTask(ctx, task); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(task.Inputs, given) {
		t.Errorf("CreateTask changed the caller's inputs: %s", task.Inputs)
	}
	plan := samplePlan()
	args := bytes.Clone(plan.Steps[0].Arguments)
	if err := plans.CreatePlan(ctx, plan); err != nil {
		t.Fatal(err)
	}
	th := &agentsmcp.Thought{Request: "use " + providerSK, Reasoning: "the key " + providerSK + " works", SubGoals: []string{"log in with password=" + password}}
	if err := thoughts.CreateThought(ctx, th); err != nil {
		t.Fatal(err)
	}
	task.Status = agentsmcp.TaskPaused
	if err := tasks.UpdateTask(ctx, task); err != nil {
		t.Fatal(err)
	}

	stored := rawRows(t, path)
	leaks(t, "the SQLite rows", stored)
	if !strings.Contains(stored, "Paris") || !strings.Contains(stored, "weather") {
		t.Errorf("ordinary values were sealed too: %s", stored)
	}
	if b, err := os.ReadFile(path); err == nil {
		leaks(t, "the database file", string(b))
	}

	// The executor reads them back in clear, on any replica with the key.
	got, err := tasks.FindTaskByID(ctx, task.ID)
	if err != nil {
		t.Fatal(err)
	}
	var in, want map[string]any
	_ = json.Unmarshal(got.Inputs, &in)
	_ = json.Unmarshal(given, &want)
	if !jsonEqual(in, want) {
		t.Errorf("inputs read back %s, want %s", got.Inputs, given)
	}
	gotPlan, err := plans.FindPlanByID(ctx, plan.ID)
	if err != nil {
		t.Fatal(err)
	}
	var a, wa any
	_ = json.Unmarshal(gotPlan.Steps[0].Arguments, &a)
	_ = json.Unmarshal(args, &wa)
	if !jsonEqual(a, wa) {
		t.Errorf("arguments read back %s, want %s", gotPlan.Steps[0].Arguments, args)
	}
	leased, err := tasks.AcquireTaskLease(ctx, task.ID, "replica-2", time.Minute)
	if err != nil || !strings.Contains(string(leased.Inputs), apiKey) {
		t.Errorf("AcquireTaskLease: %v, inputs %s", err, leased.Inputs)
	}

	// The views never show them.
	leaks(t, "the task's view", mustJSON(t, view.Task(got)))
	leaks(t, "the plan's view", mustJSON(t, view.Plan(gotPlan)))
}

func TestWithoutAKeyPausedTasksAskAgain(t *testing.T) {
	ctx := context.Background()
	db, path := open(t)
	tasks := &secrets.Tasks{TaskService: db, Sealer: secrets.Redacting()}
	task := sampleTask()
	if err := tasks.CreateTask(ctx, task); err != nil {
		t.Fatal(err)
	}
	leaks(t, "the SQLite rows", rawRows(t, path))
	got, err := tasks.FindTaskByID(ctx, task.ID)
	if err != nil {
		t.Fatal(err)
	}
	var in map[string]any
	if err := json.Unmarshal(got.Inputs, &in); err != nil {
		t.Fatal(err)
	}
	if _, ok := in["api_key"]; ok {
		t.Errorf("a redacted input is still there, as a value: %s", got.Inputs)
	}
	if in["city"] != "Paris" {
		t.Errorf("an ordinary input was lost: %s", got.Inputs)
	}
}

func TestAnotherKeyCannotOpen(t *testing.T) {
	ctx := context.Background()
	db, _ := open(t)
	one, _ := secrets.New(newKey(t))
	two, _ := secrets.New(newKey(t))
	task := sampleTask()
	if err := (&secrets.Tasks{TaskService: db, Sealer: one}).CreateTask(ctx, task); err != nil {
		t.Fatal(err)
	}
	got, err := (&secrets.Tasks{TaskService: db, Sealer: two}).FindTaskByID(ctx, task.ID)
	if err != nil {
		t.Fatal(err)
	}
	leaks(t, "inputs opened with another key", string(got.Inputs))
	if strings.Contains(string(got.Inputs), "sealed") {
		t.Errorf("a sealed value reached the executor: %s", got.Inputs)
	}
}

func TestNewRejectsABadKey(t *testing.T) {
	if _, err := secrets.New(make([]byte, 16)); agentsmcp.ErrorCode(err) != agentsmcp.EINVALID {
		t.Errorf("a 16-byte key: %v, want EINVALID", err)
	}
}

func mustJSON(t *testing.T, v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func jsonEqual(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return bytes.Equal(x, y)
}

// TestStepOutputsAreSealedAndErrorsRedacted: what a step returned (a token
// a tool handed back) is sealed at rest and read back whole for the next
// step; errors and history, which nothing runs from, are stored redacted.
func TestStepOutputsAreSealedAndErrorsRedacted(t *testing.T) {
	for _, perStep := range []bool{false, true} {
		t.Run(fmt.Sprint("per-step=", perStep), func(t *testing.T) { testStepOutputsSealed(t, perStep) })
	}
}

// testStepOutputsSealed writes the steps with UpdateTask, or with
// UpdateTaskSteps (perStep) as the executor does.
func testStepOutputsSealed(t *testing.T, perStep bool) {
	ctx := context.Background()
	db, path := open(t)
	sealer, err := secrets.New(newKey(t))
	if err != nil {
		t.Fatal(err)
	}
	tasks := &secrets.Tasks{TaskService: db, Sealer: sealer}
	task := sampleTask()
	if err := tasks.CreateTask(ctx, task); err != nil {
		t.Fatal(err)
	}
	output := json.RawMessage(`{"content":[{"type":"text","text":"your token is ` + providerSK + `"}],"session":{"access_token":"` + apiKey + `"},"rows":7}`)
	task.Steps[0].Status, task.Steps[0].Output = agentsmcp.StepSucceeded, output
	task.Steps = append(task.Steps, agentsmcp.StepState{StepID: "login", Status: agentsmcp.StepFailed, Error: "login refused for password=" + password})
	// A repaired step's arguments carry what the failed call had: sealed
	// like a plan's arguments, read back whole to run it.
	repaired := json.RawMessage(`{"api_key":"` + apiKey + `","user":"ada"}`)
	task.Steps = append(task.Steps, agentsmcp.StepState{StepID: "sign-in", Status: agentsmcp.StepPending, RepairedTool: "auth__sign_in", RepairedArguments: repaired})
	task.Error = "step login failed: password=" + password
	task.History = append(task.History, agentsmcp.TaskEvent{At: time.Now(), Type: "step_failed", StepID: "login", Message: "password=" + password + " was refused"})
	write := tasks.UpdateTask
	if perStep {
		// The new steps are written whole, first; then the change alone.
		if err := tasks.UpdateTask(ctx, task); err != nil {
			t.Fatal(err)
		}
		task.Steps[0].Attempts = 2
		task.Steps[1].Error += " again"
		task.History = append(task.History, agentsmcp.TaskEvent{At: time.Now(), Type: "step_failed", StepID: "login", Message: "password=" + password + " was refused again"})
		write = func(ctx context.Context, t *agentsmcp.Task) error {
			return tasks.UpdateTaskSteps(ctx, t, agentsmcp.TaskChange{Steps: []int{0, 1}, Events: 1})
		}
	}
	if err := write(ctx, task); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(task.Steps[0].Output), providerSK) {
		t.Errorf("UpdateTask changed the caller's output: %s", task.Steps[0].Output)
	}
	stored := rawRows(t, path)
	leaks(t, "the SQLite rows", stored)
	if !strings.Contains(stored, `"rows":7`) && !strings.Contains(stored, `\"rows\":7`) {
		t.Errorf("ordinary output values were sealed too: %s", stored)
	}
	got, err := tasks.FindTaskByID(ctx, task.ID)
	if err != nil {
		t.Fatal(err)
	}
	var out, want any
	_ = json.Unmarshal(got.Steps[0].Output, &out)
	_ = json.Unmarshal(output, &want)
	if !jsonEqual(out, want) {
		t.Errorf("output read back %s, want %s", got.Steps[0].Output, output)
	}
	_ = json.Unmarshal(got.Steps[2].RepairedArguments, &out)
	_ = json.Unmarshal(repaired, &want)
	if !jsonEqual(out, want) || !strings.Contains(stored, "ada") {
		t.Errorf("repaired arguments read back %s, want %s (with the user's name stored in clear)", got.Steps[2].RepairedArguments, repaired)
	}
	leaks(t, "the task's view", mustJSON(t, view.Task(got)))
	for _, s := range []string{got.Error, got.Steps[1].Error, got.History[len(got.History)-1].Message} {
		if strings.Contains(s, password) || !strings.Contains(s, redact.Marker) {
			t.Errorf("stored text %q: want the password redacted", s)
		}
	}
}

// TestInsightsAreStoredRedacted: an insight a caller writes with a secret
// in it is stored, and returned, without the secret; the rest of its text
// stays.
func TestInsightsAreStoredRedacted(t *testing.T) {
	db, path := open(t)
	w := &secrets.Insights{InsightService: db}
	ctx := context.Background()
	in := &agentsmcp.Insight{Text: "the staging deploy password=" + password + " rotates monthly; key " + providerSK,
		Type: agentsmcp.InsightObservation, AppliesTo: []string{"deploy"}, Confidence: 0.5, Principal: "key:aaaaaaaaaaaa"}
	if err := w.CreateInsight(ctx, in); err != nil {
		t.Fatal(err)
	}
	leaks(t, "the stored insights", rawRows(t, path))
	leaks(t, "the insight returned", in.Text)
	got, err := w.FindInsightByID(ctx, in.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Text != in.Text || !strings.Contains(got.Text, "rotates monthly") || !strings.Contains(got.Text, redact.Marker) {
		t.Errorf("stored %q, returned %q; want the text with its secrets marked redacted", got.Text, in.Text)
	}
}
