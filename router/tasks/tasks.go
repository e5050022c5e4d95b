// Package tasks serves the MCP Tasks extension (SEP-2663, ADR 0010) for
// the router: tasks/get, tasks/update and tasks/cancel over the task
// backends ([Service]), the middleware that makes a tools/call a task,
// and the subscriptions/listen streams for task ids with the [TaskHub]
// that wakes them ([Listener]). The router adds them with its first task
// backend; nothing here knows the registry or the transports.
package tasks

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/internal/mcpwire"
	"github.com/agents-mcp/agents-mcp/router/internal/resulttype"
	"github.com/agents-mcp/agents-mcp/router/internal/rpcerror"
)

// The methods of the MCP Tasks extension (SEP-2663) that the router serves
// once a task backend is added (router.Router.AddTaskBackend). tasks/list and
// tasks/result of the 2025 experimental tasks are not among them: they
// get -32601.
const (
	MethodTasksGet    = "tasks/get"
	MethodTasksUpdate = "tasks/update"
	MethodTasksCancel = "tasks/cancel"
)

// Task poll intervals suggested to clients (ADR 0010, A3).
const (
	pollWorkingMs       = 1000
	pollInputRequiredMs = 5000
)

// TaskIDParams are the params of tasks/get and tasks/cancel.
type TaskIDParams struct {
	mcp.ParamsBase
	TaskID string `json:"taskId"`
}

// TaskUpdateParams are the params of tasks/update. The responses stay raw
// until the router reads them, because a response it cannot decode is for
// a key that is not outstanding, and is ignored rather than refused.
type TaskUpdateParams struct {
	mcp.ParamsBase
	TaskID         string                     `json:"taskId"`
	InputResponses map[string]json.RawMessage `json:"inputResponses"`
}

// TaskAck is the empty answer of tasks/update and tasks/cancel: only its
// resultType ("complete", set by the revision middleware).
type TaskAck struct {
	mcp.ResultBase
	resulttype.Base
}

// DetailedTask is the answer of tasks/get (resultType "complete", set by the
// revision middleware) and, with only the Task base fields and resultType
// "task", the CreateTaskResult that replaces the result of a tools/call
// that created a task.
type DetailedTask struct {
	mcp.ResultBase
	resulttype.Base
	TaskID        string                `json:"taskId"`
	Status        mcpwire.MCPTaskStatus `json:"status"`
	StatusMessage string                `json:"statusMessage,omitempty"`
	CreatedAt     string                `json:"createdAt"`
	LastUpdatedAt string                `json:"lastUpdatedAt"`
	// TTLMs is always sent: null means unlimited.
	TTLMs          *int64 `json:"ttlMs"`
	PollIntervalMs int64  `json:"pollIntervalMs,omitempty"`
	// InputRequests is set, possibly empty, only when input_required.
	InputRequests *mcp.InputRequestMap `json:"inputRequests,omitempty"`
	Result        *mcp.CallToolResult  `json:"result,omitempty"`
	Error         *jsonrpc.Error       `json:"error,omitempty"`
}

// Backends are the router's task backends, in the order added. A nil
// *Backends has none.
type Backends struct {
	mu   sync.RWMutex
	list []mcpwire.TaskBackend
}

// Add adds b after the backends added before.
func (t *Backends) Add(b mcpwire.TaskBackend) {
	t.mu.Lock()
	t.list = append(t.list, b)
	t.mu.Unlock()
}

// Owner is the first backend that owns the task id, or nil.
func (t *Backends) Owner(id string) mcpwire.TaskBackend {
	if t == nil {
		return nil
	}
	t.mu.RLock()
	defer t.mu.RUnlock()
	for _, b := range t.list {
		if b.Owns(id) {
			return b
		}
	}
	return nil
}

// Service serves the Tasks extension for its backends: the methods
// tasks/get, tasks/update and tasks/cancel, and the middleware around
// tools/call and server/discover (the router adds them with its first
// task backend).
type Service struct {
	Backends *Backends
	// OnWrite, if set, is told about every tasks/update and tasks/cancel
	// that reached a backend; it must not block.
	OnWrite func(TaskWriteRecord)
}

