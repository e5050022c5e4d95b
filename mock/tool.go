package mock

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/internal/delegation"
)

var (
	_ agentsmcp.ToolProvider        = (*ToolProvider)(nil)
	_ agentsmcp.ToolChangeNotifier  = (*ToolProvider)(nil)
	_ delegation.DelegationAcceptor = (*ToolProvider)(nil)
	_ agentsmcp.ToolCaller          = (*ToolCaller)(nil)
)

// ToolProvider is an [agentsmcp.ToolProvider]. It is also an
// [agentsmcp.ToolChangeNotifier] and an [delegation.DelegationAcceptor],
// which with their fields nil behave as a provider that is neither: it
// never reports a change and does not accept delegated tokens.
type ToolProvider struct {
	// NameFn is Name; nil: "mock".
	NameFn func() string
	// ToolsFn is Tools; nil: no tools.
	ToolsFn func(ctx context.Context) ([]*mcp.Tool, error)
	// CallToolFn is CallTool; nil: an empty successful result.
	CallToolFn func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error)
	// OnToolsChangedFn is OnToolsChanged; nil: the callback is dropped.
	OnToolsChangedFn func(f func())
	// AcceptsDelegationFn is AcceptsDelegation; nil: false.
	AcceptsDelegationFn func() bool
}

// Name implements [agentsmcp.ToolProvider].
func (p *ToolProvider) Name() string {
	if p.NameFn == nil {
		return "mock"
	}
	return p.NameFn()
}

// Tools implements [agentsmcp.ToolProvider].
func (p *ToolProvider) Tools(ctx context.Context) ([]*mcp.Tool, error) {
	if p.ToolsFn == nil {
		return nil, nil
	}
	return p.ToolsFn(ctx)
}

// CallTool implements [agentsmcp.ToolProvider].
func (p *ToolProvider) CallTool(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	if p.CallToolFn == nil {
		return &mcp.CallToolResult{}, nil
	}
	return p.CallToolFn(ctx, req)
}

// OnToolsChanged implements [agentsmcp.ToolChangeNotifier].
func (p *ToolProvider) OnToolsChanged(f func()) {
	if p.OnToolsChangedFn != nil {
		p.OnToolsChangedFn(f)
	}
}

// AcceptsDelegation implements [delegation.DelegationAcceptor].
func (p *ToolProvider) AcceptsDelegation() bool {
	return p.AcceptsDelegationFn != nil && p.AcceptsDelegationFn()
}

// ToolCaller is an [agentsmcp.ToolCaller]; CallToolFn must be set.
type ToolCaller struct {
	CallToolFn func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error)
}

// CallTool implements [agentsmcp.ToolCaller].
func (c *ToolCaller) CallTool(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	return c.CallToolFn(ctx, req)
}
