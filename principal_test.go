package agentsmcp_test

import (
	"testing"

	agentsmcp "github.com/agents-mcp/agents-mcp"
)

func TestResourceUpstream(t *testing.T) {
	for uri, want := range map[string]string{
		"upstream://everything/test://static/resource/1": "everything",
		"upstream://a-b/x":      "a-b",
		"upstream://everything": "",
		"upstream:///x":         "",
		"test://static-text":    "",
		"UPSTREAM://x/y":        "",
	} {
		got, ok := agentsmcp.ResourceUpstream(uri)
		if got != want || ok != (want != "") {
			t.Errorf("ResourceUpstream(%q) = %q, %v; want %q", uri, got, ok, want)
		}
	}
}
