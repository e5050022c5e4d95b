package router_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/internal/delegation"
	"github.com/agents-mcp/agents-mcp/mock"
	"github.com/agents-mcp/agents-mcp/router"
)

// tokenProbe is a provider of one tool, name+"__t", that counts in saw
// the calls that saw the caller's delegated token; accepts says whether
// it opted in.
func tokenProbe(name string, accepts bool, saw *atomic.Int32) *mock.ToolProvider {
	return &mock.ToolProvider{
		NameFn: func() string { return name },
		ToolsFn: func(context.Context) ([]*mcp.Tool, error) {
			return []*mcp.Tool{rawTool(name+"__t", `{"type":"object"}`)}, nil
		},
		AcceptsDelegationFn: func() bool { return accepts },
		CallToolFn: func(ctx context.Context, _ *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			if delegation.DelegatedTokenFrom(ctx) != nil {
				saw.Add(1)
			}
			return &mcp.CallToolResult{}, nil
		},
	}
}

// The caller's delegated token reaches only the providers that opted in
// (ADR 0012 D7b): an MCP upstream, or an HTTP source without delegation,
// never sees it in its context.
func TestDelegatedTokenOnlyForProvidersThatOptIn(t *testing.T) {
	r := router.New(router.Options{})
	var optedInSaw, otherSaw atomic.Int32
	for _, p := range []agentsmcp.ToolProvider{tokenProbe("crm", true, &optedInSaw), tokenProbe("up", false, &otherSaw)} {
		if err := r.AddProvider(t.Context(), p); err != nil {
			t.Fatal(err)
		}
	}
	ctx := agentsmcp.WithPrincipal(t.Context(), &agentsmcp.Principal{ID: "jwt:alice"})
	ctx = delegation.WithDelegatedToken(ctx, delegation.NewDelegatedToken("jwt:alice", "alice-jwt", time.Now().Add(time.Hour)))
	for _, tool := range []string{"crm__t", "up__t"} {
		if _, err := r.CallTool(ctx, &mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{Name: tool}}); err != nil {
			t.Fatal(err)
		}
	}
	if optedInSaw.Load() != 1 || otherSaw.Load() != 0 {
		t.Errorf("saw the token: opted in %d, other %d; want 1 and 0", optedInSaw.Load(), otherSaw.Load())
	}
}
