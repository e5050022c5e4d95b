package config

import (
	"strings"
	"testing"
	"time"

	"github.com/agents-mcp/agents-mcp/httptools"
)

func TestOpenAPIBudgetSettings(t *testing.T) {
	file := writeYAML(t, "openapi:\n  max_schema_nodes: 5000\n  load_timeout: 45s\n")
	for _, tt := range []struct {
		name    string
		args    []string
		env     map[string]string
		nodes   int
		timeout time.Duration
		src     Source
	}{
		{name: "default", nodes: httptools.DefaultMaxSchemaNodes, timeout: httptools.DefaultLoadTimeout, src: SourceDefault},
		{name: "file", args: []string{"--config", file}, nodes: 5000, timeout: 45 * time.Second, src: SourceFile},
		{name: "env over file", args: []string{"--config", file},
			env:   map[string]string{"AGENTS_MCP_OPENAPI_MAX_SCHEMA_NODES": "250000", "AGENTS_MCP_OPENAPI_LOAD_TIMEOUT": "1m"},
			nodes: 250000, timeout: time.Minute, src: "env:AGENTS_MCP_OPENAPI_MAX_SCHEMA_NODES"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := mustLoad(t, tt.args, tt.env)
			if c.OpenAPIBudget.MaxSchemaNodes != tt.nodes || c.OpenAPIBudget.Timeout != tt.timeout || c.Source("openapi.max_schema_nodes") != tt.src {
				t.Errorf("budget %+v from %q, want %d nodes, %s from %q", c.OpenAPIBudget, c.Source("openapi.max_schema_nodes"), tt.nodes, tt.timeout, tt.src)
			}
			seen := 0
			for _, s := range c.Describe() {
				if s.Name == "openapi.max_schema_nodes" || s.Name == "openapi.load_timeout" {
					seen++
				}
			}
			if seen != 2 {
				t.Errorf("Describe shows %d of the two openapi settings", seen)
			}
		})
	}
	for _, env := range []map[string]string{
		{"AGENTS_MCP_OPENAPI_MAX_SCHEMA_NODES": "0"},
		{"AGENTS_MCP_OPENAPI_MAX_SCHEMA_NODES": "many"},
		{"AGENTS_MCP_OPENAPI_LOAD_TIMEOUT": "10ms"},
	} {
		_, err := Load(nil, func(k string) string { return env[k] })
		if err == nil || !strings.Contains(err.Error(), "OPENAPI") && !strings.Contains(err.Error(), "openapi.") {
			t.Errorf("%v: %v, want an error naming the setting", env, err)
		}
	}
}
