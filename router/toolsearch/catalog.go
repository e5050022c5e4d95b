package toolsearch

import (
	"context"
	"math"
	"slices"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/internal/toolschema"
	"github.com/agents-mcp/agents-mcp/localtools"
)

// DefaultCatalogSearchLimit is the number of matches [Catalog.SearchTools]
// returns for a limit of zero or less.
const DefaultCatalogSearchLimit = 10

// Catalog is a registry's tools as the agents plan with them: it
// implements [agentsmcp.ToolCatalog]. It reads the registry's current tools
// on every call, so it follows providers as they come, go and change, and
// shows a caller only the tools its allowlist admits.
type Catalog struct {
	reg    Registry
	ranker Ranker
	health func(source string) string
}

var _ agentsmcp.ToolCatalog = (*Catalog)(nil)

// NewCatalog returns the catalog of reg's tools.
//
// ranker ranks [Catalog.SearchTools] (an [Index], hybrid when it has an
// embedder); nil ranks lexically with [SearchLexical], which indexes the
// catalog on every search.
//
// health returns the state of a provider by name ("ready", "degraded",
// "connecting", "down"); an empty answer (a provider it does not know) counts
// as [agentsmcp.HealthReady]. Local tools are always ready, and a nil health
// makes every tool ready.
func NewCatalog(reg Registry, ranker Ranker, health func(source string) string) *Catalog {
	if x, ok := ranker.(*Index); ok && x == nil {
		ranker = nil // a nil *Index is no ranker, not one to call
	}
	return &Catalog{reg: reg, ranker: ranker, health: health}
}

// Tool implements [agentsmcp.ToolCatalog]: ENOTFOUND for an unknown tool.
func (c *Catalog) Tool(ctx context.Context, name string) (*agentsmcp.ToolInfo, error) {
	t, ok := c.reg.RegisteredTool(name)
	if !ok || !mayUse(ctx, name) {
		return nil, agentsmcp.Errorf(agentsmcp.ENOTFOUND, "unknown tool %q", name)
	}
	return toolInfo(t, c.healthOf(t.Source)), nil
}

// ListTools implements [agentsmcp.ToolCatalog]: every registered tool,
// sorted by name.
func (c *Catalog) ListTools(ctx context.Context) ([]*agentsmcp.ToolInfo, error) {
	_, tools := c.reg.ToolSnapshot()
	health := c.healthCache()
	out := make([]*agentsmcp.ToolInfo, 0, len(tools))
	for _, t := range tools {
		if mayUse(ctx, t.Tool.Name) {
			out = append(out, toolInfo(t, health(t.Source)))
		}
	}
	return out, nil
}

// SearchTools implements [agentsmcp.ToolCatalog]: the tools ranked against
// query over the whole catalog (local and remote), best first, at most limit
// ([DefaultCatalogSearchLimit] when limit ≤ 0). Score and Why are the
// ranking's (see [Match]). It never fails: an empty query or no match
// is an empty list.
func (c *Catalog) SearchTools(ctx context.Context, query string, limit int) ([]*agentsmcp.ToolMatch, error) {
	if limit <= 0 {
		limit = DefaultCatalogSearchLimit
	}
	ranked := limit
	if agentsmcp.PrincipalFrom(ctx).Restricted() {
		ranked = math.MaxInt32 // rank everything, keep what the caller may use
	}
	var matches []Match
	if c.ranker != nil {
		matches = c.ranker.Search(ctx, query, "", ranked).Tools
	} else {
		matches = SearchLexical(c.reg, query, "", ranked)
	}
	health := c.healthCache()
	out := make([]*agentsmcp.ToolMatch, 0, len(matches))
	for _, m := range matches {
		t, ok := c.reg.RegisteredTool(m.Name)
		if !ok || !mayUse(ctx, m.Name) {
			continue // removed since the index was built, or hidden
		}
		out = append(out, &agentsmcp.ToolMatch{ToolInfo: *toolInfo(t, health(t.Source)), Score: m.Score, Why: m.Why})
		if len(out) == limit {
			break
		}
	}
	return out, nil
}

func (c *Catalog) healthOf(source string) string {
	if source == localtools.ProviderName || c.health == nil {
		return agentsmcp.HealthReady
	}
	if h := c.health(source); h != "" {
		return h
	}
	return agentsmcp.HealthReady
}

// healthCache asks for each source's health once per listing.
func (c *Catalog) healthCache() func(string) string {
	seen := map[string]string{}
	return func(source string) string {
		h, ok := seen[source]
		if !ok {
			h = c.healthOf(source)
			seen[source] = h
		}
		return h
	}
}

// mayUse reports whether the caller in ctx may see and call tool.
func mayUse(ctx context.Context, tool string) bool {
	return agentsmcp.PrincipalFrom(ctx).MayUseTool(tool)
}

// toolInfo describes a registered tool. The schemas are copies of the bytes
// the registry serves in tools/list (and validates against).
func toolInfo(rt *agentsmcp.RegisteredTool, health string) *agentsmcp.ToolInfo {
	t := rt.Tool
	info := &agentsmcp.ToolInfo{
		Name:         t.Name,
		Source:       rt.Source,
		Title:        t.Title,
		Description:  t.Description,
		InputSchema:  slices.Clone(rt.InputSchema),
		OutputSchema: slices.Clone(toolschema.JSON(t.OutputSchema)),
		Health:       health,
	}
	if a := t.Annotations; a != nil {
		if info.Title == "" {
			info.Title = a.Title
		}
		info.ReadOnly = a.ReadOnlyHint
		info.Destructive = a.DestructiveHint != nil && *a.DestructiveHint
		info.Idempotent = a.IdempotentHint
	}
	return info
}
