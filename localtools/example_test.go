package localtools_test

import (
	"context"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agents-mcp/agents-mcp/localtools"
	"github.com/agents-mcp/agents-mcp/router"
)

// A local tool is registered once with a typed handler; its schema is
// inferred, and the router validates arguments against it for tools/call and
// tools/validate alike.
func ExampleAdd() {
	type greetArgs struct {
		Name string `json:"name" jsonschema:"who to greet"`
	}
	ctx := context.Background()
	r := router.New(router.Options{})
	local := localtools.New()
	err := localtools.Add(local, &mcp.Tool{Name: "greet", Description: "Greets someone"},
		func(ctx context.Context, _ *mcp.CallToolRequest, in greetArgs) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "Hello, " + in.Name}}}, nil, nil
		})
	if err != nil {
		panic(err)
	}
	if err := r.AddProvider(ctx, local); err != nil {
		panic(err)
	}

	res, _ := r.ValidateToolArguments(ctx, "greet", []byte(`{"name": 3}`))
	fmt.Println(res.Valid, res.Errors[0].Path, res.Errors[0].Keyword)
	res, _ = r.ValidateToolArguments(ctx, "greet", []byte(`{}`))
	fmt.Println(res.Valid, res.Missing)
	// Output:
	// false /name type
	// false [name]
}
