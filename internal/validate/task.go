package validate

import (
	"encoding/json"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/internal/storedform"
)

// Task checks the invariants of a Task (ID, CreatedAt, UpdatedAt,
// Status and Version may be empty: the store assigns them; a History
// longer than MaxTaskHistory is accepted, stores trim it).
func Task(t *agentsmcp.Task) error {
	switch {
	case t == nil:
		return agentsmcp.Errorf(agentsmcp.EINVALID, "task is required")
	case strings.TrimSpace(t.Request) == "":
		return agentsmcp.Errorf(agentsmcp.EINVALID, "task request is required")
	case len(t.Request) > agentsmcp.MaxQueryTextBytes:
		return agentsmcp.Errorf(agentsmcp.EINVALID, "task request is %d bytes; the limit is %d", len(t.Request), agentsmcp.MaxQueryTextBytes)
	case t.ID != "" && !validID(t.ID, agentsmcp.TaskIDPrefix):
		return agentsmcp.Errorf(agentsmcp.EINVALID, "task id %q is malformed", t.ID)
	case t.PlanID != "" && !validID(t.PlanID, agentsmcp.PlanIDPrefix):
		return agentsmcp.Errorf(agentsmcp.EINVALID, "task plan id %q is malformed", t.PlanID)
	case t.Status != "" && !slices.Contains(agentsmcp.TaskStatuses, t.Status):
		return agentsmcp.Errorf(agentsmcp.EINVALID, "task status %q is not one of %v", t.Status, agentsmcp.TaskStatuses)
	case len(t.Steps) > agentsmcp.MaxPlanSteps:
		return agentsmcp.Errorf(agentsmcp.EINVALID, "task has %d steps; the limit is %d", len(t.Steps), agentsmcp.MaxPlanSteps)
	case len(t.Error) > agentsmcp.MaxTaskErrorBytes:
		return agentsmcp.Errorf(agentsmcp.EINVALID, "task error is %d bytes; the limit is %d", len(t.Error), agentsmcp.MaxTaskErrorBytes)
	case t.ErrorCode != "" && t.Status != agentsmcp.TaskFailed:
		return agentsmcp.Errorf(agentsmcp.EINVALID, "task error code %q on a task that is %q; only a failed task has one", t.ErrorCode, t.Status)
	case !validErrorCode(t.ErrorCode):
		return agentsmcp.Errorf(agentsmcp.EINVALID, "task error code %q is not up to %d lower-case letters and underscores", t.ErrorCode, agentsmcp.MaxErrorCodeBytes)
	case t.Version < 0:
		return agentsmcp.Errorf(agentsmcp.EINVALID, "task version %d is negative", t.Version)
	case len(t.Lease.Owner) > agentsmcp.MaxLeaseOwnerBytes:
		return agentsmcp.Errorf(agentsmcp.EINVALID, "lease owner is %d bytes; the limit is %d", len(t.Lease.Owner), agentsmcp.MaxLeaseOwnerBytes)
	}
	if err := checkPrincipal(t.Principal, t.PrincipalTools, "task"); err != nil {
		return err
	}
	if err := checkJSONObject(t.Inputs, agentsmcp.MaxPlanInputsBytes, "task inputs"); err != nil {
		return err
	}
	seen := make(map[string]bool, len(t.Steps))
	for i := range t.Steps {
		s := &t.Steps[i]
		if seen[s.StepID] {
			return agentsmcp.Errorf(agentsmcp.EINVALID, "task step %q has two states", s.StepID)
		}
		if err := stepState(s); err != nil {
			return err
		}
		seen[s.StepID] = true
	}
	for _, e := range t.History {
		n := len(e.Type) + len(e.StepID) + len(e.Message)
		if n > agentsmcp.MaxTaskEventBytes {
			return agentsmcp.Errorf(agentsmcp.EINVALID, "a task event is %d bytes; the limit is %d", n, agentsmcp.MaxTaskEventBytes)
		}
	}
	if size := storedform.TaskBytes(t); size > agentsmcp.MaxTaskBytes {
		return agentsmcp.Errorf(agentsmcp.EINVALID, "task holds %d bytes; the limit is %d", size, agentsmcp.MaxTaskBytes)
	}
	return nil
}

// validErrorCode reports whether code is empty or has the form of the
// codes of error.go.
func validErrorCode(code string) bool {
	if len(code) > agentsmcp.MaxErrorCodeBytes {
		return false
	}
	for _, c := range code {
		if (c < 'a' || c > 'z') && c != '_' {
			return false
		}
	}
	return true
}

// TaskUpdate checks t as UpdateTask takes it: valid, with a Status and
// the Version it was read at (at least 1).
func TaskUpdate(t *agentsmcp.Task) error {
	if err := Task(t); err != nil {
		return err
	}
	switch {
	case t.Status == "":
		return agentsmcp.Errorf(agentsmcp.EINVALID, "task status is required")
	case t.Version < 1:
		return agentsmcp.Errorf(agentsmcp.EINVALID, "task version %d is not a stored version", t.Version)
	}
	return nil
}

// Lease checks the arguments of AcquireTaskLease.
func Lease(owner string, ttl time.Duration) error {
	switch {
	case owner == "":
		return agentsmcp.Errorf(agentsmcp.EINVALID, "lease owner is required")
	case len(owner) > agentsmcp.MaxLeaseOwnerBytes:
		return agentsmcp.Errorf(agentsmcp.EINVALID, "lease owner is %d bytes; the limit is %d", len(owner), agentsmcp.MaxLeaseOwnerBytes)
	case ttl < time.Millisecond:
		return agentsmcp.Errorf(agentsmcp.EINVALID, "lease ttl %v is under a millisecond", ttl)
	}
	return nil
}

