package mcptools

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/agents"
	"github.com/agents-mcp/agents-mcp/agents/planlang"
	"github.com/agents-mcp/agents-mcp/internal/mcpwire"
	"github.com/agents-mcp/agents-mcp/internal/view"
)

// MCPTasks serves the executor's tasks as MCP tasks (the Tasks extension,
// SEP-2663; ADR 0010): an MCP task is a stored [agentsmcp.Task], with the
// same id, read from the store by whichever replica is asked. It implements
// [mcpwire.TaskBackend].
//
// Only the creator of a task, or a caller with scope admin:read, sees it;
// changing it (tasks/update, tasks/cancel) takes the creator or
// admin:write, as for get_task, resume_task and cancel_task.
//
// With a Retention, a task is gone once it ended more than Retention ago,
// as for an unknown id, even before a [agents.TaskSweeper] deletes it, and ttlMs
// says when that will be.
type MCPTasks struct {
	Executor *agents.Executor
	Plans    agentsmcp.PlanService
	// Retention is tasks.retention: how long an ended task is kept; zero
	// keeps tasks forever, and the ttlMs of an ended task is then null.
	Retention time.Duration
	// InputWait is tasks.input_wait: how long a task waits in
	// input_required before it ends (inputwait.go); zero is
	// [DefaultInputWait].
	InputWait time.Duration
}

func (m *MCPTasks) inputWait() time.Duration {
	if m.InputWait <= 0 {
		return DefaultInputWait
	}
	return m.InputWait
}

var _ mcpwire.TaskBackend = (*MCPTasks)(nil)

// Owns reports whether id has the form of a task id.
func (m *MCPTasks) Owns(id string) bool {
	return strings.HasPrefix(id, agentsmcp.TaskIDPrefix+"_")
}

// visible returns task id if the caller may see it; any other caller gets
// the ENOTFOUND of an unknown id, so that existence is not revealed.
func (m *MCPTasks) visible(ctx context.Context, id string) (*agentsmcp.Task, error) {
	task, err := m.Executor.Task(ctx, id)
	if err != nil || !agentsmcp.PrincipalFrom(ctx).MaySee(task.Principal) || expired(task, m.Retention, time.Now()) {
		return nil, hidden(err, "task", id)
	}
	return task, nil
}

func (m *MCPTasks) controlled(ctx context.Context, id string) (*agentsmcp.Task, error) {
	task, err := m.visible(ctx, id)
	if err != nil {
		return nil, err
	}
	if !agentsmcp.PrincipalFrom(ctx).MayControl(task.Principal) {
		return nil, agentsmcp.Errorf(agentsmcp.EUNAUTHORIZED, "task %s belongs to another principal; changing it takes scope %s", id, agentsmcp.ScopeAdminWrite)
	}
	return task, nil
}

// GetTask renders the stored task (ADR 0010, A3).
func (m *MCPTasks) GetTask(ctx context.Context, id string) (*mcpwire.MCPTask, error) {
	task, err := m.visible(ctx, id)
	if err != nil {
		return nil, err
	}
	if mcpwire.IsBridgedCall(task) { // bridged.go
		v := bridgedTaskView(task)
		v.TTLMs = taskTTLMs(task, m.Retention, time.Now())
		return v, nil
	}
	var plan *agentsmcp.Plan
	// The plan gives a paused task its questions, and an ended one its
	// thoughtId; a task failed by the executor needs none (its plan may be
	// what could not be read).
	needsPlan := task.Status == agentsmcp.TaskPaused || task.Status == agentsmcp.TaskSucceeded ||
		task.Status == agentsmcp.TaskFailed && task.ErrorCode == "" || len(task.History) > 0 && inputWaitOver(task, m.inputWait())
	if needsPlan && task.PlanID != "" {
		if plan, err = m.Plans.FindPlanByID(ctx, task.PlanID); err != nil {
			return nil, err
		}
	}
	now := time.Now()
	v := MCPTaskView(task, plan)
	if _, ended := inputWaitEnded(task, m.inputWait(), now); ended {
		v = endInputWait(v, task, plan, m.inputWait())
	}
	v.TTLMs = mcpTaskTTLMs(task, v, m.Retention, m.inputWait(), now)
	return v, nil
}

