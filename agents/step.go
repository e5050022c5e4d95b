package agents

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/internal/backoff"
	"github.com/agents-mcp/agents-mcp/internal/mcpwire"
	"github.com/agents-mcp/agents-mcp/internal/storedform"
)

// runStep calls tool, the tool of step i, until it succeeds, fails for good or
// runs out of attempts, and reports to the runner. It owns nothing of the
// task: attempts before this run are given, everything else goes through
// events.
func (r *runner) runStep(i int, tool string, args json.RawMessage, attemptsBefore int) {
	step := r.plan.Steps[i]
	policy := r.e.opts.Retry
	if step.Retry != nil {
		policy = *step.Retry
	}
	timeout := r.e.opts.StepTimeout
	if step.Timeout > 0 {
		timeout = step.Timeout
	}
	ctx, span := r.startStepSpan(i, tool)
	defer span.End()
	attempts := attemptsBefore
	var previousAnswer string // the error the tool answered the attempt before with
	for n := 1; ; n++ {
		attempts++
		output, errText, retryable, answered, authorize := r.callOnce(ctx, tool, args, timeout)
		// The tool answering with the same error twice in a row says the
		// failure is not passing: another attempt would repeat it.
		repeated := answered && errText != "" && errorClassOf(errText) == previousAnswer
		if answered {
			previousAnswer = errorClassOf(errText)
		} else {
			previousAnswer = ""
		}
		if repeated {
			retryable = false
		}
		recordAttempt(span, attempts, errText, retryable)
		switch {
		case ctx.Err() != nil && r.cancelled.Load():
			r.sendStepDone(span, stepDone{index: i, attempts: attempts, status: agentsmcp.StepCancelled, err: "cancelled while running"})
			return
		case ctx.Err() != nil:
			r.sendStepDone(span, stepDone{index: i, attempts: attempts, status: agentsmcp.StepRunning})
			return
		case errText == "":
			r.sendStepDone(span, stepDone{index: i, attempts: attempts, status: agentsmcp.StepSucceeded, output: output})
			return
		case authorize:
			// A person must authorize (ADR 0012): the step waits, like a
			// confirmation, and runs again once confirmed.
			r.sendStepDone(span, stepDone{index: i, attempts: attempts, status: agentsmcp.StepWaitingConfirmation,
				err: errText + " Confirm the step once authorized to run it again."})
			return
		case !retryable || n >= policy.MaxAttempts:
			switch {
			case repeated:
				errText = fmt.Sprintf("%s (gave up after %d attempts: the same error each time, so it is permanent)", errText, n)
			case retryable:
				errText = fmt.Sprintf("%s (gave up after %d attempts)", errText, n)
			}
			r.sendStepDone(span, stepDone{index: i, attempts: attempts, status: agentsmcp.StepFailed, err: errText})
			return
		}
		wait := backoff.Delay(policy.InitialBackoff, policy.MaxBackoff, n)
		r.send(stepRetrying{index: i, attempts: attempts, err: errText, wait: wait})
		select {
		case <-time.After(wait):
		case <-ctx.Done():
			// Stopped between attempts: no further call.
			status, msg := agentsmcp.StepRunning, ""
			if r.cancelled.Load() {
				status, msg = agentsmcp.StepCancelled, "cancelled between attempts"
			}
			r.sendStepDone(span, stepDone{index: i, attempts: attempts, status: status, err: msg})
			return
		}
	}
}

// errorClassOf is what makes two failures of a tool the same: the first
// line of the error, trimmed.
func errorClassOf(errText string) string {
	line, _, _ := strings.Cut(errText, "\n")
	return strings.TrimSpace(line)
}

