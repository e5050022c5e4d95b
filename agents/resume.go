package agents

import (
	"encoding/json"
	"slices"
	"strings"
	"time"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/agents/planlang"
	"github.com/agents-mcp/agents-mcp/internal/storedform"
)

// This file applies the user's answers to a task: the inputs and the
// confirmations resume_task brings, and the steps that wait for them.

// applyResume applies a resume request to a stored task of plan: inputs
// merged and checked (see inputsTaken for the steps waiting for them),
// steps confirmed or rejected, confirmed steps made pending again so that
// the runner schedules them.
func applyResume(t *agentsmcp.Task, plan *agentsmcp.Plan, req ResumeRequest) error {
	// Everything is checked before anything changes: a rejected request
	// leaves the task as it was.
	merged := t.Inputs
	if len(req.Inputs) > 0 {
		var err error
		if merged, err = planlang.MergeInputs(t.Inputs, req.Inputs); err != nil {
			return err
		}
		if err := planlang.CheckInputs(plan, merged, false); err != nil {
			return err
		}
	}
	for _, id := range append(slices.Clone(req.Confirm), req.Reject...) {
		i := slices.IndexFunc(t.Steps, func(s agentsmcp.StepState) bool { return s.StepID == id })
		switch {
		case i < 0:
			return agentsmcp.Errorf(agentsmcp.EINVALID, "step %q is not a step of task %s", id, t.ID)
		case stepEnded(t.Steps[i].Status) || t.Steps[i].Status == agentsmcp.StepRunning:
			return agentsmcp.Errorf(agentsmcp.EINVALID, "step %q is %s; only steps that have not run can be confirmed or rejected", id, t.Steps[i].Status)
		}
		if slices.Contains(req.Confirm, id) && slices.Contains(req.Reject, id) {
			return agentsmcp.Errorf(agentsmcp.EINVALID, "step %q is both confirmed and rejected", id)
		}
	}
	before := t.Inputs
	t.Inputs = merged
	inputsTaken(t, plan, before)
	for _, id := range req.Confirm {
		i := slices.IndexFunc(t.Steps, func(s agentsmcp.StepState) bool { return s.StepID == id })
		t.Steps[i].Confirmed = true
	}
	for _, id := range req.Reject {
		i := slices.IndexFunc(t.Steps, func(s agentsmcp.StepState) bool { return s.StepID == id })
		s := &t.Steps[i]
		s.Status, s.Error = agentsmcp.StepSkipped, "rejected by the user"
	}
	// A step waiting for a confirmation runs only once confirmed: an
	// interrupted step that may have had its effect must not run again on
	// any other answer.
	for i := range t.Steps {
		s := &t.Steps[i]
		if s.Status == agentsmcp.StepWaitingConfirmation && s.Confirmed {
			s.Status = agentsmcp.StepPending
		}
	}
	return nil
}

// inputsTaken reconsiders the steps of t that wait for inputs, now that
// t.Inputs holds more than before: a step that lacks none any more is
// pending again, for the runner to schedule; a step given some of what it
// lacked but not all is asked a new question (see reask), for the rest. A
// step given none of what it lacks keeps its question, and its key: it
// was not answered. So a step that waits is never made pending only to
// wait again, which would count a new question (ADR 0010, A4).
func inputsTaken(t *agentsmcp.Task, plan *agentsmcp.Plan, before json.RawMessage) {
	had, have := planlang.InputNames(before), planlang.InputNames(t.Inputs)
	for i := range t.Steps {
		s := &t.Steps[i]
		if s.Status != agentsmcp.StepWaitingInput || i >= len(plan.Steps) {
			continue
		}
		lacked, missing := stepMissingInputs(t, plan, i, had), stepMissingInputs(t, plan, i, have)
		switch {
		case len(missing) == 0:
			s.Status, s.Error = agentsmcp.StepPending, ""
		case len(missing) < len(lacked):
			reask(s)
			s.Error = waitingForInputs(missing)
			storedform.AddEvent(t, agentsmcp.TaskEvent{At: time.Now(), Type: "step_waiting_input", StepID: s.StepID, Message: s.Error})
		}
	}
}

// stepMissingInputs lists the inputs step i of t (of plan) references that
// are not in have, in the order of its arguments.
func stepMissingInputs(t *agentsmcp.Task, plan *agentsmcp.Plan, i int, have map[string]bool) []string {
	refs, _ := planlang.FindRefs(stepArgumentsOf(t, plan, i))
	var missing []string
	for _, r := range refs {
		if r.Kind == planlang.RefInput && !have[r.Name] && !slices.Contains(missing, r.Name) {
			missing = append(missing, r.Name)
		}
	}
	return missing
}

// waitingForInputs is the Error of a step waiting for the inputs missing.
func waitingForInputs(missing []string) string {
	return "waiting for inputs: " + strings.Join(missing, ", ")
}

// reask counts a new question about step s, asked again while it waits:
// its last answer was taken but did not settle it, or it was interrupted
// and must be confirmed again. A step stored before Asks existed counts as
// asked once already, so the new question never takes the key of the one
// answered (ADR 0010, A4).
func reask(s *agentsmcp.StepState) { s.Asks = max(s.Asks, 1) + 1 }

// inputsRejected is the event of an inputs answer the plan's schema
// refused.
const inputsRejected = "inputs_rejected"
