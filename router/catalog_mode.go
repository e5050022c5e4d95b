package router

import (
	"context"
	"path"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/router/virtual"
)

// This file is the catalog mode of a request: whether its tools/list
// shows every tool the caller may use (full) or only the discovery
// meta-tools and the pinned tools (discovery). The mode changes only what
// tools/list shows: a tool that is not listed is still found by the find
// tool and called, directly or through [CallToolName], by every caller
// allowed to use it.

// CatalogOptions configure the catalog modes; see [Options.Catalog].
type CatalogOptions struct {
	// Mode is the server's default; empty is [agentsmcp.CatalogFull].
	Mode agentsmcp.CatalogMode
	// MetaTools are the tools discovery mode always lists besides
	// [CallToolName] (the find tool): a caller in discovery mode may use
	// them whatever its allowlist, since they show and call only what the
	// allowlist admits.
	MetaTools []string
	// Pinned are path.Match patterns of tools that discovery mode lists
	// too, to callers whose allowlist admits them.
	Pinned []string
	// PublishUpstreams are path.Match patterns of the providers (upstreams,
	// HTTP tool sources) published as virtual servers of their own, and so
	// in the registry API (published_upstreams.go).
	PublishUpstreams []string
}

// catalogMode resolves the catalog mode of req, in order: the mode its
// endpoint put in ctx ([agentsmcp.WithCatalogMode], a virtual server), the
// one it handed down in the request's TokenInfo
// ([agentsmcp.TokenInfoCatalogMode]), the caller's own (its API key or JWT
// claim, [agentsmcp.Principal.CatalogMode]), the server's default.
func (r *Router) catalogMode(ctx context.Context, req mcp.Request, p *agentsmcp.Principal) agentsmcp.CatalogMode {
	if m := agentsmcp.CatalogModeFrom(ctx); m != "" {
		return m
	}
	if extra := req.GetExtra(); extra != nil && extra.TokenInfo != nil {
		if m, ok := extra.TokenInfo.Extra[agentsmcp.TokenInfoCatalogMode].(agentsmcp.CatalogMode); ok && m != "" {
			return m
		}
	}
	if p != nil && p.CatalogMode != "" {
		return p.CatalogMode
	}
	if r.catalog.Mode != "" {
		return r.catalog.Mode
	}
	return agentsmcp.CatalogFull
}

// isMetaTool reports whether name is a discovery meta-tool.
func (r *Router) isMetaTool(name string) bool {
	return name == CallToolName || slices.Contains(r.catalog.MetaTools, name)
}

// mayUseInMode reports whether p may use tool in mode: in discovery mode
// the meta-tools are every caller's, since they answer only with what
// its allowlist admits; otherwise the allowlist decides.
func (r *Router) mayUseInMode(p *agentsmcp.Principal, mode agentsmcp.CatalogMode, tool string) bool {
	return p.MayUseTool(tool) || mode == agentsmcp.CatalogDiscovery && r.isMetaTool(tool)
}

// pinned reports whether the catalog pins tool.
func (r *Router) pinned(tool string) bool {
	for _, pattern := range r.catalog.Pinned {
		if ok, _ := path.Match(pattern, tool); ok {
			return true
		}
	}
	return false
}

// discoveryList is tools/list in discovery mode for p: the meta-tools that
// are registered and the pinned tools p may use, sorted by name, in one
// page (a cursor of a full listing is ignored: the list is small).
func (r *Router) discoveryList(p *agentsmcp.Principal) *mcp.ListToolsResult {
	out := &mcp.ListToolsResult{Tools: []*mcp.Tool{}}
	for _, t := range r.Tools() {
		if r.isMetaTool(t.Name) || r.pinned(t.Name) && p.MayUseTool(t.Name) {
			out.Tools = append(out.Tools, t)
		}
	}
	return out
}

// viewDiscoveryList is tools/list in discovery mode on a virtual server:
// the meta-tools that are registered, under their own names, then the
// view's tools that p may use and that are pinned, by the view (its
// Pinned patterns, on exposed names) or by the server (catalog.pinned,
// on registry names), as the view shows them, sorted by name.
func (r *Router) viewDiscoveryList(p *agentsmcp.Principal, view *virtual.View) []*mcp.Tool {
	out := []*mcp.Tool{}
	for _, t := range r.Tools() {
		if r.isMetaTool(t.Name) {
			out = append(out, t)
		}
	}
	for _, vt := range view.Tools() {
		real, _ := view.RealName(vt.Name)
		if r.isMetaTool(vt.Name) || !p.MayUseTool(real) {
			continue // a meta-tool's name is the meta-tool's in discovery mode
		}
		if r.pinned(real) || slices.ContainsFunc(view.Server().Pinned, func(pattern string) bool {
			ok, _ := path.Match(pattern, vt.Name)
			return ok
		}) {
			out = append(out, vt)
		}
	}
	slices.SortFunc(out, func(a, b *mcp.Tool) int { return strings.Compare(a.Name, b.Name) })
	return out
}
