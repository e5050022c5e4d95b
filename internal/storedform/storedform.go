// Package storedform computes the stored form of the root's aggregates. For a task: what a store that
// keeps tasks verbatim ([agentsmcp.VerbatimTaskStore]) returns once a task is
// written, so that the executor may skip reading back a task it wrote last,
// and the store tests can check both stores against the same form; the
// helpers over the stores' optional interfaces (UpdateTaskSteps,
// TasksVerbatim) and an upstream definition's kind as stored. A leaf: it
// imports the root only.
package storedform

import (
	"bytes"
	"slices"
	"time"
	"unicode/utf8"

	agentsmcp "github.com/agents-mcp/agents-mcp"
)

// Task returns a copy of t as a [agentsmcp.VerbatimTaskStore] returns it once
// t is stored: times at millisecond precision in UTC (zero times stay
// zero), the history trimmed to MaxTaskHistory events, empty Inputs,
// outputs, repaired arguments and allowlists nil, Steps and History not
// nil, a lease without an owner zero, and no memory shared with t. The
// executor returns it from Wait in place of reading the task back. It returns nil when some string of t is not valid UTF-8:
// the stores encode strings as JSON or BSON, which may replace such
// bytes, so only a read can say what was stored.
func Task(t *agentsmcp.Task) *agentsmcp.Task {
	if !validUTF8Task(t) {
		return nil
	}
	c := *t
	c.PrincipalTools = nil
	if len(t.PrincipalTools) > 0 {
		c.PrincipalTools = slices.Clone(t.PrincipalTools)
	}
	c.Inputs = rawCopy(t.Inputs)
	c.Steps = make([]agentsmcp.StepState, len(t.Steps))
	for i, s := range t.Steps {
		s.Output, s.RepairedArguments = rawCopy(s.Output), rawCopy(s.RepairedArguments)
		s.StartedAt, s.EndedAt = storedTime(s.StartedAt), storedTime(s.EndedAt)
		c.Steps[i] = s
	}
	history := TrimHistory(t.History)
	c.History = make([]agentsmcp.TaskEvent, len(history))
	for i, e := range history {
		e.At = storedTime(e.At)
		c.History[i] = e
	}
	c.Lease = agentsmcp.TaskLease{}
	if t.Lease.Owner != "" {
		c.Lease = agentsmcp.TaskLease{Owner: t.Lease.Owner, ExpiresAt: storedTime(t.Lease.ExpiresAt)}
	}
	c.CreatedAt, c.UpdatedAt, c.EndedAt = storedTime(t.CreatedAt), storedTime(t.UpdatedAt), storedTime(t.EndedAt)
	return &c
}

// storedTime is t as a store returns it: at millisecond precision, in
// UTC; the zero time for a zero t.
func storedTime(t time.Time) time.Time {
	if t.IsZero() {
		return time.Time{}
	}
	return time.UnixMilli(t.UnixMilli()).UTC()
}

// rawCopy is a copy of b, nil for an empty b: the stores read an empty
// JSON value back as nil.
func rawCopy(b []byte) []byte {
	if len(b) == 0 {
		return nil
	}
	return bytes.Clone(b)
}

// validUTF8Task reports whether every string of t is valid UTF-8.
func validUTF8Task(t *agentsmcp.Task) bool {
	ok := utf8.ValidString
	if !ok(t.ID) || !ok(t.PlanID) || !ok(t.Principal) || !ok(t.Request) || !ok(string(t.Status)) || !utf8.Valid(t.Inputs) ||
		!ok(t.Error) || !ok(t.ErrorCode) || !ok(t.Lease.Owner) {
		return false
	}
	for _, tool := range t.PrincipalTools {
		if !ok(tool) {
			return false
		}
	}
	for i := range t.Steps {
		s := &t.Steps[i]
		if !ok(s.StepID) || !ok(string(s.Status)) || !utf8.Valid(s.Output) || !ok(s.Error) || !ok(s.RepairedTool) ||
			!utf8.Valid(s.RepairedArguments) {
			return false
		}
	}
	for i := range t.History {
		e := &t.History[i]
		if !ok(e.Type) || !ok(e.StepID) || !ok(e.Message) {
			return false
		}
	}
	return true
}
