package remote

import (
	"context"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/yosida95/uritemplate/v3"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/internal/mcpserver"
)

// ResourceURIPrefix returns the prefix of the URIs under which an
// upstream's resources are exposed: the resource "test://static/resource/1"
// of upstream "everything" is "upstream://everything/test://static/resource/1".
// Resource templates get the same prefix; [agentsmcp.ResourceUpstream]
// tells the upstream back from an exposed URI.
func ResourceURIPrefix(upstream string) string {
	return agentsmcp.UpstreamURIScheme + upstream + "/"
}

// extras is what an upstream has registered on the server besides tools:
// resources, resource templates and prompts, all namespaced.
type extras struct {
	upstream string
	server   mcpserver.Server

	mu        sync.Mutex
	resources []string // exposed URIs
	templates []string // exposed URI templates
	prompts   []string // exposed names
}

func newExtras(upstream string, server mcpserver.Server) *extras {
	return &extras{upstream: upstream, server: server}
}

func (c *extras) counts() (resources, templates, prompts int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.resources), len(c.templates), len(c.prompts)
}

// clear unregisters everything.
func (c *extras) clear() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.replaceLocked(nil, nil, nil)
}

func (c *extras) replaceLocked(resources, templates, prompts []string) {
	if gone := without(c.resources, resources); len(gone) > 0 {
		c.server.RemoveResources(gone...)
	}
	if gone := without(c.templates, templates); len(gone) > 0 {
		c.server.RemoveResourceTemplates(gone...)
	}
	if gone := without(c.prompts, prompts); len(gone) > 0 {
		c.server.RemovePrompts(gone...)
	}
	c.resources, c.templates, c.prompts = resources, templates, prompts
}

// without returns the elements of old that are not in keep.
func without(old, keep []string) []string {
	var out []string
	for _, s := range old {
		if !slices.Contains(keep, s) {
			out = append(out, s)
		}
	}
	return out
}

// syncExtras lists the upstream's resources, templates and prompts (those
// its capabilities announce) and registers them, namespaced, replacing what
// was registered before. It returns the problems found; a failed listing
// keeps the previous registrations of that kind.
func (u *upstream) syncExtras(ctx context.Context, cs *mcp.ClientSession) []string {
	var problems []string
	caps := &mcp.ServerCapabilities{}
	if init := cs.InitializeResult(); init != nil && init.Capabilities != nil {
		caps = init.Capabilities
	}
	// A new session or a new listing may read differently.
	u.dropReads()
	c := u.extras
	c.mu.Lock()
	defer c.mu.Unlock()
	resources, templates, prompts := c.resources, c.templates, c.prompts
	prefix := ResourceURIPrefix(u.cfg.Name)
	if caps.Resources != nil {
		if listed, err := collect(cs.Resources(ctx, nil)); err != nil {
			problems = append(problems, "resources/list failed: "+u.errorText(err, 300))
		} else {
			resources = nil
			for _, r := range listed {
				exposed := *r
				exposed.URI = prefix + r.URI
				if _, err := url.Parse(exposed.URI); err != nil {
					problems = append(problems, fmt.Sprintf("resource %q: URI cannot be exposed: %v", r.URI, err))
					continue
				}
				c.server.AddResource(&exposed, u.readResource)
				resources = append(resources, exposed.URI)
			}
		}
		if listed, err := collect(cs.ResourceTemplates(ctx, nil)); err != nil {
			problems = append(problems, "resources/templates/list failed: "+u.errorText(err, 300))
		} else {
			templates = nil
			for _, t := range listed {
				exposed := *t
				exposed.URITemplate = prefix + t.URITemplate
				if _, err := uritemplate.New(exposed.URITemplate); err != nil {
					problems = append(problems, fmt.Sprintf("resource template %q cannot be exposed: %v", t.URITemplate, err))
					continue
				}
				c.server.AddResourceTemplate(&exposed, u.readResource)
				templates = append(templates, exposed.URITemplate)
			}
		}
	}
	if caps.Prompts != nil {
		if listed, err := collect(cs.Prompts(ctx, nil)); err != nil {
			problems = append(problems, "prompts/list failed: "+u.errorText(err, 300))
		} else {
			prompts = nil
			for _, p := range listed {
				exposed := *p
				exposed.Name = u.cfg.Name + agentsmcp.NamespaceSeparator + p.Name
				original := p.Name
				c.server.AddPrompt(&exposed, func(ctx context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
					return u.getPrompt(ctx, original, req)
				})
				prompts = append(prompts, exposed.Name)
			}
		}
	}
	c.replaceLocked(resources, templates, prompts)
	return problems
}

func collect[T any](seq func(func(*T, error) bool)) ([]*T, error) {
	var out []*T
	for v, err := range seq {
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

// readResource serves resources/read for an exposed URI (or one matching an
// exposed template) by reading the original URI upstream; the contents'
// URIs are exposed again.
func (u *upstream) readResource(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	prefix := ResourceURIPrefix(u.cfg.Name)
	original, ok := strings.CutPrefix(req.Params.URI, prefix)
	if !ok {
		return nil, mcp.ResourceNotFoundError(req.Params.URI)
	}
	ctx, cancel := context.WithTimeoutCause(ctx, u.cfg.Timeout, errCallTimeout)
	defer cancel()
	cs, release, err := u.callerSession(ctx)
	if err != nil {
		return nil, protocolError(err)
	}
	defer release()
	res, err := u.cachedRead(ctx, cs, original)
	if err != nil {
		if ctx.Err() != nil {
			return nil, protocolError(u.contextError(ctx, "reading a resource"))
		}
		return nil, protocolError(err)
	}
	if res.NeedsInput() {
		return nil, inputNotRelayed(u.cfg.Name, "resources/read", res.InputRequests)
	}
	for _, c := range res.Contents {
		if c != nil && c.URI != "" {
			c.URI = prefix + c.URI
		}
	}
	return res, nil
}

func (u *upstream) getPrompt(ctx context.Context, original string, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
	ctx, cancel := context.WithTimeoutCause(ctx, u.cfg.Timeout, errCallTimeout)
	defer cancel()
	cs, release, err := u.callerSession(ctx)
	if err != nil {
		return nil, protocolError(err)
	}
	defer release()
	res, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: original, Arguments: req.Params.Arguments})
	if err != nil {
		if ctx.Err() != nil {
			return nil, protocolError(u.contextError(ctx, "getting a prompt"))
		}
		return nil, protocolError(err)
	}
	if res.NeedsInput() {
		return nil, inputNotRelayed(u.cfg.Name, "prompts/get", res.InputRequests)
	}
	return res, nil
}

// protocolError passes an upstream's JSON-RPC error on as it is and turns
// anything else into an internal error with a message fit for the caller
// (resources and prompts have no tool-error result to carry it).
func protocolError(err error) error {
	if rpcErr := upstreamError(err); rpcErr != nil {
		return rpcErr
	}
	return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: agentsmcp.ErrorMessage(err)}
}
