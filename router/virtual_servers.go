package router

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/internal/syncloop"
	"github.com/agents-mcp/agents-mcp/internal/validate"
	"github.com/agents-mcp/agents-mcp/router/transport/mcphttp"
	"github.com/agents-mcp/agents-mcp/router/virtual"
)

// This file is the virtual servers ([agentsmcp.VirtualServer]): named,
// curated views of the catalog served at /mcp/<name>, /sse/<name> and by
// stdio with --server <name>. The HTTP transport marks each request of a
// virtual endpoint with its name (mcphttp.VirtualServerHeader, which no
// client can set); the outermost middleware then maps the view's names to
// the registry's on the way in and back on the way out, and hides what
// the view does not select. The rest of the chain (access, audit, drain)
// sees the registry's names, so the audit records the real tool.

// virtualSet is the virtual servers a router serves: those of the config
// file, then those of the store (a stored one whose name the config file
// holds is ignored), and the views built of them.
type virtualSet struct {
	mu     sync.RWMutex
	config map[string]*agentsmcp.VirtualServer
	stored map[string]*agentsmcp.VirtualServer
	views  map[string]cachedView // by name
	// published are the virtual servers of published upstreams, made
	// once per name (published_upstreams.go).
	published map[string]*agentsmcp.VirtualServer
}

// cachedView is a view, valid for its definition and tool generation.
type cachedView struct {
	server *agentsmcp.VirtualServer
	gen    uint64
	view   *virtual.View
}

type virtualServerKey struct{}

// WithVirtualServer returns ctx carrying the virtual server a request was
// made to. The router puts it in the context of every request to a
// virtual server, before the rest of its middleware runs; a reader must
// not modify it.
func WithVirtualServer(ctx context.Context, vs *agentsmcp.VirtualServer) context.Context {
	return context.WithValue(ctx, virtualServerKey{}, vs)
}

// VirtualServerFrom returns the virtual server in ctx (its Name and
// CatalogMode say which view and mode the request is served in), and false
// for a request to the whole catalog (/mcp).
func VirtualServerFrom(ctx context.Context) (*agentsmcp.VirtualServer, bool) {
	vs, ok := ctx.Value(virtualServerKey{}).(*agentsmcp.VirtualServer)
	return vs, ok && vs != nil
}

// SetVirtualServers sets the virtual servers of the config file. It
// validates each and refuses two of one name (EINVALID); on an error
// nothing changes.
func (r *Router) SetVirtualServers(defs []*agentsmcp.VirtualServer) error {
	m := make(map[string]*agentsmcp.VirtualServer, len(defs))
	for _, vs := range defs {
		if err := validate.VirtualServer(vs); err != nil {
			return err
		}
		if _, dup := m[vs.Name]; dup {
			return agentsmcp.Errorf(agentsmcp.EINVALID, "virtual server %q is defined twice", vs.Name)
		}
		m[vs.Name] = vs
	}
	r.virtual.mu.Lock()
	defer r.virtual.mu.Unlock()
	r.virtual.config = m
	return nil
}

// IsConfigVirtualServer reports whether the config file defines the
// virtual server name (the admin API may not define one of that name).
func (r *Router) IsConfigVirtualServer(name string) bool {
	r.virtual.mu.RLock()
	defer r.virtual.mu.RUnlock()
	_, ok := r.virtual.config[name]
	return ok
}

// setStoredVirtualServers replaces the virtual servers of the store.
func (r *Router) setStoredVirtualServers(defs []*agentsmcp.VirtualServer) {
	m := make(map[string]*agentsmcp.VirtualServer, len(defs))
	for _, vs := range defs {
		// A stored definition was valid when stored; one that is not any
		// more (a newer rule) is left out rather than served half-right.
		if validate.VirtualServer(vs) == nil {
			m[vs.Name] = vs
		}
	}
	r.virtual.mu.Lock()
	defer r.virtual.mu.Unlock()
	r.virtual.stored = m
}

