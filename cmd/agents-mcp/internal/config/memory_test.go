package config

import (
	"strings"
	"testing"

	agentsmcp "github.com/agents-mcp/agents-mcp"
)

func TestMemoryVisibilitySetting(t *testing.T) {
	file := writeYAML(t, "memory:\n  visibility: Shared\n")
	tests := []struct {
		name string
		args []string
		env  map[string]string
		want agentsmcp.MemoryVisibility
		src  Source
	}{
		{name: "default", want: agentsmcp.VisibilityPrincipal, src: SourceDefault},
		{name: "file", args: []string{"--config", file}, want: agentsmcp.VisibilityShared, src: SourceFile},
		{name: "env over file", args: []string{"--config", file}, env: map[string]string{"AGENTS_MCP_MEMORY_VISIBILITY": " principal "},
			want: agentsmcp.VisibilityPrincipal, src: "env:AGENTS_MCP_MEMORY_VISIBILITY"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := mustLoad(t, tt.args, tt.env)
			if c.MemoryVisibility != tt.want || c.Source("memory.visibility") != tt.src {
				t.Errorf("MemoryVisibility = %q from %q, want %q from %q", c.MemoryVisibility, c.Source("memory.visibility"), tt.want, tt.src)
			}
			found := false
			for _, s := range c.Describe() {
				if s.Name == "memory.visibility" {
					found = s.Value == string(tt.want) && s.Source == tt.src
				}
			}
			if !found {
				t.Errorf("Describe does not show memory.visibility=%s from %s", tt.want, tt.src)
			}
		})
	}
	for _, env := range []string{"everyone", "none"} {
		_, err := Load(nil, func(k string) string {
			if k == "AGENTS_MCP_MEMORY_VISIBILITY" {
				return env
			}
			return ""
		})
		if err == nil || !strings.Contains(err.Error(), "memory.visibility") || !strings.Contains(err.Error(), "principal, shared") {
			t.Errorf("visibility %q: %v, want an error naming memory.visibility and its values", env, err)
		}
	}
}
