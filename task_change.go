package agentsmcp

import (
	"context"
	"encoding/json"
	"slices"
	"unicode/utf8"
)

// TaskChange names what changed in a task since the version it was read
// at, so that a store writes only that (see [TaskStepUpdater]).
type TaskChange struct {
	// Steps are the positions in Task.Steps of the step states that
	// changed, in any order, each once.
	Steps []int
	// Events is how many events were appended to Task.History: its newest
	// Events entries are new, every older one is stored already. A
	// history that was trimmed (it holds MaxTaskHistory events) cannot be
	// appended to: write it whole with UpdateTask.
	Events int
}

// TaskStepUpdater is implemented by the task stores that can store a step
// transition without rewriting the whole task: the executor uses it when
// its store has it, and UpdateTask otherwise.
type TaskStepUpdater interface {
	// UpdateTaskSteps is UpdateTask writing only what c names: the
	// fields of the task itself that UpdateTask stores (status, inputs,
	// error, …), the step states at c.Steps, and the newest c.Events
	// events of t.History, appended to the stored history. The caller
	// vouches that every other step state and event is as stored at
	// t.Version. The compare-and-set on Version, the effect on t and the
	// error codes are UpdateTask's, with t validated by ValidateChange
	// instead of ValidateUpdate (EINVALID).
	UpdateTaskSteps(ctx context.Context, t *Task, c TaskChange) error
}

// ValidateChange checks t as UpdateTaskSteps takes it with c: the fields of
// the task and the step states c names as ValidateUpdate would, the step
// ids of all of them distinct, the whole task within MaxTaskBytes, and c
// consistent with t. The step states c does not name were validated when
// they were stored, and are not checked again: that is most of the cost of
// ValidateUpdate on a large task.
func (t *Task) ValidateChange(c TaskChange) error {
	if t == nil {
		return Errorf(EINVALID, "task is required")
	}
	if c.Events < 0 || c.Events > len(t.History) {
		return Errorf(EINVALID, "task change appends %d events to a history of %d", c.Events, len(t.History))
	}
	if len(t.History) >= MaxTaskHistory {
		return Errorf(EINVALID, "task history holds %d events: it may have been trimmed, so it is written whole", len(t.History))
	}
	for _, i := range c.Steps {
		if i < 0 || i >= len(t.Steps) {
			return Errorf(EINVALID, "task change names step %d of %d", i, len(t.Steps))
		}
	}
	// The task's own fields, without its steps: Validate does the rest.
	head := *t
	head.Steps = nil
	head.History = t.History[len(t.History)-c.Events:]
	if err := head.ValidateUpdate(); err != nil {
		return err
	}
	if len(t.Steps) > MaxPlanSteps {
		return Errorf(EINVALID, "task has %d steps; the limit is %d", len(t.Steps), MaxPlanSteps)
	}
	for _, i := range c.Steps {
		if err := validateStepState(&t.Steps[i]); err != nil {
			return err
		}
	}
	size := len(t.Request) + len(t.Inputs) + len(t.Error)
	seen := make(map[string]bool, len(t.Steps))
	for i := range t.Steps {
		s := &t.Steps[i]
		if seen[s.StepID] {
			return Errorf(EINVALID, "task step %q has two states", s.StepID)
		}
		seen[s.StepID] = true
		size += len(s.StepID) + len(s.Output) + len(s.Error) + len(s.RepairedTool) + len(s.RepairedArguments)
	}
	for _, e := range t.History {
		size += len(e.Type) + len(e.StepID) + len(e.Message)
	}
	if size > MaxTaskBytes {
		return Errorf(EINVALID, "task holds %d bytes; the limit is %d", size, MaxTaskBytes)
	}
	return nil
}

// validateStepState checks one step state as Task.Validate does.
func validateStepState(s *StepState) error {
	switch {
	case !IsStepID(s.StepID):
		return Errorf(EINVALID, "task step id %q does not match %v", s.StepID, StepIDPattern)
	case !slices.Contains(StepStatuses, s.Status):
		return Errorf(EINVALID, "task step %q: status %q is not one of %v", s.StepID, s.Status, StepStatuses)
	case s.Attempts < 0:
		return Errorf(EINVALID, "task step %q: attempts %d is negative", s.StepID, s.Attempts)
	case s.Asks < 0:
		return Errorf(EINVALID, "task step %q: asks %d is negative", s.StepID, s.Asks)
	case len(s.Output) > MaxStepOutputBytes:
		return Errorf(EINVALID, "task step %q: output is %d bytes; the limit is %d", s.StepID, len(s.Output), MaxStepOutputBytes)
	case len(s.Output) > 0 && (!json.Valid(s.Output) || !utf8.Valid(s.Output)):
		return Errorf(EINVALID, "task step %q: output is not valid JSON", s.StepID)
	case len(s.Error) > MaxTaskErrorBytes:
		return Errorf(EINVALID, "task step %q: error is %d bytes; the limit is %d", s.StepID, len(s.Error), MaxTaskErrorBytes)
	case s.RepairedTool != "" && !ToolNamePattern.MatchString(s.RepairedTool):
		return Errorf(EINVALID, "task step %q: repaired tool %q does not match %v", s.StepID, s.RepairedTool, ToolNamePattern)
	case s.RepairedTool == "" && len(s.RepairedArguments) > 0:
		return Errorf(EINVALID, "task step %q: repaired arguments without a repaired tool", s.StepID)
	}
	return checkJSONObject(s.RepairedArguments, MaxStepArgumentsBytes, "task step "+s.StepID+" repaired arguments")
}

// UpdateTaskSteps stores the change c of t in s: with s's UpdateTaskSteps
// when s is a [TaskStepUpdater], else with UpdateTask, which writes the
// whole task. Wrappers of a TaskService use it to pass changes on.
func UpdateTaskSteps(ctx context.Context, s TaskService, t *Task, c TaskChange) error {
	if u, ok := s.(TaskStepUpdater); ok {
		return u.UpdateTaskSteps(ctx, t, c)
	}
	return s.UpdateTask(ctx, t)
}

// VerbatimTaskStore is implemented by the task stores that store a task
// as they are given it. A reader that knows the last write of a task (an
// executor that wrote its end) may then skip reading it back.
type VerbatimTaskStore interface {
	// TasksVerbatim reports whether FindTaskByID returns a task exactly
	// as its last write (CreateTask, UpdateTask, UpdateTaskSteps, with
	// the Version and UpdatedAt they set, and its lease as the last
	// AcquireTaskLease or ReleaseTaskLease left it) gave it, in the stored
	// form common to the stores: t.StoredForm() of the task t written. A
	// wrapper that changes what it stores (sealing, redaction) reports
	// false or does not implement it.
	TasksVerbatim() bool
}

// TasksVerbatim reports whether s is a [VerbatimTaskStore] that stores
// tasks verbatim.
func TasksVerbatim(s TaskService) bool {
	v, ok := s.(VerbatimTaskStore)
	return ok && v.TasksVerbatim()
}
