package mcptools

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/agents"
	"github.com/agents-mcp/agents-mcp/internal/mcpwire"
	"github.com/agents-mcp/agents-mcp/internal/seal"
	"github.com/agents-mcp/agents-mcp/internal/view"
	"github.com/agents-mcp/agents-mcp/localtools"
)

// Tools are the MCP tools of the agents: generate_thoughts, generate_plan,
// execute_task, run_task, get_task, list_tasks, resume_task, cancel_task.
//
// Thoughts, plans and tasks belong to the principal that created them:
// another caller is told they do not exist, unless it has scope admin:read
// (to see them) or admin:write (to cancel or resume a task). Results show
// secrets redacted ([agentsmcp.Task.Redacted]).
type Tools struct {
	Thinker  *agents.Thinker
	Planner  *agents.Planner
	Executor *agents.Executor
	Thoughts agentsmcp.ThoughtService
	Plans    agentsmcp.PlanService
	Tasks    agentsmcp.TaskService
	LLM      agents.LLMChooser
	// MaxWait bounds how long a call waits for its task; default 10
	// minutes. The task goes on after it.
	MaxWait time.Duration
	// RequestStates seals the requestState of the input_required results
	// that run_task and execute_task give clients of MCP 2026-07-28 (see
	// 2026-07-28) when their task waits for inputs or confirmations,
	// and of the rounds that ask such a client's model (sampling.go).
	// Nil: those clients get the paused task, answered with resume_task,
	// and are never asked for their model.
	RequestStates *RequestStates
	Logger        *slog.Logger
}

// Register adds the tools to l.
func (t *Tools) Register(l *localtools.Provider) error {
	if t.Logger == nil {
		t.Logger = slog.New(slog.DiscardHandler)
	}
	executeIn, err1 := objectInputs[ExecuteTaskArgs]()
	runIn, err2 := objectInputs[RunTaskArgs]()
	resumeIn, err3 := objectInputs[ResumeTaskArgs]()
	if err := errors.Join(err1, err2, err3); err != nil {
		return err
	}
	return errors.Join(
		localtools.Add(l, &mcp.Tool{Name: "generate_thoughts", Description: "Thought agent: analyse a request into sub-goals, approaches, constraints, assumptions, uncertainties and recommended tools, from tool search, similar past tasks, insights and tool performance. Stored; returns the thought.",
			Annotations: &mcp.ToolAnnotations{ReadOnlyHint: false, OpenWorldHint: new(false)}}, t.generateThoughts),
		localtools.Add(l, &mcp.Tool{Name: "generate_plan", Description: "Planner: compose a DAG plan of tool calls (local and remote tools) for a request or a stored thought. Every step's arguments are checked against its tool's schema; values the request does not give become plan inputs. Stored; returns the plan.",
			Annotations: &mcp.ToolAnnotations{OpenWorldHint: new(false)}}, t.generatePlan),
		localtools.Add(l, &mcp.Tool{Name: "execute_task", InputSchema: executeIn, Description: "Executor: run a stored plan as a task (parallel where the DAG allows, with retries and timeouts). Returns the task at once, or its outcome with wait: true. Steps of destructive tools wait for a confirmation; missing inputs are asked for, or the task pauses until resume_task.",
			Annotations: &mcp.ToolAnnotations{OpenWorldHint: new(true)}}, t.executeTask),
		localtools.Add(l, &mcp.Tool{Name: "run_task", InputSchema: runIn, Description: "Think, plan and execute a request in one call, reporting progress, and return the task's outcome (or its paused state, answered with resume_task).",
			Annotations: &mcp.ToolAnnotations{OpenWorldHint: new(true)}}, t.runTask),
		localtools.Add(l, &mcp.Tool{Name: "get_task", Description: "A task with its steps (status, attempts, outputs, errors) and history.",
			Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}}, t.getTask),
		localtools.Add(l, &mcp.Tool{Name: "list_tasks", Description: "Tasks, newest first, optionally by status; pages with cursor.",
			Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}}, t.listTasks),
		localtools.Add(l, &mcp.Tool{Name: "resume_task", InputSchema: resumeIn, Description: "Answer a paused task: supply inputs, confirm or reject waiting steps. Returns at once; the task continues in the background.",
			Annotations: &mcp.ToolAnnotations{OpenWorldHint: new(true)}}, t.resumeTask),
		localtools.Add(l, &mcp.Tool{Name: "cancel_task", Description: "Cancel a task: running steps are cancelled and no other step starts.",
			Annotations: &mcp.ToolAnnotations{DestructiveHint: new(false), IdempotentHint: true}}, t.cancelTask),
	)
}

