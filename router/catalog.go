package router

import (
	"context"
	"encoding/json"
	"math"
	"slices"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/localtools"
)

// DefaultCatalogSearchLimit is the number of matches [Catalog.SearchTools]
// returns for a limit of zero or less.
const DefaultCatalogSearchLimit = 10

// Catalog is the router's tool registry as the agents plan with it: it
// implements [agentsmcp.ToolCatalog]. It reads the router's current tools on
// every call, so it follows providers as they come, go and change.
type Catalog struct {
	r      *Router
	index  *ToolIndex
	health func(source string) string
}

var _ agentsmcp.ToolCatalog = (*Catalog)(nil)

// NewCatalog returns the catalog of r's tools.
//
// index ranks [Catalog.SearchTools] (hybrid when it has an embedder); nil
// ranks lexically with [Router.SearchTools], which indexes the catalog on
// every search.
//
// health returns the state of a provider by name ("ready", "degraded",
// "connecting", "down"); an empty answer (a provider it does not know) counts
// as [agentsmcp.HealthReady]. Local tools are always ready, and a nil health
// makes every tool ready.
func NewCatalog(r *Router, index *ToolIndex, health func(source string) string) *Catalog {
	return &Catalog{r: r, index: index, health: health}
}

// Tool implements [agentsmcp.ToolCatalog]: ENOTFOUND for an unknown tool.
func (c *Catalog) Tool(ctx context.Context, name string) (*agentsmcp.ToolInfo, error) {
	e, ok := c.r.entry(name)
	if !ok || !mayUse(ctx, name) {
		return nil, agentsmcp.Errorf(agentsmcp.ENOTFOUND, "unknown tool %q", name)
	}
	return toolInfo(e, c.healthOf(e.provider.Name())), nil
}

// ListTools implements [agentsmcp.ToolCatalog]: every registered tool,
// sorted by name.
func (c *Catalog) ListTools(ctx context.Context) ([]*agentsmcp.ToolInfo, error) {
	_, entries := c.r.toolSnapshot()
	health := c.healthCache()
	out := make([]*agentsmcp.ToolInfo, 0, len(entries))
	for _, e := range entries {
		if mayUse(ctx, e.tool.Name) {
			out = append(out, toolInfo(e, health(e.provider.Name())))
		}
	}
	return out, nil
}

// SearchTools implements [agentsmcp.ToolCatalog]: the tools ranked against
// query over the whole catalog (local and remote), best first, at most limit
// ([DefaultCatalogSearchLimit] when limit ≤ 0). Score and Why are the
// ranking's (see [ToolMatch]). It never fails: an empty query or no match
// is an empty list.
func (c *Catalog) SearchTools(ctx context.Context, query string, limit int) ([]*agentsmcp.ToolMatch, error) {
	if limit <= 0 {
		limit = DefaultCatalogSearchLimit
	}
	ranked := limit
	if restricted(ctx) {
		ranked = math.MaxInt32 // rank everything, keep what the caller may use
	}
	var matches []ToolMatch
	if c.index != nil {
		matches = c.index.Search(ctx, query, "", ranked).Tools
	} else {
		matches = c.r.SearchTools(query, "", ranked)
	}
	health := c.healthCache()
	out := make([]*agentsmcp.ToolMatch, 0, len(matches))
	for _, m := range matches {
		e, ok := c.r.entry(m.Name)
		if !ok || !mayUse(ctx, m.Name) {
			continue // removed since the index was built, or hidden
		}
		out = append(out, &agentsmcp.ToolMatch{ToolInfo: *toolInfo(e, health(e.provider.Name())), Score: m.Score, Why: m.Why})
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

// toolInfo describes a registered tool. The schemas are copies of the bytes
// the router serves in tools/list (and validates against).
func toolInfo(e *toolEntry, health string) *agentsmcp.ToolInfo {
	t := e.tool
	info := &agentsmcp.ToolInfo{
		Name:         t.Name,
		Source:       e.provider.Name(),
		Title:        t.Title,
		Description:  t.Description,
		InputSchema:  slices.Clone(e.schema.Raw()),
		OutputSchema: slices.Clone(outputSchemaJSON(t)),
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

// outputSchemaJSON is [inputSchemaJSON] for the output schema.
func outputSchemaJSON(t *mcp.Tool) json.RawMessage {
	return agentsmcp.ToolSchemaJSON(t.OutputSchema)
}
