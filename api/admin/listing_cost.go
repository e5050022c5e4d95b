package admin

import (
	"net/http"

	agentsmcp "github.com/agents-mcp/agents-mcp"
)

// This file serves what a tools/list costs clients' models per catalog
// mode: what operators look at to see what discovery mode saves.

// ListingCosts is the source of GET /tools/listing-cost: the server passes
// the router's figures.
type ListingCosts interface {
	ListingCosts() ListingCostPage
}

// ListingCostPage is the answer of GET /tools/listing-cost.
type ListingCostPage struct {
	// Tokenizer says how tokens are approximated.
	Tokenizer string `json:"tokenizer"`
	// Modes has one entry per catalog mode.
	Modes []ModeCost `json:"modes"`
	// VirtualServers has one entry per virtual server, by name.
	VirtualServers []VirtualServerCost `json:"virtualServers"`
}

// VirtualServerCost is what a whole tools/list of one virtual server
// costs now for a caller without an allowlist: in the mode it is served
// in, and in each mode.
type VirtualServerCost struct {
	Name string `json:"name"`
	// Mode is the virtual server's catalog_mode; "" leaves it to the
	// caller and the server's default.
	Mode      string     `json:"mode"`
	Full      ToolsCount `json:"full"`
	Discovery ToolsCount `json:"discovery"`
}

// ToolsCount is the size of one listing: its tools, the bytes of their
// JSON and the approximate tokens.
type ToolsCount struct {
	Tools  int `json:"tools"`
	Bytes  int `json:"bytes"`
	Tokens int `json:"tokens"`
}

// ModeCost is what a whole tools/list costs now in one mode for a caller
// without an allowlist, and what the pages answered in that mode cost
// since the server started.
type ModeCost struct {
	Mode   string      `json:"mode"`
	Tools  int         `json:"tools"`
	Bytes  int         `json:"bytes"`
	Tokens int         `json:"tokens"`
	Listed ListedCount `json:"listed"`
}

// ListedCount is what the tools/list pages answered in a mode cost, on
// this replica since it started.
type ListedCount struct {
	Pages  int64 `json:"pages"`
	Bytes  int64 `json:"bytes"`
	Tokens int64 `json:"tokens"`
}

// NewListingCostPage builds the page for the full and discovery modes, in
// that order: now gives what a whole tools/list costs in a mode for a
// caller without an allowlist (tools, bytes, tokens), listed what the pages
// answered in it cost (nil: nothing counted).
func NewListingCostPage(tokenizer string, now func(agentsmcp.CatalogMode) (tools, bytes, tokens int), listed func(agentsmcp.CatalogMode) ListedCount) ListingCostPage {
	page := ListingCostPage{Tokenizer: tokenizer}
	for _, mode := range []agentsmcp.CatalogMode{agentsmcp.CatalogFull, agentsmcp.CatalogDiscovery} {
		c := ModeCost{Mode: string(mode)}
		c.Tools, c.Bytes, c.Tokens = now(mode)
		if listed != nil {
			c.Listed = listed(mode)
		}
		page.Modes = append(page.Modes, c)
	}
	return page
}

// GET /tools/listing-cost
func (h *Handler) listingCost(w http.ResponseWriter, r *http.Request) error {
	if h.opts.ListingCosts == nil {
		return unavailable("the tool listing costs")
	}
	if _, err := queryParams(r); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, h.opts.ListingCosts.ListingCosts())
	return nil
}