// objectInputs is the input schema inferred from T, with its "inputs"
// property (a json.RawMessage, so any JSON value to the inference) declared
// a JSON object: the executor refuses anything else (planlang.CheckInputs), and a
// client that maps schemas onto a
// stricter dialect needs a type to tell the model what to send.
func objectInputs[T any]() (*jsonschema.Schema, error) {
	s, err := localtools.Infer[T]()
	if err != nil {
		return nil, err
	}
	in := s.Properties["inputs"]
	if in == nil {
		return nil, errors.New("no inputs property")
	}
	s.Properties["inputs"] = &jsonschema.Schema{Type: "object", Description: in.Description}
	return s, nil
}

// GenerateThoughtsArgs are the arguments of generate_thoughts.
type GenerateThoughtsArgs struct {
	Request string `json:"request" jsonschema:"what the user wants done"`
}

// ThoughtResult is the result of generate_thoughts.
type ThoughtResult struct {
	Thought *agentsmcp.Thought    `json:"thought"`
	Report  *agents.ThoughtReport `json:"report"`
}

func (t *Tools) generateThoughts(ctx context.Context, req *mcp.CallToolRequest, a GenerateThoughtsArgs) (*mcp.CallToolResult, *ThoughtResult, error) {
	cm, err := t.modelForOnly(ctx, req, callDigest("generate_thoughts", a.Request))
	if err != nil {
		return nil, nil, err
	}
	th, report, err := t.Thinker.Think(cm.context(ctx), a.Request, cm.model())
	if cm.stopped(err) {
		ir, err := t.sampleRound(ctx, cm)
		return ir, nil, err
	}
	if err != nil {
		return nil, nil, err
	}
	return nil, &ThoughtResult{Thought: view.Thought(th), Report: report}, nil
}

// GeneratePlanArgs are the arguments of generate_plan.
type GeneratePlanArgs struct {
	Request   string `json:"request,omitempty" jsonschema:"what the user wants done; optional with thoughtId"`
	ThoughtID string `json:"thoughtId,omitempty" jsonschema:"a thought from generate_thoughts to plan from"`
}

// PlanResult is the result of generate_plan.
type PlanResult struct {
	Plan   *agentsmcp.Plan    `json:"plan"`
	Report *agents.PlanReport `json:"report"`
}

func (t *Tools) generatePlan(ctx context.Context, req *mcp.CallToolRequest, a GeneratePlanArgs) (*mcp.CallToolResult, *PlanResult, error) {
	pr := agents.PlanRequest{Request: a.Request}
	if a.ThoughtID != "" {
		th, err := t.Thoughts.FindThoughtByID(ctx, a.ThoughtID)
		if err != nil || !agentsmcp.PrincipalFrom(ctx).MaySee(th.Principal) {
			return nil, nil, hidden(err, "thought", a.ThoughtID)
		}
		pr.Thought = th
	}
	cm, err := t.modelForOnly(ctx, req, seal.Digest("generate_plan", a.Request, a.ThoughtID))
	if err != nil {
		return nil, nil, err
	}
	pr.LLM = cm.model()
	plan, report, err := t.Planner.Plan(cm.context(ctx), pr)
	if cm.stopped(err) {
		ir, err := t.sampleRound(ctx, cm)
		return ir, nil, err
	}
	if err != nil {
		return nil, nil, err
	}
	return nil, &PlanResult{Plan: view.Plan(plan), Report: report}, nil
}