// MCPTaskView maps a stored task to its MCP view:
//
//   - pending and running are working, with progress in the message;
//   - paused is input_required, with a question for each waiting step
//     (plan is needed for those; without it there are none);
//   - succeeded is completed, with the result the synchronous tool returns
//     (its thoughtId from plan, when given);
//   - failed is completed too, with that result marked isError: failed
//     steps are a tool-level failure, not a protocol error;
//   - failed with an ErrorCode (the executor itself failed the task) is
//     failed, with an error of that code and the task's Error as message;
//   - cancelled is cancelled.
//
// ttlMs is left null (unlimited): [MCPTasks.GetTask] sets it from its
// Retention and InputWait (ADR 0010, A8), and ends a task that waited for
// an answer longer than InputWait (inputwait.go).
func MCPTaskView(task *agentsmcp.Task, plan *agentsmcp.Plan) *mcpwire.MCPTask {
	v := &mcpwire.MCPTask{ID: task.ID, CreatedAt: task.CreatedAt, UpdatedAt: task.UpdatedAt}
	switch task.Status {
	case agentsmcp.TaskPending, agentsmcp.TaskRunning:
		v.Status, v.StatusMessage = mcpwire.MCPTaskWorking, progressMessage(task)
	case agentsmcp.TaskPaused:
		v.Status = mcpwire.MCPTaskInputRequired
		v.InputRequests = mcp.InputRequestMap{}
		var waiting, keys []string
		for _, q := range questions(task, plan) {
			v.InputRequests[q.key] = q.ask
			waiting = append(waiting, q.what)
			keys = append(keys, q.key)
		}
		// The router shows the forms only to a client that declared
		// elicitation (router/tasks/asks.go); one shown none learns from
		// the message what to answer, and how.
		v.StatusMessage = "waiting for: " + strings.Join(waiting, "; ") +
			" (answer with tasks/update, inputResponses keyed " + strings.Join(keys, ", ") + "; or call resume_task)"
		if len(waiting) == 0 {
			v.StatusMessage = "paused; resume_task answers it"
		}
	case agentsmcp.TaskFailed:
		if task.ErrorCode == "" {
			v.Status = mcpwire.MCPTaskCompleted
			v.Result = taskToolResult(task, plan)
			v.Result.IsError = true
			v.StatusMessage = task.Error
			break
		}
		// Not the plan's outcome but the executor's fault: a protocol
		// error, mapped by the router as any error of this code.
		msg := view.Task(task).Error
		v.Status, v.StatusMessage = mcpwire.MCPTaskFailed, msg
		v.Error = &agentsmcp.Error{Code: task.ErrorCode, Message: msg}
	case agentsmcp.TaskSucceeded:
		v.Status = mcpwire.MCPTaskCompleted
		v.Result = taskToolResult(task, plan)
		v.StatusMessage = task.Error
	default: // cancelled
		v.Status, v.StatusMessage = mcpwire.MCPTaskCancelled, task.Error
	}
	return v
}

// taskToolResult is what execute_task and run_task return for the task:
// the redacted task as structured content, and as text. The thought is
// the plan's, as for the retry of an input_required answer.
func taskToolResult(task *agentsmcp.Task, plan *agentsmcp.Plan) *mcp.CallToolResult {
	res := &TaskResult{Task: view.Task(task), PlanID: task.PlanID}
	if plan != nil {
		res.ThoughtID = plan.ThoughtID
	}
	data, _ := json.Marshal(res)
	return &mcp.CallToolResult{
		Content:           []mcp.Content{&mcp.TextContent{Text: string(data)}},
		StructuredContent: json.RawMessage(data),
	}
}

// progressMessage is the statusMessage of a working task: how many steps
// ended, and the last one.
func progressMessage(task *agentsmcp.Task) string {
	ended := 0
	last := ""
	lastAt := task.CreatedAt
	for _, s := range task.Steps {
		if agents.StepEnded(s.Status) {
			ended++
			if !s.EndedAt.Before(lastAt) {
				lastAt, last = s.EndedAt, fmt.Sprintf("step %s %s", s.StepID, s.Status)
			}
		}
	}
	msg := fmt.Sprintf("%d of %d steps ended", ended, len(task.Steps))
	if last != "" {
		msg += "; last: " + last
	}
	return msg
}

// question is one open question of a paused task.
type question struct {
	key  string
	ask  *mcp.ElicitParams
	what string // for the status message
	step string
	// inputs are the names asked for; json, those asked as JSON text
	// because a flat form cannot hold them.
	inputs, json []string
}

// The keys of a step's questions: confirm.<step>.<n> and inputs.<step>.<n>,
// where n is the step's Asks (ADR 0010, A4). Step ids contain no dot. n
// stays the same while the question is open, across polls and answers to
// other questions, and changes once an answer to it was taken, so that a
// key is never reused. A step stored before Asks existed reads 0, and
// counts as 1: its key is the one it was asked with.
const (
	confirmKey = "confirm"
	inputsKey  = "inputs"
)

