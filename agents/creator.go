package agents

import (
	"slices"

	agentsmcp "github.com/agents-mcp/agents-mcp"
)

// creatorOf returns the principal t's steps run as: Principal with the
// allowlist it had (no scopes but the anonymous principal's), or nil.
func creatorOf(t *agentsmcp.Task) *agentsmcp.Principal {
	if t.Principal == "" {
		return nil
	}
	p := &agentsmcp.Principal{ID: t.Principal, Tools: slices.Clone(t.PrincipalTools)}
	if t.Principal == agentsmcp.AnonymousPrincipal {
		p.Scopes = slices.Clone(agentsmcp.Scopes)
	}
	return p
}
