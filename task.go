package agentsmcp

import (
	"context"
	"encoding/json"
	"slices"
	"time"
	"unicode/utf8"
)

// Task is one execution of a plan. The executor stores it after every step
// transition, so that after a crash another replica resumes it from its
// last completed step. One replica at a time executes a task: the one that
// holds its lease (see TaskService).
//
// Invariants (checked by internal/validate.Task): Request is non-empty, at most
// MaxQueryTextBytes; Principal is at most MaxPrincipalIDBytes, and
// PrincipalTools holds at most MaxListItems patterns of at most
// MaxListEntryBytes; PlanID is empty or a plan id; Status is one of
// TaskStatuses; Steps hold at most MaxPlanSteps states with distinct step
// ids, each valid; Inputs is empty or a JSON object of at most
// MaxPlanInputsBytes; History holds events of at most MaxTaskEventBytes
// (stores keep only the newest MaxTaskHistory); Error is at most
// MaxTaskErrorBytes; ErrorCode is empty unless Status is failed, and then
// at most MaxErrorCodeBytes of lower-case letters and underscores; and the
// whole task, outputs and history included, is
// at most MaxTaskBytes.
type Task struct {
	ID     string `json:"id"`
	PlanID string `json:"planId,omitempty"`
	// Principal is the ID of the caller that created the task, "" when
	// none was known (no authentication). Only it, or an admin, sees and
	// controls the task over MCP (see Principal.MaySee), and the executor
	// runs its steps on its behalf, in its name in the audit trail.
	// Written at creation only: UpdateTask keeps the stored one.
	Principal string `json:"principal,omitempty"`
	// PrincipalTools is Principal's tool allowlist when it created the
	// task (empty: every tool). The executor checks every step against
	// it, on whichever replica runs the task. Written at creation only.
	PrincipalTools []string   `json:"principalTools,omitempty"`
	Request        string     `json:"request"`
	Status         TaskStatus `json:"status"`
	// Steps holds the state of each step of the plan, in plan order.
	Steps []StepState `json:"steps"`
	// Inputs are the values the user supplied, per the plan's Inputs
	// schema.
	Inputs  json.RawMessage `json:"inputs,omitempty"`
	History []TaskEvent     `json:"history"`
	Error   string          `json:"error,omitempty"`
	// ErrorCode is the application error code (EUNAVAILABLE, EINTERNAL,
	// …) of a task that the executor itself failed, not a step's tool: it
	// could not resume the task, or its own state of it was refused. Empty
	// for every other task, a task whose steps failed included, and for
	// tasks stored before it existed. MCP shows a task failed with a code
	// as status failed, with an error, rather than as a tool error.
	ErrorCode string `json:"errorCode,omitempty"`
	// Lease is changed only by AcquireTaskLease and ReleaseTaskLease;
	// UpdateTask ignores it.
	Lease TaskLease `json:"lease"`
	// Version counts the stored states of the task: 1 when created, one
	// more at each UpdateTask.
	Version   int64     `json:"version"`
	CreatedAt time.Time `json:"createdAt"`
	UpdatedAt time.Time `json:"updatedAt"`
	EndedAt   time.Time `json:"endedAt"` // zero until the task ends
}

// TaskStatus is where a task is in its life.
type TaskStatus string

// The task statuses. A task is pending until an executor starts it,
// running while it executes, paused while it waits for the user (inputs or
// a confirmation), and ends succeeded, failed or cancelled.
const (
	TaskPending   TaskStatus = "pending"
	TaskRunning   TaskStatus = "running"
	TaskPaused    TaskStatus = "paused"
	TaskSucceeded TaskStatus = "succeeded"
	TaskFailed    TaskStatus = "failed"
	TaskCancelled TaskStatus = "cancelled"
)

// TaskStatuses lists every valid TaskStatus.
var TaskStatuses = []TaskStatus{TaskPending, TaskRunning, TaskPaused, TaskSucceeded, TaskFailed, TaskCancelled}

// Terminal reports whether a task in status s has ended: succeeded, failed
// or cancelled.
func (s TaskStatus) Terminal() bool {
	return s == TaskSucceeded || s == TaskFailed || s == TaskCancelled
}

