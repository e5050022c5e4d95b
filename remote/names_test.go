package remote

import (
	"context"
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	agentsmcp "github.com/agents-mcp/agents-mcp"
)

// TestToolAlias pins the alias rule that docs/interface.md states: the
// values were computed outside Go (Python's hashlib), so a change of the
// rule, which would rename tools under every caller, fails here.
func TestToolAlias(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("very_long_tool_name_", 4)
	for _, c := range []struct {
		upstream, tool string
		attempt        int
		want           string
	}{
		{"up", long + "one", 0, "up__very_long_tool_name_very_long_tool_name_very_long_t_47a334ad"},
		{"up", long + "two", 0, "up__very_long_tool_name_very_long_tool_name_very_long_t_5ed8a08b"},
		{"up", long + "one", 1, "up__very_long_tool_name_very_long_tool_name_very_long_t_49157c15"},
		// The head loses its trailing '_', so the hash stands apart.
		{"everything", strings.Repeat("a", 60) + strings.Repeat("_", 20) + "b", 0, "everything__" + strings.Repeat("a", 43) + "_61e92155"},
		// The longest upstream name still leaves room for the tool.
		{strings.Repeat("a", 32), strings.Repeat("t", 40), 0, strings.Repeat("a", 32) + "__" + strings.Repeat("t", 21) + "_47169b75"},
		{"up", strings.Repeat("_", 70), 0, "up___89baced6"},
	} {
		got := ToolAlias(c.upstream, c.tool, c.attempt)
		if got != c.want {
			t.Errorf("ToolAlias(%q, %q, %d) = %q, want %q", c.upstream, c.tool, c.attempt, got, c.want)
		}
		if !agentsmcp.ToolNamePattern.MatchString(got) || !strings.HasPrefix(got, c.upstream+agentsmcp.NamespaceSeparator) {
			t.Errorf("alias %q is not a valid name under %q", got, c.upstream)
		}
		// An allowlist admitting the whole upstream admits its aliases.
		if p := (&agentsmcp.Principal{Tools: []string{c.upstream + "__*"}}); !p.MayUseTool(got) {
			t.Errorf("allowlist %v refuses alias %q", p.Tools, got)
		}
	}
}

// TestLongToolNamesAreAliased runs a go-sdk upstream over loopback
// streamable HTTP whose tool names are too long to prefix: they are listed
// and called under aliases, which survive a pool restart.
func TestLongToolNamesAreAliased(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("very_long_tool_name_", 4) // 80 characters
	one, two := long+"one", long+"two"                // the same first 55 characters once prefixed
	longest := strings.Repeat("y", 60)                // "up__" + 60 = 64 characters: not aliased
	// A real tool named as the first alias of one would be: it keeps its
	// name, and one takes its next alias.
	squatter := strings.TrimPrefix(ToolAlias("up", one, 0), "up__")
	dotted := "dotted." + long // too long and invalid anyway: a problem

	s := mcp.NewServer(&mcp.Implementation{Name: "names", Version: "1"}, nil)
	answer := func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		// The upstream says which of its tools was called.
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "called " + req.Params.Name}}}, nil
	}
	for _, name := range []string{one, two, longest, squatter, dotted} {
		tool := &mcp.Tool{Name: name, InputSchema: json.RawMessage(anySchema)}
		if name == two {
			tool.Meta = mcp.Meta{"vendor/x": "kept"}
		}
		s.AddTool(tool, answer)
	}
	hs := serveStreamable(t, s)

	aliasOne, aliasTwo := ToolAlias("up", one, 1), ToolAlias("up", two, 0)
	if aliasOne == aliasTwo || aliasOne[:55] != aliasTwo[:55] {
		t.Fatalf("aliases %q and %q: want distinct, with the same head", aliasOne, aliasTwo)
	}
	wantAliases := map[string]string{aliasOne: one, aliasTwo: two}
	wantNames := []string{"up__" + squatter, aliasOne, aliasTwo, "up__" + longest}
	slices.Sort(wantNames)

	check := func(e *env) {
		t.Helper()
		if got := e.routerToolNames("up__"); !slices.Equal(got, wantNames) {
			t.Fatalf("router lists %v, want %v", got, wantNames)
		}
		st := e.status("up")
		if !maps.Equal(st.Aliases, wantAliases) {
			t.Errorf("status aliases %v, want %v", st.Aliases, wantAliases)
		}
		if st.Tools != 4 || len(st.Problems) != 1 || !strings.Contains(st.Problems[0], dotted) {
			t.Errorf("status: %d tools, problems %q; want 4 and one naming %q", st.Tools, st.Problems, dotted)
		}
		if p := e.router.Problems()["up"]; len(p) != 0 {
			t.Errorf("router problems %q", p)
		}

		cs := e.caller(nil, "")
		listed := map[string]*mcp.Tool{}
		for tool, err := range cs.Tools(testCtx(t, 10*time.Second), nil) {
			if err != nil {
				t.Fatal(err)
			}
			listed[tool.Name] = tool
		}
		for alias, name := range wantAliases {
			tool := listed[alias]
			if tool == nil {
				t.Fatalf("tools/list lacks %q", alias)
			}
			if tool.Meta[MetaUpstreamTool] != name {
				t.Errorf("%s: _meta %v does not name %q", alias, tool.Meta, name)
			}
		}
		if listed[aliasTwo].Meta["vendor/x"] != "kept" {
			t.Errorf("the upstream's own _meta was lost: %v", listed[aliasTwo].Meta)
		}
		if m := listed["up__"+squatter].Meta; m != nil {
			t.Errorf("a tool under its own name got _meta %v", m)
		}
		for exposed, name := range map[string]string{aliasOne: one, aliasTwo: two, "up__" + squatter: squatter, "up__" + longest: longest} {
			if got := mustText(t, cs, exposed, `{}`); got != "called "+name {
				t.Errorf("calling %s reached the upstream as %q, want %q", exposed, got, "called "+name)
			}
		}
	}

	e := newEnv(t, fastOptions())
	e.add(streamableConfig("up", hs.URL()))
	check(e)

	// A restarted process (or another replica) names the tools the same.
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	if err := e.pool.Close(ctx); err != nil {
		t.Fatal(err)
	}
	again := newEnv(t, fastOptions())
	again.add(streamableConfig("up", hs.URL()))
	check(again)
}
