package agentsmcp

import (
	"context"
)

// TaskChange names what changed in a task since the version it was read at.
type TaskChange struct {
	// Steps are the positions in Task.Steps of the changed step states.
	Steps []int
	// Events is how many events were appended (a trimmed history cannot be
	// appended to: use UpdateTask).
	Events int
}

// TaskStepUpdater is implemented by task stores that can store a step
// transition without rewriting the whole task.
type TaskStepUpdater interface {
	// UpdateTaskSteps is UpdateTask writing only the task's own fields, the
	// steps at c.Steps and the newest c.Events events; the caller vouches the
	// rest is as stored at t.Version. Validated by
	// internal/validate.TaskChange.
	UpdateTaskSteps(ctx context.Context, t *Task, c TaskChange) error
}

// VerbatimTaskStore is implemented by task stores that return a task exactly
// as its last write gave it, in internal/storedform.Task's form, so a reader
// that knows that write may skip reading it back.
type VerbatimTaskStore interface {
	// TasksVerbatim is false for wrappers that change what they store.
	TasksVerbatim() bool
}
