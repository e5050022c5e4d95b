package toolsearch_test

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"slices"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agents-mcp/agents-mcp/router"
	"github.com/agents-mcp/agents-mcp/router/toolsearch"
)

// The router is the search's Registry; cmd hands it over.
var _ toolsearch.Registry = (*router.Router)(nil)

// downLast is a Ranker that weighs more than words: it wraps another and
// moves the tools of sources that are down after the others, saying so in
// Why.
type downLast struct {
	toolsearch.Ranker
	down map[string]bool // sources that are down
}

func (d downLast) Search(ctx context.Context, query, scope string, limit int) *toolsearch.Result {
	res := d.Ranker.Search(ctx, query, scope, math.MaxInt32)
	slices.SortStableFunc(res.Tools, func(a, b toolsearch.Match) int {
		return cmp.Compare(d.rank(a), d.rank(b))
	})
	for i, m := range res.Tools {
		if d.down[m.Source] {
			res.Tools[i].Why += "; source down"
		}
	}
	res.Tools = res.Tools[:min(limit, len(res.Tools))]
	return res
}

func (d downLast) rank(m toolsearch.Match) int {
	if d.down[m.Source] {
		return 1
	}
	return 0
}

// A ranking that weighs more than words wraps an Index; cmd hands the
// wrapper to AddSearchTools and NewCatalog in place of the Index, so that
// search_tools and the agents rank alike.
func ExampleRanker() {
	ctx := context.Background()
	r := router.New(router.Options{})
	object := json.RawMessage(`{"type":"object"}`)
	_ = r.AddProvider(ctx, &staticProvider{name: "chat", tools: []*mcp.Tool{
		{Name: "chat__send_message", Description: "Send a message to a person", InputSchema: object},
	}})
	_ = r.AddProvider(ctx, &staticProvider{name: "mail", tools: []*mcp.Tool{
		{Name: "mail__send_email", Description: "Send an email message to a person", InputSchema: object},
	}})
	index := toolsearch.NewIndex(r, toolsearch.Options{})
	defer index.Close()

	fmt.Println("by words:")
	for _, m := range index.Search(ctx, "send a message", "all", 2).Tools {
		fmt.Printf("  %s (%s)\n", m.Name, m.Why)
	}
	ranker := downLast{Ranker: index, down: map[string]bool{"chat": true}}
	fmt.Println("with chat down:")
	for _, m := range ranker.Search(ctx, "send a message", "all", 2).Tools {
		fmt.Printf("  %s (%s)\n", m.Name, m.Why)
	}
	// Output:
	// by words:
	//   chat__send_message (server: message→chat; name: send, message; description: send, message; action: create)
	//   mail__send_email (name: send; description: send, message)
	// with chat down:
	//   mail__send_email (name: send; description: send, message)
	//   chat__send_message (server: message→chat; name: send, message; description: send, message; action: create; source down)
}
