package toolsearch

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestSearchReadsWhatAToolListsOfItself checks that the search ranks a
// tool by what its listing says besides its name and description: an
// HTTP tool's path and method (_meta agents-mcp/httpOperation), its tags
// (_meta tags) and its annotations' title. The tools have terse names and
// no descriptions, as generated catalogs have them: only those facts tell
// them apart, and why names the field that matched.
func TestSearchReadsWhatAToolListsOfItself(t *testing.T) {
	op := func(method, path string, tags ...any) mcp.Meta {
		m := mcp.Meta{metaHTTPOperation: map[string]any{"method": method, "path": path}}
		if len(tags) > 0 {
			m["tags"] = tags
		}
		return m
	}
	schema := json.RawMessage(`{"type":"object"}`)
	tools := []*mcp.Tool{
		{Name: "api__op1", InputSchema: schema, Meta: op("POST", "/boards/{idBoard}/stickers")},
		{Name: "api__op2", InputSchema: schema, Meta: op("DELETE", "/boards/{idBoard}/stickers/{idSticker}")},
		{Name: "api__op3", InputSchema: schema, Meta: op("GET", "/boards/{idBoard}/labels", "Labels")},
		{Name: "api__op4", InputSchema: schema, Annotations: &mcp.ToolAnnotations{Title: "Archive a conversation"}},
		{Name: "api__op5", InputSchema: schema, Meta: op("PUT", "/boards/{idBoard}/name")},
	}
	r := catalogRouter(t, []catalogServer{{Server: "api", Tools: tools}})
	for _, tc := range []struct{ query, want, why string }{
		{"add a sticker to the board", "api__op1", "path: sticker"},
		{"remove a sticker from the board", "api__op2", "method: remove"},
		{"show the labels", "api__op3", "tags: labels"},
		{"archive the conversation", "api__op4", "summary: archive"},
		{"change the board's name", "api__op5", "method: change"},
	} {
		got := SearchLexical(r, tc.query, "all", 3)
		if len(got) == 0 || got[0].Name != tc.want {
			t.Errorf("%q: got %v, want %s first", tc.query, slices.Collect(names(got)), tc.want)
			continue
		}
		if !strings.Contains(got[0].Why, tc.why) {
			t.Errorf("%q: why %q, want it to say %q", tc.query, got[0].Why, tc.why)
		}
	}
}

func names(ms []Match) func(func(string) bool) {
	return func(yield func(string) bool) {
		for _, m := range ms {
			if !yield(m.Name + " (" + m.Why + ")") {
				return
			}
		}
	}
}
