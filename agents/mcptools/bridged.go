package mcptools

import (
	"context"
	"encoding/json"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/internal/mcpwire"
)

// This file serves the tasks of bridged calls (ADR 0010 D4; the stored
// format is in the root's bridged.go) on the MCP face: tasks/get renders
// them, tasks/update stores the answer to the open question for the
// replica that holds the upstream request, and the resume loop fails those
// whose holder stopped. tasks/cancel needs nothing of its own: the task is
// marked cancelled in the store, and the holder notices.

// bridgedTaskView is the MCP view of a bridged call's task.
func bridgedTaskView(task *agentsmcp.Task) *mcpwire.MCPTask {
	v := &mcpwire.MCPTask{ID: task.ID, CreatedAt: task.CreatedAt, UpdatedAt: task.UpdatedAt}
	switch task.Status {
	case agentsmcp.TaskPending, agentsmcp.TaskRunning:
		v.Status, v.StatusMessage, v.PollIntervalMs = mcpwire.MCPTaskWorking, "the upstream call is running", 1000
		if q := mcpwire.OpenQuestion(task); q != nil {
			if req, err := q.InputRequest(); err == nil {
				v.Status, v.PollIntervalMs = mcpwire.MCPTaskInputRequired, 1000
				v.InputRequests = mcp.InputRequestMap{q.Key: req}
				v.StatusMessage = "the upstream asks the client (" + bridgedMethod(q) + "); tasks/update answers it"
			}
		}
	case agentsmcp.TaskSucceeded:
		res, err := mcpwire.BridgedOutcome(task)
		if err != nil {
			v.Status, v.Error = mcpwire.MCPTaskFailed, err
			break
		}
		v.Status, v.Result = mcpwire.MCPTaskCompleted, res
	case agentsmcp.TaskFailed:
		_, err := mcpwire.BridgedOutcome(task)
		v.Status, v.Error, v.StatusMessage = mcpwire.MCPTaskFailed, err, task.Error
	default: // cancelled
		v.Status, v.StatusMessage = mcpwire.MCPTaskCancelled, task.Error
	}
	return v
}

func bridgedMethod(q *mcpwire.BridgedQuestion) string {
	var m struct {
		Method string `json:"method"`
	}
	_ = json.Unmarshal(q.Request, &m)
	return m.Method
}

// updateBridged stores the answer to the open question of a bridged call:
// the holder of the upstream request takes it from the store. Other keys,
// answers of the wrong kind, and a question that is no longer open are
// ignored, as tasks/update requires; a concurrent write is retried on the
// newer state.
func (m *MCPTasks) updateBridged(ctx context.Context, task *agentsmcp.Task, responses mcp.InputResponseMap) error {
	for range 5 {
		changed, err := mcpwire.AnswerBridged(task, responses, time.Now())
		if err != nil || !changed {
			return err
		}
		err = m.Executor.UpdateBridged(ctx, task)
		if agentsmcp.ErrorCode(err) != agentsmcp.ECONFLICT {
			return err
		}
		if task, err = m.Executor.Task(ctx, task.ID); err != nil {
			return err
		}
	}
	return nil // still racing: the answer is for a question others are changing
}
