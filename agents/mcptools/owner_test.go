package mcptools_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	_ "modernc.org/sqlite"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/agents"
	"github.com/agents-mcp/agents-mcp/agents/mcptools"
	"github.com/agents-mcp/agents-mcp/internal/agentstest"
	"github.com/agents-mcp/agents-mcp/localtools"
	"github.com/agents-mcp/agents-mcp/memory/secrets"
	"github.com/agents-mcp/agents-mcp/memory/sqlite"
	"github.com/agents-mcp/agents-mcp/router"
	"github.com/agents-mcp/agents-mcp/router/toolsearch"
)

// These tests attack the agents' MCP tools as another principal would
// (docs/security.md, section 2): tasks, plans and thoughts belong to their creator,
// the steps of a task run in its name and within its allowlist, and its
// secrets are neither stored in clear nor shown.

var (
	alice = &agentsmcp.Principal{ID: "key:aaaaaaaaaaaa", Scopes: []string{agentsmcp.ScopeMCP}}
	bob   = &agentsmcp.Principal{ID: "key:bbbbbbbbbbbb", Scopes: []string{agentsmcp.ScopeMCP}}
	admin = &agentsmcp.Principal{ID: "key:cccccccccccc", Scopes: []string{agentsmcp.ScopeMCP, agentsmcp.ScopeAdminRead, agentsmcp.ScopeAdminWrite}}
	// auditor may see everyone's tasks, but not change them.
	auditor = &agentsmcp.Principal{ID: "key:dddddddddddd", Scopes: []string{agentsmcp.ScopeMCP, agentsmcp.ScopeAdminRead}}
)

const (
	aliceAPIKey   = "ak-7Hq2Lw9Xz4Rt6Vb"
	alicePassword = "correct-horse-battery-staple"
)

// ownerWorld is one server's agents: a real router with the agents' tools
// and a few plain tools, whose call records it keeps, over a real SQLite
// store with its secrets sealed.
type ownerWorld struct {
	t      *testing.T
	router *router.Router
	db     *sqlite.DB
	path   string
	plans  agentsmcp.PlanService
	tasks  agentsmcp.TaskService
	exec   *agents.Executor

	mu      sync.Mutex
	records []router.ToolCallRecord
}

func newOwnerWorld(t *testing.T) *ownerWorld {
	t.Helper()
	ctx := context.Background()
	w := &ownerWorld{t: t, path: filepath.Join(t.TempDir(), "agents.db")}
	db, err := sqlite.Open(ctx, w.path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	w.db = db
	sealer, err := secrets.New([]byte("0123456789abcdef0123456789abcdef"))
	if err != nil {
		t.Fatal(err)
	}
	tasks := &secrets.Tasks{TaskService: db, Sealer: sealer}
	w.plans = &secrets.Plans{PlanService: db, Sealer: sealer}
	w.tasks = tasks

	local := localtools.New()
	yes := true
	must := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	must(localtools.Add(local, &mcp.Tool{Name: "echo", Description: "returns its value", Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		func(_ context.Context, _ *mcp.CallToolRequest, in agentstest.EchoIn) (*mcp.CallToolResult, map[string]any, error) {
			return nil, map[string]any{"value": in.Value}, nil
		}))
	must(localtools.Add(local, &mcp.Tool{Name: "check_key", Description: "tells whether it got alice's key", Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		func(_ context.Context, _ *mcp.CallToolRequest, in agentstest.EchoIn) (*mcp.CallToolResult, map[string]any, error) {
			return nil, map[string]any{"valid": in.Value == aliceAPIKey}, nil
		}))
	must(localtools.Add(local, &mcp.Tool{Name: "delete_all", Description: "deletes everything", Annotations: &mcp.ToolAnnotations{DestructiveHint: &yes}},
		func(_ context.Context, _ *mcp.CallToolRequest, in agentstest.PathIn) (*mcp.CallToolResult, map[string]any, error) {
			return nil, map[string]any{"deleted": in.Path}, nil
		}))
	w.router = router.New(router.Options{Version: "test", OnToolCall: func(rec router.ToolCallRecord) {
		w.mu.Lock()
		w.records = append(w.records, rec)
		w.mu.Unlock()
	}})
	w.exec = agents.NewExecutor(agents.ExecutorOptions{
		Tasks: tasks, Plans: w.plans, Tools: w.router, Catalog: toolsearch.NewCatalog(w.router, nil, nil),
	})
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5e9)
		defer cancel()
		_ = w.exec.Close(ctx)
	})
	tools := &mcptools.Tools{Executor: w.exec, Thoughts: db, Plans: w.plans, Tasks: tasks}
	must(tools.Register(local))
	must(w.router.AddProvider(ctx, local))
	return w
}

