package config

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/api/auth"
)

// Defaults of the authentication, rate-limit and audit settings.
const (
	DefaultRateLimit = auth.DefaultRateLimit // requests per second per principal
	DefaultRateBurst = auth.DefaultRateBurst
	// Refused requests per second per client address, with bursts.
	DefaultAuthFailureRate  = auth.DefaultFailureRate
	DefaultAuthFailureBurst = auth.DefaultFailureBurst
	DefaultAuditRetention   = 30 * 24 * time.Hour
	// DefaultAuditMaxEntries bounds the audit trail by size as well: about
	// 400 MB on SQLite (see docs/benchmarks.md), a few days of calls at
	// hundreds a second.
	DefaultAuditMaxEntries = 1_000_000
)

// Where the audit entries of tool calls that ran go (audit.calls).
const (
	AuditCallsDB  = "db"
	AuditCallsLog = "log"
)

// APIKey is one inbound API key of the config file's auth.api_keys.
type APIKey = auth.Key

// JWTConfig configures bearer JWTs (auth.jwt in the file).
type JWTConfig = auth.JWTConfig

// fileAuth is the `auth:` section.
type fileAuth struct {
	APIKeys []fileAPIKey `yaml:"api_keys"`
	JWT     *fileJWT     `yaml:"jwt"`
}

type fileAPIKey struct {
	Name      string   `yaml:"name"`
	Key       string   `yaml:"key"`        // ${VAR} is expanded
	KeySHA256 string   `yaml:"key_sha256"` // so that the file holds no secret
	Scopes    []string `yaml:"scopes"`
	Tools     []string `yaml:"tools"`
	RateLimit float64  `yaml:"rate_limit"`
	Burst     int      `yaml:"burst"`
	// CatalogMode is the key's own catalog mode ("full", "discovery").
	CatalogMode string `yaml:"catalog_mode"`
	// VirtualServers limits the key to these virtual servers.
	VirtualServers []string `yaml:"virtual_servers"`
	// CallQuotas bound the key's tool calls per window.
	CallQuotas []agentsmcp.CallQuota `yaml:"call_quotas"`
}

type fileJWT struct {
	JWKSURL              *string   `yaml:"jwks_url"`
	Issuer               *string   `yaml:"issuer"`
	Audience             *string   `yaml:"audience"`
	ScopesClaim          *string   `yaml:"scopes_claim"`
	ToolsClaim           *string   `yaml:"tools_claim"`
	CatalogModeClaim     *string   `yaml:"catalog_mode_claim"`
	VirtualServersClaim  *string   `yaml:"virtual_servers_claim"`
	Resource             *string   `yaml:"resource"`
	AuthorizationServers *[]string `yaml:"authorization_servers"`
}

type fileRateLimit struct {
	RequestsPerSecond     *float64 `yaml:"requests_per_second"`
	Burst                 *int     `yaml:"burst"`
	AuthFailuresPerSecond *float64 `yaml:"auth_failures_per_second"`
	AuthFailureBurst      *int     `yaml:"auth_failure_burst"`
}

type fileAudit struct {
	Retention  *string `yaml:"retention"`
	MaxEntries *int    `yaml:"max_entries"`
	Calls      *string `yaml:"calls"`
}