// callOnce makes one attempt, bounded by timeout: the step's output on
// success, else the error, whether another attempt may succeed, and
// whether the tool itself answered with the error (an isError result, not
// a timeout or an unreachable upstream), and whether that error asks a
// person to authorize an integration (mcpwire.AuthorizationRequiredFrom):
// needing input, not a failure.
func (r *runner) callOnce(ctx context.Context, tool string, args json.RawMessage, timeout time.Duration) (output json.RawMessage, errText string, retryable, answered, authorize bool) {
	stepSpan := trace.SpanFromContext(ctx)
	var session *mcp.ServerSession
	if c := r.currentCaller(); c != nil {
		session = c.Session()
		if values := c.Request(); values != nil {
			// The waiting request's values, the step's cancellation.
			var stop context.CancelFunc
			ctx, stop = withCancelOf(values, ctx)
			defer stop()
			ctx = trace.ContextWithSpan(ctx, stepSpan) // the call is a child of the step, not of the request
		}
	}
	if r.creator != nil {
		// On the creator's behalf, whoever resumed the task and wherever:
		// the call record names it, nested agent tools act as it.
		ctx = agentsmcp.WithPrincipal(ctx, r.creator)
	}
	actx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	res, err := r.e.opts.Tools.CallTool(actx, &mcp.CallToolRequest{
		Session: session,
		Params:  &mcp.CallToolParamsRaw{Name: tool, Arguments: args},
	})
	if err == nil && res != nil && !res.IsError {
		return stepOutput(res), "", false, true, false // even when it answered right at the deadline
	}
	if ctx.Err() == nil && errors.Is(actx.Err(), context.DeadlineExceeded) {
		return nil, fmt.Sprintf("timed out after %v", timeout), true, false, false
	}
	if err != nil {
		return nil, agentsmcp.ErrorMessage(err), agentsmcp.ErrorCode(err) == agentsmcp.EUNAVAILABLE, false, false
	}
	if res == nil {
		return json.RawMessage(`null`), "", false, true, false
	}
	if ar, ok := mcpwire.AuthorizationRequiredFrom(res); ok {
		return nil, ar.Message(), false, true, true
	}
	if res.IsError {
		text := resultText(res)
		if text == "" {
			text = "the tool reported an error without a message"
		}
		return nil, text, transientToolError.MatchString(text), true, false
	}
	return stepOutput(res), "", false, true, false
}

// withCancelOf returns a context with the values of values that ends when
// ctx ends, with ctx's cause.
func withCancelOf(values, ctx context.Context) (context.Context, context.CancelFunc) {
	out, cancel := context.WithCancelCause(values)
	stop := context.AfterFunc(ctx, func() { cancel(context.Cause(ctx)) })
	return out, func() { stop(); cancel(nil) }
}

// transientToolError recognises tool errors that say the failure is
// temporary. Other tool errors are the tool's answer to these arguments,
// which another attempt would repeat.
var transientToolError = regexp.MustCompile(`(?i)\b(time[d ]?out|timed out|temporar(y|ily)|unavailable|rate[- ]limit|too many requests|try again|retry later|connection (reset|refused)|429|502|503|504)\b`)

// stepOutput is what later steps reference as {{steps.<id>.output}}: the
// structured content when the tool gives one; else its text, parsed when
// it is a JSON object or array; else the content blocks themselves.
func stepOutput(res *mcp.CallToolResult) json.RawMessage {
	if res.StructuredContent != nil {
		if b, err := json.Marshal(res.StructuredContent); err == nil {
			return b
		}
	}
	texts, onlyText := make([]string, 0, len(res.Content)), true
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			texts = append(texts, t.Text)
		} else {
			onlyText = false
		}
	}
	if onlyText {
		joined := strings.Join(texts, "\n")
		if trimmed := bytes.TrimSpace([]byte(joined)); len(trimmed) > 0 && (trimmed[0] == '{' || trimmed[0] == '[') && json.Valid(trimmed) {
			return trimmed
		}
		b, _ := json.Marshal(joined)
		return b
	}
	b, err := json.Marshal(res.Content)
	if err != nil {
		return json.RawMessage(`null`)
	}
	return b
}

