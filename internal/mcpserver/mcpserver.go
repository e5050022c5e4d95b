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
// implements it.
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