func questionKey(kind string, s agentsmcp.StepState) string {
	return fmt.Sprintf("%s.%s.%d", kind, s.StepID, max(s.Asks, 1))
}

// refusedNote says why the last answer to step's inputs question was
// refused, when the step's newest event is that refusal (the question
// asked again since); "" otherwise.
func refusedNote(task *agentsmcp.Task, step string) string {
	for _, e := range slices.Backward(task.History) {
		if e.StepID != step {
			continue
		}
		if e.Type == agents.EventInputsRejected {
			return "The last answer was refused: " + e.Message + "."
		}
		return ""
	}
	return ""
}

// questions lists the open questions of a paused task, in step order.
func questions(task *agentsmcp.Task, plan *agentsmcp.Plan) []question {
	if plan == nil {
		return nil
	}
	have := planlang.InputNames(task.Inputs)
	var out []question
	for i, s := range task.Steps {
		if i >= len(plan.Steps) {
			break
		}
		tool := agents.StepTool(task, plan, i)
		switch s.Status {
		case agentsmcp.StepWaitingConfirmation:
			if s.Confirmed {
				continue
			}
			out = append(out, question{
				key: questionKey(confirmKey, s), step: s.StepID,
				what: fmt.Sprintf("confirmation of step %s (%s)", s.StepID, tool),
				ask:  &mcp.ElicitParams{Message: agents.ConfirmQuestion(task, plan, i), RequestedSchema: agents.ConfirmSchema},
			})
		case agentsmcp.StepWaitingInput:
			missing := agents.StepMissingInputs(task, plan, i, have)
			if len(missing) == 0 {
				continue
			}
			q := question{
				key: questionKey(inputsKey, s), step: s.StepID, inputs: missing,
				what: fmt.Sprintf("inputs %s of step %s", strings.Join(missing, ", "), s.StepID),
			}
			schema, ok := agents.ElicitationSchema(plan.Inputs, missing)
			if !ok {
				// Not a flat form: each input is asked as JSON text.
				props := map[string]any{}
				for _, name := range missing {
					props[name] = map[string]any{"type": "string", "title": name, "description": "a JSON value"}
				}
				schema, _ = json.Marshal(map[string]any{"type": "object", "properties": props, "required": missing})
				q.json = missing
			}
			msg := agents.InputsQuestion(task, missing)
			if note := refusedNote(task, s.StepID); note != "" {
				msg = note + " " + msg
			}
			q.ask = &mcp.ElicitParams{Message: msg, RequestedSchema: schema}
			out = append(out, q)
		}
	}
	return out
}

// UpdateTask answers the open questions of a paused task (ADR 0010, A5):
// an accepted confirmation confirms its step, a declined one (or confirm
// false) rejects it, and so does a declined inputs question; accepted
// inputs are merged, restricted to the names asked. A dismissed question
// (action cancel) stays open, and keys that are not open are ignored, as
// are answers that lost a race with another update or a cancel. Inputs
// the plan's schema refuses are not stored: the refusal is (an
// inputs_rejected event), and the question is asked again under a new key
// with the reason; the other answers still count.
func (m *MCPTasks) UpdateTask(ctx context.Context, id string, responses mcp.InputResponseMap) error {
	task, err := m.controlled(ctx, id)
	if err != nil {
		return err
	}
	if mcpwire.IsBridgedCall(task) { // bridged.go
		return m.updateBridged(ctx, task, responses)
	}
	if task.Status != agentsmcp.TaskPaused || len(responses) == 0 || inputWaitOver(task, m.inputWait()) {
		// Past the input wait the MCP task has ended: its questions are
		// no longer outstanding (resume_task still answers the task).
		return nil
	}
	plan, err := m.Plans.FindPlanByID(ctx, task.PlanID)
	if err != nil {
		return err
	}
	if err := mayRun(ctx, plan); err != nil {
		return err
	}
	var req agents.ResumeRequest
	inputs := map[string]any{}
	var givers []string            // the steps whose answers gave inputs
	refused := map[string]string{} // step -> why its inputs were refused
	for _, q := range questions(task, plan) {
		er, ok := responses[q.key].(*mcp.ElicitResult)
		if !ok || er == nil {
			continue
		}
		switch {
		case er.Action == "cancel":
		case strings.HasPrefix(q.key, confirmKey+"."):
			if yes, _ := er.Content["confirm"].(bool); er.Action == "accept" && yes {
				req.Confirm = append(req.Confirm, q.step)
			} else {
				req.Reject = append(req.Reject, q.step)
			}
		case er.Action == "accept":
			given := answeredInputs(q, er.Content)
			if len(given) == 0 {
				continue
			}
			// Each answer is checked alone first, so that one refused
			// answer does not cost the others.
			if err := checkGiven(task, plan, given); err != nil {
				refused[q.step] = agentsmcp.ErrorMessage(err)
				continue
			}
			maps.Copy(inputs, given)
			givers = append(givers, q.step)
		default: // declined: the steps that need the inputs are skipped
			req.Reject = append(req.Reject, q.step)
		}
	}
	if len(inputs) > 0 {
		if err := checkGiven(task, plan, inputs); err != nil {
			// Each was fine alone, not together: all are refused.
			for _, step := range givers {
				refused[step] = agentsmcp.ErrorMessage(err)
			}
		} else if req.Inputs, err = json.Marshal(inputs); err != nil {
			return err
		}
	}
	if len(refused) > 0 {
		err := m.Executor.RejectInputs(context.WithoutCancel(ctx), id, refused)
		if agentsmcp.ErrorCode(err) == agentsmcp.ECONFLICT {
			return nil // the task changed meanwhile: these answers lost
		} else if err != nil {
			return err
		}
	}
	if len(req.Inputs) == 0 && len(req.Confirm) == 0 && len(req.Reject) == 0 {
		return nil
	}
	_, err = m.Executor.Resume(context.WithoutCancel(ctx), id, req, nil)
	switch agentsmcp.ErrorCode(err) {
	case agentsmcp.ECONFLICT, agentsmcp.EINVALID:
		// The task changed meanwhile: the answers were for questions
		// that are no longer open.
		return nil
	}
	return err
}