// applyFileAuth copies the auth, rate_limit and audit sections.
func (l *loader) applyFileAuth(f *fileConfig) {
	c := l.cfg
	if a := f.Auth; a != nil {
		if a.APIKeys != nil {
			c.setSource("auth.api_keys", SourceFile)
			for i, fk := range a.APIKeys {
				field := fmt.Sprintf("auth.api_keys[%d]", i)
				secret, err := expandEnv(fk.Key, l.getenv)
				if err != nil {
					l.errorf(field+".key", "%v", err)
				}
				k := APIKey{
					Name:      strings.TrimSpace(fk.Name),
					Secret:    secret,
					SHA256:    strings.TrimSpace(fk.KeySHA256),
					Scopes:    cleanList(fk.Scopes),
					Tools:     cleanList(fk.Tools),
					RateLimit: fk.RateLimit,
					Burst:     fk.Burst,
					// Checked with the key (auth.CheckKeys).
					CatalogMode: agentsmcp.CatalogMode(strings.ToLower(strings.TrimSpace(fk.CatalogMode))),
					// Patterns on virtual server names: /mcp/<name> only.
					VirtualServers: cleanList(fk.VirtualServers),
					// Checked with the key (auth.CheckKeys).
					CallQuotas: fk.CallQuotas,
				}
				if k.Name == "" {
					l.errorf(field+".name", "required: it names the key in logs and the audit trail")
				}
				// The scope list of the file is case-insensitive like the
				// other enumerations.
				for j := range k.Scopes {
					k.Scopes[j] = strings.ToLower(k.Scopes[j])
				}
				c.AuthKeys = append(c.AuthKeys, k)
			}
		}
		if j := a.JWT; j != nil {
			l.fileString("auth.jwt.jwks_url", j.JWKSURL, &c.JWT.JWKSURL)
			l.fileString("auth.jwt.issuer", j.Issuer, &c.JWT.Issuer)
			l.fileString("auth.jwt.audience", j.Audience, &c.JWT.Audience)
			l.fileString("auth.jwt.scopes_claim", j.ScopesClaim, &c.JWT.ScopesClaim)
			l.fileString("auth.jwt.tools_claim", j.ToolsClaim, &c.JWT.ToolsClaim)
			l.fileString("auth.jwt.catalog_mode_claim", j.CatalogModeClaim, &c.JWT.CatalogModeClaim)
			l.fileString("auth.jwt.virtual_servers_claim", j.VirtualServersClaim, &c.JWT.VirtualServersClaim)
			l.fileString("auth.jwt.resource", j.Resource, &c.JWT.Resource)
			l.fileList("auth.jwt.authorization_servers", j.AuthorizationServers, &c.JWT.AuthorizationServers)
		}
	}
	if r := f.RateLimit; r != nil {
		if r.RequestsPerSecond != nil {
			c.RateLimit = *r.RequestsPerSecond
			c.setSource("rate_limit.requests_per_second", SourceFile)
		}
		if r.Burst != nil {
			c.RateBurst = *r.Burst
			c.setSource("rate_limit.burst", SourceFile)
		}
		if r.AuthFailuresPerSecond != nil {
			c.AuthFailureRate = *r.AuthFailuresPerSecond
			c.setSource("rate_limit.auth_failures_per_second", SourceFile)
		}
		if r.AuthFailureBurst != nil {
			c.AuthFailureBurst = *r.AuthFailureBurst
			c.setSource("rate_limit.auth_failure_burst", SourceFile)
		}
	}
	if a := f.Audit; a != nil && a.Retention != nil {
		if d, err := time.ParseDuration(strings.TrimSpace(*a.Retention)); err != nil {
			l.errorf("audit.retention", "invalid duration %q", *a.Retention)
		} else {
			c.AuditRetention = d
			c.setSource("audit.retention", SourceFile)
		}
	}
	if a := f.Audit; a != nil {
		if a.MaxEntries != nil {
			c.AuditMaxEntries = *a.MaxEntries
			c.setSource("audit.max_entries", SourceFile)
		}
		l.fileString("audit.calls", a.Calls, &c.AuditCalls)
	}
}

