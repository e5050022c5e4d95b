package storedform

import (
	"context"

	agentsmcp "github.com/agents-mcp/agents-mcp"
)

// UpdateTaskSteps stores c with s's UpdateTaskSteps
// ([agentsmcp.TaskStepUpdater]), or UpdateTask.
func UpdateTaskSteps(ctx context.Context, s agentsmcp.TaskService, t *agentsmcp.Task, c agentsmcp.TaskChange) error {
	if u, ok := s.(agentsmcp.TaskStepUpdater); ok {
		return u.UpdateTaskSteps(ctx, t, c)
	}
	return s.UpdateTask(ctx, t)
}

// TasksVerbatim reports whether s stores tasks verbatim
// ([agentsmcp.VerbatimTaskStore]).
func TasksVerbatim(s agentsmcp.TaskService) bool {
	v, ok := s.(agentsmcp.VerbatimTaskStore)
	return ok && v.TasksVerbatim()
}

// UpstreamKind is d's Kind, with "" read as [agentsmcp.UpstreamKindMCP].
func UpstreamKind(d *agentsmcp.UpstreamDefinition) string {
	if d.Kind == "" {
		return agentsmcp.UpstreamKindMCP
	}
	return d.Kind
}
