package router

import (
	"path"
	"slices"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/internal/validate"
)

// This file publishes upstreams that the operator chooses
// ([CatalogOptions.PublishUpstreams]) as virtual servers of their own: an
// upstream "gh" is served at /mcp/gh and /sse/gh with all of its tools,
// resources and prompts, and the registry API lists it like any virtual
// server. What is published is the upstream's name and the gateway's own
// endpoints for it; never the upstream's URL, command, headers or
// credentials, which stay in the gateway (a client reaches the upstream
// only through the gateway, with the gateway's credentials, allowlists and
// audit). A virtual server of the config file or the store of the same
// name wins.

// publishedUpstream is the virtual server that publishes provider name.
func publishedUpstream(name string) *agentsmcp.VirtualServer {
	sel := []agentsmcp.VirtualSelection{{Upstream: name}}
	return &agentsmcp.VirtualServer{
		Name:        name,
		Description: "The tools, resources and prompts of the upstream " + name + ", through agents-mcp",
		Tools:       sel, Resources: sel, Prompts: sel,
	}
}

// publishedUpstreams returns the virtual servers of the providers the
// catalog publishes, by name; each is made once and kept, so that views
// of it are cached like those of a defined one.
func (r *Router) publishedUpstreams() map[string]*agentsmcp.VirtualServer {
	if len(r.catalog.PublishUpstreams) == 0 {
		return nil
	}
	r.mu.RLock()
	var names []string
	for _, p := range r.providers {
		names = append(names, p.Name())
	}
	r.mu.RUnlock()
	out := map[string]*agentsmcp.VirtualServer{}
	r.virtual.mu.Lock()
	defer r.virtual.mu.Unlock()
	for _, name := range names {
		if !slices.ContainsFunc(r.catalog.PublishUpstreams, func(p string) bool { ok, _ := path.Match(p, name); return ok }) {
			continue
		}
		vs, ok := r.virtual.published[name]
		if !ok {
			vs = publishedUpstream(name)
			if validate.VirtualServer(vs) != nil {
				continue // a provider name that cannot be a virtual server's
			}
			if r.virtual.published == nil {
				r.virtual.published = map[string]*agentsmcp.VirtualServer{}
			}
			r.virtual.published[name] = vs
		}
		out[name] = vs
	}
	return out
}
