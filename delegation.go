package agentsmcp

import (
	"context"
	"log/slog"
	"time"

	"github.com/agents-mcp/agents-mcp/internal/redact"
)

// DelegatedToken is the bearer token a caller authenticated with, kept for
// the one use that needs it: an HTTP tool source that opted in to
// delegation (ADR 0012 D7b) sends it to its API, or exchanges it for a
// token of that API. Only a JWT verified against the configured issuer is
// delegable: an API key belongs to agents-mcp, not to an identity another
// service knows.
//
// It lives in the context of one request only. Its text is never logged,
// stored, audited or shown: its String, GoString, LogValue and JSON forms
// are [redact.Marker], and only [DelegatedToken.Value] gives the token.
type DelegatedToken struct {
	principal string
	token     string
	expires   time.Time
}

// NewDelegatedToken returns the delegable token of the principal with ID
// principal, which expires at expires (zero: unknown).
func NewDelegatedToken(principal, token string, expires time.Time) *DelegatedToken {
	return &DelegatedToken{principal: principal, token: token, expires: expires}
}

// Principal is the ID of the principal the token authenticated.
func (t *DelegatedToken) Principal() string { return t.principal }

// Value is the token itself, to put in the Authorization header of a
// request to a source that opted in, or in a token exchange.
func (t *DelegatedToken) Value() string { return t.token }

// Expires is when the token expires (zero: unknown).
func (t *DelegatedToken) Expires() time.Time { return t.expires }

func (t *DelegatedToken) String() string               { return redact.Marker }
func (t *DelegatedToken) GoString() string             { return redact.Marker }
func (t *DelegatedToken) LogValue() slog.Value         { return slog.StringValue(redact.Marker) }
func (t *DelegatedToken) MarshalJSON() ([]byte, error) { return []byte(`"` + redact.Marker + `"`), nil }

// TokenInfoDelegatedToken is the key of go-sdk's auth.TokenInfo.Extra
// under which authentication hands a JWT caller's *DelegatedToken to the
// router, which puts it in the context of that request's tool call only.
const TokenInfoDelegatedToken = "delegated_token"

type delegatedKey struct{}

// WithDelegatedToken returns ctx carrying t; a nil t hides any token ctx
// carried (a handler's context may descend from another request's).
func WithDelegatedToken(ctx context.Context, t *DelegatedToken) context.Context {
	return context.WithValue(ctx, delegatedKey{}, t)
}

// DelegatedTokenFrom returns the token ctx carries when it may act for
// the principal of ctx: nil when there is none, when it was issued to
// another principal (a task resumed by someone else runs as its creator,
// and must not act with the resumer's identity), or when it has expired.
func DelegatedTokenFrom(ctx context.Context) *DelegatedToken {
	t, _ := ctx.Value(delegatedKey{}).(*DelegatedToken)
	if t == nil || t.token == "" || t.principal == "" || t.principal != PrincipalIDFrom(ctx) {
		return nil
	}
	if !t.expires.IsZero() && !time.Now().Before(t.expires) {
		return nil
	}
	return t
}

// DelegationAcceptor is implemented by the tool providers that may receive
// a caller's [DelegatedToken] in the context of their calls: the HTTP tool
// sources that opted in to delegation, and the local tools (whose agent
// tools run the steps of a task while its caller waits). The router hides
// the token from every other provider, the MCP upstreams above all: the
// MCP authorization spec forbids passing a client's token through.
type DelegationAcceptor interface {
	AcceptsDelegation() bool
}

// AcceptsDelegation reports whether p may see a caller's delegated token.
func AcceptsDelegation(p ToolProvider) bool {
	a, ok := p.(DelegationAcceptor)
	return ok && a.AcceptsDelegation()
}
