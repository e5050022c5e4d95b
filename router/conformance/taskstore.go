package conformance

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"maps"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/internal/mcpwire"
	"github.com/agents-mcp/agents-mcp/router"
)

// fixtureTasks is the in-memory task backend of the Tasks fixtures: their
// tasks live in this process only, as long as it runs (ttlMs null), and
// anyone may see and change them. It tests the router's protocol layer;
// the executor's tasks have their own backend (agents/mcptools.MCPTasks).
type fixtureTasks struct {
	mu    sync.Mutex
	tasks map[string]*fixtureTask
}

type fixtureTask struct {
	view mcpwire.MCPTask
	// stop ends the task's pending work (its timer); nil when none.
	stop func() bool
	// answered is called by UpdateTask with the answers to outstanding
	// keys; it returns the task's result once every key is answered.
	answered func(answers map[string]*mcp.ElicitResult) *mcp.CallToolResult
	answers  map[string]*mcp.ElicitResult
}

const fixtureIDPrefix = "fxt_"

func (fx *fixtureTasks) Owns(id string) bool { return strings.HasPrefix(id, fixtureIDPrefix) }

// create stores a new task in status and returns its id. The caller fills
// in its work under fx.mu.
func (fx *fixtureTasks) create(status mcpwire.MCPTaskStatus) *fixtureTask {
	var b [10]byte
	_, _ = rand.Read(b[:])
	now := time.Now()
	t := &fixtureTask{view: mcpwire.MCPTask{
		ID: fixtureIDPrefix + hex.EncodeToString(b[:]), Status: status, CreatedAt: now, UpdatedAt: now,
	}}
	fx.tasks[t.view.ID] = t
	return t
}

// finish ends t, unless it already ended (a cancelled task stays so).
// fx.mu must be held.
func (t *fixtureTask) finish(status mcpwire.MCPTaskStatus, res *mcp.CallToolResult, err error) {
	if t.view.Status.Terminal() {
		return
	}
	t.view.Status, t.view.Result, t.view.Error = status, res, err
	t.view.InputRequests = nil
	t.view.UpdatedAt = time.Now()
}

func (fx *fixtureTasks) GetTask(_ context.Context, id string) (*mcpwire.MCPTask, error) {
	fx.mu.Lock()
	defer fx.mu.Unlock()
	t, ok := fx.tasks[id]
	if !ok {
		return nil, agentsmcp.Errorf(agentsmcp.ENOTFOUND, "task %q not found", id)
	}
	v := t.view
	v.InputRequests = maps.Clone(t.view.InputRequests)
	return &v, nil
}

func (fx *fixtureTasks) UpdateTask(_ context.Context, id string, responses mcp.InputResponseMap) error {
	fx.mu.Lock()
	defer fx.mu.Unlock()
	t, ok := fx.tasks[id]
	if !ok {
		return agentsmcp.Errorf(agentsmcp.ENOTFOUND, "task %q not found", id)
	}
	if t.view.Status != mcpwire.MCPTaskInputRequired {
		return nil // nothing is outstanding
	}
	for k, r := range responses {
		er, ok := r.(*mcp.ElicitResult)
		if _, asked := t.view.InputRequests[k]; !asked || !ok {
			continue // not outstanding: ignored
		}
		t.answers[k] = er
		delete(t.view.InputRequests, k)
		t.view.UpdatedAt = time.Now()
	}
	if len(t.view.InputRequests) == 0 {
		t.view.Status = mcpwire.MCPTaskWorking
		t.finish(mcpwire.MCPTaskCompleted, t.answered(t.answers), nil)
	}
	return nil
}

func (fx *fixtureTasks) CancelTask(_ context.Context, id string) error {
	fx.mu.Lock()
	defer fx.mu.Unlock()
	t, ok := fx.tasks[id]
	if !ok {
		return agentsmcp.Errorf(agentsmcp.ENOTFOUND, "task %q not found", id)
	}
	if t.stop != nil {
		t.stop()
	}
	if !t.view.Status.Terminal() {
		t.finish(mcpwire.MCPTaskCancelled, nil, nil)
		t.view.StatusMessage = "cancelled by the client"
	}
	return nil
}

// after runs the task's work in d: its result, or its error when res is
// nil. The timer is the task's only pending work; cancelling stops it.
func (fx *fixtureTasks) after(t *fixtureTask, d time.Duration, status mcpwire.MCPTaskStatus, res *mcp.CallToolResult, err error) {
	t.stop = time.AfterFunc(d, func() {
		fx.mu.Lock()
		defer fx.mu.Unlock()
		t.finish(status, res, err)
	}).Stop
}

// startTask creates a working task that ends as given after d, and tells
// the router to answer with it.
func (fx *fixtureTasks) startTask(mode *mcpwire.TaskMode, d time.Duration, status mcpwire.MCPTaskStatus, res *mcp.CallToolResult, err error) (*mcp.CallToolResult, any, error) {
	fx.mu.Lock()
	t := fx.create(mcpwire.MCPTaskWorking)
	t.view.StatusMessage = "working"
	if d <= 0 {
		t.finish(status, res, err)
	} else {
		fx.after(t, d, status, res, err)
	}
	fx.mu.Unlock()
	mode.Created(t.view.ID)
	return placeholder(), nil, nil
}

