package config

import (
	"strconv"
	"time"

	"github.com/agents-mcp/agents-mcp/httptools"
)

// MinOpenAPILoadTimeout leaves a document fetched by URL the time to
// arrive at all.
const MinOpenAPILoadTimeout = time.Second

// fileOpenAPI is the `openapi:` section: the budget of loading each
// OpenAPI document of the http_tools sources (httptools.Budget).
type fileOpenAPI struct {
	MaxSchemaNodes *int    `yaml:"max_schema_nodes"`
	LoadTimeout    *string `yaml:"load_timeout"`
}

// applyFileOpenAPI copies the openapi section.
func (l *loader) applyFileOpenAPI(f *fileConfig) {
	o := f.OpenAPI
	if o == nil {
		return
	}
	if o.MaxSchemaNodes != nil {
		l.cfg.OpenAPIBudget.MaxSchemaNodes = *o.MaxSchemaNodes
		l.cfg.setSource("openapi.max_schema_nodes", SourceFile)
	}
	l.fileDuration("openapi.load_timeout", o.LoadTimeout, &l.cfg.OpenAPIBudget.Timeout)
}

// applyEnvOpenAPI overrides the file with the openapi variables.
func (l *loader) applyEnvOpenAPI() {
	l.envInt("openapi.max_schema_nodes", "AGENTS_MCP_OPENAPI_MAX_SCHEMA_NODES", &l.cfg.OpenAPIBudget.MaxSchemaNodes)
	l.envDuration("openapi.load_timeout", "AGENTS_MCP_OPENAPI_LOAD_TIMEOUT", &l.cfg.OpenAPIBudget.Timeout)
}

// validateOpenAPI checks the budget; bad is validate's reporter.
func (c *Config) validateOpenAPI(bad func(name, format string, args ...any)) {
	if c.OpenAPIBudget.MaxSchemaNodes < 1 {
		bad("openapi.max_schema_nodes", "must be at least 1, got %d", c.OpenAPIBudget.MaxSchemaNodes)
	}
	if c.OpenAPIBudget.Timeout < MinOpenAPILoadTimeout {
		bad("openapi.load_timeout", "must be at least %s, got %s", MinOpenAPILoadTimeout, c.OpenAPIBudget.Timeout)
	}
}

// describeOpenAPI adds the budget to Describe.
func (c *Config) describeOpenAPI(add func(name, value string)) {
	add("openapi.max_schema_nodes", strconv.Itoa(c.OpenAPIBudget.MaxSchemaNodes))
	add("openapi.load_timeout", c.OpenAPIBudget.Timeout.String())
}

// defaultOpenAPIBudget is the budget nobody configured.
func defaultOpenAPIBudget() httptools.Budget {
	return httptools.Budget{MaxSchemaNodes: httptools.DefaultMaxSchemaNodes, Timeout: httptools.DefaultLoadTimeout}
}
