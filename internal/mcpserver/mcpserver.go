// Package mcpserver names the router's MCP server as the rest of the
// program may touch it: [Server] is the part of go-sdk's [mcp.Server]
// that registers resources and prompts, notifies of updates and runs
// sessions, without its receiving middleware. The router hands out its
// server as a [Server], so that a middleware cannot be added past the
// router's chain, which every entry point runs (router.Router.Use adds
// one); the remote pool registers its upstreams' resources and prompts
// through the same type. It is a leaf.
package mcpserver

import (
	"context"
	"iter"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Server is an [mcp.Server] without AddReceivingMiddleware and without
// tools (the router registers tools from its providers). *mcp.Server
// implements it; [Of] hides the rest of it.
type Server interface {
	AddResource(r *mcp.Resource, h mcp.ResourceHandler)
	RemoveResources(uris ...string)
	AddResourceTemplate(t *mcp.ResourceTemplate, h mcp.ResourceHandler)
	RemoveResourceTemplates(uriTemplates ...string)
	AddPrompt(p *mcp.Prompt, h mcp.PromptHandler)
	RemovePrompts(names ...string)
	// ResourceUpdated notifies the sessions subscribed to params.URI.
	ResourceUpdated(ctx context.Context, params *mcp.ResourceUpdatedNotificationParams) error
	// Sessions are the sessions open now.
	Sessions() iter.Seq[*mcp.ServerSession]
	// Run serves one session over t until it ends or ctx is done.
	Run(ctx context.Context, t mcp.Transport) error
	// Connect starts a session over t.
	Connect(ctx context.Context, t mcp.Transport, opts *mcp.ServerSessionOptions) (*mcp.ServerSession, error)
}

var _ Server = (*mcp.Server)(nil)

// Of returns s as a [Server] that only has the methods of Server: not
// even a type assertion reaches the rest of s.
func Of(s *mcp.Server) Server { return face{s} }

// face forwards the methods of [Server] to an [mcp.Server].
type face struct{ s *mcp.Server }

func (f face) AddResource(r *mcp.Resource, h mcp.ResourceHandler) { f.s.AddResource(r, h) }
func (f face) RemoveResources(uris ...string)                     { f.s.RemoveResources(uris...) }
func (f face) AddResourceTemplate(t *mcp.ResourceTemplate, h mcp.ResourceHandler) {
	f.s.AddResourceTemplate(t, h)
}
func (f face) RemoveResourceTemplates(uriTemplates ...string) {
	f.s.RemoveResourceTemplates(uriTemplates...)
}
func (f face) AddPrompt(p *mcp.Prompt, h mcp.PromptHandler) { f.s.AddPrompt(p, h) }
func (f face) RemovePrompts(names ...string)                { f.s.RemovePrompts(names...) }
func (f face) ResourceUpdated(ctx context.Context, params *mcp.ResourceUpdatedNotificationParams) error {
	return f.s.ResourceUpdated(ctx, params)
}
func (f face) Sessions() iter.Seq[*mcp.ServerSession]         { return f.s.Sessions() }
func (f face) Run(ctx context.Context, t mcp.Transport) error { return f.s.Run(ctx, t) }
func (f face) Connect(ctx context.Context, t mcp.Transport, opts *mcp.ServerSessionOptions) (*mcp.ServerSession, error) {
	return f.s.Connect(ctx, t, opts)
}
