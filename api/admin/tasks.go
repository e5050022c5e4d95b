package admin

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"time"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/internal/redact"
	"github.com/agents-mcp/agents-mcp/internal/view"
)

// This file serves tasks, and the plans and thoughts they come from.

// TaskSummary is a task as GET /tasks lists it: without step outputs and
// history, which GET /tasks/{id} returns, so that a page stays small
// whatever the tasks hold.
type TaskSummary struct {
	ID     string `json:"id"`
	PlanID string `json:"planId,omitempty"`
	// Principal is the ID of the caller that created the task.
	Principal string               `json:"principal,omitempty"`
	Request   string               `json:"request"`
	Status    agentsmcp.TaskStatus `json:"status"`
	Error     string               `json:"error,omitempty"`
	// StepCounts counts the task's steps by status.
	StepCounts map[agentsmcp.StepStatus]int `json:"stepCounts"`
	Version    int64                        `json:"version"`
	CreatedAt  time.Time                    `json:"createdAt"`
	UpdatedAt  time.Time                    `json:"updatedAt"`
	EndedAt    time.Time                    `json:"endedAt"`
}

// summarize lists t as shown to people, secrets redacted.
func summarize(t *agentsmcp.Task) TaskSummary {
	t = view.Task(t)
	steps := map[agentsmcp.StepStatus]int{}
	for _, s := range t.Steps {
		steps[s.Status]++
	}
	return TaskSummary{
		ID: t.ID, PlanID: t.PlanID, Principal: t.Principal, Request: t.Request, Status: t.Status, Error: t.Error, StepCounts: steps,
		Version: t.Version, CreatedAt: t.CreatedAt, UpdatedAt: t.UpdatedAt, EndedAt: t.EndedAt,
	}
}

// TaskDetail is a task with the plan it executes (null when it has none,
// or when the plan is not stored), secrets redacted.
type TaskDetail struct {
	*agentsmcp.Task
	Plan *agentsmcp.Plan `json:"plan"`
}

// GET /tasks
func (h *Handler) listTasks(w http.ResponseWriter, r *http.Request) error {
	if h.opts.Tasks == nil {
		return unavailable("tasks")
	}
	p, err := queryParams(r, "status", "planId", "principal", "limit", "cursor")
	if err != nil {
		return err
	}
	f := agentsmcp.TaskFilter{PlanID: p.str("planId"), Principal: p.str("principal"), Cursor: p.str("cursor")}
	if f.Status, err = oneOf(p, "status", agentsmcp.TaskStatuses); err != nil {
		return err
	}
	if f.Limit, err = p.limit(); err != nil {
		return err
	}
	ctx, cancel := h.requestContext(r)
	defer cancel()
	ts, next, err := h.opts.Tasks.FindTasks(ctx, f)
	if err != nil {
		return err
	}
	items := make([]TaskSummary, len(ts))
	for i, t := range ts {
		items[i] = summarize(t)
	}
	writeJSON(w, http.StatusOK, newPage(items, next, ""))
	return nil
}

// GET /tasks/{id}: the task with its steps, history and plan.
func (h *Handler) getTask(w http.ResponseWriter, r *http.Request) error {
	if h.opts.Tasks == nil {
		return unavailable("tasks")
	}
	if _, err := queryParams(r); err != nil {
		return err
	}
	ctx, cancel := h.requestContext(r)
	defer cancel()
	t, err := h.taskAt(ctx, r)
	if err != nil {
		return err
	}
	d := TaskDetail{Task: view.Task(t)}
	if t.PlanID != "" && h.opts.Plans != nil {
		plan, err := h.opts.Plans.FindPlanByID(ctx, t.PlanID)
		if err != nil && agentsmcp.ErrorCode(err) != agentsmcp.ENOTFOUND {
			return err
		}
		if plan != nil {
			d.Plan = view.Plan(plan)
		}
	}
	writeJSON(w, http.StatusOK, d)
	return nil
}

// POST /tasks/{id}/cancel: the task after cancelling. Cancelling a
// cancelled task is a no-op; one that ended otherwise is a conflict.
func (h *Handler) cancelTask(w http.ResponseWriter, r *http.Request) error {
	if h.opts.Tasks == nil || h.opts.Executor == nil {
		return unavailable("task cancellation")
	}
	if _, err := queryParams(r); err != nil {
		return err
	}
	if err := noBody(r); err != nil {
		return err
	}
	ctx, cancel := h.requestContext(r)
	defer cancel()
	t, err := h.taskAt(ctx, r)
	if err != nil {
		return err
	}
	id := t.ID
	if t.Status.Terminal() && t.Status != agentsmcp.TaskCancelled {
		return agentsmcp.Errorf(agentsmcp.ECONFLICT, "task %s has already ended: %s", id, t.Status)
	}
	if t, err = h.opts.Executor.Cancel(ctx, id); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, view.Task(t))
	return nil
}

