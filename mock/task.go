package mock

import (
	"context"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/internal/mcpwire"
)

var (
	_ agentsmcp.TaskService = (*TaskService)(nil)
	_ mcpwire.TaskBackend   = (*TaskBackend)(nil)
)

// TaskService is an [agentsmcp.TaskService] that wraps a real one: each
// method calls its function field when set, else the same method of the
// embedded TaskService. A test sets the field of the write it makes
// refuse, slow down or count, and the store does the rest. The wrapper
// hides the optional interfaces of the store it wraps
// (agentsmcp.TaskStepUpdater, agentsmcp.VerbatimTaskStore): the agents
// then write whole tasks.
type TaskService struct {
	agentsmcp.TaskService

	CreateTaskFn        func(ctx context.Context, t *agentsmcp.Task) error
	UpdateTaskFn        func(ctx context.Context, t *agentsmcp.Task) error
	AcquireTaskLeaseFn  func(ctx context.Context, id, owner string, ttl time.Duration) (*agentsmcp.Task, error)
	ReleaseTaskLeaseFn  func(ctx context.Context, id, owner string) error
	FindTasksToResumeFn func(ctx context.Context, now time.Time, limit int) ([]*agentsmcp.Task, error)
}

// CreateTask implements [agentsmcp.TaskService].
func (s *TaskService) CreateTask(ctx context.Context, t *agentsmcp.Task) error {
	if s.CreateTaskFn != nil {
		return s.CreateTaskFn(ctx, t)
	}
	return s.TaskService.CreateTask(ctx, t)
}

// UpdateTask implements [agentsmcp.TaskService].
func (s *TaskService) UpdateTask(ctx context.Context, t *agentsmcp.Task) error {
	if s.UpdateTaskFn != nil {
		return s.UpdateTaskFn(ctx, t)
	}
	return s.TaskService.UpdateTask(ctx, t)
}

// AcquireTaskLease implements [agentsmcp.TaskService].
func (s *TaskService) AcquireTaskLease(ctx context.Context, id, owner string, ttl time.Duration) (*agentsmcp.Task, error) {
	if s.AcquireTaskLeaseFn != nil {
		return s.AcquireTaskLeaseFn(ctx, id, owner, ttl)
	}
	return s.TaskService.AcquireTaskLease(ctx, id, owner, ttl)
}

// ReleaseTaskLease implements [agentsmcp.TaskService].
func (s *TaskService) ReleaseTaskLease(ctx context.Context, id, owner string) error {
	if s.ReleaseTaskLeaseFn != nil {
		return s.ReleaseTaskLeaseFn(ctx, id, owner)
	}
	return s.TaskService.ReleaseTaskLease(ctx, id, owner)
}

// FindTasksToResume implements [agentsmcp.TaskService].
func (s *TaskService) FindTasksToResume(ctx context.Context, now time.Time, limit int) ([]*agentsmcp.Task, error) {
	if s.FindTasksToResumeFn != nil {
		return s.FindTasksToResumeFn(ctx, now, limit)
	}
	return s.TaskService.FindTasksToResume(ctx, now, limit)
}

// TaskBackend is an [mcpwire.TaskBackend]. With its fields nil it owns
// no task, finds none (ENOTFOUND) and accepts every update and cancel.
type TaskBackend struct {
	OwnsFn       func(id string) bool
	GetTaskFn    func(ctx context.Context, id string) (*mcpwire.MCPTask, error)
	UpdateTaskFn func(ctx context.Context, id string, responses mcp.InputResponseMap) error
	CancelTaskFn func(ctx context.Context, id string) error
}

// Owns implements [mcpwire.TaskBackend].
func (b *TaskBackend) Owns(id string) bool { return b.OwnsFn != nil && b.OwnsFn(id) }

// GetTask implements [mcpwire.TaskBackend].
func (b *TaskBackend) GetTask(ctx context.Context, id string) (*mcpwire.MCPTask, error) {
	if b.GetTaskFn == nil {
		return nil, agentsmcp.Errorf(agentsmcp.ENOTFOUND, "task %q not found", id)
	}
	return b.GetTaskFn(ctx, id)
}

// UpdateTask implements [mcpwire.TaskBackend].
func (b *TaskBackend) UpdateTask(ctx context.Context, id string, responses mcp.InputResponseMap) error {
	if b.UpdateTaskFn == nil {
		return nil
	}
	return b.UpdateTaskFn(ctx, id, responses)
}

// CancelTask implements [mcpwire.TaskBackend].
func (b *TaskBackend) CancelTask(ctx context.Context, id string) error {
	if b.CancelTaskFn == nil {
		return nil
	}
	return b.CancelTaskFn(ctx, id)
}
