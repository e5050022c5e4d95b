package router_test

import (
	"context"
	"fmt"

	"github.com/agents-mcp/agents-mcp/localtools"
	"github.com/agents-mcp/agents-mcp/router"
)

// SearchTools ranks the catalog lexically over names, descriptions and
// parameters.
func ExampleRouter_SearchTools() {
	r := router.New(router.Options{})
	local := localtools.New()
	_, _ = router.AddSearchToolsWith(local, r, router.SearchOptions{})
	_ = r.AddProvider(context.Background(), local)
	for _, m := range r.SearchTools("find a tool", "all", 3) {
		fmt.Println(m.Name, m.Source)
	}
	// Output: search_tools local
}
