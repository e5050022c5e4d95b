package agents

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"golang.org/x/text/language"
	"golang.org/x/text/message"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/internal/jsonnum"
)

// This file holds the user's side of a task: the inputs a plan declares
// (a JSON Schema object) and the answers resume_task brings.

// checkInputs checks inputs against the plan's Inputs schema. Values that
// are absent are not an error unless complete is set: a task asks for
// them when a step needs them. A number beyond the bounds of package
// internal/jsonnum, in the inputs or in the schema, is EINVALID whatever
// the schema.
func checkInputs(plan *agentsmcp.Plan, inputs json.RawMessage, complete bool) error {
	if len(inputs) == 0 {
		inputs = json.RawMessage(`{}`)
	}
	var values map[string]any
	dec := json.NewDecoder(bytes.NewReader(inputs))
	dec.UseNumber()
	if err := dec.Decode(&values); err != nil || values == nil {
		return agentsmcp.Errorf(agentsmcp.EINVALID, "inputs must be a JSON object")
	}
	if len(inputs) > agentsmcp.MaxPlanInputsBytes {
		return agentsmcp.Errorf(agentsmcp.EINVALID, "inputs are %d bytes; the limit is %d", len(inputs), agentsmcp.MaxPlanInputsBytes)
	}
	// The validator cannot be given a number beyond these bounds (it
	// panics, or spends seconds on one number), and inputs reach it from
	// resume_task, tasks/update and the admin API, and on the task's own
	// goroutine, not only through the router's checked arguments.
	if err := jsonnum.CheckValue(map[string]any(values)); err != nil {
		return agentsmcp.Errorf(agentsmcp.EINVALID, "inputs: %v", err)
	}
	if len(plan.Inputs) == 0 {
		return nil
	}
	schema, err := compileInputsSchema(plan.Inputs, complete)
	if err != nil {
		return err
	}
	// Decoded with UseNumber, as the validator expects: big integers stay exact.
	if err := schema.Validate(map[string]any(values)); err != nil {
		return agentsmcp.Errorf(agentsmcp.EINVALID, "inputs do not satisfy the plan's inputs schema: %s", validationSummary(err))
	}
	return nil
}

// compileInputsSchema compiles a plan's Inputs schema; without complete,
// its "required" list is dropped, so partial inputs are checked for what
// they hold.
func compileInputsSchema(raw json.RawMessage, complete bool) (*jsonschema.Schema, error) {
	var doc map[string]any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&doc); err != nil {
		return nil, agentsmcp.Errorf(agentsmcp.EINVALID, "the plan's inputs schema is not a JSON object: %v", err)
	}
	if err := jsonnum.CheckValue(map[string]any(doc)); err != nil {
		return nil, agentsmcp.Errorf(agentsmcp.EINVALID, "the plan's inputs schema: %v", err)
	}
	if !complete {
		delete(doc, "required")
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("inputs.json", doc); err != nil {
		return nil, agentsmcp.Errorf(agentsmcp.EINVALID, "the plan's inputs schema: %v", err)
	}
	s, err := c.Compile("inputs.json")
	if err != nil {
		return nil, agentsmcp.Errorf(agentsmcp.EINVALID, "the plan's inputs schema does not compile: %v", err)
	}
	return s, nil
}

var englishPrinter = message.NewPrinter(language.English)

func validationSummary(err error) string {
	var verr *jsonschema.ValidationError
	if !errors.As(err, &verr) {
		return err.Error()
	}
	var msgs []string
	for _, leaf := range leaves(verr) {
		loc := "/" + strings.Join(leaf.InstanceLocation, "/")
		msgs = append(msgs, fmt.Sprintf("%s: %s", loc, leaf.ErrorKind.LocalizedString(englishPrinter)))
		if len(msgs) == 5 {
			break
		}
	}
	return strings.Join(msgs, "; ")
}

func leaves(e *jsonschema.ValidationError) []*jsonschema.ValidationError {
	if len(e.Causes) == 0 {
		return []*jsonschema.ValidationError{e}
	}
	var out []*jsonschema.ValidationError
	for _, c := range e.Causes {
		out = append(out, leaves(c)...)
	}
	return out
}

// mergeInputs returns base with the top-level keys of more set.
func mergeInputs(base, more json.RawMessage) (json.RawMessage, error) {
	m := map[string]json.RawMessage{}
	if len(base) > 0 {
		if err := json.Unmarshal(base, &m); err != nil {
			return nil, agentsmcp.Errorf(agentsmcp.EINVALID, "stored inputs are not a JSON object")
		}
	}
	if len(more) > 0 {
		var add map[string]json.RawMessage
		if err := json.Unmarshal(more, &add); err != nil || add == nil {
			return nil, agentsmcp.Errorf(agentsmcp.EINVALID, "inputs must be a JSON object")
		}
		for k, v := range add {
			m[k] = v
		}
	}
	return json.Marshal(m)
}

// inputNames returns the top-level names present in inputs.
func inputNames(inputs json.RawMessage) map[string]bool {
	var m map[string]json.RawMessage
	_ = json.Unmarshal(inputs, &m)
	names := make(map[string]bool, len(m))
	for k := range m {
		names[k] = true
	}
	return names
}

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
		if merged, err = mergeInputs(t.Inputs, req.Inputs); err != nil {
			return err
		}
		if err := checkInputs(plan, merged, false); err != nil {
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
	had, have := inputNames(before), inputNames(t.Inputs)
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
			t.AddEvent(agentsmcp.TaskEvent{At: time.Now(), Type: "step_waiting_input", StepID: s.StepID, Message: s.Error})
		}
	}
}

// stepMissingInputs lists the inputs step i of t (of plan) references that
// are not in have, in the order of its arguments.
func stepMissingInputs(t *agentsmcp.Task, plan *agentsmcp.Plan, i int, have map[string]bool) []string {
	refs, _ := FindRefs(stepArgumentsOf(t, plan, i))
	var missing []string
	for _, r := range refs {
		if r.Kind == RefInput && !have[r.Name] && !slices.Contains(missing, r.Name) {
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