// VirtualServers returns the virtual servers served now, sorted by name
// (implements [agentsmcp.VirtualServerLister]). The definitions are
// shared: the caller must not modify them.
func (r *Router) VirtualServers() []*agentsmcp.VirtualServer {
	published := r.publishedUpstreams()
	r.virtual.mu.RLock()
	defer r.virtual.mu.RUnlock()
	out := make([]*agentsmcp.VirtualServer, 0, len(r.virtual.config)+len(r.virtual.stored))
	for _, vs := range r.virtual.config {
		out = append(out, vs)
	}
	for name, vs := range r.virtual.stored {
		if _, shadowed := r.virtual.config[name]; !shadowed {
			out = append(out, vs)
		}
	}
	for name, vs := range published {
		_, config := r.virtual.config[name]
		_, stored := r.virtual.stored[name]
		if !config && !stored {
			out = append(out, vs)
		}
	}
	slices.SortFunc(out, func(a, b *agentsmcp.VirtualServer) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// VirtualServer returns the virtual server served under name.
func (r *Router) VirtualServer(name string) (*agentsmcp.VirtualServer, bool) {
	r.virtual.mu.RLock()
	vs, ok := r.virtual.config[name]
	if !ok {
		vs, ok = r.virtual.stored[name]
	}
	r.virtual.mu.RUnlock()
	if ok {
		return vs, true
	}
	vs, ok = r.publishedUpstreams()[name]
	return vs, ok
}

// VirtualView returns the view of the virtual server name over the
// current tools, and false when there is no such server. Views are cached
// per definition and tool generation.
func (r *Router) VirtualView(name string) (*virtual.View, bool) {
	vs, ok := r.VirtualServer(name)
	if !ok {
		return nil, false
	}
	gen := r.ToolsGeneration()
	r.virtual.mu.RLock()
	c, ok := r.virtual.views[name]
	r.virtual.mu.RUnlock()
	if ok && c.server == vs && c.gen == gen {
		return c.view, true
	}
	gen, tools := r.ToolSnapshot()
	view := virtual.NewView(vs, tools)
	r.virtual.mu.Lock()
	if r.virtual.views == nil {
		r.virtual.views = map[string]cachedView{}
	}
	r.virtual.views[name] = cachedView{server: vs, gen: gen, view: view}
	r.virtual.mu.Unlock()
	return view, true
}

// VirtualServerTools returns the tools the virtual server name exposes
// now, sorted by their exposed names, and the selected tools it cannot
// expose (each with why); false when there is no such server.
func (r *Router) VirtualServerTools(name string) (tools []*mcp.Tool, dropped []string, ok bool) {
	view, ok := r.VirtualView(name)
	if !ok {
		return nil, nil, false
	}
	return view.Tools(), view.Dropped(), true
}

// SyncVirtualServers makes the router serve the virtual servers of store
// once; on an error it keeps those it has.
func (r *Router) SyncVirtualServers(ctx context.Context, store agentsmcp.VirtualServerService) error {
	defs, err := store.ListVirtualServers(ctx)
	if err != nil {
		return fmt.Errorf("list virtual servers: %w", err)
	}
	r.setStoredVirtualServers(defs)
	return nil
}

// RunVirtualServerSync follows store every interval until ctx ends, as
// every replica follows the upstreams of the store (internal/syncloop).
func (r *Router) RunVirtualServerSync(ctx context.Context, store agentsmcp.VirtualServerService, interval time.Duration, logger *slog.Logger) {
	syncloop.Loop{
		Sync:    func(ctx context.Context) error { return r.SyncVirtualServers(ctx, store) },
		Timeout: 10 * time.Second, Logger: logger,
		Failing:   "the virtual servers of the store cannot be read; serving those last read",
		Recovered: "the virtual servers of the store are read again",
	}.Run(ctx, interval)
}

// virtualNameOf returns the virtual server a request was made to: the
// HTTP transport's mark, else stdio's --server (AccessOptions).
func (r *Router) virtualNameOf(req mcp.Request) string {
	if extra := req.GetExtra(); extra != nil && extra.Header != nil {
		if name := extra.Header.Get(mcphttp.VirtualServerHeader); name != "" {
			return name
		}
		return ""
	}
	return r.access.VirtualServer
}

// admitsVirtual reports whether the caller of an HTTP request may use the
// virtual server name ("" is the whole catalog) and it exists: what the
// HTTP transport asks before serving a request (mcphttp.Options).
func (r *Router) admitsVirtual(req *http.Request, name string) bool {
	p := r.access.Default
	if ti := auth.TokenInfoFromContext(req.Context()); ti != nil {
		if q, ok := ti.Extra[agentsmcp.TokenInfoPrincipal].(*agentsmcp.Principal); ok {
			p = q
		}
	}
	if !p.MayUseVirtualServer(name) {
		return false
	}
	if name == "" {
		return true
	}
	_, ok := r.VirtualServer(name)
	return ok
}

// errVirtualNotFound is the answer to a request for a virtual server that
// does not exist or that the caller may not use: the same either way.
func errVirtualNotFound(name string) error {
	if name == "" {
		return &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "not found: this credential may use only its virtual servers"}
	}
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: fmt.Sprintf("virtual server %q not found", name)}
}

func unknownPrompt(name string) error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("unknown prompt %q", name)}
}

