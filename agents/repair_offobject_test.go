package agents

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agents-mcp/agents-mcp/localtools"
	"github.com/agents-mcp/agents-mcp/router"
	"github.com/agents-mcp/agents-mcp/router/toolsearch"
)

// TestRepairSkipsAToolThatSharesOnlyTheVerb: translate_text refused
// Japanese. The search for the request finds a channel tool by its verb
// alone ("show"); it takes the failed call's text by name and would ask
// for a channel the request never mentions. It is no replacement: the
// repair turns it down, saying why, as it does a tool that takes none of
// the values; a tool that shares what the request is about still is one.
func TestRepairSkipsAToolThatSharesOnlyTheVerb(t *testing.T) {
	ctx := context.Background()
	l := localtools.New()
	for _, tool := range []struct{ name, description, second, secondDescription string }{
		{"translate_text", "translate a text into another language", "target_language", "language to translate into, such as French"},
		{"channel_post", "show a text on a chat channel", "channel", "the channel, such as #general"},
		{"japanese_captions", "show a text as Japanese captions", "style", "the caption style, such as #bold"},
	} {
		schema := `{"type":"object","properties":{"text":{"type":"string","description":"the text"},"` + tool.second + `":{"type":"string","description":"` + tool.secondDescription + `"}},"required":["text","` + tool.second + `"]}`
		if err := localtools.Add(l, &mcp.Tool{Name: tool.name, Description: tool.description, InputSchema: json.RawMessage(schema)},
			func(context.Context, *mcp.CallToolRequest, map[string]any) (*mcp.CallToolResult, any, error) {
				return nil, nil, nil
			}); err != nil {
			t.Fatal(err)
		}
	}
	r := router.New(router.Options{Version: "test"})
	if err := r.AddProvider(ctx, l); err != nil {
		t.Fatal(err)
	}
	rp := &Repairer{Gatherer: &Gatherer{Catalog: toolsearch.NewCatalog(r, nil, nil)}}
	const goal = "Show 'thank you' in Japanese"
	cands, rejected, err := rp.candidates(ctx, RepairRequest{Request: goal, Tool: "translate_text", StepID: "s1",
		Arguments: json.RawMessage(`{"text":"thank you","target_language":"Japanese"}`)}, goal)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range cands {
		names = append(names, c.facts.Name)
	}
	if slices.Contains(names, "channel_post") {
		t.Errorf("candidates %v include channel_post, which shares only the verb with the request and would ask for a channel", names)
	}
	if !slices.Contains(names, "japanese_captions") {
		t.Errorf("candidates %v lack japanese_captions, which shares what the request is about", names)
	}
	if why := rejected.closest(); !strings.Contains(why, "channel_post: it would ask for channel") {
		t.Errorf("rejections %q do not say why channel_post was turned down", why)
	}
}
