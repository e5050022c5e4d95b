package agentsmcp

import (
	"context"
	"path"
	"slices"
)

// The scopes a credential may carry.
const (
	ScopeMCP        = "mcp"         // connect over MCP (/mcp, /sse, /messages, stdio) and call tools
	ScopeAdminRead  = "admin:read"  // GET the admin API
	ScopeAdminWrite = "admin:write" // change through the admin API
)

// Scopes lists every scope.
var Scopes = []string{ScopeMCP, ScopeAdminRead, ScopeAdminWrite}

// Principal is an authenticated caller.
//
// Tools, when not empty, is an allowlist: the caller may see and call only
// the tools matching one of its patterns (path.Match syntax on the exposed
// tool name, so "everything__*" allows one upstream and "search_tools" one
// tool). An empty list allows every tool.
type Principal struct {
	// ID names the caller in logs and the audit trail, never its secret:
	// "key:<first 12 hex digits of the key's SHA-256>", "jwt:<subject>",
	// or AnonymousPrincipal.
	ID     string
	Name   string // a display name from the configuration, optional
	Scopes []string
	Tools  []string
	// RateLimit overrides the server's default request rate for this
	// caller (requests per second, with Burst); zero keeps the default.
	RateLimit float64
	Burst     int
}

// MaxPrincipalIDBytes bounds the principal ID stored with the thoughts,
// plans and tasks it creates.
const MaxPrincipalIDBytes = 256

// MaySee reports whether p may see what the principal creator created (a
// thought, a plan, a task): its creator, or a caller with scope
// admin:read. A nil Principal (no authentication configured) sees
// everything. Callers that may not see a thing must be told it does not
// exist, so that its existence is not revealed either.
func (p *Principal) MaySee(creator string) bool {
	return p == nil || p.ID == creator && creator != "" || p.HasScope(ScopeAdminRead)
}

// MayControl reports whether p may change what the principal creator
// created (cancel or resume a task): its creator, or a caller with scope
// admin:write. A nil Principal may change everything.
func (p *Principal) MayControl(creator string) bool {
	return p == nil || p.ID == creator && creator != "" || p.HasScope(ScopeAdminWrite)
}

// AnonymousPrincipal is the ID of the caller of a server that has no
// credentials configured (loopback only): it has every scope.
const AnonymousPrincipal = "anonymous"

// HasScope reports whether p carries scope. A nil Principal has none.
func (p *Principal) HasScope(scope string) bool {
	return p != nil && slices.Contains(p.Scopes, scope)
}

// MayUseTool reports whether p's allowlist admits the exposed tool name. A
// nil Principal (no authentication configured) may use every tool.
func (p *Principal) MayUseTool(name string) bool {
	if p == nil || len(p.Tools) == 0 {
		return true
	}
	for _, pattern := range p.Tools {
		if ok, _ := path.Match(pattern, name); ok {
			return true
		}
	}
	return false
}

// TokenInfoPrincipal is the key of go-sdk's auth.TokenInfo.Extra under
// which authentication hands each MCP request's *Principal to the router.
const TokenInfoPrincipal = "principal"

type principalKey struct{}

// WithPrincipal returns ctx carrying p.
func WithPrincipal(ctx context.Context, p *Principal) context.Context {
	return context.WithValue(ctx, principalKey{}, p)
}

// PrincipalFrom returns the Principal ctx carries, or nil.
func PrincipalFrom(ctx context.Context) *Principal {
	p, _ := ctx.Value(principalKey{}).(*Principal)
	return p
}

// PrincipalIDFrom returns the ID of the Principal ctx carries, or "": who
// to name in logs, audit entries and records of who made a change.
func PrincipalIDFrom(ctx context.Context) string {
	if p := PrincipalFrom(ctx); p != nil {
		return p.ID
	}
	return ""
}
