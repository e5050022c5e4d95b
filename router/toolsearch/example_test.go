package toolsearch_test

import (
	"context"
	"fmt"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agents-mcp/agents-mcp/localtools"
	"github.com/agents-mcp/agents-mcp/memory/embed"
	"github.com/agents-mcp/agents-mcp/router"
	"github.com/agents-mcp/agents-mcp/router/toolsearch"
)

// With an embedder, search_tools ranks hybrid: words (with synonyms, so
// "folder" finds "directory") fused with embedding similarity. Tools are
// embedded in the background; until they are, searches answer lexically and
// say so. Close stops the background work.
func ExampleAddSearchTools() {
	ctx := context.Background()
	r := router.New(router.Options{})
	local := localtools.New()
	idx := toolsearch.NewIndex(r, toolsearch.Options{Embedder: embed.Hash{}, QueryTimeout: time.Second})
	defer idx.Close()
	if err := toolsearch.AddSearchTools(local, idx); err != nil {
		panic(err)
	}
	noop := func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{}, nil, nil
	}
	_ = localtools.Add(local, &mcp.Tool{Name: "list_directory", Description: "List the entries of a directory"}, noop)
	_ = localtools.Add(local, &mcp.Tool{Name: "post_message", Description: "Post a message to a chat channel"}, noop)
	if err := r.AddProvider(ctx, local); err != nil {
		panic(err)
	}

	res := idx.Search(ctx, "show me what's in the projects folder", "all", 1)
	for i := 0; res.Mode != toolsearch.ModeHybrid && i < 500; i++ {
		time.Sleep(10 * time.Millisecond) // tool embeddings not ready yet
		res = idx.Search(ctx, "show me what's in the projects folder", "all", 1)
	}
	fmt.Println(res.Mode, res.Tools[0].Name)
	fmt.Println(res.Tools[0].Why)
	// Output:
	// hybrid list_directory
	// name: show→list, folder→directory; description: show→list, folder→directory; vector similarity 0.07
}

// SearchLexical ranks the catalog lexically over names, descriptions and
// parameters, indexing it on every call.
func ExampleSearchLexical() {
	r := router.New(router.Options{})
	local := localtools.New()
	_ = toolsearch.AddSearchTools(local, toolsearch.NewIndex(r, toolsearch.Options{}))
	_ = r.AddProvider(context.Background(), local)
	for _, m := range toolsearch.SearchLexical(r, "find a tool", "all", 3) {
		fmt.Println(m.Name, m.Source)
	}
	// Output: search_tools local
}
