// Package quota bounds what each principal keeps in the store:
// [Insights] and [Tasks] wrap a store's services and refuse a
// create that would take its principal past its [Quota], with
// EQUOTA and a message naming the quota; [InsightSweeper] deletes the
// insights older than their retention.
//
// Usage is read from the store ([agentsmcp.UsageService]) at each create,
// never counted in memory, so that every replica enforces the same
// quota. Creates of one principal are serialised within a process, so
// that one replica never lets a principal past its quota; replicas that
// create for the same principal at the same moment may each admit one
// record past it, at most one per replica. Records are never deleted for
// a quota, and a task that grows as it runs is never failed for it: its
// size counts against the next create.
//
// [Calls] enforces the call quotas ([agentsmcp.CallQuota]), which bound how
// many tool calls one principal makes in a window of time: of one upstream,
// of one tool of it, or of every tool. Unlike the storage quotas, waiting
// helps: the count starts again at each window, and a refusal says when
// ([agentsmcp.CallQuotaError.RetryAfter]). The counts live in the store
// ([agentsmcp.CallCounterService]), so that every replica charges and reads
// the same counters. A call is charged before its provider runs, whatever
// its outcome: a quota bounds what callers ask of an upstream, not what it
// answers.
package quota

import (
	"context"
	"sync"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/internal/storedform"
)

// The settings that name the quotas in refusals.
const (
	InsightsSetting = "quotas.insights"
	TasksSetting    = "quotas.tasks"
)

// Insights is an InsightService whose CreateInsight keeps each principal
// within Quota. Wrap the store itself (inside any wrapper that changes
// what is stored), so that the size checked is the size stored.
type Insights struct {
	agentsmcp.InsightService
	Usage agentsmcp.UsageService
	Quota Quota
	locks principalLocks
}

var _ agentsmcp.InsightService = (*Insights)(nil)

// CreateInsight refuses in with EQUOTA when its principal's insights, with
// it, would be more than Quota allows; otherwise it creates it.
func (q *Insights) CreateInsight(ctx context.Context, in *agentsmcp.Insight) error {
	if in == nil || q.Quota == (Quota{}) {
		return q.InsightService.CreateInsight(ctx, in)
	}
	owner := agentsmcp.MemoryOwner(in.Principal)
	defer q.locks.lock(owner)()
	u, err := q.Usage.InsightUsage(ctx, owner)
	if err != nil {
		return err
	}
	if err := q.Quota.Admit(u, storedform.InsightBytes(in), owner, "insights", InsightsSetting); err != nil {
		return err
	}
	return q.InsightService.CreateInsight(ctx, in)
}

// Tasks is a TaskService whose CreateTask keeps each principal within
// Quota. It passes per-step writes on to the wrapped store (see
// [storedform.UpdateTaskSteps]) and says it stores tasks verbatim when the
// store does. Wrap the store itself, as for [Insights].
type Tasks struct {
	agentsmcp.TaskService
	Usage agentsmcp.UsageService
	Quota Quota
	locks principalLocks
}

var (
	_ agentsmcp.TaskService       = (*Tasks)(nil)
	_ agentsmcp.TaskStepUpdater   = (*Tasks)(nil)
	_ agentsmcp.VerbatimTaskStore = (*Tasks)(nil)
)

// CreateTask refuses t with EQUOTA when the tasks of its principal, with
// it, would be more than Quota allows; otherwise it creates it.
func (q *Tasks) CreateTask(ctx context.Context, t *agentsmcp.Task) error {
	if t == nil || q.Quota == (Quota{}) {
		return q.TaskService.CreateTask(ctx, t)
	}
	defer q.locks.lock(t.Principal)()
	u, err := q.Usage.TaskUsage(ctx, t.Principal)
	if err != nil {
		return err
	}
	if err := q.Quota.Admit(u, storedform.TaskBytes(t), agentsmcp.MemoryOwner(t.Principal), "tasks", TasksSetting); err != nil {
		return err
	}
	return q.TaskService.CreateTask(ctx, t)
}

// UpdateTaskSteps implements [agentsmcp.TaskStepUpdater] with the wrapped
// store's.
func (q *Tasks) UpdateTaskSteps(ctx context.Context, t *agentsmcp.Task, c agentsmcp.TaskChange) error {
	return storedform.UpdateTaskSteps(ctx, q.TaskService, t, c)
}

// TasksVerbatim implements [agentsmcp.VerbatimTaskStore]: as the wrapped
// store, since Tasks stores what it is given.
func (q *Tasks) TasksVerbatim() bool { return storedform.TasksVerbatim(q.TaskService) }

// principalLocks serialises the creates of each principal in a process,
// so that two of them do not both read a usage just under the quota. The
// zero value is ready; a principal's lock is dropped when nobody holds or
// waits for it.
type principalLocks struct {
	mu sync.Mutex
	m  map[string]*principalLock
}

type principalLock struct {
	sync.Mutex
	refs int
}

// lock locks principal's lock and returns its unlock.
func (l *principalLocks) lock(principal string) func() {
	l.mu.Lock()
	if l.m == nil {
		l.m = map[string]*principalLock{}
	}
	pl := l.m[principal]
	if pl == nil {
		pl = &principalLock{}
		l.m[principal] = pl
	}
	pl.refs++
	l.mu.Unlock()
	pl.Lock()
	return func() {
		pl.Unlock()
		l.mu.Lock()
		if pl.refs--; pl.refs == 0 {
			delete(l.m, principal)
		}
		l.mu.Unlock()
	}
}
