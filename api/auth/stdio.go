package auth

import (
	"context"
	"fmt"
	"net/http"

	agentsmcp "github.com/agents-mcp/agents-mcp"
)

// StdioKeyEnv is the environment variable that gives `agents-mcp stdio`
// its credential (an API key or a JWT) when the server has credentials
// configured.
const StdioKeyEnv = "AGENTS_MCP_API_KEY"

// AuthenticateStdio returns the principal of a stdio session, whose one
// credential, token, comes from [StdioKeyEnv]. Without credentials
// configured it is [Anonymous] whatever token is. Otherwise token must be
// valid and carry [agentsmcp.ScopeMCP]; if not, the error says what to fix
// and the session must not start. It wraps an [*Error] whose Hint suits the
// audit trail. The credential is checked once: a JWT that expires during
// the session does not end it.
func (a *Authenticator) AuthenticateStdio(ctx context.Context, token string) (*agentsmcp.Principal, error) {
	if !a.Configured() {
		return Anonymous(), nil
	}
	if token == "" {
		return nil, fmt.Errorf("this server has credentials configured: set %s to an API key or token with scope %s: %w",
			StdioKeyEnv, agentsmcp.ScopeMCP, &Error{Status: http.StatusUnauthorized, Hint: "none", Reason: "missing credential"})
	}
	p, _, err := a.Verify(ctx, token)
	if err != nil {
		return nil, fmt.Errorf("%s was not accepted: %w", StdioKeyEnv, err)
	}
	if !p.HasScope(agentsmcp.ScopeMCP) {
		return nil, fmt.Errorf("the credential in %s (%s) lacks scope %s: %w", StdioKeyEnv, p.ID, agentsmcp.ScopeMCP,
			&Error{Status: http.StatusForbidden, Hint: p.ID, Reason: "requires scope " + agentsmcp.ScopeMCP, presented: true})
	}
	return p, nil
}