// ExecuteTaskArgs are the arguments of execute_task.
type ExecuteTaskArgs struct {
	PlanID  string          `json:"planId" jsonschema:"a plan from generate_plan"`
	Inputs  json.RawMessage `json:"inputs,omitempty" jsonschema:"values for the plan's inputs"`
	Confirm []string        `json:"confirm,omitempty" jsonschema:"steps allowed to run without asking"`
	Wait    bool            `json:"wait,omitempty" jsonschema:"wait for the task to end or pause, reporting progress"`
}

// TaskResult is the result of the task tools.
type TaskResult struct {
	Task      *agentsmcp.Task `json:"task"`
	PlanID    string          `json:"planId,omitempty"`
	ThoughtID string          `json:"thoughtId,omitempty"`
	// Waiting is true when the call stopped waiting before the task ended
	// or paused; get_task follows it.
	Waiting bool `json:"waiting,omitempty"`
}

func (t *Tools) executeTask(ctx context.Context, req *mcp.CallToolRequest, a ExecuteTaskArgs) (*mcp.CallToolResult, *TaskResult, error) {
	call := callDigest("execute_task", a.PlanID)
	if isRetry(req) {
		return t.retry(ctx, req, call)
	}
	plan, err := t.Plans.FindPlanByID(ctx, a.PlanID)
	caller := agentsmcp.PrincipalFrom(ctx)
	if err != nil || !caller.MaySee(plan.Principal) {
		return nil, nil, hidden(err, "plan", a.PlanID)
	}
	// Running a plan acts, with the secrets its creator put in its
	// arguments: a reader of everyone's plans (admin:read) may not.
	if !caller.MayControl(plan.Principal) {
		return nil, nil, agentsmcp.Errorf(agentsmcp.EUNAUTHORIZED, "plan %s belongs to another principal; running it takes scope %s", a.PlanID, agentsmcp.ScopeAdminWrite)
	}
	return t.start(ctx, req, plan, a.Inputs, a.Confirm, a.Wait, "", call)
}

// start runs plan as a task for the caller of req; with wait, it returns
// when the task ends or pauses (or MaxWait passes). A caller that cancels
// its request cancels the task it waits for. call identifies the call for
// the requestState of an input_required answer (see callDigest). A call in
// task mode ([mcpwire.TaskModeFrom]) never waits: it reports the task it
// created, and the router answers with a CreateTaskResult.
func (t *Tools) start(ctx context.Context, req *mcp.CallToolRequest, plan *agentsmcp.Plan, inputs json.RawMessage, confirm []string, wait bool, thoughtID, call string) (*mcp.CallToolResult, *TaskResult, error) {
	if err := mayRun(ctx, plan); err != nil {
		return nil, nil, err
	}
	mode := mcpwire.TaskModeFrom(ctx)
	if mode != nil {
		// The caller polls the task (MCP Tasks, ADR 0010): nobody waits.
		wait = false
	}
	var caller *SessionCaller
	var c agents.Caller
	if wait {
		caller = NewSessionCaller(ctx, req, t.Logger)
		defer caller.Detach()
		c = caller
	}
	task, err := t.Executor.Start(ctx, plan, inputs, confirm, c)
	if err != nil {
		return nil, nil, err
	}
	if mode != nil {
		mode.Created(task.ID) // Start stored it: tasks/get finds it
	}
	res := &TaskResult{Task: view.Task(task), PlanID: plan.ID, ThoughtID: thoughtID}
	if !wait {
		return nil, res, nil
	}
	return t.outcome(ctx, req, plan, task.ID, res, call, nil, "")
}

// outcome waits for task id of plan, then answers the call with the task
// as it stands in res, or, to a client of MCP 2026-07-28, with an
// input_required result asking what the paused task waits for (see
// Tools.inputRequired for declined and note).
func (t *Tools) outcome(ctx context.Context, req *mcp.CallToolRequest, plan *agentsmcp.Plan, id string, res *TaskResult, call string, declined []string, note string) (*mcp.CallToolResult, *TaskResult, error) {
	done, waiting, err := t.wait(ctx, id)
	if err != nil {
		return nil, nil, err
	}
	res.Task, res.Waiting = view.Task(done), waiting
	ir, err := t.inputRequired(ctx, req, done, plan, call, declined, note)
	if err != nil {
		return nil, nil, err
	}
	if ir != nil {
		return ir, nil, nil
	}
	return nil, res, nil
}

