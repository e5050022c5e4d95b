package agentsmcp

import (
	"context"
	"encoding/json"
	"time"
)

// Task is one execution of a plan, stored after every step transition so
// that another replica can resume it; only the holder of its lease runs it.
// Invariants: checked by internal/validate.Task; the whole task is at most
// MaxTaskBytes.
type Task struct {
	ID     string `json:"id"`
	PlanID string `json:"planId,omitempty"`
	// Principal is the ID of the creator ("": none known); only it or an
	// admin sees and controls the task (Principal.MaySee). Written at creation
	// only, as is PrincipalTools, its allowlist then (empty: every tool).
	Principal      string     `json:"principal,omitempty"`
	PrincipalTools []string   `json:"principalTools,omitempty"`
	Request        string     `json:"request"`
	Status         TaskStatus `json:"status"`
	// Steps holds the state of each plan step, in plan order.
	Steps []StepState `json:"steps"`
	// Inputs are the user's values, per the plan's Inputs schema.
	Inputs  json.RawMessage `json:"inputs,omitempty"`
	History []TaskEvent     `json:"history"`
	Error   string          `json:"error,omitempty"`
	// ErrorCode is the error code of a task the executor itself failed (not a
	// step's tool); empty otherwise.
	ErrorCode string `json:"errorCode,omitempty"`
	// Lease is changed only by AcquireTaskLease and ReleaseTaskLease.
	Lease TaskLease `json:"lease"`
	// Version is 1 when created, one more at each UpdateTask.
	Version   int64     `json:"version"`
	CreatedAt time.Time `json:"createdAt"`
	UpdatedAt time.Time `json:"updatedAt"`
	EndedAt   time.Time `json:"endedAt"` // zero until the task ends
}

// TaskStatus is where a task is in its life: pending, running, paused
// (waiting for the user), then succeeded, failed or cancelled.
type TaskStatus string

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
	// Output is the step's result, truncated to MaxStepOutputBytes.
	Output json.RawMessage `json:"output,omitempty"`
	Error  string          `json:"error,omitempty"`
	// Confirmed records the user's go-ahead for a step that needs one.
	Confirmed bool `json:"confirmed,omitempty"`
	// Asks counts the questions put to the user about the step; MCP tasks key
	// the step's question with it, so a key is never reused (0: asked once).
	Asks int `json:"asks,omitempty"`
	// RepairedTool and RepairedArguments replace the plan step's tool and
	// arguments once the executor repaired the step; empty otherwise.
	RepairedTool      string          `json:"repairedTool,omitempty"`
	RepairedArguments json.RawMessage `json:"repairedArguments,omitempty"`
	StartedAt         time.Time       `json:"startedAt"`
	EndedAt           time.Time       `json:"endedAt"`
}

// StepStatus is where a step is in its task.
type StepStatus string

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

// TaskEvent is one entry of a task's history; the Type vocabulary belongs
// to the executor.
type TaskEvent struct {
	At      time.Time `json:"at"`
	Type    string    `json:"type"`
	StepID  string    `json:"stepId,omitempty"`
	Message string    `json:"message,omitempty"`
}

// TaskLease says which replica executes a task, until when; zero is free.
type TaskLease struct {
	Owner     string    `json:"owner,omitempty"`
	ExpiresAt time.Time `json:"expiresAt"`
}

const (
	MaxStepOutputBytes = 256 << 10
	MaxTaskErrorBytes  = 8 << 10 // a task's or a step's Error
	MaxTaskEventBytes  = 4 << 10 // an event's Type + StepID + Message
	MaxTaskHistory     = 4 * MaxPlanSteps
	MaxLeaseOwnerBytes = 256
	MaxErrorCodeBytes  = 64 // a task's ErrorCode
	MaxTaskBytes       = 8 << 20
)

// TaskCounter counts stored tasks by status; every status is in the map.
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

// TaskService stores tasks and arbitrates which replica executes each, by
// atomic conditional updates (UpdateTask on Version, leases on the lease).
type TaskService interface {
	// CreateTask validates t, assigns ID, CreatedAt and pending Status when
	// empty, and stores it with Version 1 and t.Lease. EINVALID, ECONFLICT.
	CreateTask(ctx context.Context, t *Task) error
	// FindTaskByID returns ENOTFOUND for an unknown id.
	FindTaskByID(ctx context.Context, id string) (*Task, error)
	// FindTasks lists tasks matching f, newest first by CreatedAt.
	FindTasks(ctx context.Context, f TaskFilter) (items []*Task, next string, err error)
	// UpdateTask stores t if the stored Version equals t.Version, then sets
	// t.Version+1, t.UpdatedAt and trims t.History to MaxTaskHistory. ID,
	// Principal, PrincipalTools, CreatedAt and Lease are not written. ECONFLICT
	// for another Version, ENOTFOUND, EINVALID (t is then unchanged).
	UpdateTask(ctx context.Context, t *Task) error
	// AcquireTaskLease gives owner the lease of task id until now+ttl if it is
	// free, expired or owner's, and returns the task. ECONFLICT when another
	// holds it, ENOTFOUND, EINVALID for a bad owner or a ttl under 1 ms.
	AcquireTaskLease(ctx context.Context, id, owner string, ttl time.Duration) (*Task, error)
	// ReleaseTaskLease frees the lease if owner holds it. ENOTFOUND.
	ReleaseTaskLease(ctx context.Context, id, owner string) error
	// FindTasksToResume returns at most limit pending or running tasks with a
	// free or expired lease at now, oldest first.
	FindTasksToResume(ctx context.Context, now time.Time, limit int) ([]*Task, error)
	// DeleteEndedTasks deletes at most limit ended tasks with EndedAt before
	// endedBefore, earliest first, and reports how many; idempotent.
	DeleteEndedTasks(ctx context.Context, endedBefore time.Time, limit int) (int64, error)
}
