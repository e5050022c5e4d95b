package agentsmcp

import (
	"context"
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
	// error codes are UpdateTask's, with t validated by internal/validate.TaskChange
	// instead of TaskUpdate (EINVALID).
	UpdateTaskSteps(ctx context.Context, t *Task, c TaskChange) error
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
	// form common to the stores: internal/storedform.Task(t) of the task t
	// written. A
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
