// Package view makes the views of the agents' records and the credentials
// that MCP and the admin API show: copies with their secrets redacted
// (internal/redact), the record itself unchanged, and the in-place
// redaction of a thought's texts with which the stores keep thoughts. A
// leaf: it imports the root and internal/redact only.
package view

import (
	"slices"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/internal/redact"
)

// Task returns the view of t shown over MCP and the admin API: its
// inputs and step outputs through redact.Secrets, its request, errors and
// history messages through redact.Text. t is unchanged.
func Task(t *agentsmcp.Task) *agentsmcp.Task {
	c := *t
	c.Request = redactWhole(t.Request)
	c.Inputs = redact.Secrets(t.Inputs)
	c.Error = redactWhole(t.Error)
	c.Steps = slices.Clone(t.Steps)
	for i := range c.Steps {
		c.Steps[i].Error = redactWhole(c.Steps[i].Error)
		if len(c.Steps[i].Output) > 0 {
			// A tool may answer with a secret (a token it issued).
			c.Steps[i].Output = redact.Secrets(c.Steps[i].Output)
		}
		if len(c.Steps[i].RepairedArguments) > 0 {
			// Shown like a plan step's arguments.
			c.Steps[i].RepairedArguments = redact.Secrets(c.Steps[i].RepairedArguments)
		}
	}
	c.History = slices.Clone(t.History)
	for i := range c.History {
		c.History[i].Message = redactWhole(c.History[i].Message)
	}
	c.PrincipalTools = slices.Clone(t.PrincipalTools)
	return &c
}

// Plan returns the view of p shown over MCP and the admin API: its
// steps' arguments through redact.Secrets, its texts through redact.Text. p
// is unchanged.
func Plan(p *agentsmcp.Plan) *agentsmcp.Plan {
	c := *p
	c.Request, c.Goal = redactWhole(p.Request), redactWhole(p.Goal)
	c.Steps = slices.Clone(p.Steps)
	for i := range c.Steps {
		c.Steps[i].Arguments = redact.Secrets(c.Steps[i].Arguments)
		c.Steps[i].Description = redactWhole(c.Steps[i].Description)
	}
	return &c
}

// Thought returns the view of th shown over MCP and the admin API, its
// texts through redact.Text. th is unchanged.
func Thought(th *agentsmcp.Thought) *agentsmcp.Thought {
	c := *th
	RedactThought(&c)
	return &c
}

// RedactThought removes the secrets redact.Text finds from every text of th,
// in place (its lists are copied first): how thoughts are stored, since
// nothing runs from their text.
func RedactThought(th *agentsmcp.Thought) {
	th.Request, th.Reasoning = redactWhole(th.Request), redactWhole(th.Reasoning)
	for _, l := range []*[]string{&th.SubGoals, &th.Approaches, &th.Constraints, &th.Assumptions, &th.Uncertainties} {
		*l = slices.Clone(*l)
		for i := range *l {
			(*l)[i] = redactWhole((*l)[i])
		}
	}
	th.RecommendedTools = slices.Clone(th.RecommendedTools)
	for i := range th.RecommendedTools {
		th.RecommendedTools[i].Reason = redactWhole(th.RecommendedTools[i].Reason)
	}
}

// redactWhole is redact.Text without its length limit.
func redactWhole(s string) string {
	return redact.Text(s, 2*len(s)+64)
}

// Credential returns the view of c shown over the admin API: without its
// secret, clear or sealed. c is unchanged.
func Credential(c *agentsmcp.Credential) *agentsmcp.Credential {
	r := *c
	r.Secret, r.Sealed = nil, ""
	r.Settings.Scopes = slices.Clone(c.Settings.Scopes)
	return &r
}
