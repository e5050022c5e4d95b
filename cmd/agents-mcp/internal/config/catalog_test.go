package config

import (
	"slices"
	"strings"
	"testing"

	agentsmcp "github.com/agents-mcp/agents-mcp"
)

func TestCatalogSettings(t *testing.T) {
	file := writeYAML(t, "catalog:\n  mode: Discovery\n  pinned: [\"github__*\", search_tools]\n"+
		"auth:\n  api_keys:\n    - {name: bot, key: k-0123456789abcdef, scopes: [mcp], catalog_mode: full}\n")
	c := mustLoad(t, []string{"--config", file}, nil)
	if c.CatalogMode != agentsmcp.CatalogDiscovery || c.Source("catalog.mode") != SourceFile ||
		!slices.Equal(c.CatalogPinned, []string{"github__*", "search_tools"}) {
		t.Errorf("catalog from the file: %q %v (%s)", c.CatalogMode, c.CatalogPinned, c.Source("catalog.mode"))
	}
	if len(c.AuthKeys) != 1 || c.AuthKeys[0].CatalogMode != agentsmcp.CatalogFull {
		t.Errorf("the key's catalog_mode: %+v", c.AuthKeys)
	}
	c = mustLoad(t, []string{"--config", file}, map[string]string{"AGENTS_MCP_CATALOG_MODE": "full"})
	if c.CatalogMode != agentsmcp.CatalogFull || c.Source("catalog.mode") != "env:AGENTS_MCP_CATALOG_MODE" {
		t.Errorf("env over file: %q from %s", c.CatalogMode, c.Source("catalog.mode"))
	}
	if c := mustLoad(t, nil, nil); c.CatalogMode != agentsmcp.CatalogFull {
		t.Errorf("default catalog.mode %q, want full", c.CatalogMode)
	}
	for _, bad := range []struct{ yaml, setting string }{
		{"catalog:\n  mode: partial\n", "catalog.mode"},
		{"catalog:\n  pinned: [\"[\"]\n", "catalog.pinned"},
		{"auth:\n  api_keys:\n    - {name: bot, key: k-0123456789abcdef, scopes: [mcp], catalog_mode: some}\n", "catalog_mode"},
	} {
		_, err := Load([]string{"--config", writeYAML(t, bad.yaml)}, func(string) string { return "" })
		if err == nil || !strings.Contains(err.Error(), bad.setting) {
			t.Errorf("%q: %v, want an error naming %s", bad.yaml, err, bad.setting)
		}
	}
}
