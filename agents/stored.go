package agents

import (
	"bytes"
	"slices"

	agentsmcp "github.com/agents-mcp/agents-mcp"
)

// copyTask is a deep copy of t, sharing no memory with it.
func copyTask(t *agentsmcp.Task) *agentsmcp.Task {
	c := *t
	if t.PrincipalTools != nil {
		c.PrincipalTools = slices.Clone(t.PrincipalTools)
	}
	c.Inputs = bytes.Clone(t.Inputs)
	if t.Steps != nil {
		c.Steps = make([]agentsmcp.StepState, len(t.Steps))
		for i, s := range t.Steps {
			s.Output, s.RepairedArguments = bytes.Clone(s.Output), bytes.Clone(s.RepairedArguments)
			c.Steps[i] = s
		}
	}
	c.History = slices.Clone(t.History)
	return &c
}
