package router

import (
	"cmp"
	"slices"

	agentsmcp "github.com/agents-mcp/agents-mcp"
)

// This file is the read side of the registry: what derived indexes, such as
// the tool search (router/toolsearch), read of the router's tools. The
// router does not know them; cmd hands them the router.

// ToolSnapshot returns every registered tool, sorted by name, and the
// generation of the tool set they are of (see [Router.ToolsGeneration]).
// The slice is the caller's; the tools are the registry's own and must not
// be modified. An unchanged tool is the same *RegisteredTool in every
// snapshot; a changed one is a new one.
func (r *Router) ToolSnapshot() (generation uint64, tools []*agentsmcp.RegisteredTool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := make([]*agentsmcp.RegisteredTool, 0, len(r.tools))
	for _, e := range r.tools {
		out = append(out, e.registered)
	}
	slices.SortFunc(out, func(a, b *agentsmcp.RegisteredTool) int { return cmp.Compare(a.Tool.Name, b.Tool.Name) })
	return r.gen, out
}

// RegisteredTool returns the registered tool of that name (the registry's
// own, as in [Router.ToolSnapshot]), and false if there is none. It does not
// consult the caller's allowlist: that is the reader's to apply.
func (r *Router) RegisteredTool(name string) (*agentsmcp.RegisteredTool, bool) {
	e, ok := r.entry(name)
	if !ok {
		return nil, false
	}
	return e.registered, true
}

// ToolsGeneration returns the number of changes of the tool set so far: a
// reader that indexed the snapshot of generation g is current while this
// returns g. It is cheap (a read lock), so a reader may ask on every query.
func (r *Router) ToolsGeneration() uint64 {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.gen
}

// WatchTools returns a channel that receives a value after the tool set
// changes (coalesced: one pending value stands for any number of changes),
// and a function that ends the watch; the caller must call it when done.
// It is how a derived index that works in the background (the search
// index's embedding) learns that it is stale; [Router.ToolSnapshot] then
// gives it the new set.
func (r *Router) WatchTools() (changes <-chan struct{}, stop func()) {
	ch := make(chan struct{}, 1)
	r.mu.Lock()
	r.watchers[ch] = struct{}{}
	r.mu.Unlock()
	return ch, func() {
		r.mu.Lock()
		delete(r.watchers, ch)
		r.mu.Unlock()
	}
}
