package toolsearch

import (
	"context"

	"github.com/agents-mcp/agents-mcp/router/virtual"
)

// This file keeps a search to the view of a virtual server: a request
// made to one carries its view in the context (virtual.WithView), and the
// find tool and search_tools then rank among the view's tools only (a tool
// outside it is neither shown nor counted) and answer with the names and
// descriptions the view gives them. What they learn from (Finder.Found)
// stays keyed by registry name, as the calls are recorded.

// viewOf returns the view of ctx's request; nil for the whole catalog.
func viewOf(ctx context.Context) *virtual.View { return virtual.ViewFrom(ctx) }

// exposed returns m as view v shows it: under its exposed name, with the
// view's description. A nil view leaves m as it is.
func exposed(v *virtual.View, m Match) Match {
	if v == nil {
		return m
	}
	if t, ok := v.Tool(m.Name); ok {
		m.Name, m.Description = t.Name, t.Description
	}
	return m
}