// call calls tool as p, in-process on the tools/call path, and returns its
// structured result, or the error text a client would get.
func (w *ownerWorld) call(p *agentsmcp.Principal, tool string, args any) (map[string]any, string) {
	w.t.Helper()
	raw, err := json.Marshal(args)
	if err != nil {
		w.t.Fatal(err)
	}
	ctx := agentsmcp.WithPrincipal(context.Background(), p)
	res, err := w.router.CallTool(ctx, &mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{Name: tool, Arguments: raw}})
	if err != nil {
		return nil, agentsmcp.ErrorMessage(err)
	}
	if res.IsError {
		var text []string
		for _, c := range res.Content {
			if tc, ok := c.(*mcp.TextContent); ok {
				text = append(text, tc.Text)
			}
		}
		return nil, strings.Join(text, " ")
	}
	var out map[string]any
	b, _ := json.Marshal(res.StructuredContent)
	_ = json.Unmarshal(b, &out)
	return out, ""
}

// mustCall is call that fails the test on an error.
func (w *ownerWorld) mustCall(p *agentsmcp.Principal, tool string, args any) map[string]any {
	w.t.Helper()
	out, errText := w.call(p, tool, args)
	if errText != "" {
		w.t.Fatalf("%s as %s: %s", tool, p.ID, errText)
	}
	return out
}

// pausedTaskOfAlice has alice execute, through execute_task, a plan of
// hers whose destructive step waits for her confirmation, with secret
// inputs; it returns the task id.
func (w *ownerWorld) pausedTaskOfAlice() (taskID, planID string) {
	w.t.Helper()
	ctx := agentsmcp.WithPrincipal(context.Background(), alice)
	plan := &agentsmcp.Plan{
		Request: "clean up with my key", Principal: alice.ID,
		Inputs: json.RawMessage(`{"type":"object","properties":{"api_key":{"type":"string"},"note":{"type":"string"}}}`),
		Steps: []agentsmcp.PlanStep{
			{ID: "check", Tool: "check_key", Arguments: json.RawMessage(`{"value":"{{inputs.api_key}}"}`)},
			{ID: "wipe", Tool: "delete_all", Arguments: json.RawMessage(`{"path":"/tmp/alice"}`), DependsOn: []string{"check"}},
		},
	}
	if err := w.plans.CreatePlan(ctx, plan); err != nil {
		w.t.Fatal(err)
	}
	out := w.mustCall(alice, "execute_task", map[string]any{
		"planId": plan.ID, "wait": true,
		"inputs": map[string]any{"api_key": aliceAPIKey, "note": "db password=" + alicePassword},
	})
	task := out["task"].(map[string]any)
	if task["status"] != string(agentsmcp.TaskPaused) {
		w.t.Fatalf("task not paused: %v", task)
	}
	return task["id"].(string), plan.ID
}

