package mcpwire

import (
	"context"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// This file holds the MCP Tasks extension (SEP-2663) as the router, the
// upstream pool and the agents' task face share it.

// TasksExtension is the identifier of the MCP Tasks extension (SEP-2663),
// advertised in server/discover under capabilities.extensions and declared
// by a client, per request, under
// _meta["io.modelcontextprotocol/clientCapabilities"].extensions.
const TasksExtension = "io.modelcontextprotocol/tasks"

// MCPTaskStatus is the status of a task on the MCP wire (SEP-2663), which is
// coarser than [TaskStatus]: see ADR 0010 for the mapping.
type MCPTaskStatus string

// The statuses of an MCP task. Only working and input_required are not
// terminal.
const (
	MCPTaskWorking       MCPTaskStatus = "working"
	MCPTaskInputRequired MCPTaskStatus = "input_required"
	MCPTaskCompleted     MCPTaskStatus = "completed"
	MCPTaskFailed        MCPTaskStatus = "failed"
	MCPTaskCancelled     MCPTaskStatus = "cancelled"
)

// Terminal reports whether s is an end state.
func (s MCPTaskStatus) Terminal() bool {
	return s == MCPTaskCompleted || s == MCPTaskFailed || s == MCPTaskCancelled
}

// MCPTask is what tasks/get shows of a task (the DetailedTask of SEP-2663):
// a view that a [TaskBackend] renders from whatever it stores.
type MCPTask struct {
	ID            string
	Status        MCPTaskStatus
	StatusMessage string
	CreatedAt     time.Time
	UpdatedAt     time.Time
	// TTLMs is how long, in milliseconds from CreatedAt, the task stays
	// readable; nil means unlimited.
	TTLMs *int64
	// PollIntervalMs suggests how often to poll; zero leaves it out.
	PollIntervalMs int64
	// InputRequests are the questions of an input_required task, by key;
	// a key is never reused for another question of the same task.
	InputRequests mcp.InputRequestMap
	// Result is set when Status is completed: what the tool call would
	// have returned synchronously (a tool error is a result with IsError).
	Result *mcp.CallToolResult
	// Error is set when Status is failed: a protocol-level failure, which
	// the router turns into a JSON-RPC error object as it does any error
	// (a *jsonrpc.Error keeps its code).
	Error error
}

// TaskBackend serves the tasks/* methods for the task ids it owns. Errors
// with code ENOTFOUND (an unknown id, or one the caller may not see) and
// EINVALID or EUNAUTHORIZED (a caller that may see but not change the task)
// become -32602 on the wire.
type TaskBackend interface {
	// Owns reports whether id is one of this backend's ids (by its form;
	// it does not look the task up).
	Owns(id string) bool
	// GetTask returns the task as the caller of ctx may see it.
	GetTask(ctx context.Context, id string) (*MCPTask, error)
	// UpdateTask hands answers to the task's outstanding questions; keys
	// that are not outstanding are ignored. It returns once the answers
	// are stored, not once the task used them.
	UpdateTask(ctx context.Context, id string, responses mcp.InputResponseMap) error
	// CancelTask asks the task to stop. A task that has ended stays as it
	// ended, and that is not an error.
	CancelTask(ctx context.Context, id string) error
}

// TaskMode is put in the context of a tools/call by the router when the
// request declared the Tasks extension: the tool may then answer by
// creating a task instead of with its result. A tool that does calls
// [TaskMode.Created] once the task is stored (tasks/get must find it), and
// the router answers with a CreateTaskResult for that task instead of the
// tool's own result.
type TaskMode struct {
	mu sync.Mutex
	id string
}

type taskModeKey struct{}

// WithTaskMode returns ctx carrying m; a nil m removes an inherited mode,
// so that a call made inside a task-mode call is not a task-mode call.
func WithTaskMode(ctx context.Context, m *TaskMode) context.Context {
	return context.WithValue(ctx, taskModeKey{}, m)
}

// TaskModeFrom returns the task mode of ctx, or nil: the caller wants a
// plain result.
func TaskModeFrom(ctx context.Context) *TaskMode {
	m, _ := ctx.Value(taskModeKey{}).(*TaskMode)
	return m
}

// Created records that the call created task id, which is stored.
func (m *TaskMode) Created(id string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.id = id
}

// CreatedID is the id given to [TaskMode.Created], or "".
func (m *TaskMode) CreatedID() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.id
}