// Middleware advertises the extension in server/discover and wraps
// tools/call: it sets or clears the task mode, and when the tool created a
// task it answers with the CreateTaskResult instead of the tool's result.
func (r *Service) Middleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		switch method {
		case "server/discover":
			res, err := next(ctx, method, req)
			if d, ok := res.(*mcp.DiscoverResult); ok && err == nil && d.Capabilities != nil {
				caps := *d.Capabilities
				caps.Extensions = maps.Clone(caps.Extensions)
				if caps.Extensions == nil {
					caps.Extensions = map[string]any{}
				}
				caps.Extensions[mcpwire.TasksExtension] = map[string]any{}
				d.Capabilities = &caps
			}
			return res, err
		case "tools/call":
			call, ok := req.(*mcp.CallToolRequest)
			if !ok || call.Params == nil || !mcpwire.CallCapabilities(ctx, call).Tasks() {
				// A call made inside a task-mode call is not one.
				return next(mcpwire.WithTaskMode(ctx, nil), method, req)
			}
			mode := &mcpwire.TaskMode{}
			res, err := next(mcpwire.WithTaskMode(ctx, mode), method, req)
			id := mode.CreatedID()
			if err != nil || id == "" {
				return res, err
			}
			b := r.Backends.Owner(id)
			if b == nil {
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf("task %s was created, but no task backend owns it", id)}
			}
			task, err := b.GetTask(ctx, id)
			if err != nil {
				return nil, taskError(err)
			}
			return createTaskResult(task), nil
		}
		return next(ctx, method, req)
	}
}

// MissingTasksCapability is the -32021 error of a request that needs the
// Tasks extension and did not declare it, with the data shape of the
// 2026-07-28 schema (MissingRequiredClientCapabilityError).
func MissingTasksCapability(what string) *jsonrpc.Error {
	data, _ := json.Marshal(map[string]any{"requiredCapabilities": map[string]any{
		"extensions": map[string]any{mcpwire.TasksExtension: map[string]any{}},
	}})
	return &jsonrpc.Error{
		Code:    mcp.CodeMissingRequiredClientCapabilities,
		Message: fmt.Sprintf("%s needs the client capability extensions[%q]", what, mcpwire.TasksExtension),
		Data:    data,
	}
}

// taskBackend gates a tasks/* request and finds the backend of its task:
// -32601 under protocols without the extension, -32021 without the
// extension declared, -32602 for an id no backend owns. caps are those
// the router's middleware put in the request's context.
func (r *Service) taskBackend(caps mcpwire.Capabilities, method, id string) (mcpwire.TaskBackend, error) {
	if !caps.Sessionless() {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: fmt.Sprintf("Method not found: %q is not defined in protocol version %s", method, caps.Revision())}
	}
	if !caps.Tasks() {
		return nil, MissingTasksCapability(method)
	}
	if id == "" {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: method + `: "taskId" is required`}
	}
	b := r.Backends.Owner(id)
	if b == nil {
		return nil, taskNotFound(id)
	}
	return b, nil
}

func taskNotFound(id string) *jsonrpc.Error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("task %q not found", id)}
}

// taskError maps a backend's error: a caller's mistake (unknown or hidden
// task, no right to change it) is -32602, as SEP-2663 asks; a JSON-RPC
// error keeps its code; the rest as everywhere ([rpcerror.FromError]).
func taskError(err error) *jsonrpc.Error {
	var je *jsonrpc.Error
	if errors.As(err, &je) {
		return je
	}
	switch agentsmcp.ErrorCode(err) {
	case agentsmcp.ENOTFOUND, agentsmcp.EINVALID, agentsmcp.EUNAUTHORIZED:
		return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: agentsmcp.ErrorMessage(err)}
	}
	return rpcerror.FromError(err)
}