// applyEnvAuth overrides the file with the authentication, rate-limit and
// audit variables.
func (l *loader) applyEnvAuth() {
	c := l.cfg
	l.envString("auth.jwt.jwks_url", "AGENTS_MCP_JWKS_URL", &c.JWT.JWKSURL)
	l.envString("auth.jwt.issuer", "AGENTS_MCP_JWT_ISSUER", &c.JWT.Issuer)
	l.envString("auth.jwt.audience", "AGENTS_MCP_JWT_AUDIENCE", &c.JWT.Audience)
	l.envString("auth.jwt.scopes_claim", "AGENTS_MCP_JWT_SCOPES_CLAIM", &c.JWT.ScopesClaim)
	l.envString("auth.jwt.tools_claim", "AGENTS_MCP_JWT_TOOLS_CLAIM", &c.JWT.ToolsClaim)
	l.envString("auth.jwt.catalog_mode_claim", "AGENTS_MCP_JWT_CATALOG_MODE_CLAIM", &c.JWT.CatalogModeClaim)
	l.envString("auth.jwt.virtual_servers_claim", "AGENTS_MCP_JWT_VIRTUAL_SERVERS_CLAIM", &c.JWT.VirtualServersClaim)
	l.envString("auth.jwt.resource", "AGENTS_MCP_JWT_RESOURCE", &c.JWT.Resource)
	l.envList("auth.jwt.authorization_servers", "AGENTS_MCP_JWT_AUTHORIZATION_SERVERS", &c.JWT.AuthorizationServers)
	l.envString("stdio.api_key", auth.StdioKeyEnv, &c.StdioAPIKey)
	l.envFloat("rate_limit.requests_per_second", "AGENTS_MCP_RATE_LIMIT", &c.RateLimit)
	l.envInt("rate_limit.burst", "AGENTS_MCP_RATE_BURST", &c.RateBurst)
	l.envFloat("rate_limit.auth_failures_per_second", "AGENTS_MCP_AUTH_FAILURE_RATE", &c.AuthFailureRate)
	l.envInt("rate_limit.auth_failure_burst", "AGENTS_MCP_AUTH_FAILURE_BURST", &c.AuthFailureBurst)
	l.envDuration("audit.retention", "AGENTS_MCP_AUDIT_RETENTION", &c.AuditRetention)
	l.envInt("audit.max_entries", "AGENTS_MCP_AUDIT_MAX_ENTRIES", &c.AuditMaxEntries)
	l.envString("audit.calls", "AGENTS_MCP_AUDIT_CALLS", &c.AuditCalls)
}

// allKeys is every inbound API key: those of api_keys (AGENTS_MCP_API_KEYS),
// each with every scope, then those of auth.api_keys.
func (c *Config) allKeys() []auth.Key {
	keys := make([]auth.Key, 0, len(c.APIKeys)+len(c.AuthKeys))
	for _, k := range c.APIKeys {
		keys = append(keys, auth.Key{Secret: k, Scopes: slices.Clone(agentsmcp.Scopes)})
	}
	for _, k := range c.AuthKeys {
		k.Scopes, k.Tools, k.VirtualServers = slices.Clone(k.Scopes), slices.Clone(k.Tools), slices.Clone(k.VirtualServers)
		keys = append(keys, k)
	}
	return keys
}

// keyLabel names entry i of allKeys after the setting it came from.
func (c *Config) keyLabel(i int) string {
	if i < len(c.APIKeys) {
		return fmt.Sprintf("api_keys[%d]", i)
	}
	return fmt.Sprintf("auth.api_keys[%d]", i-len(c.APIKeys))
}

// AuthConfigured reports whether any inbound credential is configured: an
// API key (api_keys or auth.api_keys) or JWT authentication. Without one
// every caller is anonymous, which is only safe on a loopback address.
func (c *Config) AuthConfigured() bool {
	return len(c.APIKeys) > 0 || len(c.AuthKeys) > 0 || c.JWT.Enabled()
}

// AuthConfig returns the settings of the inbound authenticator: every API
// key (those of AGENTS_MCP_API_KEYS with every scope) and the JWT settings.
// The caller adds Logger, OnFailure and, if it wants, HTTPClient.
func (c *Config) AuthConfig() auth.Config {
	jwt := c.JWT
	jwt.AuthorizationServers = slices.Clone(c.JWT.AuthorizationServers)
	failureRate := c.AuthFailureRate
	if failureRate == 0 {
		failureRate = -1 // auth's "disabled"; its zero is "the default"
	}
	return auth.Config{Keys: c.allKeys(), JWT: jwt, FailureRate: failureRate, FailureBurst: c.AuthFailureBurst}
}

// CheckExposure refuses a configuration that would serve every client
// anonymously on an address other machines may reach: a non-loopback
// address without credentials and without --insecure.
func (c *Config) CheckExposure() error {
	if c.IsLoopbackAddr() || c.AuthConfigured() || c.Insecure {
		return nil
	}
	return fmt.Errorf("refusing to serve on non-loopback address %s without credentials: set AGENTS_MCP_API_KEYS, "+
		"auth.api_keys or auth.jwt (AGENTS_MCP_JWKS_URL, …) in the config file, or pass --insecure to accept unauthenticated clients", c.Addr)
}

