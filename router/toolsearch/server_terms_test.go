package toolsearch

import (
	"encoding/json"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestNeedNamingTheProductFindsACompoundSource: a source named by a product
// and a qualifier run together ("slackapi") is found by a need that names
// the product ("in slack"), ahead of an equally worded tool of another
// source (which a tie would otherwise rank first, by name).
func TestNeedNamingTheProductFindsACompoundSource(t *testing.T) {
	tool := func(name string) *mcp.Tool {
		return &mcp.Tool{Name: name, Description: "Sends a message to a channel.", InputSchema: json.RawMessage(`{"type":"object"}`)}
	}
	r := catalogRouter(t, []catalogServer{
		{Server: "chatapp", Tools: []*mcp.Tool{tool("chatapp__chat_postMessage")}},
		{Server: "slackapi", Tools: []*mcp.Tool{tool("slackapi__chat_postMessage")}},
	})
	got := SearchLexical(r, "send a message in slack", "all", 2)
	if len(got) != 2 || got[0].Name != "slackapi__chat_postMessage" {
		t.Fatalf("got %v, want slackapi__chat_postMessage first", matchNames(got))
	}
	if got[0].Why == "" || got[0].Score <= got[1].Score {
		t.Fatalf("got %+v", got)
	}
	if terms := serverTerms("slackapi"); len(terms) != 5 || terms[0] != "slackapi" || terms[1] != "slac" || terms[4] != "slackap" {
		t.Fatalf("serverTerms(slackapi) = %v", terms)
	}
	if terms := serverTerms("v2"); len(terms) != 1 {
		t.Fatalf("serverTerms(v2) = %v", terms)
	}
}
