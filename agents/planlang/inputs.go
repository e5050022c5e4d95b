package planlang

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"golang.org/x/text/language"
	"golang.org/x/text/message"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/internal/jsonnum"
)

// This file holds the inputs a plan declares (a JSON Schema object, the
// plan's Inputs) and the values a task is given for them.

// CheckInputs checks inputs against the plan's Inputs schema. Values that
// are absent are not an error unless complete is set: a task asks for
// them when a step needs them. A number beyond the bounds of package
// internal/jsonnum, in the inputs or in the schema, is EINVALID whatever
// the schema.
func CheckInputs(plan *agentsmcp.Plan, inputs json.RawMessage, complete bool) error {
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

// MergeInputs returns base with the top-level keys of more set, more's
// values replacing base's. Either may be empty; when one is not a JSON
// object the error is EINVALID.
func MergeInputs(base, more json.RawMessage) (json.RawMessage, error) {
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

// InputNames returns the top-level names present in inputs: none when
// inputs is empty or not a JSON object.
func InputNames(inputs json.RawMessage) map[string]bool {
	var m map[string]json.RawMessage
	_ = json.Unmarshal(inputs, &m)
	names := make(map[string]bool, len(m))
	for k := range m {
		names[k] = true
	}
	return names
}