// TaskChange checks t as UpdateTaskSteps takes it with c: the fields of
// the task and the step states c names as ValidateUpdate would, the step
// ids of all of them distinct, the whole task within MaxTaskBytes, and c
// consistent with t. The step states c does not name were validated when
// they were stored, and are not checked again: that is most of the cost of
// ValidateUpdate on a large task.
func TaskChange(t *agentsmcp.Task, c agentsmcp.TaskChange) error {
	if t == nil {
		return agentsmcp.Errorf(agentsmcp.EINVALID, "task is required")
	}
	if c.Events < 0 || c.Events > len(t.History) {
		return agentsmcp.Errorf(agentsmcp.EINVALID, "task change appends %d events to a history of %d", c.Events, len(t.History))
	}
	if len(t.History) >= agentsmcp.MaxTaskHistory {
		return agentsmcp.Errorf(agentsmcp.EINVALID, "task history holds %d events: it may have been trimmed, so it is written whole", len(t.History))
	}
	for _, i := range c.Steps {
		if i < 0 || i >= len(t.Steps) {
			return agentsmcp.Errorf(agentsmcp.EINVALID, "task change names step %d of %d", i, len(t.Steps))
		}
	}
	// The task's own fields, without its steps: Validate does the rest.
	head := *t
	head.Steps = nil
	head.History = t.History[len(t.History)-c.Events:]
	if err := TaskUpdate(&head); err != nil {
		return err
	}
	if len(t.Steps) > agentsmcp.MaxPlanSteps {
		return agentsmcp.Errorf(agentsmcp.EINVALID, "task has %d steps; the limit is %d", len(t.Steps), agentsmcp.MaxPlanSteps)
	}
	for _, i := range c.Steps {
		if err := stepState(&t.Steps[i]); err != nil {
			return err
		}
	}
	size := len(t.Request) + len(t.Inputs) + len(t.Error)
	seen := make(map[string]bool, len(t.Steps))
	for i := range t.Steps {
		s := &t.Steps[i]
		if seen[s.StepID] {
			return agentsmcp.Errorf(agentsmcp.EINVALID, "task step %q has two states", s.StepID)
		}
		seen[s.StepID] = true
		size += len(s.StepID) + len(s.Output) + len(s.Error) + len(s.RepairedTool) + len(s.RepairedArguments)
	}
	for _, e := range t.History {
		size += len(e.Type) + len(e.StepID) + len(e.Message)
	}
	if size > agentsmcp.MaxTaskBytes {
		return agentsmcp.Errorf(agentsmcp.EINVALID, "task holds %d bytes; the limit is %d", size, agentsmcp.MaxTaskBytes)
	}
	return nil
}

// stepState checks one step state as Task.Validate does.
func stepState(s *agentsmcp.StepState) error {
	switch {
	case !agentsmcp.IsStepID(s.StepID):
		return agentsmcp.Errorf(agentsmcp.EINVALID, "task step id %q does not match %v", s.StepID, agentsmcp.StepIDPattern)
	case !slices.Contains(stepStatuses, s.Status):
		return agentsmcp.Errorf(agentsmcp.EINVALID, "task step %q: status %q is not one of %v", s.StepID, s.Status, stepStatuses)
	case s.Attempts < 0:
		return agentsmcp.Errorf(agentsmcp.EINVALID, "task step %q: attempts %d is negative", s.StepID, s.Attempts)
	case s.Asks < 0:
		return agentsmcp.Errorf(agentsmcp.EINVALID, "task step %q: asks %d is negative", s.StepID, s.Asks)
	case len(s.Output) > agentsmcp.MaxStepOutputBytes:
		return agentsmcp.Errorf(agentsmcp.EINVALID, "task step %q: output is %d bytes; the limit is %d", s.StepID, len(s.Output), agentsmcp.MaxStepOutputBytes)
	case len(s.Output) > 0 && (!json.Valid(s.Output) || !utf8.Valid(s.Output)):
		return agentsmcp.Errorf(agentsmcp.EINVALID, "task step %q: output is not valid JSON", s.StepID)
	case len(s.Error) > agentsmcp.MaxTaskErrorBytes:
		return agentsmcp.Errorf(agentsmcp.EINVALID, "task step %q: error is %d bytes; the limit is %d", s.StepID, len(s.Error), agentsmcp.MaxTaskErrorBytes)
	case s.RepairedTool != "" && !agentsmcp.ToolNamePattern.MatchString(s.RepairedTool):
		return agentsmcp.Errorf(agentsmcp.EINVALID, "task step %q: repaired tool %q does not match %v", s.StepID, s.RepairedTool, agentsmcp.ToolNamePattern)
	case s.RepairedTool == "" && len(s.RepairedArguments) > 0:
		return agentsmcp.Errorf(agentsmcp.EINVALID, "task step %q: repaired arguments without a repaired tool", s.StepID)
	}
	return checkJSONObject(s.RepairedArguments, agentsmcp.MaxStepArgumentsBytes, "task step "+s.StepID+" repaired arguments")
}

// stepStatuses lists every valid StepStatus.
var stepStatuses = []agentsmcp.StepStatus{
	agentsmcp.StepPending, agentsmcp.StepRunning, agentsmcp.StepSucceeded, agentsmcp.StepFailed, agentsmcp.StepSkipped,
	agentsmcp.StepCancelled, agentsmcp.StepWaitingInput, agentsmcp.StepWaitingConfirmation,
}
