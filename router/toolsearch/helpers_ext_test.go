package toolsearch_test

import (
	"context"
	"encoding/json"
	"slices"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/router"
)

// staticProvider is a real ToolProvider whose tool set a test replaces
// (then calls Router.Refresh); it stands in for an upstream server.
type staticProvider struct {
	name string

	mu    sync.Mutex
	tools []*mcp.Tool
}

func (p *staticProvider) Name() string { return p.name }

func (p *staticProvider) Tools(context.Context) ([]*mcp.Tool, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.tools), nil
}

func (p *staticProvider) CallTool(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: p.name + " ran " + req.Params.Name}}}, nil
}

func (p *staticProvider) setTools(tools ...*mcp.Tool) {
	p.mu.Lock()
	p.tools = tools
	p.mu.Unlock()
}

func rawTool(name, schema string) *mcp.Tool {
	return &mcp.Tool{Name: name, Description: "tool " + name, InputSchema: json.RawMessage(schema)}
}

const personSchema = `{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","title":"Person",` +
	`"properties":{"name":{"type":"string"},"age":{"type":"integer","minimum":0},"color":{"enum":["red","green"]},` +
	`"address":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}},` +
	`"required":["name","age"],"oneOf":[{"required":["name"]}]}`

type echoIn struct {
	Text string `json:"text"`
}

type echoOut struct {
	Echo string `json:"echo"`
}

// newRouterWith returns a real router with the providers added.
func newRouterWith(t *testing.T, providers ...agentsmcp.ToolProvider) *router.Router {
	t.Helper()
	r := router.New(router.Options{Version: "test"})
	for _, p := range providers {
		if err := r.AddProvider(context.Background(), p); err != nil {
			t.Fatalf("AddProvider(%s): %v", p.Name(), err)
		}
	}
	return r
}