func resultText(res *mcp.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok && t.Text != "" {
			parts = append(parts, t.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// storedOutputsBudget is how many bytes of step outputs a task stores in
// full: what MaxTaskBytes leaves once the largest possible request, inputs,
// step errors and history (of events cut to maxEventMessageBytes) are
// counted, less room for a preview of every step. Without it a task of
// many large outputs would outgrow what the store accepts.
const storedOutputsBudget = agentsmcp.MaxTaskBytes -
	agentsmcp.MaxQueryTextBytes - agentsmcp.MaxPlanInputsBytes - agentsmcp.MaxTaskErrorBytes -
	agentsmcp.MaxPlanSteps*agentsmcp.MaxTaskErrorBytes -
	agentsmcp.MaxTaskHistory*(maxEventMessageBytes+64+64) - // message, step id, type
	agentsmcp.MaxPlanSteps*(outputPreviewBytes+256)

// outputPreviewBytes is how much of an output too large to store is kept.
const outputPreviewBytes = 4 << 10

// storedOutput is the output as the task stores it, given the bytes of
// outputs it stores already: whole when it fits MaxStepOutputBytes and the
// task's storedOutputsBudget, otherwise a preview that says it was cut
// (later steps of this run still see the whole output).
func storedOutput(output json.RawMessage, storedSoFar int) json.RawMessage {
	if len(output) <= agentsmcp.MaxStepOutputBytes && storedSoFar+len(output) <= storedOutputsBudget {
		return output
	}
	// Escaping can make the preview longer than its text: shorten until
	// the whole stays within its room.
	for n := outputPreviewBytes; ; n /= 2 {
		preview := storedform.TruncateUTF8(string(output), n)
		b, _ := json.Marshal(map[string]any{"truncated": true, "bytes": len(output), "preview": preview})
		if len(b) <= outputPreviewBytes+256 || n == 0 {
			return b
		}
	}
}

// elicitationSchema is the part of a plan's inputs schema that asks for
// the missing inputs, as MCP elicitation allows it: a flat object of
// primitive properties. ok is false when an input is not primitive (the
// user must then supply it through resume_task).
func elicitationSchema(inputs json.RawMessage, missing []string) (json.RawMessage, bool) {
	var doc struct {
		Properties map[string]map[string]any `json:"properties"`
	}
	_ = json.Unmarshal(inputs, &doc)
	props := make(map[string]any, len(missing))
	for _, name := range missing {
		p, declared := doc.Properties[name]
		if !declared {
			p = map[string]any{"type": "string", "title": name}
		}
		switch p["type"] {
		case "string", "number", "integer", "boolean":
		default:
			return nil, false
		}
		props[name] = p
	}
	b, err := json.Marshal(map[string]any{"type": "object", "properties": props, "required": missing})
	return b, err == nil
}

// tracerName names the executor's spans. The tracer is looked up at each span
// rather than kept: a tracer kept from the global provider follows only the
// first provider ever set, which in tests need not be the current one.
const tracerName = "github.com/agents-mcp/agents-mcp/agents"

// startStepSpan starts the "executor step" span of step i, on the steps'
// context. When a request waits for the task, the step belongs to that
// request's trace; otherwise (no caller, a resumed task) it starts one.
func (r *runner) startStepSpan(i int, tool string) (context.Context, trace.Span) {
	parent := r.stepCtx
	if c := r.currentCaller(); c != nil {
		if values := c.Request(); values != nil {
			parent = trace.ContextWithSpanContext(parent, trace.SpanContextFromContext(values))
		}
	}
	step := r.plan.Steps[i]
	return otel.Tracer(tracerName).Start(parent, "executor step", trace.WithAttributes(
		attribute.String("agents_mcp.task.id", r.task.ID),
		attribute.String("agents_mcp.step.id", step.ID),
		attribute.String("agents_mcp.tool", tool),
	))
}

// maxSpanErrorBytes bounds the error texts copied into spans.
const maxSpanErrorBytes = 256

// recordAttempt adds an "attempt" event to the step's span.
func recordAttempt(span trace.Span, attempt int, errText string, retryable bool) {
	if !span.IsRecording() {
		return
	}
	attrs := []attribute.KeyValue{attribute.Int("agents_mcp.attempt", attempt), attribute.Bool("agents_mcp.ok", errText == "")}
	if errText != "" {
		attrs = append(attrs, attribute.String("error.message", storedform.TruncateUTF8(errText, maxSpanErrorBytes)), attribute.Bool("agents_mcp.retryable", retryable))
	}
	span.AddEvent("attempt", trace.WithAttributes(attrs...))
}

// sendStepDone reports how step d.index ended to the runner, and to its
// span.
func (r *runner) sendStepDone(span trace.Span, d stepDone) {
	span.SetAttributes(attribute.Int("agents_mcp.attempts", d.attempts), attribute.String("agents_mcp.step.status", string(d.status)))
	if d.status == agentsmcp.StepFailed {
		span.SetStatus(codes.Error, storedform.TruncateUTF8(d.err, maxSpanErrorBytes))
	}
	r.send(d)
}
