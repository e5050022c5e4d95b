package router_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/router"
)

// tokenProbe is a provider that records whether its calls saw the
// caller's delegated token; accepts says whether it opted in.
type tokenProbe struct {
	name    string
	accepts bool
	saw     atomic.Int32
}

func (p *tokenProbe) Name() string { return p.name }
func (p *tokenProbe) Tools(context.Context) ([]*mcp.Tool, error) {
	return []*mcp.Tool{rawTool(p.name+"__t", `{"type":"object"}`)}, nil
}
func (p *tokenProbe) AcceptsDelegation() bool { return p.accepts }
func (p *tokenProbe) CallTool(ctx context.Context, _ *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	if agentsmcp.DelegatedTokenFrom(ctx) != nil {
		p.saw.Add(1)
	}
	return &mcp.CallToolResult{}, nil
}

// The caller's delegated token reaches only the providers that opted in
// (ADR 0012 D7b): an MCP upstream, or an HTTP source without delegation,
// never sees it in its context.
func TestDelegatedTokenOnlyForProvidersThatOptIn(t *testing.T) {
	r := router.New(router.Options{})
	optedIn, other := &tokenProbe{name: "crm", accepts: true}, &tokenProbe{name: "up"}
	for _, p := range []agentsmcp.ToolProvider{optedIn, other} {
		if err := r.AddProvider(t.Context(), p); err != nil {
			t.Fatal(err)
		}
	}
	ctx := agentsmcp.WithPrincipal(t.Context(), &agentsmcp.Principal{ID: "jwt:alice"})
	ctx = agentsmcp.WithDelegatedToken(ctx, agentsmcp.NewDelegatedToken("jwt:alice", "alice-jwt", time.Now().Add(time.Hour)))
	for _, tool := range []string{"crm__t", "up__t"} {
		if _, err := r.CallTool(ctx, &mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{Name: tool}}); err != nil {
			t.Fatal(err)
		}
	}
	if optedIn.saw.Load() != 1 || other.saw.Load() != 0 {
		t.Errorf("saw the token: opted in %d, other %d; want 1 and 0", optedIn.saw.Load(), other.saw.Load())
	}
}