// retry serves the retry of an input_required result: the requestState
// is verified (see RequestStates.open), the answers resume the stored task
// it names, on this replica whichever one asked, and the call waits for
// the task again. A task that has ended meanwhile (a repeated retry, a
// cancel) answers with its outcome.
func (t *Tools) retry(ctx context.Context, req *mcp.CallToolRequest, call string) (*mcp.CallToolResult, *TaskResult, error) {
	if t.RequestStates == nil {
		return nil, nil, invalidState("this server issues no requestState")
	}
	st, err := t.RequestStates.open(req.Params.RequestState, call, agentsmcp.PrincipalIDFrom(ctx))
	if err != nil {
		return nil, nil, err
	}
	task, err := t.controlledTask(ctx, st.Task)
	if err != nil {
		return nil, nil, err
	}
	plan, err := t.Plans.FindPlanByID(ctx, task.PlanID)
	if err != nil {
		return nil, nil, err
	}
	if err := mayRun(ctx, plan); err != nil {
		return nil, nil, err
	}
	res := &TaskResult{Task: view.Task(task), PlanID: plan.ID, ThoughtID: plan.ThoughtID}
	if task.Status.Terminal() {
		return nil, res, nil
	}
	rr, declined := answers(st, req.Params.InputResponses)
	var note string
	if !emptyResume(rr) {
		caller := NewSessionCaller(ctx, req, t.Logger)
		defer caller.Detach()
		_, err := t.Executor.Resume(ctx, task.ID, rr, caller)
		if agentsmcp.ErrorCode(err) == agentsmcp.EINVALID && len(rr.Inputs) > 0 {
			// The inputs were refused (the plan's schema): the
			// confirmations still count, and the inputs are asked again,
			// saying why.
			note = "The last answer was refused: " + agentsmcp.ErrorMessage(err) + "."
			rr.Inputs, err = nil, nil
			if !emptyResume(rr) {
				_, err = t.Executor.Resume(ctx, task.ID, rr, caller)
			}
		}
		if err != nil {
			return nil, nil, err
		}
	}
	if mode := mcpwire.TaskModeFrom(ctx); mode != nil {
		// MRTR rounds first, then the task (SEP-2663): the caller polls.
		mode.Created(task.ID)
		return nil, res, nil
	}
	return t.outcome(ctx, req, plan, task.ID, res, call, declined, note)
}

func (t *Tools) wait(ctx context.Context, id string) (*agentsmcp.Task, bool, error) {
	maxWait := t.MaxWait
	if maxWait <= 0 {
		maxWait = 10 * time.Minute
	}
	wctx, cancel := context.WithTimeout(ctx, maxWait)
	defer cancel()
	task, err := t.Executor.Wait(wctx, id)
	if errors.Is(ctx.Err(), context.Canceled) {
		// The client cancelled the call that waited: stop the task too.
		cctx, ccancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer ccancel()
		task, err = t.Executor.Cancel(cctx, id)
	}
	if err != nil {
		return nil, false, err
	}
	return task, !task.Status.Terminal() && task.Status != agentsmcp.TaskPaused, nil
}

// RunTaskArgs are the arguments of run_task.
type RunTaskArgs struct {
	Request string          `json:"request" jsonschema:"what the user wants done"`
	Inputs  json.RawMessage `json:"inputs,omitempty" jsonschema:"values the plan may need"`
	Confirm []string        `json:"confirm,omitempty" jsonschema:"steps allowed to run without asking"`
	NoWait  bool            `json:"noWait,omitempty" jsonschema:"return once the task has started"`
}

