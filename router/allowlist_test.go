package router

import (
	"testing"

	agentsmcp "github.com/agents-mcp/agents-mcp"
)

func TestAllowlistCoversEveryCapability(t *testing.T) {
	const (
		tool         = "everything__echo"
		prompt       = "everything__simple-prompt"
		slashPrompt  = "everything__a/b" // prompt names from upstreams are free text
		resource     = "upstream://everything/test://static/resource/1"
		template     = "upstream://everything/test://template/{id}"
		otherRes     = "upstream://other/test://x"
		localRes     = "test://static-text"
		localPrompt  = "test_simple_prompt"
		search       = "search_tools"
		schemeOnlyRU = "upstream://"
	)
	type want struct{ tool, prompt, slashPrompt, resource, template, otherRes, localRes, localPrompt, search, schemeOnly bool }
	for _, tc := range []struct {
		name  string
		tools []string
		want  want
	}{
		{"no allowlist", nil, want{true, true, true, true, true, true, true, true, true, true}},
		{"one local tool", []string{search}, want{search: true}},
		{"one upstream tool", []string{tool}, want{tool: true}},
		{"one upstream tool and one of its prompts", []string{tool, prompt}, want{tool: true, prompt: true}},
		{"the whole upstream", []string{"everything__*"}, want{tool: true, prompt: true, slashPrompt: true, resource: true, template: true}},
		{"the whole upstream, shorter", []string{"every*"}, want{tool: true, prompt: true, slashPrompt: true, resource: true, template: true}},
		{"every upstream", []string{"*__*"}, want{tool: true, prompt: true, slashPrompt: true, resource: true, template: true, otherRes: true}},
		{"everything", []string{"*"}, want{true, true, true, true, true, true, true, true, true, true}},
		// Patterns that match the literal "everything__*" but not every
		// tool of the upstream must not admit its resources.
		{"one-letter tools", []string{"everything__?"}, want{}},
		{"a star in a class", []string{"everything__[*]"}, want{}},
		{"an escaped star", []string{`everything__\*`}, want{}},
		{"tools beginning with e", []string{"everything__e*"}, want{tool: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := &agentsmcp.Principal{ID: "key:test", Tools: tc.tools}
			got := want{
				tool: p.MayUseTool(tool), prompt: mayUsePrompt(p, prompt), slashPrompt: mayUsePrompt(p, slashPrompt),
				resource: mayUseResource(p, resource), template: mayUseResource(p, template), otherRes: mayUseResource(p, otherRes),
				localRes: mayUseResource(p, localRes), localPrompt: mayUsePrompt(p, localPrompt), search: p.MayUseTool(search),
				schemeOnly: mayUseResource(p, schemeOnlyRU),
			}
			if got != tc.want {
				t.Errorf("allowlist %q admits\n %+v\nwant\n %+v", tc.tools, got, tc.want)
			}
		})
	}
	var nobody *agentsmcp.Principal // no authentication configured
	if !nobody.MayUseTool(tool) || !mayUsePrompt(nobody, prompt) || !mayUseResource(nobody, resource) {
		t.Error("a nil principal is restricted")
	}
}