// HandleGet serves tasks/get.
func (r *Service) HandleGet(ctx context.Context, ss *mcp.ServerSession, p *TaskIDParams) (*DetailedTask, error) {
	if p == nil {
		p = &TaskIDParams{}
	}
	caps := capabilitiesFrom(ctx)
	b, err := r.taskBackend(caps, MethodTasksGet, p.TaskID)
	if err != nil {
		return nil, err
	}
	task, err := b.GetTask(ctx, p.TaskID)
	if err != nil {
		return nil, taskError(err)
	}
	return detailedTaskFor(task, caps), nil
}

// capabilitiesFrom returns the protocol capabilities of the client of a
// tasks/* request, which the router's middleware puts in its context (the
// zero value, a client of no revision, when none did).
func capabilitiesFrom(ctx context.Context) mcpwire.Capabilities {
	c, _ := mcpwire.CapabilitiesFrom(ctx)
	return c
}

// HandleUpdate serves tasks/update.
func (r *Service) HandleUpdate(ctx context.Context, ss *mcp.ServerSession, p *TaskUpdateParams) (*TaskAck, error) {
	if p == nil {
		p = &TaskUpdateParams{}
	}
	b, err := r.taskBackend(capabilitiesFrom(ctx), MethodTasksUpdate, p.TaskID)
	if err != nil {
		return nil, err
	}
	responses := mcp.InputResponseMap{}
	for k, raw := range p.InputResponses {
		var one mcp.InputResponseMap
		wrapped, _ := json.Marshal(map[string]json.RawMessage{k: raw})
		if json.Unmarshal(wrapped, &one) == nil && one[k] != nil {
			responses[k] = one[k]
		}
	}
	start := time.Now()
	err = b.UpdateTask(ctx, p.TaskID, responses)
	r.taskWritten(ctx, MethodTasksUpdate, p.TaskID, slices.Sorted(maps.Keys(p.InputResponses)), start, err)
	if err != nil {
		return nil, taskError(err)
	}
	return &TaskAck{}, nil
}

// HandleCancel serves tasks/cancel.
func (r *Service) HandleCancel(ctx context.Context, ss *mcp.ServerSession, p *TaskIDParams) (*TaskAck, error) {
	if p == nil {
		p = &TaskIDParams{}
	}
	b, err := r.taskBackend(capabilitiesFrom(ctx), MethodTasksCancel, p.TaskID)
	if err != nil {
		return nil, err
	}
	start := time.Now()
	err = b.CancelTask(ctx, p.TaskID)
	r.taskWritten(ctx, MethodTasksCancel, p.TaskID, nil, start, err)
	if err != nil {
		return nil, taskError(err)
	}
	return &TaskAck{}, nil
}

// TaskWriteRecord describes one tasks/update or tasks/cancel that reached
// a task backend, for the audit trail.
type TaskWriteRecord struct {
	Method string // tasks/update or tasks/cancel
	TaskID string
	// Keys are the inputResponses keys of a tasks/update, never the
	// answers, which may hold secrets.
	Keys []string
	// Error is empty on success; otherwise the error's message.
	Error     string
	Duration  time.Duration
	Principal string // empty without credentials
	RequestID string
	Transport string
}

func (r *Service) taskWritten(ctx context.Context, method, id string, keys []string, start time.Time, err error) {
	if r.OnWrite == nil {
		return
	}
	rec := TaskWriteRecord{
		Method: method, TaskID: id, Keys: keys, Duration: time.Since(start),
		Principal: agentsmcp.PrincipalIDFrom(ctx), RequestID: agentsmcp.RequestIDFrom(ctx), Transport: agentsmcp.TransportFrom(ctx),
	}
	if err != nil {
		rec.Error = taskError(err).Message
	}
	r.OnWrite(rec)
}

// taskBase renders the Task fields that every task answer carries, with
// resultType (empty: left to the revision middleware).
func taskBase(t *mcpwire.MCPTask, resultType string) *DetailedTask {
	d := &DetailedTask{
		Base:          resulttype.Base{ResultType: resultType},
		TaskID:        t.ID,
		Status:        t.Status,
		StatusMessage: t.StatusMessage,
		CreatedAt:     wireTime(t.CreatedAt),
		LastUpdatedAt: wireTime(t.UpdatedAt),
		TTLMs:         t.TTLMs,
	}
	d.PollIntervalMs = t.PollIntervalMs
	if d.PollIntervalMs == 0 {
		switch t.Status {
		case mcpwire.MCPTaskWorking:
			d.PollIntervalMs = pollWorkingMs
		case mcpwire.MCPTaskInputRequired:
			d.PollIntervalMs = pollInputRequiredMs
		}
	}
	return d
}