// StepState is the execution state of one plan step within a task.
type StepState struct {
	StepID   string     `json:"stepId"`
	Status   StepStatus `json:"status"`
	Attempts int        `json:"attempts"`
	// Output is the step's result as JSON, at most MaxStepOutputBytes:
	// the executor truncates larger results before storing them.
	Output json.RawMessage `json:"output,omitempty"`
	Error  string          `json:"error,omitempty"`
	// Confirmed records the user's go-ahead for a step that needs one (a
	// destructive tool, or a step planned with NeedsConfirmation), so that
	// it is asked once, whoever resumes the task.
	Confirmed bool `json:"confirmed,omitempty"`
	// Asks counts the questions put to the user about the step: one more
	// each time it starts waiting (for inputs or a confirmation), and each
	// time an answer was taken that did not settle its question (some of
	// its inputs are still missing, or the plan's schema refused them).
	// MCP tasks key the step's question with it, so that a key is never
	// reused once answered (ADR 0010, A4). 0 for a step never asked, and
	// for steps stored before it existed, which count as asked once.
	Asks int `json:"asks,omitempty"`
	// RepairedTool and RepairedArguments replace the plan step's tool and
	// arguments once the executor repaired the step (its tool failed for
	// good and another could serve its sub-goal): the plan is shared and
	// never changes, so the replacement lives in the task, and whoever
	// resumes it runs the repaired step. Empty for a step not repaired.
	// RepairedArguments follow the rules of PlanStep.Arguments (references
	// included).
	RepairedTool      string          `json:"repairedTool,omitempty"`
	RepairedArguments json.RawMessage `json:"repairedArguments,omitempty"`
	StartedAt         time.Time       `json:"startedAt"`
	EndedAt           time.Time       `json:"endedAt"`
}

// StepStatus is where a step is in its task.
type StepStatus string

// The step statuses.
const (
	StepPending             StepStatus = "pending"
	StepRunning             StepStatus = "running"
	StepSucceeded           StepStatus = "succeeded"
	StepFailed              StepStatus = "failed"
	StepSkipped             StepStatus = "skipped"
	StepCancelled           StepStatus = "cancelled"
	StepWaitingInput        StepStatus = "waiting_input"
	StepWaitingConfirmation StepStatus = "waiting_confirmation"
)

// StepStatuses lists every valid StepStatus.
var StepStatuses = []StepStatus{
	StepPending, StepRunning, StepSucceeded, StepFailed, StepSkipped, StepCancelled,
	StepWaitingInput, StepWaitingConfirmation,
}

// TaskEvent is one entry of a task's history: "step_started",
// "step_failed", "paused", … The Type vocabulary belongs to the executor.
type TaskEvent struct {
	At      time.Time `json:"at"`
	Type    string    `json:"type"`
	StepID  string    `json:"stepId,omitempty"`
	Message string    `json:"message,omitempty"`
}

// TaskLease says which replica executes a task, until when. The zero
// lease is free.
type TaskLease struct {
	Owner     string    `json:"owner,omitempty"`
	ExpiresAt time.Time `json:"expiresAt"`
}

// Limits on tasks. MaxTaskBytes keeps a task far below MongoDB's 16 MB
// document limit whatever its steps hold. MaxTaskHistory leaves room for
// the start and the end of every step of the largest plan, plus retries,
// pauses and resumes, so that a task's history is whole in practice.
const (
	MaxStepOutputBytes = 256 << 10
	MaxTaskErrorBytes  = 8 << 10 // a task's or a step's Error
	MaxTaskEventBytes  = 4 << 10 // an event's Type + StepID + Message
	MaxTaskHistory     = 4 * MaxPlanSteps
	MaxLeaseOwnerBytes = 256
	MaxErrorCodeBytes  = 64 // a task's ErrorCode
	MaxTaskBytes       = 8 << 20
)

// TaskCounter counts the stored tasks by status, for metrics: every status
// of TaskStatuses is in the map, 0 when no task has it.
type TaskCounter interface {
	CountTasksByStatus(ctx context.Context) (map[TaskStatus]int64, error)
}

// TaskFilter selects tasks; zero fields select everything.
type TaskFilter struct {
	Status    TaskStatus
	PlanID    string
	Principal string // created by this principal
	Cursor    string
	Limit     int
}

