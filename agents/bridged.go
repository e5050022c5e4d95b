package agents

import (
	"context"
	"strings"
	"time"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/internal/mcpwire"
)

// A bridged call is a planless task that holds an upstream's request to a
// caller of MCP 2026-07-28 (ADR 0010 D4); its MCP face is agents/mcptools.
// The executor's part is to fail one whose holder stopped.

// failOrphanedBridged fails a bridged call whose holder stopped: the
// upstream request it held is gone, and a planless task cannot be resumed.
func (e *Executor) failOrphanedBridged(ctx context.Context, t *agentsmcp.Task, lastOwner string) {
	why := "the replica holding the upstream call stopped before the call ended"
	if lastOwner != "" {
		why = strings.Replace(why, "call stopped", "call ("+lastOwner+") stopped", 1)
	}
	for i := range t.Steps {
		if s := &t.Steps[i]; !stepEnded(s.Status) {
			s.Status, s.Error, s.EndedAt = agentsmcp.StepFailed, why, time.Now()
			s.Output = nil
		}
	}
	e.failUnrunnable(ctx, t, agentsmcp.EUNAVAILABLE, why)
}

// UpdateBridged stores t, a bridged call whose open question a caller
// answered (agentsmcp.Task.AnswerBridged), in the executor's task store:
// a compare-and-set on its Version (ECONFLICT when another write came
// first), reported as every write of the store is (ExecutorOptions.
// OnChange). The holder of the upstream request takes the answer from the
// store. A task that is not a bridged call is refused: the executor's
// runner alone writes the tasks it runs.
func (e *Executor) UpdateBridged(ctx context.Context, t *agentsmcp.Task) error {
	if !mcpwire.IsBridgedCall(t) {
		return agentsmcp.Errorf(agentsmcp.EINVALID, "task %s is not a bridged call", t.ID)
	}
	return e.opts.Tasks.UpdateTask(ctx, t)
}
