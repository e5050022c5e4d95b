package mcptools

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/internal/mcpwire"
	"github.com/agents-mcp/agents-mcp/internal/storedform"
)

// This file bounds how long an MCP task waits in input_required
// (tasks.input_wait). A client that declared the Tasks extension but
// cannot answer a question (no elicitation, no form: the Inspector CLI)
// polls tasks/get until the task reaches a terminal state; without a bound
// it would poll forever. Past the bound the MCP task ends completed, with
// what run_task answers a client that cannot be asked (the paused task),
// and a status message that says how the question could have been answered
// and how to go on. The stored task is left paused: resume_task still
// answers it, as it does for a run_task call that returned a paused task.
//
// The end is worked out from the stored task alone (its history), never
// written, so that every replica renders the same view, and it stays
// terminal: once a pause lasted longer than the bound, a later resume_task
// (which resumes the stored task) does not make the MCP task working again.

// DefaultInputWait is the wait of an [MCPTasks] whose InputWait is zero.
const DefaultInputWait = 10 * time.Minute

// inputWaitEnded reports whether task, seen as an MCP task, has waited for
// an answer longer than wait, and when that wait ended: a wait in its
// history that lasted longer (the next event came later than wait after
// it; a history trimmed keeps its longest wait, see
// [storedform.TrimHistory]), or the current pause, begun more than wait
// before now.
func inputWaitEnded(task *agentsmcp.Task, wait time.Duration, now time.Time) (time.Time, bool) {
	waits, pausedAt := storedform.Waits(task.History)
	for _, w := range waits {
		// An answer that came after the wait had ended does not reopen
		// it: the task was shown ended, and stays so.
		if w.Lasted > wait {
			return w.Began.Add(wait), true
		}
	}
	if task.Status != agentsmcp.TaskPaused {
		return time.Time{}, false
	}
	if pausedAt.IsZero() {
		// No event of the history opens the current pause (it was
		// trimmed, or the last event is not a pause's): count from the
		// task's last change.
		pausedAt = task.UpdatedAt
	}
	end := pausedAt.Add(wait)
	return end, now.After(end)
}

// inputWaitDeadline is when the current pause of a paused task stops
// waiting for an answer.
func inputWaitDeadline(task *agentsmcp.Task, wait time.Duration) time.Time {
	end, _ := inputWaitEnded(task, wait, time.Time{})
	return end
}

// endInputWait turns v, the input_required view of a task whose wait
// ended, into its terminal view: completed, with the result run_task
// gives a caller that cannot be asked (the paused task), and a status
// message saying how the questions could have been answered and how to
// go on.
func endInputWait(v *mcpwire.MCPTask, task *agentsmcp.Task, plan *agentsmcp.Plan, wait time.Duration) *mcpwire.MCPTask {
	answer := "resume_task answers it"
	if v.Status == mcpwire.MCPTaskInputRequired && len(v.InputRequests) > 0 {
		keys := slices.Sorted(maps.Keys(v.InputRequests))
		answer = "it could have been answered with tasks/update, inputResponses keyed " + strings.Join(keys, ", ")
	}
	ended := &mcpwire.MCPTask{ID: v.ID, CreatedAt: v.CreatedAt, UpdatedAt: v.UpdatedAt, Status: mcpwire.MCPTaskCompleted}
	ended.Result = taskToolResult(task, plan)
	ended.StatusMessage = fmt.Sprintf("no answer within %s (tasks.input_wait): %s. The task %s is %s: "+
		"resume_task {\"taskId\": %q, \"inputs\": {…}} (or \"confirm\"/\"reject\" for a step awaiting confirmation) answers it; "+
		"or start a new task with the inputs in the request", wait, answer, task.ID, task.Status, task.ID)
	return ended
}

// mcpTaskTTLMs is the ttlMs of v, the MCP view of task: how long from its
// creation the task stays readable at least. A task waiting for an answer
// announces the end of its wait (plus the retention); a working one, that
// it may still pause and wait that long; an ended one (or one whose wait
// ended), its retention as [taskTTLMs] counts it, null without one: it is
// kept forever.
func mcpTaskTTLMs(task *agentsmcp.Task, v *mcpwire.MCPTask, retention, wait time.Duration, now time.Time) *int64 {
	var end time.Time
	switch v.Status {
	case mcpwire.MCPTaskInputRequired:
		end = inputWaitDeadline(task, wait)
	case mcpwire.MCPTaskWorking:
		end = now.Add(wait)
	default:
		return taskTTLMs(task, retention, now)
	}
	ttl := (end.Sub(task.CreatedAt) + max(retention, 0)).Milliseconds()
	return &ttl
}

// inputWaitOver reports whether task's wait for an answer has ended.
func inputWaitOver(task *agentsmcp.Task, wait time.Duration) bool {
	_, ended := inputWaitEnded(task, wait, time.Now())
	return ended
}
