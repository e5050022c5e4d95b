package router

import (
	"errors"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agents-mcp/agents-mcp/internal/mcpwire"
	"github.com/agents-mcp/agents-mcp/router/tasks"
)

// The MCP Tasks extension and subscriptions/listen for task ids are served
// by package router/tasks; these are its names as the router's API gives
// them, and the router's side of the wiring.

// The methods of the MCP Tasks extension (SEP-2663) that the router serves
// once a task backend is added ([Router.AddTaskBackend]).
const (
	MethodTasksGet    = tasks.MethodTasksGet
	MethodTasksUpdate = tasks.MethodTasksUpdate
	MethodTasksCancel = tasks.MethodTasksCancel
)

// The bounds and intervals of the listen streams for task ids (see
// package router/tasks).
const (
	DefaultTaskPollInterval             = tasks.DefaultTaskPollInterval
	DefaultTaskPollMaxInterval          = tasks.DefaultTaskPollMaxInterval
	MaxListenTaskIDs                    = tasks.MaxListenTaskIDs
	DefaultMaxListenTaskIDsPerPrincipal = tasks.DefaultMaxListenTaskIDsPerPrincipal
)

type (
	// TaskIDParams are the params of tasks/get and tasks/cancel.
	TaskIDParams = tasks.TaskIDParams
	// TaskUpdateParams are the params of tasks/update.
	TaskUpdateParams = tasks.TaskUpdateParams
	// TaskAck is the answer of tasks/update and tasks/cancel.
	TaskAck = tasks.TaskAck
	// DetailedTask is the answer of tasks/get, and the CreateTaskResult.
	DetailedTask = tasks.DetailedTask
	// TaskWriteRecord describes one tasks/update or tasks/cancel that
	// reached a task backend ([Options.OnTaskWrite]).
	TaskWriteRecord = tasks.TaskWriteRecord
	// TaskHub wakes the listen streams of the tasks it is told about
	// ([HTTPOptions].TaskHub).
	TaskHub = tasks.TaskHub
)

// NewTaskHub returns a hub; [TaskHub.Close] ends the streams that use it.
func NewTaskHub() *TaskHub { return tasks.NewTaskHub() }

// MissingTasksCapability is the -32021 error of a request that needs the
// Tasks extension and did not declare it.
func MissingTasksCapability(what string) *jsonrpc.Error { return tasks.MissingTasksCapability(what) }

// AddTaskBackend serves the Tasks extension for the ids b owns. The first
// backend turns the extension on: server/discover advertises it (to
// 2026-07-28 clients only, since server/discover is theirs), tasks/get,
// tasks/update and tasks/cancel are served, and a tools/call whose request
// declares the extension carries a [mcpwire.TaskMode], so that the tool
// may answer with a task. Call it while assembling the server, before
// serving.
func (r *Router) AddTaskBackend(b mcpwire.TaskBackend) {
	r.mu.Lock()
	first := r.tasks == nil
	if first {
		r.tasks = &tasks.Backends{}
	}
	t := r.tasks
	r.mu.Unlock()
	t.Add(b)
	if !first {
		return
	}
	svc := &tasks.Service{Backends: t, OnWrite: r.onTaskWrite}
	r.use(false, svc.Middleware)
	errs := errors.Join(
		mcp.AddReceivingCustomMethod(r.server, MethodTasksGet, svc.HandleGet),
		mcp.AddReceivingCustomMethod(r.server, MethodTasksUpdate, svc.HandleUpdate),
		mcp.AddReceivingCustomMethod(r.server, MethodTasksCancel, svc.HandleCancel),
	)
	if errs != nil {
		panic(errs) // only possible if a tasks method shadowed a standard one
	}
}

// taskBackendsOrNil is the router's task backends, or nil before the first
// AddTaskBackend.
func (r *Router) taskBackendsOrNil() *tasks.Backends {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.tasks
}