// createTaskResult is the flat CreateTaskResult: the Task base fields
// only, never a result, error, inputRequests or requestState.
func createTaskResult(t *mcpwire.MCPTask) *DetailedTask { return taskBase(t, resultTypeTask) }

// resultTypeTask is the resultType of a CreateTaskResult (SEP-2663).
const resultTypeTask = "task"

// detailedTask is the answer of tasks/get, and what notifications/tasks
// carries (listen.go), before [askable] leaves out the questions its
// client cannot answer.
func detailedTask(t *mcpwire.MCPTask) *DetailedTask {
	d := taskBase(t, "") // "complete", by the revision middleware
	switch t.Status {
	case mcpwire.MCPTaskInputRequired:
		asks := t.InputRequests
		if asks == nil {
			asks = mcp.InputRequestMap{}
		}
		d.InputRequests = &asks
	case mcpwire.MCPTaskCompleted:
		d.Result = t.Result
		if d.Result == nil {
			d.Result = &mcp.CallToolResult{Content: []mcp.Content{}}
		}
	case mcpwire.MCPTaskFailed:
		err := t.Error
		if err == nil {
			err = agentsmcp.Errorf(agentsmcp.EINTERNAL, "task %s failed", t.ID)
		}
		var je *jsonrpc.Error
		if !errors.As(err, &je) {
			je = rpcerror.FromError(err)
		}
		d.Error = je
	}
	return d
}

// wireTime is a task time on the wire: RFC 3339 in UTC, milliseconds.
func wireTime(t time.Time) string {
	return t.UTC().Format("2006-01-02T15:04:05.000Z07:00")
}

// CheckNameHeader compares the Mcp-Name header of a tasks/* request
// with its params.taskId (SEP-2663 routing headers), which go-sdk checks
// only for tools/call, resources/read and prompts/get. A missing header is
// accepted: go-sdk v1.8.0 clients do not send it for tasks/* (ADR 0010,
// open question 12). A mismatch is HTTP 400 with -32020; a zero code
// passes the request on.
func CheckNameHeader(req *http.Request, body []byte) (status int, id jsonrpc.ID, code int, msg string) {
	header := req.Header.Values("Mcp-Name")
	if len(header) == 0 || !bytes.Contains(body, []byte(`"tasks/`)) {
		return 0, id, 0, ""
	}
	var m struct {
		ID     any    `json:"id"`
		Method string `json:"method"`
		Params struct {
			TaskID string `json:"taskId"`
		} `json:"params"`
	}
	if json.Unmarshal(body, &m) != nil || !strings.HasPrefix(m.Method, "tasks/") {
		return 0, id, 0, ""
	}
	id, _ = jsonrpc.MakeID(m.ID)
	name, ok := decodeHeaderValue(strings.TrimSpace(header[0]))
	if !ok || name != m.Params.TaskID {
		return http.StatusBadRequest, id, mcp.CodeHeaderMismatch,
			fmt.Sprintf("Header mismatch: Mcp-Name %q does not match params.taskId %q", header[0], m.Params.TaskID)
	}
	return 0, id, 0, ""
}

// decodeHeaderValue undoes the =?base64?…?= wrapping of SEP-2243 header
// values, as go-sdk does for the headers it checks.
func decodeHeaderValue(v string) (string, bool) {
	if enc, ok := strings.CutPrefix(v, "=?base64?"); ok {
		if enc, ok = strings.CutSuffix(enc, "?="); ok {
			dec, err := base64.StdEncoding.DecodeString(enc)
			if err != nil {
				return "", false
			}
			return string(dec), true
		}
	}
	return v, true
}
