package config

import (
	"path"
	"strings"

	agentsmcp "github.com/agents-mcp/agents-mcp"
)

// DefaultCatalogMode lists the whole catalog, as before discovery mode
// existed: a client that lists tools sees every tool it may use.
const DefaultCatalogMode = agentsmcp.CatalogFull

// fileCatalog is the `catalog:` section: how tools/list shows the catalog
// by default, and the tools always listed in discovery mode.
type fileCatalog struct {
	Mode             *string   `yaml:"mode"`
	Pinned           *[]string `yaml:"pinned"`
	PublishUpstreams *[]string `yaml:"publish_upstreams"`
}

// applyFileCatalog copies the catalog section.
func (l *loader) applyFileCatalog(f *fileConfig) {
	c := f.Catalog
	if c == nil {
		return
	}
	if c.Mode != nil {
		l.cfg.CatalogMode = agentsmcp.CatalogMode(strings.ToLower(strings.TrimSpace(*c.Mode)))
		l.cfg.setSource("catalog.mode", SourceFile)
	}
	if c.Pinned != nil {
		l.cfg.CatalogPinned = cleanList(*c.Pinned)
		l.cfg.setSource("catalog.pinned", SourceFile)
	}
	if c.PublishUpstreams != nil {
		l.cfg.CatalogPublishUpstreams = cleanList(*c.PublishUpstreams)
		l.cfg.setSource("catalog.publish_upstreams", SourceFile)
	}
}

// applyEnvCatalog overrides the file with the catalog variables.
func (l *loader) applyEnvCatalog() {
	const env = "AGENTS_MCP_CATALOG_MODE"
	if v := l.env(env); v != "" {
		l.cfg.CatalogMode = agentsmcp.CatalogMode(strings.ToLower(v))
		l.cfg.setSource("catalog.mode", envSource(env))
	}
	l.envList("catalog.pinned", "AGENTS_MCP_CATALOG_PINNED", &l.cfg.CatalogPinned)
	l.envList("catalog.publish_upstreams", "AGENTS_MCP_CATALOG_PUBLISH_UPSTREAMS", &l.cfg.CatalogPublishUpstreams)
}

// validateCatalog checks the catalog settings; bad is validate's reporter.
func (c *Config) validateCatalog(bad func(name, format string, args ...any)) {
	if m, err := agentsmcp.ParseCatalogMode(string(c.CatalogMode)); err != nil || m == "" {
		bad("catalog.mode", "%q is not one of %s, %s", c.CatalogMode, agentsmcp.CatalogFull, agentsmcp.CatalogDiscovery)
	}
	for _, p := range c.CatalogPinned {
		if _, err := path.Match(p, ""); err != nil {
			bad("catalog.pinned", "%q is not a valid pattern (path.Match syntax)", p)
		}
	}
	for _, p := range c.CatalogPublishUpstreams {
		if _, err := path.Match(p, ""); err != nil {
			bad("catalog.publish_upstreams", "%q is not a valid pattern (path.Match syntax)", p)
		}
	}
}

// describeCatalog adds the catalog settings to Describe.
func (c *Config) describeCatalog(add func(name, value string)) {
	add("catalog.mode", string(c.CatalogMode))
	add("catalog.pinned", strings.Join(c.CatalogPinned, ","))
	add("catalog.publish_upstreams", strings.Join(c.CatalogPublishUpstreams, ","))
}