// TaskService stores tasks, and arbitrates which replica executes each.
//
// Every change of a stored task is one atomic conditional update, never a
// read-modify-write: UpdateTask is a compare-and-set on Version, and the
// lease methods compare the stored lease. Lease changes do not change
// Version, and UpdateTask does not change the lease, so renewing a lease
// never makes an executor's next UpdateTask fail.
type TaskService interface {
	// CreateTask validates t, assigns ID when empty, CreatedAt when zero,
	// Status pending when empty, and stores it with Version 1, UpdatedAt
	// CreatedAt and t.Lease (free when its Owner is empty: an executor that
	// creates a task to run it passes its lease, so that no other replica
	// takes the task in between); on success t holds those values, and a
	// History trimmed to its newest MaxTaskHistory events. EINVALID for a
	// broken invariant or an overlong lease owner, ECONFLICT for a taken ID.
	CreateTask(ctx context.Context, t *Task) error
	// FindTaskByID returns ENOTFOUND for an unknown id.
	FindTaskByID(ctx context.Context, id string) (*Task, error)
	// FindTasks lists tasks matching f, newest first by CreatedAt (see
	// memory.go).
	FindTasks(ctx context.Context, f TaskFilter) (items []*Task, next string, err error)
	// UpdateTask stores t in place of the task with t's ID, provided the
	// stored Version equals t.Version; it then sets t.Version to the
	// stored Version + 1 and t.UpdatedAt to now, and trims t.History to
	// its newest MaxTaskHistory events. Every field is stored but ID,
	// Principal, PrincipalTools, CreatedAt and Lease. ECONFLICT when the stored Version differs (the
	// task changed since t was read), ENOTFOUND for an unknown id, EINVALID
	// when t fails internal/validate.TaskUpdate; t is unchanged then.
	UpdateTask(ctx context.Context, t *Task) error
	// AcquireTaskLease gives owner the lease of task id until now + ttl,
	// provided the lease is free, expired, or held by owner already (a
	// renewal), and returns the task with its new lease. ECONFLICT when
	// another owner holds an unexpired lease, ENOTFOUND for an unknown id,
	// EINVALID for an empty or overlong owner or a ttl under a
	// millisecond. A lease expires at ExpiresAt, at millisecond precision.
	// The status of the task is not checked.
	AcquireTaskLease(ctx context.Context, id, owner string, ttl time.Duration) (*Task, error)
	// ReleaseTaskLease frees the lease of task id if owner holds it, and
	// does nothing otherwise. ENOTFOUND for an unknown id.
	ReleaseTaskLease(ctx context.Context, id, owner string) error
	// FindTasksToResume returns at most limit (see PageSize) tasks that
	// are pending or running and whose lease is free or expired at now,
	// oldest first (by CreatedAt, ties by id ascending): the tasks a
	// replica should acquire and resume.
	FindTasksToResume(ctx context.Context, now time.Time, limit int) ([]*Task, error)
	// DeleteEndedTasks deletes at most limit (see PageSize) tasks that
	// have ended (a Terminal status) with a non-zero EndedAt before
	// endedBefore, the earliest ended first, and reports how many it
	// deleted: the retention of tasks, which a caller repeats until fewer
	// than limit are deleted. A task that has not ended is never deleted,
	// whatever its times. Deleting is idempotent, so that every replica
	// may sweep.
	DeleteEndedTasks(ctx context.Context, endedBefore time.Time, limit int) (int64, error)
}

// StoredBytes is the size of what t holds, as MaxTaskBytes and the task
// quotas count it: its request, inputs and error, its steps' ids,
// outputs, errors and repairs, and the newest MaxTaskHistory events of
// its history. Stores record it at each write, so that [UsageService]
// sums it without reading the tasks.
func (t *Task) StoredBytes() int64 {
	size := len(t.Request) + len(t.Inputs) + len(t.Error)
	for i := range t.Steps {
		s := &t.Steps[i]
		size += len(s.StepID) + len(s.Output) + len(s.Error) + len(s.RepairedTool) + len(s.RepairedArguments)
	}
	for _, e := range t.History[max(len(t.History)-MaxTaskHistory, 0):] {
		size += len(e.Type) + len(e.StepID) + len(e.Message)
	}
	return int64(size)
}

// AddEvent appends an event to t's history, its Message cut to fit
// MaxTaskEventBytes, and drops the oldest events beyond MaxTaskHistory.
func (t *Task) AddEvent(e TaskEvent) {
	if room := MaxTaskEventBytes - len(e.Type) - len(e.StepID); len(e.Message) > room {
		e.Message = TruncateUTF8(e.Message, max(room, 0))
	}
	t.History = TrimTaskHistory(append(t.History, e))
}

// TrimTaskHistory returns the newest MaxTaskHistory events of h (h itself
// when it is short enough).
func TrimTaskHistory(h []TaskEvent) []TaskEvent {
	if len(h) <= MaxTaskHistory {
		return h
	}
	return slices.Clone(h[len(h)-MaxTaskHistory:])
}

// TruncateUTF8 cuts s to at most n bytes without splitting a character:
// how every stored text limit of the stores is applied.
func TruncateUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// Creator returns the principal on whose behalf t's steps run: its
// Principal with the allowlist it had when it created t (scopes are not
// kept, so a step never acts with more than the rights to call tools; the
// anonymous principal keeps its every scope), or nil when t has none.
func (t *Task) Creator() *Principal {
	if t.Principal == "" {
		return nil
	}
	p := &Principal{ID: t.Principal, Tools: slices.Clone(t.PrincipalTools)}
	if t.Principal == AnonymousPrincipal {
		p.Scopes = slices.Clone(Scopes)
	}
	return p
}
