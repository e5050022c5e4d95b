package config

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"strings"

	"github.com/agents-mcp/agents-mcp/internal/redact"
)

// Redaction markers. They are fixed strings, never derived from the secret,
// so that not even the length of a secret leaks.
const redacted = redact.Marker

// Setting is one effective setting as shown to operators: Value is already
// redacted and safe to log.
type Setting struct {
	Name   string // e.g. "addr", "mongodb.uri", "upstreams[0]"
	Value  string
	Source Source
}

// Attrs returns the setting as name, value and source attributes, the shape of
// the startup log line `setting name=addr value=127.0.0.1:8080 source=flag:--addr`.
func (s Setting) Attrs() []slog.Attr {
	return []slog.Attr{
		slog.String("name", s.Name),
		slog.String("value", s.Value),
		slog.String("source", string(s.Source)),
	}
}

// Describe returns every effective setting, in a stable order, with its
// source and secrets redacted: API keys (only their count, or for
// auth.api_keys their names, principal IDs and grants, are shown), the
// stdio key, the
// MongoDB password, credentials in URLs and query parameters that look like
// credentials, upstream header and env values, and http_tools header values. Upstream args are shown;
// secrets for stdio upstreams belong in env.
func (c *Config) Describe() []Setting {
	var out []Setting
	add := func(name, value string) {
		out = append(out, Setting{Name: name, Value: value, Source: c.Source(name)})
	}
	add("addr", c.Addr)
	add("config", c.ConfigFile)
	add("data_dir", c.DataDir)
	add("public_url", c.PublicURL)
	add("mongodb.uri", redactMongoURI(c.MongoURI))
	add("mongodb.database", c.MongoDatabase)
	add("pinecone.api_key", redactSecret(c.PineconeAPIKey))
	add("pinecone.index", c.PineconeIndex)
	add("pinecone.host", redactURL(c.PineconeHost))
	add("pinecone.namespace", c.PineconeNamespace)
	add("embedder", c.Embedder)
	add("embedder.base_url", redactURL(c.EmbeddingsBaseURL))
	add("embedder.model", c.EmbeddingsModel)
	add("embedder.api_key", redactSecret(c.EmbeddingsAPIKey))
	add("llm", c.LLM)
	add("llm.base_url", redactURL(c.OpenAIBaseURL))
	add("llm.api_key", redactSecret(c.OpenAIAPIKey))
	add("llm.model", c.LLMModel)
	add("api_keys", redactKeys(len(c.APIKeys)))
	add("stateless", strconv.FormatBool(c.Stateless))
	add("max_body_bytes", strconv.FormatInt(c.MaxBodyBytes, 10))
	add("shutdown_timeout", c.ShutdownTimeout.String())
	add("allowed_origins", strings.Join(c.AllowedOrigins, ","))
	add("allowed_hosts", strings.Join(c.AllowedHosts, ","))
	add("log_level", c.LogLevel)
	add("insecure", strconv.FormatBool(c.Insecure))
	add("conformance_fixtures", strconv.FormatBool(c.ConformanceFixtures))
	c.describeAuth(add, func(s Setting) { out = append(out, s) })
	c.describeTasks(add)
	c.describeSessions(add)
	add("egress.allow", strings.Join(c.Egress.Allow, ","))
	add("egress.deny", strings.Join(c.Egress.Deny, ","))
	c.describeMemory(add)
	c.describeQuotas(add)
	c.describeLimits(add)
	c.describeOpenAPI(add)
	c.describeCatalog(add)
	add("upstream_sync_interval", c.UpstreamSyncInterval.String())
	c.describeVirtualServers(add)
	names := make([]string, len(c.Upstreams))
	for i, u := range c.Upstreams {
		names[i] = u.Name
	}
	add("upstreams", strings.Join(names, ","))
	for i := range c.Upstreams {
		out = append(out, Setting{
			Name:   fmt.Sprintf("upstreams[%d]", i),
			Value:  c.Upstreams[i].String(),
			Source: c.Source("upstreams"),
		})
	}
	names = make([]string, len(c.HTTPTools))
	for i, s := range c.HTTPTools {
		names[i] = s.Name
	}
	add("http_tools", strings.Join(names, ","))
	for i := range c.HTTPTools {
		out = append(out, Setting{
			Name:   fmt.Sprintf("http_tools[%d]", i),
			Value:  describeHTTPSource(c.HTTPTools[i]),
			Source: c.Source("http_tools"),
		})
	}
	return out
}

// LogSettings logs one "setting" line per effective setting at Info level,
// the startup record of where each value came from.
func (c *Config) LogSettings(ctx context.Context, logger *slog.Logger) {
	for _, s := range c.Describe() {
		logger.LogAttrs(ctx, slog.LevelInfo, "setting", s.Attrs()...)
	}
}

// String describes the configuration with secrets redacted, so that an
// accidental fmt.Print or %v of a Config does not leak them.
func (c Config) String() string {
	var b strings.Builder
	for i, s := range c.Describe() {
		if i > 0 {
			b.WriteString("; ")
		}
		fmt.Fprintf(&b, "%s=%s (%s)", s.Name, s.Value, s.Source)
	}
	return b.String()
}

// GoString makes %#v as safe as %v.
func (c Config) GoString() string { return "config.Config{" + c.String() + "}" }

// LogValue makes slog.Any("config", cfg) log the redacted settings.
func (c Config) LogValue() slog.Value {
	settings := c.Describe()
	attrs := make([]slog.Attr, len(settings))
	for i, s := range settings {
		attrs[i] = slog.String(s.Name, s.Value)
	}
	return slog.GroupValue(attrs...)
}

func redactSecret(s string) string {
	if s == "" {
		return ""
	}
	return redacted
}

func redactKeys(n int) string {
	switch n {
	case 0:
		return ""
	case 1:
		return redacted + " (1 key)"
	}
	return fmt.Sprintf("%s (%d keys)", redacted, n)
}

// redactMongoURI keeps what helps diagnose a connection (user, hosts,
// options) and hides the password.
func redactMongoURI(s string) string { return redact.ConnectionString(s) }

func redactURL(s string) string { return redact.URL(s) }
