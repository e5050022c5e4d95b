package admin

import (
	"context"
	"net/http"
)

// This file serves the tool catalog: every tool the server exposes, or
// with q the tools that search_tools would rank first for it.

// CatalogTool is a tool of the catalog. Source names where it comes
// from: "local", or the upstream (or HTTP tool source) that serves it.
// Score and Why are set by a search: Score orders the matches (only its
// order is meaningful), Why names the words that matched.
type CatalogTool struct {
	Name        string  `json:"name"`
	Source      string  `json:"source"`
	Description string  `json:"description,omitempty"`
	Score       float64 `json:"score,omitempty"`
	Why         string  `json:"why,omitempty"`
}

// ToolCatalog is the catalog behind GET /tools: the server passes the
// router's, so that the ranking is the one of the search_tools tool.
type ToolCatalog interface {
	// Tools lists every tool, by name.
	Tools() []CatalogTool
	// Search ranks the tools against query within scope ("all", "local",
	// "remote"): at most limit matches, best first, and the ranking mode
	// ("hybrid" or "lexical") with a note when it fell back.
	Search(ctx context.Context, query, scope string, limit int) (matches []CatalogTool, mode, note string)
}

// ToolPage is the answer of GET /tools.
type ToolPage struct {
	Items []CatalogTool `json:"items"`
	// Mode is the ranking of a search; absent without q.
	Mode string `json:"mode,omitempty"`
	Note string `json:"note,omitempty"`
}

var toolScopes = []string{"all", "local", "remote"}

// GET /tools
func (h *Handler) listTools(w http.ResponseWriter, r *http.Request) error {
	if h.opts.Catalog == nil {
		return unavailable("the tool catalog")
	}
	p, err := queryParams(r, "q", "scope", "limit")
	if err != nil {
		return err
	}
	scope, err := oneOf(p, "scope", toolScopes)
	if err != nil {
		return err
	}
	limit, err := p.limit()
	if err != nil {
		return err
	}
	q := p.str("q")
	if q == "" {
		var items []CatalogTool
		for _, t := range h.opts.Catalog.Tools() {
			if scope == "" || scope == "all" || (scope == "local") == (t.Source == "local") {
				items = append(items, t)
			}
		}
		if limit > 0 && len(items) > limit {
			items = items[:limit]
		}
		if items == nil {
			items = []CatalogTool{}
		}
		writeJSON(w, http.StatusOK, ToolPage{Items: items})
		return nil
	}
	if limit == 0 {
		limit = 20
	}
	ctx, cancel := h.requestContext(r)
	defer cancel()
	items, mode, note := h.opts.Catalog.Search(ctx, q, scope, limit)
	if items == nil {
		items = []CatalogTool{}
	}
	writeJSON(w, http.StatusOK, ToolPage{Items: items, Mode: mode, Note: note})
	return nil
}
