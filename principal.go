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
	// ScopeMetrics reads /metrics only (a Prometheus scraper).
	ScopeMetrics = "metrics"
)

// Scopes lists every scope.
var Scopes = []string{ScopeMCP, ScopeAdminRead, ScopeAdminWrite, ScopeMetrics}

// Principal is an authenticated caller.
//
// Tools, when not empty, is an allowlist of path.Match patterns over exposed
// names: a tool or prompt by its name; a resource of upstream U (see
// [UpstreamURIScheme]), or any prompt of U, only by a pattern ending in "*"
// that matches "U__" (one admitting all of U); a local resource only by
// "*". What is not admitted is hidden from listings and answered as
// unknown. An empty list admits everything.
type Principal struct {
	// ID names the caller, never its secret: "key:<sha256 prefix>",
	// "jwt:<subject>" or AnonymousPrincipal.
	ID     string
	Name   string // a display name from the configuration, optional
	Scopes []string
	Tools  []string
	// VirtualServers, when set, limits the caller to the matching virtual
	// servers (see [Principal.MayUseVirtualServer]).
	VirtualServers []string
	// RateLimit (per second) and Burst override the server default; zero keeps it.
	RateLimit float64
	Burst     int
	// CatalogMode, when set, is how this caller's tools/list shows the
	// catalog; an endpoint's own mode wins over it.
	CatalogMode CatalogMode
	// CallLimits bound the tool calls this caller makes in each window
	// (the key's call_quotas); a virtual server's own limits apply on top
	// of them to calls made through it.
	CallLimits []CallLimit
}

// MaxPrincipalIDBytes bounds a stored principal ID.
const MaxPrincipalIDBytes = 256

// MaySee: the creator, an admin:read caller, or nil p; others are told it
// does not exist.
func (p *Principal) MaySee(creator string) bool {
	return p == nil || p.ID == creator && creator != "" || p.HasScope(ScopeAdminRead)
}

// MayControl: the creator, an admin:write caller, or nil p.
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

// MayUseTool reports whether p admits the exposed tool name (nil p: yes).
func (p *Principal) MayUseTool(name string) bool {
	return !p.Restricted() || p.matches(name)
}

// Restricted reports whether p has an allowlist (nil p: no).
func (p *Principal) Restricted() bool { return p != nil && len(p.Tools) > 0 }

// matches reports whether one of p's patterns matches name.
func (p *Principal) matches(name string) bool {
	for _, pattern := range p.Tools {
		if ok, _ := path.Match(pattern, name); ok {
			return true
		}
	}
	return false
}

// TokenInfoPrincipal is the go-sdk auth.TokenInfo.Extra key of the *Principal.
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

// PrincipalIDFrom returns the ID of the Principal ctx carries, or "".
func PrincipalIDFrom(ctx context.Context) string {
	if p := PrincipalFrom(ctx); p != nil {
		return p.ID
	}
	return ""
}