// askTask creates an input_required task with the questions asks; answer
// builds its result once all are answered.
func (fx *fixtureTasks) askTask(mode *mcpwire.TaskMode, asks mcp.InputRequestMap, answer func(map[string]*mcp.ElicitResult) *mcp.CallToolResult) (*mcp.CallToolResult, any, error) {
	fx.mu.Lock()
	t := fx.create(mcpwire.MCPTaskInputRequired)
	t.view.InputRequests = asks
	t.view.StatusMessage = "waiting for input"
	t.answered, t.answers = answer, map[string]*mcp.ElicitResult{}
	fx.mu.Unlock()
	mode.Created(t.view.ID)
	return placeholder(), nil, nil
}

// placeholder is the tool result of a call that created a task; the
// router replaces it with the CreateTaskResult.
func placeholder() *mcp.CallToolResult { return textResult("task created") }

func (fx *fixtureTasks) slowCompute(ctx context.Context, req *mcp.CallToolRequest, in slowComputeInput) (*mcp.CallToolResult, any, error) {
	mode := mcpwire.TaskModeFrom(ctx)
	if mode == nil {
		return slowComputeHandler(ctx, req, in)
	}
	d := min(time.Duration(in.Seconds*float64(time.Second)), maxSlowCompute)
	return fx.startTask(mode, d, mcpwire.MCPTaskCompleted,
		textResult(fmt.Sprintf("slow_compute %q done after %gs", in.Label, in.Seconds)), nil)
}

func (fx *fixtureTasks) failingJob(ctx context.Context, req *mcp.CallToolRequest, in any) (*mcp.CallToolResult, any, error) {
	mode := mcpwire.TaskModeFrom(ctx)
	if mode == nil {
		if mcpwire.CallCapabilities(ctx, req).Sessionless() {
			// Task support "required": without the extension it cannot
			// be served at all (SEP-2663, Required Capabilities).
			return nil, nil, router.MissingTasksCapability("failing_job")
		}
		return failingJobHandler(ctx, req, in)
	}
	res := textResult("failing_job always fails")
	res.IsError = true
	return fx.startTask(mode, time.Second, mcpwire.MCPTaskCompleted, res, nil)
}

func (fx *fixtureTasks) protocolErrorJob(ctx context.Context, req *mcp.CallToolRequest, in any) (*mcp.CallToolResult, any, error) {
	mode := mcpwire.TaskModeFrom(ctx)
	if mode == nil {
		return protocolErrorJobHandler(ctx, req, in)
	}
	return fx.startTask(mode, 100*time.Millisecond, mcpwire.MCPTaskFailed, nil,
		&jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "protocol_error_job always fails with a protocol error"})
}

func (fx *fixtureTasks) confirmDelete(ctx context.Context, req *mcp.CallToolRequest, in confirmDeleteInput) (*mcp.CallToolResult, any, error) {
	mode := mcpwire.TaskModeFrom(ctx)
	if mode == nil {
		return confirmDeleteHandler(ctx, req, in)
	}
	return fx.askTask(mode, mcp.InputRequestMap{
		"confirm": &mcp.ElicitParams{Message: fmt.Sprintf("Delete %s?", in.Filename), RequestedSchema: confirmSchema()},
	}, func(a map[string]*mcp.ElicitResult) *mcp.CallToolResult {
		if yes, _ := a["confirm"].Content["confirm"].(bool); a["confirm"].Action == "accept" && yes {
			return textResult(fmt.Sprintf("Deleted %s (not really: this is a fixture)", in.Filename))
		}
		return textResult(fmt.Sprintf("Kept %s", in.Filename))
	})
}

func (fx *fixtureTasks) multiInput(ctx context.Context, req *mcp.CallToolRequest, in any) (*mcp.CallToolResult, any, error) {
	mode := mcpwire.TaskModeFrom(ctx)
	if mode == nil {
		return multiInputHandler(ctx, req, in)
	}
	return fx.askTask(mode, mcp.InputRequestMap{
		"user_name": &mcp.ElicitParams{Message: "What is your name?", RequestedSchema: nameElicitSchema()},
		"confirm":   &mcp.ElicitParams{Message: "Go ahead?", RequestedSchema: confirmSchema()},
	}, func(map[string]*mcp.ElicitResult) *mcp.CallToolResult {
		return textResult("multi_input: both inputs received")
	})
}

// toolWithTask gathers user_name through MRTR, synchronously, and only then
// creates a task, as SEP-2663's composition rule says.
func (fx *fixtureTasks) toolWithTask(ctx context.Context, req *mcp.CallToolRequest, in any) (*mcp.CallToolResult, any, error) {
	res, out, err := toolWithTaskHandler(ctx, req, in)
	mode := mcpwire.TaskModeFrom(ctx)
	if mode == nil || err != nil || res == nil || len(res.InputRequests) > 0 {
		return res, out, err
	}
	return fx.startTask(mode, 200*time.Millisecond, mcpwire.MCPTaskCompleted, res, nil)
}
