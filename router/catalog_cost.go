package router

import (
	"encoding/json"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	agentsmcp "github.com/agents-mcp/agents-mcp"
)

// This file is what a tools/list costs a client's model: its size in
// bytes and in approximate tokens, per catalog mode, so that operators see
// what discovery mode saves.

// ToolsListRecord describes one tools/list answered to a client.
type ToolsListRecord struct {
	// Mode is the catalog mode the listing was made in.
	Mode agentsmcp.CatalogMode
	// Tools is how many tools the page holds.
	Tools int
	// Bytes is the size of the page's tools as JSON (each tool as the
	// router holds it, plus the commas and the brackets of the array).
	Bytes int
	// Tokens approximates what those bytes cost a model: see
	// [ApproxTokens].
	Tokens int
}

// ApproxTokens approximates the tokens a model's tokenizer makes of n
// bytes of JSON: one token per 4 bytes, rounded up. It is the rule of
// thumb OpenAI gives for English text with its BPE tokenizers (cl100k,
// o200k); tool lists are JSON with schemas, whose punctuation and
// identifiers split into somewhat more tokens (about one per 3 to 3.5
// bytes), so the figure is a lower bound of the right order, the same for
// every mode: the ratio between modes is what it is for.
func ApproxTokens(n int) int { return (n + 3) / 4 }

// listingCost is the size of tools as JSON, from the encoding the router
// keeps of each registered tool (no tool is encoded again); a tool the
// registry no longer holds is encoded.
func (r *Router) listingCost(tools []*mcp.Tool) (bytes int) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	bytes = 2 // []
	for i, t := range tools {
		if i > 0 {
			bytes++
		}
		if e, ok := r.tools[t.Name]; ok && e.tool == t {
			bytes += len(e.raw)
			continue
		}
		if raw, err := json.Marshal(t); err == nil {
			bytes += len(raw)
		}
	}
	return bytes
}

// countListing tells [Options.OnToolsList] about a page of tools/list.
func (r *Router) countListing(mode agentsmcp.CatalogMode, res *mcp.ListToolsResult) {
	if r.onToolsList == nil || res == nil {
		return
	}
	b := r.listingCost(res.Tools)
	r.onToolsList(ToolsListRecord{Mode: mode, Tools: len(res.Tools), Bytes: b, Tokens: ApproxTokens(b)})
}

// ListingCost is what a whole tools/list (every page) would cost in mode
// for a caller p (nil: unrestricted): the tools, their bytes as JSON and
// the approximate tokens ([ApproxTokens]). The admin API shows it per mode.
func (r *Router) ListingCost(p *agentsmcp.Principal, mode agentsmcp.CatalogMode) ToolsListRecord {
	var tools []*mcp.Tool
	if mode == agentsmcp.CatalogDiscovery {
		tools = r.discoveryList(p).Tools
	} else {
		for _, t := range r.Tools() {
			if p.MayUseTool(t.Name) {
				tools = append(tools, t)
			}
		}
	}
	b := r.listingCost(tools)
	return ToolsListRecord{Mode: mode, Tools: len(tools), Bytes: b, Tokens: ApproxTokens(b)}
}

// VirtualListingCost is what a whole tools/list of the virtual server
// name would cost a caller without an allowlist, in full mode (its whole
// view) and in discovery mode (the meta-tools and its pinned tools); false
// when there is no such server.
func (r *Router) VirtualListingCost(name string) (full, discovery ToolsListRecord, ok bool) {
	if _, ok := r.VirtualServer(name); !ok {
		return full, discovery, false
	}
	cost := func(mode agentsmcp.CatalogMode) ToolsListRecord {
		tools := r.listedTools(nil, mode, name)
		b := r.listingCost(tools)
		return ToolsListRecord{Mode: mode, Tools: len(tools), Bytes: b, Tokens: ApproxTokens(b)}
	}
	return cost(agentsmcp.CatalogFull), cost(agentsmcp.CatalogDiscovery), true
}
