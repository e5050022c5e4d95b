package router

import (
	"context"
	"crypto/sha256"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	agentsmcp "github.com/agents-mcp/agents-mcp"
)

// This file decides which sessions are told notifications/tools/list_changed.
// go-sdk tells every session whenever the registry changes; but what a
// session's tools/list shows depends on its caller's allowlist, its catalog
// mode and the virtual server it is served by: a discovery-mode session
// lists only the meta-tools and the pinned tools, and a virtual server only
// its view. So each session's last tools/list is remembered by what
// determines it (caller, mode, virtual server) and a digest of what it
// showed; when the registry changes, a session is told only if the same
// listing made now would differ. A session that has not listed tools is
// told as before.
//
// Under the 2026-07-28 protocol every request is a session of its own and
// the notification goes to the session of the client's subscriptions/listen
// stream: that session is remembered when the stream opens, with the
// listing as it is then.

// sessionListing is what a session's last tools/list was made of.
type sessionListing struct {
	principal *agentsmcp.Principal
	mode      agentsmcp.CatalogMode
	virtual   string // "" for the whole catalog
	digest    [sha256.Size]byte
}

// listings remembers the last tools/list of each session.
type listings struct {
	mu        sync.Mutex
	bySession map[*mcp.ServerSession]sessionListing
	pruneAt   int // prune closed sessions when the map reaches this size
}

// recordListing remembers that ss listed tools as p in mode on the
// virtual server name ("" for the whole catalog).
func (r *Router) recordListing(ss *mcp.ServerSession, p *agentsmcp.Principal, mode agentsmcp.CatalogMode, name string) {
	l := sessionListing{principal: p, mode: mode, virtual: name, digest: r.listingDigest(p, mode, name)}
	r.listed.mu.Lock()
	defer r.listed.mu.Unlock()
	if r.listed.bySession == nil {
		r.listed.bySession = map[*mcp.ServerSession]sessionListing{}
	}
	r.listed.bySession[ss] = l
	if len(r.listed.bySession) >= r.listed.pruneAt {
		// Closed sessions are dropped here, when the map has doubled,
		// so the map stays within twice the live sessions.
		live := map[*mcp.ServerSession]bool{}
		for s := range r.server.Sessions() {
			live[s] = true
		}
		for s := range r.listed.bySession {
			if !live[s] {
				delete(r.listed.bySession, s)
			}
		}
		r.listed.pruneAt = 2*len(r.listed.bySession) + 64
	}
}

// listChangedFor reports whether ss must be told that the tool list
// changed: it has not listed tools, or its listing made now differs from
// the one it was last told about (which then becomes the one it knows).
func (r *Router) listChangedFor(ss *mcp.ServerSession) bool {
	r.listed.mu.Lock()
	l, ok := r.listed.bySession[ss]
	r.listed.mu.Unlock()
	if !ok {
		return true
	}
	now := r.listingDigest(l.principal, l.mode, l.virtual)
	if now == l.digest {
		return false
	}
	l.digest = now
	r.listed.mu.Lock()
	if _, still := r.listed.bySession[ss]; still {
		r.listed.bySession[ss] = l
	}
	r.listed.mu.Unlock()
	return true
}

// listedTools is the whole tools/list (every page) of a caller p in mode
// on the virtual server name ("" for the whole catalog); nil for a
// virtual server that is gone.
func (r *Router) listedTools(p *agentsmcp.Principal, mode agentsmcp.CatalogMode, name string) []*mcp.Tool {
	if name != "" {
		view, ok := r.VirtualView(name)
		if !ok {
			return nil
		}
		if mode == agentsmcp.CatalogDiscovery {
			return r.viewDiscoveryList(p, view)
		}
		var out []*mcp.Tool
		for _, t := range view.Tools() {
			if real, _ := view.RealName(t.Name); p.MayUseTool(real) {
				out = append(out, t)
			}
		}
		return out
	}
	if mode == agentsmcp.CatalogDiscovery {
		return r.discoveryList(p).Tools
	}
	var out []*mcp.Tool
	for _, t := range r.Tools() {
		if p.MayUseTool(t.Name) {
			out = append(out, t)
		}
	}
	return out
}

// listChangedMiddleware is a sending middleware: it drops
// notifications/tools/list_changed to a session whose tools/list the
// change leaves as it was (see [Router.listChangedFor]).
func (r *Router) listChangedMiddleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if method == "notifications/tools/list_changed" {
			if ss, ok := req.GetSession().(*mcp.ServerSession); ok && ss != nil && !r.listChangedFor(ss) {
				return nil, nil
			}
		}
		return next(ctx, method, req)
	}
}

// recordListingOf remembers the listing of a tools/list or of a
// subscriptions/listen stream (see [Router.recordListing]), made in ctx on
// the virtual server name.
func (r *Router) recordListingOf(ctx context.Context, req mcp.Request, p *agentsmcp.Principal, name string) {
	if ss, ok := req.GetSession().(*mcp.ServerSession); ok && ss != nil {
		r.recordListing(ss, p, r.catalogMode(ctx, req, p), name)
	}
}
