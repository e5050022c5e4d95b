package config

import (
	"fmt"
	"net"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/agents-mcp/agents-mcp/internal/validate"
)

var (
	embedders = []string{"hash", "semantic", "openai", "ollama", "pinecone"}
	llmKinds  = []string{"auto", "sampling", "openai", "builtin"}
	logLevels = []string{"debug", "info", "warn", "error"}
)

// validate checks the effective settings. Messages name the setting and, when
// it was not a default, the layer that set it, so the user knows what to fix.
func (c *Config) validate() []error {
	var errs []error
	bad := func(name, format string, args ...any) {
		msg := fmt.Sprintf(format, args...)
		if src := c.Source(name); src != SourceDefault {
			msg += " (from " + string(src) + ")"
		}
		errs = append(errs, fieldError(name, "%s", msg))
	}
	oneOf := func(name, v string, allowed []string) {
		if !slices.Contains(allowed, v) {
			bad(name, "%q is not one of %s", v, strings.Join(allowed, ", "))
		}
	}

	if err := checkAddr(c.Addr); err != nil {
		bad("addr", "%v", err)
	}
	if strings.TrimSpace(c.DataDir) == "" {
		bad("data_dir", "must not be empty")
	}
	if c.PublicURL != "" {
		if u, err := url.Parse(c.PublicURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" ||
			strings.Trim(u.Path, "/") != "" || u.RawQuery != "" || u.User != nil {
			bad("public_url", "%q must be scheme://host[:port], such as https://agents.example.com", redactURL(c.PublicURL))
		}
	}
	if c.MongoURI != "" && !strings.HasPrefix(c.MongoURI, "mongodb://") && !strings.HasPrefix(c.MongoURI, "mongodb+srv://") {
		bad("mongodb.uri", "%q must start with mongodb:// or mongodb+srv://", redactMongoURI(c.MongoURI))
	}
	if strings.TrimSpace(c.MongoDatabase) == "" {
		bad("mongodb.database", "must not be empty")
	}
	oneOf("embedder", c.Embedder, embedders)
	if c.Embedder == "pinecone" && c.PineconeAPIKey == "" {
		bad("embedder", "pinecone requires pinecone.api_key (PINECONE_API_KEY)")
	}
	if c.EmbeddingsBaseURL != "" {
		if err := validate.HTTPURL(c.EmbeddingsBaseURL); err != nil {
			bad("embedder.base_url", "%q %v", redactURL(c.EmbeddingsBaseURL), err)
		}
	}
	oneOf("llm", c.LLM, llmKinds)
	if c.OpenAIBaseURL != "" {
		if err := validate.HTTPURL(c.OpenAIBaseURL); err != nil {
			bad("llm.base_url", "%q %v", redactURL(c.OpenAIBaseURL), err)
		}
	}
	if c.MaxBodyBytes <= 0 {
		bad("max_body_bytes", "must be positive, got %d", c.MaxBodyBytes)
	}
	if c.ShutdownTimeout < 0 {
		bad("shutdown_timeout", "must not be negative, got %s", c.ShutdownTimeout)
	}
	for i, o := range c.AllowedOrigins {
		if err := checkOrigin(o); err != nil {
			bad(fmt.Sprintf("allowed_origins[%d]", i), "%q %v", o, err)
		}
	}
	for i, h := range c.AllowedHosts {
		if strings.ContainsAny(h, "/ \t@") {
			bad(fmt.Sprintf("allowed_hosts[%d]", i), "%q must be host or host:port", h)
		}
	}
	oneOf("log_level", c.LogLevel, logLevels)
	errs = append(errs, c.validateAuth(bad)...)
	errs = append(errs, c.validateHTTPSources()...)
	c.validateTasks(bad)
	c.validateSessions(bad)
	c.validateEgress(bad)
	c.validateMemory(bad)
	c.validateQuotas(bad)
	c.validateLimits(bad)
	c.validateOpenAPI(bad)
	c.validateCatalog(bad)
	if c.UpstreamSyncInterval < MinUpstreamSyncInterval {
		bad("upstream_sync_interval", "must be at least %s, got %s", MinUpstreamSyncInterval, c.UpstreamSyncInterval)
	}

	seen := map[string]int{}
	for i := range c.Upstreams {
		u := &c.Upstreams[i]
		prefix := fmt.Sprintf("upstreams[%d]", i)
		errs = append(errs, validateUpstream(u, prefix)...)
		if j, dup := seen[u.Name]; dup && u.Name != "" {
			errs = append(errs, fieldError(prefix+".name", "%q is already used by upstreams[%d]", u.Name, j))
		} else {
			seen[u.Name] = i
		}
	}
	return errs
}

// checkAddr accepts host:port with a numeric port (0 picks a free one); the
// host may be empty to listen on every interface.
func checkAddr(addr string) error {
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		if ae, ok := err.(*net.AddrError); ok {
			return fmt.Errorf("%s in %q", strings.TrimSuffix(ae.Err, " in address"), addr)
		}
		return err
	}
	if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
		return fmt.Errorf("invalid port %q in %q", port, addr)
	}
	return nil
}

// checkOrigin accepts an Origin header value, scheme://host[:port] and nothing
// more because browsers never send a path, or "*", which the rebinding
// protection reads as "any origin".
func checkOrigin(o string) error {
	if o == "*" {
		return nil
	}
	u, err := url.Parse(o)
	if err != nil || u.Scheme == "" || u.Host == "" {
		return fmt.Errorf("must be scheme://host[:port]")
	}
	if u.Path != "" || u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return fmt.Errorf("must be scheme://host[:port] without path, query or user")
	}
	return nil
}
