// Package delegation carries a caller's own token, for the one use that
// needs it: an HTTP tool source that opted in to delegation (ADR 0012
// D7b). A leaf: it imports the root and internal/redact only.
package delegation

import (
	"context"
	"log/slog"
	"time"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/internal/redact"
)

// DelegatedToken is the verified JWT a caller authenticated with, kept in
// one request's context for the HTTP tool sources that opted in to
// delegation (ADR 0012 D7b). Its String, GoString, LogValue and JSON forms
// are [redact.Marker]; only Value gives the token.
type DelegatedToken struct {
	principal string
	token     string
	expires   time.Time
}

// NewDelegatedToken returns principal's token, expiring at expires (zero:
// unknown).
func NewDelegatedToken(principal, token string, expires time.Time) *DelegatedToken {
	return &DelegatedToken{principal: principal, token: token, expires: expires}
}

// Principal is the ID of the principal the token authenticated.
func (t *DelegatedToken) Principal() string { return t.principal }

// Value is the token itself.
func (t *DelegatedToken) Value() string { return t.token }

// Expires is when the token expires (zero: unknown).
func (t *DelegatedToken) Expires() time.Time { return t.expires }

func (t *DelegatedToken) String() string               { return redact.Marker }
func (t *DelegatedToken) GoString() string             { return redact.Marker }
func (t *DelegatedToken) LogValue() slog.Value         { return slog.StringValue(redact.Marker) }
func (t *DelegatedToken) MarshalJSON() ([]byte, error) { return []byte(`"` + redact.Marker + `"`), nil }

// TokenInfoDelegatedToken is the go-sdk auth.TokenInfo.Extra key of a JWT
// caller's *DelegatedToken.
const TokenInfoDelegatedToken = "delegated_token"

type delegatedKey struct{}

// WithDelegatedToken returns ctx carrying t; nil hides an inherited token.
func WithDelegatedToken(ctx context.Context, t *DelegatedToken) context.Context {
	return context.WithValue(ctx, delegatedKey{}, t)
}

// DelegatedTokenFrom returns ctx's token if it is unexpired and was issued
// to ctx's principal (a resumed task runs as its creator), else nil.
func DelegatedTokenFrom(ctx context.Context) *DelegatedToken {
	t, _ := ctx.Value(delegatedKey{}).(*DelegatedToken)
	if t == nil || t.token == "" || t.principal == "" || t.principal != agentsmcp.PrincipalIDFrom(ctx) {
		return nil
	}
	if !t.expires.IsZero() && !time.Now().Before(t.expires) {
		return nil
	}
	return t
}

// DelegationAcceptor is implemented by the providers that may receive a
// [DelegatedToken] (opted-in HTTP sources, the local tools); the router
// hides it from all others: MCP forbids token passthrough.
type DelegationAcceptor interface {
	AcceptsDelegation() bool
}

// AcceptsDelegation reports whether p may see a caller's delegated token.
func AcceptsDelegation(p agentsmcp.ToolProvider) bool {
	a, ok := p.(DelegationAcceptor)
	return ok && a.AcceptsDelegation()
}
