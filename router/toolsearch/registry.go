package toolsearch

import (
	"context"

	agentsmcp "github.com/agents-mcp/agents-mcp"
)

// Registry is the read side of a tool registry, all that the search needs
// of it: *router.Router implements it, and cmd hands the router over. A
// view of the registry (a curated subset, renamed tools) implements it too
// and gets an [Index] of its own.
type Registry interface {
	// ToolSnapshot returns every tool, sorted by name, and the generation
	// of the tool set they are of. An unchanged tool is the same
	// *RegisteredTool in every snapshot (the index keeps its tokenised
	// document and vector by that address); a changed one is a new one.
	// Nothing returned is modified by the index.
	ToolSnapshot() (generation uint64, tools []*agentsmcp.RegisteredTool)
	// RegisteredTool returns one tool by name, and false if there is none.
	RegisteredTool(name string) (*agentsmcp.RegisteredTool, bool)
	// ToolsGeneration returns the generation of the current tool set; the
	// index asks on every search whether it must re-index, so it must be
	// cheap.
	ToolsGeneration() uint64
	// WatchTools returns a channel that receives a value (coalesced) after
	// the tool set changes, and a function that ends the watch.
	WatchTools() (changes <-chan struct{}, stop func())
}

// Ranker ranks the tools of a registry against a query, best first: scope
// is "all" (or ""), "local" or "remote", and at most limit matches are
// returned. It ranks every tool of the registry: keeping only those the
// caller may use is the caller's (search_tools and [Catalog] do it). It
// never fails: an empty query or no match is an empty result.
//
// *[Index] implements it. A ranker that weighs more than the words (what
// worked for the caller before) wraps an Index and is handed to
// [NewCatalog] and [AddSearchTools] in its place.
type Ranker interface {
	Search(ctx context.Context, query, scope string, limit int) *Result
}

var _ Ranker = (*Index)(nil)