// ResumeInput is the body of POST /tasks/{id}/resume: what the paused
// task waits for.
type ResumeInput struct {
	// Inputs are merged into the task's inputs (top-level keys replace).
	Inputs json.RawMessage `json:"inputs,omitempty"`
	// Confirm lists the steps allowed to run; Reject those refused (they
	// are skipped, and so are their dependents).
	Confirm []string `json:"confirm,omitempty"`
	Reject  []string `json:"reject,omitempty"`
}

// POST /tasks/{id}/resume: the task as stored after the answers; it runs
// on in the background.
func (h *Handler) resumeTask(w http.ResponseWriter, r *http.Request) error {
	if h.opts.Tasks == nil || h.opts.Resumer == nil {
		return unavailable("task resumption")
	}
	if _, err := queryParams(r); err != nil {
		return err
	}
	var in ResumeInput
	if err := decodeBody(r, &in); err != nil {
		return err
	}
	if len(in.Inputs) == 0 && len(in.Confirm) == 0 && len(in.Reject) == 0 {
		return invalidf("give inputs, or steps to confirm or reject")
	}
	if len(in.Inputs) > 0 && !bytes.HasPrefix(bytes.TrimSpace(in.Inputs), []byte("{")) {
		return invalidf("inputs must be a JSON object")
	}
	id, err := pathID(r, agentsmcp.TaskIDPrefix, "task")
	if err != nil {
		return err
	}
	ctx, cancel := h.requestContext(r)
	defer cancel()
	t, err := h.opts.Resumer.Resume(ctx, id, in)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, view.Task(t))
	return nil
}

// GET /plans/{id}
func (h *Handler) getPlan(w http.ResponseWriter, r *http.Request) error {
	if h.opts.Plans == nil {
		return unavailable("plans")
	}
	return getByID(h, w, r, agentsmcp.PlanIDPrefix, "plan", func(ctx context.Context, id string) (*agentsmcp.Plan, error) {
		p, err := h.opts.Plans.FindPlanByID(ctx, id)
		if err != nil {
			return nil, err
		}
		return view.Plan(p), nil
	})
}

// GET /thoughts/{id}
func (h *Handler) getThought(w http.ResponseWriter, r *http.Request) error {
	if h.opts.Thoughts == nil {
		return unavailable("thoughts")
	}
	return getByID(h, w, r, agentsmcp.ThoughtIDPrefix, "thought", func(ctx context.Context, id string) (*agentsmcp.Thought, error) {
		th, err := h.opts.Thoughts.FindThoughtByID(ctx, id)
		if err != nil {
			return nil, err
		}
		return view.Thought(th), nil
	})
}

// getByID serves GET /<kind>/{id}: no query parameters, an id with prefix,
// the stored item as find returns it.
func getByID[T any](h *Handler, w http.ResponseWriter, r *http.Request, prefix, what string, find func(context.Context, string) (T, error)) error {
	if _, err := queryParams(r); err != nil {
		return err
	}
	id, err := pathID(r, prefix, what)
	if err != nil {
		return err
	}
	ctx, cancel := h.requestContext(r)
	defer cancel()
	item, err := find(ctx, id)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, item)
	return nil
}

// scrubResumeBody keeps the names of the inputs a resume gives, not their
// values, in the audit trail: inputs are what a plan asks the user for,
// passwords and keys included (resume_task's audit entry names only the
// keys too).
func scrubResumeBody(body json.RawMessage) json.RawMessage {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(body, &m); err != nil {
		return body // not an object: redact.Arguments records only its size
	}
	var inputs map[string]json.RawMessage
	if err := json.Unmarshal(m["inputs"], &inputs); err == nil && inputs != nil {
		for k := range inputs {
			inputs[k] = json.RawMessage(`"` + redact.Marker + `"`)
		}
		m["inputs"], _ = json.Marshal(inputs)
	} else if _, ok := m["inputs"]; ok {
		m["inputs"] = json.RawMessage(`"` + redact.Marker + `"`)
	}
	out, err := json.Marshal(m)
	if err != nil {
		return body
	}
	return out
}

// taskAt reads the task whose id r's path names: EINVALID for an id that
// is not a task's, ENOTFOUND for an unknown one.
func (h *Handler) taskAt(ctx context.Context, r *http.Request) (*agentsmcp.Task, error) {
	id, err := pathID(r, agentsmcp.TaskIDPrefix, "task")
	if err != nil {
		return nil, err
	}
	return h.opts.Tasks.FindTaskByID(ctx, id)
}
