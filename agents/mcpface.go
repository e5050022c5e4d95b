package agents

import (
	"context"
	"encoding/json"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	agentsmcp "github.com/agents-mcp/agents-mcp"
)

// This file is what the engine offers its MCP face (agents/mcptools)
// beyond the Executor's methods: the questions a paused task asks, in the
// words and forms the engine's own Caller.Elicit asks them, so that a
// client asked through tasks/get or an input_required result reads the
// same question as one asked while its call waits.

// ConfirmSchema is the form of the answer to a step's confirmation:
// {"confirm": true} runs the step, false skips it and the steps that
// depend on it.
var ConfirmSchema = confirmSchema

// ConfirmQuestion is the question that asks the user to confirm step i of
// task t (of plan), which waits for a confirmation: the step, the tool it
// calls and its arguments (cut when long).
func ConfirmQuestion(t *agentsmcp.Task, plan *agentsmcp.Plan, i int) string {
	return confirmQuestion(t, plan, i)
}

// InputsQuestion is the question that asks the user of task t for the
// inputs missing.
func InputsQuestion(t *agentsmcp.Task, missing []string) string { return inputsQuestion(t, missing) }

// ElicitationSchema is the part of a plan's inputs schema that asks for
// the inputs missing, as MCP elicitation allows it: a flat object of
// primitive properties. ok is false when an input is not primitive: a
// form cannot ask for it.
func ElicitationSchema(inputs json.RawMessage, missing []string) (schema json.RawMessage, ok bool) {
	return elicitationSchema(inputs, missing)
}

// StepMissingInputs lists the inputs step i of t (of plan) references that
// are not in have, in the order of its arguments. The arguments are the
// plan's, or its repair's.
func StepMissingInputs(t *agentsmcp.Task, plan *agentsmcp.Plan, i int, have map[string]bool) []string {
	return stepMissingInputs(t, plan, i, have)
}

// StepTool is the tool step i of t (of plan) calls: the plan's, or the one
// its repair chose.
func StepTool(t *agentsmcp.Task, plan *agentsmcp.Plan, i int) string { return stepToolOf(t, plan, i) }

// StepEnded reports whether a step of status s has ended: succeeded,
// failed, skipped or cancelled. A step waiting for the user has not.
func StepEnded(s agentsmcp.StepStatus) bool { return stepEnded(s) }

// EventInputsRejected is the type of the task event that records an
// inputs answer the plan's inputs schema refused (Executor.RejectInputs,
// or the runner on an elicitation's answer); its Message says why.
const EventInputsRejected = inputsRejected

// WithEstimatesAt pins to at the clock of the estimates (tool reliability,
// which decays with age) that a Gatherer makes under ctx. A call that asks
// the client's model over several rounds gathers again on each, and its
// prompts must not change with the time a round took.
func WithEstimatesAt(ctx context.Context, at time.Time) context.Context {
	return withEstimatesAt(ctx, at)
}

// CreateMessageParams is the sampling/createMessage request that asks a
// client's model for req, as SamplingLLM sends it.
func CreateMessageParams(req *agentsmcp.LLMRequest) *mcp.CreateMessageParams {
	return createMessageParams(req)
}