func (t *Tools) runTask(ctx context.Context, req *mcp.CallToolRequest, a RunTaskArgs) (*mcp.CallToolResult, *TaskResult, error) {
	call := callDigest("run_task", a.Request)
	cm, err := t.modelFor(ctx, req, call)
	if err != nil {
		return nil, nil, err
	}
	if cm.taskRetry {
		// The task exists: no thinking or planning again.
		return t.retry(ctx, req, call)
	}
	// Asking a 2026-07-28 client's model takes rounds (sampling.go):
	// they all come before the task exists, so before any task-mode
	// CreateTaskResult and any question the task asks.
	pctx := cm.context(ctx)
	th, err := t.checkpointedThought(ctx, cm)
	if err != nil {
		return nil, nil, err
	}
	pr := agents.PlanRequest{Request: a.Request, LLM: cm.model()}
	if th == nil {
		var report *agents.ThoughtReport
		th, report, err = t.Thinker.Think(pctx, a.Request, cm.model())
		if cm.stopped(err) {
			ir, err := t.sampleRound(ctx, cm)
			return ir, nil, err
		}
		if err != nil {
			return nil, nil, err
		}
		cm.thoughtDone(th)
		if pr.LLM == nil {
			// The builtin planner plans at once on what the thought was
			// made from; a model's answer takes long enough that the
			// planner gathers afresh, as it always did.
			pr.Knowledge = report.Knowledge
		}
	}
	pr.Thought = th
	plan, _, err := t.Planner.Plan(pctx, pr)
	if cm.stopped(err) {
		ir, err := t.sampleRound(ctx, cm)
		return ir, nil, err
	}
	if err != nil {
		return nil, nil, err
	}
	return t.start(ctx, req, plan, a.Inputs, a.Confirm, !a.NoWait, th.ID, call)
}

// TaskIDArgs name a task.
type TaskIDArgs struct {
	TaskID string `json:"taskId"`
}

func (t *Tools) getTask(ctx context.Context, _ *mcp.CallToolRequest, a TaskIDArgs) (*mcp.CallToolResult, *TaskResult, error) {
	task, err := t.visibleTask(ctx, a.TaskID)
	if err != nil {
		return nil, nil, err
	}
	return nil, &TaskResult{Task: view.Task(task), PlanID: task.PlanID}, nil
}

// visibleTask returns task id if the caller may see it: its creator, or a
// caller with scope admin:read. Any other caller is told it does not
// exist, in the words used for an unknown id, so that its existence is
// not revealed either.
func (t *Tools) visibleTask(ctx context.Context, id string) (*agentsmcp.Task, error) {
	task, err := t.Executor.Task(ctx, id)
	if err != nil || !agentsmcp.PrincipalFrom(ctx).MaySee(task.Principal) {
		return nil, hidden(err, "task", id)
	}
	return task, nil
}

// controlledTask returns task id if the caller may change it (cancel,
// resume): its creator, or a caller with scope admin:write. A caller that
// may not see it is told it does not exist.
func (t *Tools) controlledTask(ctx context.Context, id string) (*agentsmcp.Task, error) {
	task, err := t.visibleTask(ctx, id)
	if err != nil {
		return nil, err
	}
	if !agentsmcp.PrincipalFrom(ctx).MayControl(task.Principal) {
		return nil, agentsmcp.Errorf(agentsmcp.EUNAUTHORIZED, "task %s belongs to another principal; changing it takes scope %s", id, agentsmcp.ScopeAdminWrite)
	}
	return task, nil
}

// hidden is the answer about a thought, plan or task that does not exist,
// or that the caller may not see: the same ENOTFOUND either way. err is
// the lookup's error; other errors than ENOTFOUND are kept.
func hidden(err error, what, id string) error {
	if err != nil && agentsmcp.ErrorCode(err) != agentsmcp.ENOTFOUND {
		return err
	}
	return agentsmcp.Errorf(agentsmcp.ENOTFOUND, "%s %q not found", what, id)
}

// ListTasksArgs are the arguments of list_tasks.
type ListTasksArgs struct {
	Status string `json:"status,omitempty" jsonschema:"pending, running, paused, succeeded, failed or cancelled"`
	Cursor string `json:"cursor,omitempty"`
	Limit  int    `json:"limit,omitempty"`
}