// answeredInputs are the values of an accepted inputs answer, for the
// names q asked only; those asked as JSON text are parsed (a text that is
// not JSON is taken as the string it is).
func answeredInputs(q question, content map[string]any) map[string]any {
	given := map[string]any{}
	for _, name := range q.inputs {
		v, ok := content[name]
		if !ok {
			continue
		}
		if s, isText := v.(string); isText && slices.Contains(q.json, name) {
			var parsed any
			if json.Unmarshal([]byte(s), &parsed) == nil {
				v = parsed
			}
		}
		given[name] = v
	}
	return given
}

// checkGiven checks task's inputs with given added against the plan's
// schema, as Executor.Resume will.
func checkGiven(task *agentsmcp.Task, plan *agentsmcp.Plan, given map[string]any) error {
	raw, err := json.Marshal(given)
	if err != nil {
		return agentsmcp.Errorf(agentsmcp.EINVALID, "the inputs are not JSON values: %v", err)
	}
	merged, err := planlang.MergeInputs(task.Inputs, raw)
	if err != nil {
		return err
	}
	return planlang.CheckInputs(plan, merged, false)
}

// CancelTask cancels the task; an ended task stays as it ended. It waits
// at most cancelWait for a runner in this process to stop; the task is
// cancelled in the store either way.
func (m *MCPTasks) CancelTask(ctx context.Context, id string) error {
	task, err := m.controlled(ctx, id)
	if err != nil || task.Status.Terminal() {
		return err
	}
	cctx, cancel := context.WithTimeout(ctx, cancelWait)
	defer cancel()
	_, err = m.Executor.Cancel(cctx, id)
	if err != nil && cctx.Err() != nil && ctx.Err() == nil {
		return nil // the runner is still stopping: the ack does not wait
	}
	return err
}

// cancelWait bounds how long tasks/cancel waits for a runner to stop.
const cancelWait = 2 * time.Second

// expired reports whether task ended more than retention before now: such
// a task is gone for MCP clients even before a sweep deletes it, as its
// ttlMs promised. A zero retention keeps tasks forever.
func expired(task *agentsmcp.Task, retention time.Duration, now time.Time) bool {
	return retention > 0 && task.Status.Terminal() && !task.EndedAt.IsZero() && now.Sub(task.EndedAt) > retention
}

// taskTTLMs is the ttlMs of task under retention (ADR 0010, A8): from
// CreatedAt to the end of its retention, counted from its end, or from now
// while it runs, so that a task that has not ended is never past its
// ttlMs. Nil (unlimited) when retention is zero.
func taskTTLMs(task *agentsmcp.Task, retention time.Duration, now time.Time) *int64 {
	if retention <= 0 {
		return nil
	}
	end := now
	if task.Status.Terminal() && !task.EndedAt.IsZero() {
		end = task.EndedAt
	}
	ttl := (end.Sub(task.CreatedAt) + retention).Milliseconds()
	return &ttl
}