// virtualMiddleware serves requests to a virtual server: it runs outside
// access control (and inside the revision middleware, which must see the
// final result), so that access control, the audit and the providers see
// registry names. Requests to the whole catalog pass
// through unchanged, unless their caller may use virtual servers only.
func (r *Router) virtualMiddleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		name := r.virtualNameOf(req)
		p, _ := r.principalOf(req)
		if name == "" {
			if !p.MayUseVirtualServer("") && method != "initialize" && method != "ping" && !isNotification(method) {
				return nil, errVirtualNotFound("")
			}
			if _, listen := req.(*mcp.SubscriptionsListenRequest); listen {
				r.recordListingOf(ctx, req, p, "")
			}
			res, err := next(ctx, method, req)
			if _, ok := res.(*mcp.ListToolsResult); ok && err == nil {
				r.recordListingOf(ctx, req, p, "")
			}
			return res, err
		}
		vs, ok := r.VirtualServer(name)
		if !ok || !p.MayUseVirtualServer(name) {
			if isNotification(method) {
				return nil, nil
			}
			return nil, errVirtualNotFound(name)
		}
		ctx = WithVirtualServer(ctx, vs)
		if vs.CatalogMode != "" {
			ctx = agentsmcp.WithCatalogMode(ctx, vs.CatalogMode)
		}
		view, _ := r.VirtualView(name)
		ctx = virtual.WithView(ctx, view)
		switch req := req.(type) {
		case *mcp.SubscriptionsListenRequest:
			r.recordListingOf(ctx, req, p, name)
		case *mcp.CallToolRequest:
			if req.Params == nil {
				break
			}
			if r.isMetaTool(req.Params.Name) && r.catalogMode(ctx, req, p) == agentsmcp.CatalogDiscovery {
				// The meta-tools keep their names in a view; they keep
				// to it by the view in ctx, and call_tool's call of a
				// view's name comes back through here.
				break
			}
			real, ok := view.RealName(req.Params.Name)
			if !ok {
				return nil, unknownTool(req.Params.Name)
			}
			params := *req.Params
			params.Name = real
			req.Params = &params
		case *mcp.ListToolsRequest:
			res, err := next(ctx, method, req)
			if lr, ok := res.(*mcp.ListToolsResult); ok && err == nil {
				r.recordListingOf(ctx, req, p, name)
				if r.catalogMode(ctx, req, p) == agentsmcp.CatalogDiscovery {
					lr.Tools, lr.NextCursor = r.viewDiscoveryList(p, view), ""
					return res, err
				}
				tools := make([]*mcp.Tool, 0, len(lr.Tools))
				for _, t := range lr.Tools {
					if vt, ok := view.Tool(t.Name); ok {
						tools = append(tools, vt)
					}
				}
				lr.Tools = tools
			}
			return res, err
		case *mcp.ListPromptsRequest:
			res, err := next(ctx, method, req)
			if lr, ok := res.(*mcp.ListPromptsResult); ok && err == nil {
				lr.Prompts = visible(lr.Prompts, func(pr *mcp.Prompt) bool { return virtual.AdmitsPrompt(vs, pr.Name) })
			}
			return res, err
		case *mcp.GetPromptRequest:
			if req.Params != nil && !virtual.AdmitsPrompt(vs, req.Params.Name) {
				return nil, unknownPrompt(req.Params.Name)
			}
		case *mcp.ListResourcesRequest:
			res, err := next(ctx, method, req)
			if lr, ok := res.(*mcp.ListResourcesResult); ok && err == nil {
				lr.Resources = visible(lr.Resources, func(res *mcp.Resource) bool { return virtual.AdmitsResource(vs, res.URI) })
			}
			return res, err
		case *mcp.ListResourceTemplatesRequest:
			res, err := next(ctx, method, req)
			if lr, ok := res.(*mcp.ListResourceTemplatesResult); ok && err == nil {
				lr.ResourceTemplates = visible(lr.ResourceTemplates, func(t *mcp.ResourceTemplate) bool { return virtual.AdmitsResource(vs, t.URITemplate) })
			}
			return res, err
		case *mcp.ReadResourceRequest:
			if req.Params != nil && !virtual.AdmitsResource(vs, req.Params.URI) {
				return nil, mcp.ResourceNotFoundError(req.Params.URI)
			}
		case *mcp.SubscribeRequest:
			if req.Params != nil && !virtual.AdmitsResource(vs, req.Params.URI) {
				return &emptyResult{}, nil // as accessMiddleware: no subscription recorded
			}
		case *mcp.CompleteRequest:
			if req.Params != nil && req.Params.Ref != nil {
				switch ref := req.Params.Ref; ref.Type {
				case "ref/prompt":
					if !virtual.AdmitsPrompt(vs, ref.Name) {
						return nil, unknownPrompt(ref.Name)
					}
				case "ref/resource":
					if !virtual.AdmitsResource(vs, ref.URI) {
						return nil, mcp.ResourceNotFoundError(ref.URI)
					}
				}
			}
		}
		return next(ctx, method, req)
	}
}