// ListTasksResult is the result of list_tasks.
type ListTasksResult struct {
	Tasks      []*agentsmcp.Task `json:"tasks"`
	NextCursor string            `json:"nextCursor,omitempty"`
}

func (t *Tools) listTasks(ctx context.Context, _ *mcp.CallToolRequest, a ListTasksArgs) (*mcp.CallToolResult, *ListTasksResult, error) {
	f := agentsmcp.TaskFilter{Status: agentsmcp.TaskStatus(a.Status), Cursor: a.Cursor, Limit: a.Limit}
	if p := agentsmcp.PrincipalFrom(ctx); p != nil && !p.HasScope(agentsmcp.ScopeAdminRead) {
		// The caller's own tasks only; an admin lists everyone's.
		f.Principal = p.ID
		if p.ID == "" {
			return nil, &ListTasksResult{Tasks: []*agentsmcp.Task{}}, nil
		}
	}
	tasks, next, err := t.Tasks.FindTasks(ctx, f)
	if err != nil {
		return nil, nil, err
	}
	if tasks == nil {
		tasks = []*agentsmcp.Task{}
	}
	for i, task := range tasks {
		tasks[i] = view.Task(task)
	}
	return nil, &ListTasksResult{Tasks: tasks, NextCursor: next}, nil
}

// ResumeTaskArgs are the arguments of resume_task.
type ResumeTaskArgs struct {
	TaskID  string          `json:"taskId"`
	Inputs  json.RawMessage `json:"inputs,omitempty" jsonschema:"values for the inputs the task waits for"`
	Confirm []string        `json:"confirm,omitempty" jsonschema:"waiting steps allowed to run"`
	Reject  []string        `json:"reject,omitempty" jsonschema:"waiting steps refused: skipped with their dependents"`
}

func (t *Tools) resumeTask(ctx context.Context, _ *mcp.CallToolRequest, a ResumeTaskArgs) (*mcp.CallToolResult, *TaskResult, error) {
	stored, err := t.controlledTask(ctx, a.TaskID)
	if err != nil {
		return nil, nil, err
	}
	if stored.PlanID != "" {
		plan, err := t.Plans.FindPlanByID(ctx, stored.PlanID)
		if err != nil {
			return nil, nil, err
		}
		if err := mayRun(ctx, plan); err != nil {
			return nil, nil, err
		}
	}
	task, err := t.Executor.Resume(ctx, a.TaskID, agents.ResumeRequest{Inputs: a.Inputs, Confirm: a.Confirm, Reject: a.Reject}, nil)
	if err != nil {
		return nil, nil, err
	}
	return nil, &TaskResult{Task: view.Task(task), PlanID: task.PlanID}, nil
}

func (t *Tools) cancelTask(ctx context.Context, _ *mcp.CallToolRequest, a TaskIDArgs) (*mcp.CallToolResult, *TaskResult, error) {
	if _, err := t.controlledTask(ctx, a.TaskID); err != nil {
		return nil, nil, err
	}
	task, err := t.Executor.Cancel(ctx, a.TaskID)
	if err != nil {
		return nil, nil, err
	}
	return nil, &TaskResult{Task: view.Task(task), PlanID: task.PlanID}, nil
}

// mayRun refuses a plan that calls a tool the caller may not use: the
// executor calls tools in-process, past the router's check of each call.
func mayRun(ctx context.Context, plan *agentsmcp.Plan) error {
	p := agentsmcp.PrincipalFrom(ctx)
	var denied []string
	for _, s := range plan.Steps {
		if !p.MayUseTool(s.Tool) && !slices.Contains(denied, s.Tool) {
			denied = append(denied, s.Tool)
		}
	}
	if len(denied) > 0 {
		return agentsmcp.Errorf(agentsmcp.EUNAUTHORIZED, "plan %s calls tools this credential may not use: %s", plan.ID, strings.Join(denied, ", "))
	}
	return nil
}