func TestAnotherPrincipalCannotSeeOrControlATask(t *testing.T) {
	w := newOwnerWorld(t)
	id, planID := w.pausedTaskOfAlice()
	unknown := agentsmcp.NewID(agentsmcp.TaskIDPrefix)

	// bob gets, for alice's task, exactly the answer of a task that does
	// not exist.
	for _, tool := range []string{"get_task", "cancel_task", "resume_task"} {
		args := map[string]any{"taskId": id}
		if tool == "resume_task" {
			args["confirm"] = []string{"wipe"}
		}
		_, errText := w.call(bob, tool, args)
		args["taskId"] = unknown
		_, unknownText := w.call(bob, tool, args)
		if errText == "" || strings.ReplaceAll(errText, id, "ID") != strings.ReplaceAll(unknownText, unknown, "ID") {
			t.Errorf("%s of another's task: %q; of an unknown task: %q; want the same answer", tool, errText, unknownText)
		}
	}
	if _, errText := w.call(bob, "execute_task", map[string]any{"planId": planID}); !strings.Contains(errText, "not found") {
		t.Errorf("execute_task of another's plan: %q, want not found", errText)
	}
	th := &agentsmcp.Thought{Request: "alice's thought", Principal: alice.ID}
	if err := w.db.CreateThought(context.Background(), th); err != nil {
		t.Fatal(err)
	}
	if _, errText := w.call(bob, "generate_plan", map[string]any{"thoughtId": th.ID}); !strings.Contains(errText, "not found") {
		t.Errorf("generate_plan from another's thought: %q, want not found", errText)
	}
	list := w.mustCall(bob, "list_tasks", map[string]any{})
	if tasks := list["tasks"].([]any); len(tasks) != 0 {
		t.Errorf("bob lists %d tasks of others: %v", len(tasks), tasks)
	}
	if b, _ := json.Marshal(list); strings.Contains(string(b), aliceAPIKey) || strings.Contains(string(b), alicePassword) {
		t.Errorf("bob's list holds alice's secrets: %s", b)
	}

	// Still paused, untouched: bob's confirmation did not run the step.
	task := w.mustCall(alice, "get_task", map[string]any{"taskId": id})["task"].(map[string]any)
	if task["status"] != string(agentsmcp.TaskPaused) {
		t.Fatalf("after bob's attempts the task is %v", task["status"])
	}
	if task["principal"] != alice.ID {
		t.Errorf("task principal %v, want %s", task["principal"], alice.ID)
	}
	if mine := w.mustCall(alice, "list_tasks", map[string]any{})["tasks"].([]any); len(mine) != 1 {
		t.Errorf("alice lists %d tasks, want her 1", len(mine))
	}

	// An auditor (admin:read) sees it but may not change it; an admin may.
	if _, errText := w.call(auditor, "get_task", map[string]any{"taskId": id}); errText != "" {
		t.Errorf("admin:read cannot see the task: %s", errText)
	}
	if all := w.mustCall(auditor, "list_tasks", map[string]any{})["tasks"].([]any); len(all) != 1 {
		t.Errorf("admin:read lists %d tasks, want 1", len(all))
	}
	if _, errText := w.call(auditor, "cancel_task", map[string]any{"taskId": id}); errText == "" || strings.Contains(errText, "not found") {
		t.Errorf("admin:read cancelled the task, or was told it does not exist: %q", errText)
	}
	// Running alice's plan would act with the secrets she put in it: a
	// reader may not, however much it may see.
	if _, errText := w.call(auditor, "execute_task", map[string]any{"planId": planID}); errText == "" || strings.Contains(errText, "not found") {
		t.Errorf("admin:read ran another's plan, or was told it does not exist: %q", errText)
	}
	if list := w.mustCall(auditor, "list_tasks", map[string]any{})["tasks"].([]any); len(list) != 1 {
		t.Errorf("after the reader's execute_task there are %d tasks, want alice's 1", len(list))
	}
	w.mustCall(admin, "cancel_task", map[string]any{"taskId": id})
}

