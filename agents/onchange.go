package agents

import (
	"context"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/internal/storedform"
)

// changeReporter is the executor's task store when ExecutorOptions.OnChange
// is set: every create and update that succeeds is reported, so that each
// stored transition of the runner, Resume and Cancel is seen without a
// call at each of their writes. Lease writes are not reported: they change
// nothing a client sees.
type changeReporter struct {
	agentsmcp.TaskService
	onChange func(*agentsmcp.Task)
}

func (c changeReporter) CreateTask(ctx context.Context, t *agentsmcp.Task) error {
	err := c.TaskService.CreateTask(ctx, t)
	if err == nil {
		c.onChange(t)
	}
	return err
}

func (c changeReporter) UpdateTask(ctx context.Context, t *agentsmcp.Task) error {
	err := c.TaskService.UpdateTask(ctx, t)
	if err == nil {
		c.onChange(t)
	}
	return err
}

// UpdateTaskSteps passes a per-step write on (see [storedform.UpdateTaskSteps])
// and reports it like UpdateTask: what is reported is the whole task as
// stored, whichever way it was written.
func (c changeReporter) UpdateTaskSteps(ctx context.Context, t *agentsmcp.Task, ch agentsmcp.TaskChange) error {
	err := storedform.UpdateTaskSteps(ctx, c.TaskService, t, ch)
	if err == nil {
		c.onChange(t)
	}
	return err
}

// TasksVerbatim passes the store's answer on: reporting changes stores
// nothing.
func (c changeReporter) TasksVerbatim() bool { return storedform.TasksVerbatim(c.TaskService) }
