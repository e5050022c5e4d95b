package router

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	agentsmcp "github.com/agents-mcp/agents-mcp"
)

// This file decides the cache hints (ttlMs, cacheScope; MCP 2026-07-28)
// of the results the router sends. cacheScope "public" lets any cache,
// a shared gateway's included, serve a result to any caller; "private"
// keeps it to the authorization context that asked.
//
//   - tools/list, prompts/list, resources/list, resources/templates/list:
//     what they show depends on the caller (its allowlist, its catalog
//     mode, the virtual server it asks), and a cache keys a result by
//     method and parameters only, so they are private. Their ttlMs is 0:
//     the catalog changes whenever an upstream's does, and clients learn
//     of it by notifications/*/list_changed.
//   - resources/read of an upstream's resource keeps the upstream's ttlMs
//     (what is left of it when served from the pool's cache) and is
//     private unless the upstream said public and the caller is one that
//     every caller is (no principal, or the anonymous one of a server
//     without credentials, with no allowlist): a caller's allowlist may
//     hide the resource from another caller.
//   - server/discover is go-sdk's (the same for every caller).

// cacheHintsMiddleware sets the cache hints of list and resources/read
// results as described above.
func (r *Router) cacheHintsMiddleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		if err != nil || res == nil {
			return res, err
		}
		switch res := res.(type) {
		case *mcp.ListToolsResult:
			res.Cacheable = privateNow
		case *mcp.ListPromptsResult:
			res.Cacheable = privateNow
		case *mcp.ListResourcesResult:
			res.Cacheable = privateNow
		case *mcp.ListResourceTemplatesResult:
			res.Cacheable = privateNow
		case *mcp.ReadResourceResult:
			if res.TTLMs < 0 {
				res.TTLMs = 0
			}
			if p, _ := r.principalOf(req); res.CacheScope != "public" || !everyCaller(p) {
				res.CacheScope = "private"
			}
		}
		return res, err
	}
}

// privateNow: stale at once, for the caller that asked only.
var privateNow = mcp.Cacheable{TTLMs: 0, CacheScope: "private"}

// everyCaller reports whether p stands for any caller at all: no principal,
// or the anonymous one of a server without credentials, with no
// allowlist.
func everyCaller(p *agentsmcp.Principal) bool {
	return p == nil || p.ID == agentsmcp.AnonymousPrincipal && !p.Restricted() && len(p.VirtualServers) == 0
}