func TestStepsRunInTheNameOfTheTaskCreator(t *testing.T) {
	w := newOwnerWorld(t)
	id, _ := w.pausedTaskOfAlice()
	// Confirmed through another replica's executor (its own lease owner,
	// the same store), for an admin: the runner of the resumed task calls
	// the steps, and the records must name alice, not the admin and not an
	// anonymous "executor".
	other := agents.NewExecutor(agents.ExecutorOptions{
		Tasks: w.tasks, Plans: w.plans, Tools: w.router, Catalog: toolsearch.NewCatalog(w.router, nil, nil), Owner: "replica-2",
	})
	t.Cleanup(func() { _ = other.Close(context.Background()) })
	if _, err := other.Resume(agentsmcp.WithPrincipal(context.Background(), admin), id, agents.ResumeRequest{Confirm: []string{"wipe"}}, nil); err != nil {
		t.Fatal(err)
	}
	done, err := other.Wait(t.Context(), id)
	if err != nil || done.Status != agentsmcp.TaskSucceeded {
		t.Fatalf("task %v: %v", done.Status, err)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	steps := 0
	for _, rec := range w.records {
		if rec.Tool != "check_key" && rec.Tool != "delete_all" {
			continue
		}
		steps++
		if rec.Principal != alice.ID {
			t.Errorf("step call of %s recorded for %q, want the task's creator %s", rec.Tool, rec.Principal, alice.ID)
		}
	}
	if steps != 2 {
		t.Errorf("%d step calls recorded, want 2", steps)
	}
}

func TestStepsStayWithinTheCreatorsAllowlist(t *testing.T) {
	w := newOwnerWorld(t)
	// carol may call echo and the agents' tools, not delete_all. A plan
	// that the tools' up-front check does not see (it is run through the
	// executor directly, as a resume on another replica would) must still
	// not call it.
	carol := &agentsmcp.Principal{ID: "key:eeeeeeeeeeee", Scopes: []string{agentsmcp.ScopeMCP}, Tools: []string{"echo", "*_task"}}
	ctx := agentsmcp.WithPrincipal(context.Background(), carol)
	plan := &agentsmcp.Plan{Request: "wipe", Principal: carol.ID, Steps: []agentsmcp.PlanStep{
		{ID: "wipe", Tool: "delete_all", Arguments: json.RawMessage(`{"path":"/"}`), NeedsConfirmation: false},
	}}
	if err := w.plans.CreatePlan(ctx, plan); err != nil {
		t.Fatal(err)
	}
	if _, errText := w.call(carol, "execute_task", map[string]any{"planId": plan.ID}); !strings.Contains(errText, "may not use") {
		t.Errorf("execute_task of a plan outside the allowlist: %q", errText)
	}
	task, err := w.exec.Start(ctx, plan, nil, []string{"wipe"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	done, err := w.exec.Wait(t.Context(), task.ID)
	if err != nil {
		t.Fatal(err)
	}
	if s := agentstest.StateOf(done, "wipe"); s.Status != agentsmcp.StepFailed || !strings.Contains(s.Error, "not allowed") {
		t.Errorf("step outside the creator's allowlist: %s %q, want failed, not allowed", s.Status, s.Error)
	}
	if !slices.Equal(done.PrincipalTools, carol.Tools) {
		t.Errorf("task allowlist %v, want %v", done.PrincipalTools, carol.Tools)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, rec := range w.records {
		if rec.Tool == "delete_all" {
			t.Errorf("delete_all was called for carol: %+v", rec)
		}
	}
}

func TestTaskSecretsAreSealedAtRestAndRedactedInViews(t *testing.T) {
	w := newOwnerWorld(t)
	id, _ := w.pausedTaskOfAlice()
	for tool, args := range map[string]map[string]any{"get_task": {"taskId": id}, "list_tasks": {}} {
		out := w.mustCall(alice, tool, args)
		b, _ := json.Marshal(out)
		if strings.Contains(string(b), aliceAPIKey) || strings.Contains(string(b), alicePassword) {
			t.Errorf("%s shows a secret input: %s", tool, b)
		}
		if tool == "get_task" && !strings.Contains(string(b), "api_key") {
			t.Errorf("%s hides the input names too: %s", tool, b)
		}
	}
	// The row as stored, read with a connection of its own.
	raw, err := sql.Open("sqlite", "file:"+w.path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	// The step states and events are rows of their own since migration
	// 0012 (memory/sqlite/task.go).
	var inputs, steps, events, request string
	if err := raw.QueryRow(`SELECT t.inputs, t.request,
		coalesce((SELECT group_concat(s.state) FROM task_steps s WHERE s.task_pk = t.pk), ''),
		coalesce((SELECT group_concat(e.events) FROM task_events e WHERE e.task_pk = t.pk), '')
		FROM tasks t WHERE t.id = ?`, id).Scan(&inputs, &request, &steps, &events); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(steps, `"stepId"`) || !strings.Contains(events, `"type"`) {
		t.Fatalf("the task's step states and events were not found where they are stored: %q, %q", steps, events)
	}
	for _, s := range []string{inputs, steps, events, request} {
		if strings.Contains(s, aliceAPIKey) || strings.Contains(s, alicePassword) {
			t.Errorf("the tasks row holds a secret in clear: %s", s)
		}
	}
	// Yet the executor has them: the step that echoes the key got it, and
	// resuming (here: from the store, as after a restart) still runs.
	w.mustCall(alice, "resume_task", map[string]any{"taskId": id, "confirm": []string{"wipe"}})
	done, err := w.exec.Wait(t.Context(), id)
	if err != nil || done.Status != agentsmcp.TaskSucceeded {
		t.Fatalf("task %v: %v", done.Status, err)
	}
	if out := string(agentstest.StateOf(done, "check").Output); out != `{"valid":true}` {
		t.Errorf("the step did not get the real input: %s", out)
	}
}
