package virtual_test

import (
	"encoding/json"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/router/virtual"
)

func registered(source, name string, meta mcp.Meta) *agentsmcp.RegisteredTool {
	return &agentsmcp.RegisteredTool{Source: source, Tool: &mcp.Tool{Name: name, Description: "d " + name, Meta: meta}, InputSchema: json.RawMessage(`{"type":"object"}`)}
}

func exposed(v *virtual.View) map[string]string {
	m := map[string]string{}
	for _, t := range v.Tools() {
		real, _ := v.RealName(t.Name)
		m[t.Name] = real
	}
	return m
}

// TestViewIsTheSameWhateverTheListingOrder: a view depends on the
// definition and the tools, never on the order the registry lists them in.
func TestViewIsTheSameWhateverTheListingOrder(t *testing.T) {
	a, b := "a_", "b_"
	vs := &agentsmcp.VirtualServer{Name: "v", Tools: []agentsmcp.VirtualSelection{
		{Upstream: "x", AliasPrefix: &a}, {Upstream: "y", AliasPrefix: &b}, {Names: []string{"*"}},
	}, Rename: map[string]string{"z__q": "a_q"}}
	var tools []*agentsmcp.RegisteredTool
	for _, src := range []string{"x", "y", "z"} {
		for _, n := range []string{"q", "r", "s"} {
			tools = append(tools, registered(src, src+"__"+n, nil))
		}
	}
	tools = append(tools, registered("local", "a_r", nil))
	want := exposed(virtual.NewView(vs, tools))
	if want["a_q"] != "z__q" || want["a_r"] != "a_r" || want["b_s"] != "y__s" {
		t.Fatalf("view %v", want)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 50 {
		rng.Shuffle(len(tools), func(i, j int) { tools[i], tools[j] = tools[j], tools[i] })
		if got := exposed(virtual.NewView(vs, tools)); len(got) != len(want) {
			t.Fatalf("got %v want %v", got, want)
		} else {
			for k, v := range want {
				if got[k] != v {
					t.Fatalf("order changed %s: %s vs %s", k, got[k], v)
				}
			}
		}
	}
}

// TestToolAliasFitsAndIsStable: a derived alias over 64 bytes is cut and
// ends in a digest of the real name, the same every time, different for
// two tools whose cut aliases would be equal.
func TestToolAliasFitsAndIsStable(t *testing.T) {
	long := strings.Repeat("x", 70)
	one, two := virtual.ToolAlias("p_"+long+"1", "u__"+long+"1"), virtual.ToolAlias("p_"+long+"2", "u__"+long+"2")
	if len(one) != agentsmcp.MaxToolNameBytes || !agentsmcp.ToolNamePattern.MatchString(one) {
		t.Errorf("alias %q (%d bytes)", one, len(one))
	}
	if one == two || one != virtual.ToolAlias("p_"+long+"1", "u__"+long+"1") {
		t.Errorf("aliases %q %q: want stable and distinct", one, two)
	}
	if got := virtual.ToolAlias("short", "u__short"); got != "short" {
		t.Errorf("a short alias changed: %q", got)
	}
}

// TestSelectionByTagsAndPrompts: tags come from _meta.tags and FastMCP's
// _meta._fastmcp.tags; prompts and resources are selected by upstream and
// pattern.
func TestSelectionByTagsAndPrompts(t *testing.T) {
	vs := &agentsmcp.VirtualServer{Name: "v",
		Tools:     []agentsmcp.VirtualSelection{{Tags: []string{"dev"}}},
		Prompts:   []agentsmcp.VirtualSelection{{Upstream: "u", Names: []string{"u__greet*"}}},
		Resources: []agentsmcp.VirtualSelection{{Upstream: "u"}},
	}
	view := virtual.NewView(vs, []*agentsmcp.RegisteredTool{
		registered("u", "u__a", mcp.Meta{"tags": []any{"dev"}}),
		registered("u", "u__b", mcp.Meta{"_fastmcp": map[string]any{"tags": []any{"ops", "dev"}}}),
		registered("u", "u__c", mcp.Meta{"tags": []any{"ops"}}),
		registered("u", "u__d", nil),
	})
	if got := slices.Sorted(func(yield func(string) bool) {
		for k := range exposed(view) {
			if !yield(k) {
				return
			}
		}
	}); !slices.Equal(got, []string{"u__a", "u__b"}) {
		t.Errorf("tags select %v", got)
	}
	if !virtual.AdmitsPrompt(vs, "u__greeting") || virtual.AdmitsPrompt(vs, "u__other") || virtual.AdmitsPrompt(vs, "w__greeting") {
		t.Error("prompt selection")
	}
	if !virtual.AdmitsResource(vs, "upstream://u/file:///a") || virtual.AdmitsResource(vs, "upstream://w/file:///a") || virtual.AdmitsResource(vs, "file:///local") {
		t.Error("resource selection")
	}
}