// validateAuth checks the authentication, rate-limit and audit settings;
// bad is validate's reporter.
func (c *Config) validateAuth(bad func(name, format string, args ...any)) []error {
	var errs []error
	for _, p := range auth.CheckKeys(c.allKeys(), c.keyLabel) {
		errs = append(errs, fieldError(p.Field, "%s", p.Message))
	}
	for _, p := range c.JWT.Problems() {
		name := "auth.jwt." + p.Field
		// The source of an indexed field is that of its list.
		listName, _, _ := strings.Cut(name, "[")
		msg := p.Message
		if src := c.Source(listName); src != SourceDefault {
			msg += " (from " + string(src) + ")"
		}
		errs = append(errs, fieldError(name, "%s", msg))
	}
	if c.RateLimit < 0 || math.IsNaN(c.RateLimit) || math.IsInf(c.RateLimit, 0) {
		bad("rate_limit.requests_per_second", "must be a number >= 0 (0 disables the limit), got %v", c.RateLimit)
	}
	if c.RateBurst < 1 {
		bad("rate_limit.burst", "must be at least 1, got %d", c.RateBurst)
	}
	if c.AuthFailureRate < 0 || math.IsNaN(c.AuthFailureRate) || math.IsInf(c.AuthFailureRate, 0) {
		bad("rate_limit.auth_failures_per_second", "must be a number >= 0 (0 disables the limit), got %v", c.AuthFailureRate)
	}
	if c.AuthFailureBurst < 1 {
		bad("rate_limit.auth_failure_burst", "must be at least 1, got %d", c.AuthFailureBurst)
	}
	if c.AuditRetention < 0 {
		bad("audit.retention", "must not be negative (0 keeps entries forever), got %s", c.AuditRetention)
	}
	if c.AuditMaxEntries < 0 {
		bad("audit.max_entries", "must not be negative (0 disables the bound), got %d", c.AuditMaxEntries)
	}
	if c.AuditCalls != AuditCallsDB && c.AuditCalls != AuditCallsLog {
		bad("audit.calls", "must be %q or %q, got %q", AuditCallsDB, AuditCallsLog, c.AuditCalls)
	}
	return errs
}

// describeAuth adds the authentication, rate-limit and audit settings to
// Describe: keys by name and principal ID only, the stdio key redacted.
func (c *Config) describeAuth(add func(name, value string), addSetting func(Setting)) {
	names := make([]string, len(c.AuthKeys))
	for i, k := range c.AuthKeys {
		names[i] = k.Name
	}
	add("auth.api_keys", strings.Join(names, ","))
	for i := range c.AuthKeys {
		addSetting(Setting{
			Name:   fmt.Sprintf("auth.api_keys[%d]", i),
			Value:  c.AuthKeys[i].String(),
			Source: c.Source("auth.api_keys"),
		})
	}
	add("auth.jwt.jwks_url", redactURL(c.JWT.JWKSURL))
	add("auth.jwt.issuer", c.JWT.Issuer)
	add("auth.jwt.audience", c.JWT.Audience)
	add("auth.jwt.scopes_claim", c.JWT.ScopesClaim)
	add("auth.jwt.tools_claim", c.JWT.ToolsClaim)
	add("auth.jwt.catalog_mode_claim", c.JWT.CatalogModeClaim)
	add("auth.jwt.virtual_servers_claim", c.JWT.VirtualServersClaim)
	add("auth.jwt.resource", c.JWT.Resource)
	add("auth.jwt.authorization_servers", strings.Join(c.JWT.AuthorizationServers, ","))
	add("stdio.api_key", redactSecret(c.StdioAPIKey))
	add("rate_limit.requests_per_second", strconv.FormatFloat(c.RateLimit, 'g', -1, 64))
	add("rate_limit.burst", strconv.Itoa(c.RateBurst))
	add("rate_limit.auth_failures_per_second", strconv.FormatFloat(c.AuthFailureRate, 'g', -1, 64))
	add("rate_limit.auth_failure_burst", strconv.Itoa(c.AuthFailureBurst))
	add("audit.retention", c.AuditRetention.String())
	add("audit.max_entries", strconv.Itoa(c.AuditMaxEntries))
	add("audit.calls", c.AuditCalls)
}
