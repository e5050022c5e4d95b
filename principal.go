package agentsmcp

import (
	"context"
	"path"
	"slices"
	"strings"
)

// The scopes a credential may carry.
const (
	ScopeMCP        = "mcp"         // connect over MCP (/mcp, /sse, /messages, stdio) and call tools
	ScopeAdminRead  = "admin:read"  // GET the admin API
	ScopeAdminWrite = "admin:write" // change through the admin API
	// ScopeMetrics reads /metrics and nothing else: the credential of a
	// Prometheus scraper. admin:read reads /metrics too.
	ScopeMetrics = "metrics"
)

// Scopes lists every scope.
var Scopes = []string{ScopeMCP, ScopeAdminRead, ScopeAdminWrite, ScopeMetrics}

// Principal is an authenticated caller.
//
// Tools, when not empty, is an allowlist of path.Match patterns. It covers
// every capability the router exposes, each by what it is exposed under:
//
//   - A tool or a prompt is admitted when its exposed name matches one of
//     the patterns: "everything__*" admits every tool and prompt of
//     upstream "everything", "search_tools" one local tool, and
//     "everything__echo" one tool (and a prompt of that upstream exposed
//     under that same name, if there is one).
//   - A resource or resource template has a URI, not a name. One of
//     upstream U (exposed as "upstream://U/…", see [UpstreamURIScheme]) is
//     admitted only when the allowlist admits the whole of U: when one
//     pattern ends in "*" and matches U's name prefix "U__" ("U__*", "U*",
//     "*__*" or "*"), so that it admits every tool U could expose. A
//     prompt of U is admitted by such a pattern too, whatever its name.
//   - A resource or template of no upstream (a local one, such as the
//     conformance fixtures) is admitted only by a pattern that admits every
//     name: "*".
//
// So a list of single tools ("search_tools", "everything__echo") admits no
// resource at all. Listings (tools, resources, templates, prompts) hide
// what is not admitted; a call, read, get, completion or subscription of it
// is answered as for something that does not exist. An empty list admits
// everything.
type Principal struct {
	// ID names the caller in logs and the audit trail, never its secret:
	// "key:<first 12 hex digits of the key's SHA-256>", "jwt:<subject>",
	// or AnonymousPrincipal.
	ID     string
	Name   string // a display name from the configuration, optional
	Scopes []string
	Tools  []string
	// VirtualServers, when not empty, limits the caller to the virtual
	// servers whose names match one of these path.Match patterns (see
	// [Principal.MayUseVirtualServer]); the whole catalog (/mcp) and other
	// virtual servers are then answered as unknown.
	VirtualServers []string
	// RateLimit overrides the server's default request rate for this
	// caller (requests per second, with Burst); zero keeps the default.
	RateLimit float64
	Burst     int
	// CatalogMode, when set, is how this caller's tools/list shows the
	// catalog (the key's catalog_mode, the JWT's catalog mode claim); empty
	// keeps the server's default. An endpoint's own mode (a virtual
	// server's) wins over it.
	CatalogMode CatalogMode
	// CallLimits bound the tool calls this caller makes in each window
	// (the key's call_quotas); a virtual server's own limits apply on top
	// of them to calls made through it.
	CallLimits []CallLimit
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
	return !p.Restricted() || p.matches(name)
}

// MayUsePrompt reports whether p's allowlist admits the exposed prompt
// name: by the name itself, as for a tool, or, for a prompt of an upstream
// ("<upstream>__<prompt>"), by a pattern admitting the whole upstream.
func (p *Principal) MayUsePrompt(name string) bool {
	if !p.Restricted() || p.matches(name) {
		return true
	}
	// Upstream names have no '_', so the first separator ends the prefix.
	i := strings.Index(name, NamespaceSeparator)
	return i > 0 && p.admitsAll(name[:i+len(NamespaceSeparator)])
}

// MayUseResource reports whether p's allowlist admits the exposed resource
// URI or resource template: one of upstream U only when a pattern admits
// the whole of U, a local one only when a pattern admits every name.
func (p *Principal) MayUseResource(uri string) bool {
	if !p.Restricted() {
		return true
	}
	if upstream, ok := ResourceUpstream(uri); ok {
		return p.admitsAll(upstream + NamespaceSeparator)
	}
	return p.admitsAll("")
}

// Restricted reports whether p has an allowlist: it sees only some
// tools, prompts and resources. A nil Principal is not restricted.
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

// admitsAll reports whether one of p's patterns matches every name that
// begins with prefix and has no '/' (every tool name does): a pattern that
// ends in '*' and matches prefix itself, since its final '*' then takes any
// rest.
func (p *Principal) admitsAll(prefix string) bool {
	for _, pattern := range p.Tools {
		if !strings.HasSuffix(pattern, "*") {
			continue
		}
		if ok, _ := path.Match(pattern, prefix); ok {
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
