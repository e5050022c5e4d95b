package config

import (
	"strings"

	agentsmcp "github.com/agents-mcp/agents-mcp"
)

// DefaultMemoryVisibility confines every principal to its own memory: the
// safe choice when several credentials share one server. Without
// credentials every caller is the anonymous principal, so it changes
// nothing for `make run`.
const DefaultMemoryVisibility = agentsmcp.VisibilityPrincipal

// fileMemory is the `memory:` section.
type fileMemory struct {
	// Visibility is "principal" or "shared" (agentsmcp.MemoryVisibility).
	Visibility *string `yaml:"visibility"`
	// InsightRetention is how long an insight is kept (quotas.go).
	InsightRetention *string `yaml:"insight_retention"`
}

// applyFileMemory copies the memory section.
func (l *loader) applyFileMemory(f *fileConfig) {
	if m := f.Memory; m != nil && m.Visibility != nil {
		l.cfg.MemoryVisibility = agentsmcp.MemoryVisibility(strings.ToLower(strings.TrimSpace(*m.Visibility)))
		l.cfg.setSource("memory.visibility", SourceFile)
	}
}

// applyEnvMemory overrides the file with the memory variables.
func (l *loader) applyEnvMemory() {
	const env = "AGENTS_MCP_MEMORY_VISIBILITY"
	if v := l.env(env); v != "" {
		l.cfg.MemoryVisibility = agentsmcp.MemoryVisibility(strings.ToLower(v))
		l.cfg.setSource("memory.visibility", envSource(env))
	}
}

// validateMemory checks the memory settings; bad is validate's reporter.
func (c *Config) validateMemory(bad func(name, format string, args ...any)) {
	for _, v := range []agentsmcp.MemoryVisibility{agentsmcp.VisibilityPrincipal, agentsmcp.VisibilityShared} {
		if c.MemoryVisibility == v {
			return
		}
	}
	bad("memory.visibility", "%q is not one of %s, %s", c.MemoryVisibility, agentsmcp.VisibilityPrincipal, agentsmcp.VisibilityShared)
}

// describeMemory adds the memory settings to Describe.
func (c *Config) describeMemory(add func(name, value string)) {
	add("memory.visibility", string(c.MemoryVisibility))
}
