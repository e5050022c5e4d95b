package config

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agents-mcp/agents-mcp/api/auth"
)

func hashHex(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

const authYAML = `
auth:
  api_keys:
    - name: ci-bot
      key: ${CI_BOT_KEY}
      scopes: [mcp]
      tools: ["everything__*", "search_tools"]
      rate_limit: 5
    - name: ops
      key_sha256: %s
      scopes: [Admin:Read, admin:write]
      burst: 3
  jwt:
    jwks_url: https://issuer.example/.well-known/jwks.json
    issuer: https://issuer.example/
    audience: agents-mcp
    scopes_claim: scp
    tools_claim: agents_mcp_tools
    resource: https://mcp.example.com/mcp
    authorization_servers: [https://issuer.example/]
rate_limit: { requests_per_second: 20, burst: 40 }
audit: { retention: 48h }
`

func TestAuthFromFile(t *testing.T) {
	file := writeYAML(t, fmt.Sprintf(authYAML, hashHex("ops-secret")))
	c := mustLoad(t, []string{"--config", file}, map[string]string{"CI_BOT_KEY": "ci-secret"})

	if len(c.AuthKeys) != 2 {
		t.Fatalf("AuthKeys = %v", c.AuthKeys)
	}
	ci, ops := c.AuthKeys[0], c.AuthKeys[1]
	if ci.Name != "ci-bot" || ci.Secret != "ci-secret" || !slices.Equal(ci.Scopes, []string{"mcp"}) ||
		!slices.Equal(ci.Tools, []string{"everything__*", "search_tools"}) || ci.RateLimit != 5 || ci.Burst != 0 {
		t.Errorf("ci-bot = %#v (secret %q)", ci, ci.Secret)
	}
	if ops.Name != "ops" || ops.Secret != "" || ops.SHA256 != hashHex("ops-secret") || !slices.Equal(ops.Scopes, []string{"admin:read", "admin:write"}) || ops.Burst != 3 {
		t.Errorf("ops = %#v", ops)
	}
	wantJWT := JWTConfig{
		JWKSURL: "https://issuer.example/.well-known/jwks.json", Issuer: "https://issuer.example/", Audience: "agents-mcp",
		ScopesClaim: "scp", ToolsClaim: "agents_mcp_tools", Resource: "https://mcp.example.com/mcp", AuthorizationServers: []string{"https://issuer.example/"},
	}
	if fmt.Sprint(c.JWT) != fmt.Sprint(wantJWT) {
		t.Errorf("JWT = %+v\nwant  %+v", c.JWT, wantJWT)
	}
	if c.RateLimit != 20 || c.RateBurst != 40 || c.AuditRetention != 48*time.Hour {
		t.Errorf("rate %v burst %d retention %v", c.RateLimit, c.RateBurst, c.AuditRetention)
	}
	for _, name := range []string{"auth.api_keys", "auth.jwt.jwks_url", "auth.jwt.issuer", "auth.jwt.audience", "auth.jwt.scopes_claim", "auth.jwt.tools_claim",
		"auth.jwt.resource", "auth.jwt.authorization_servers", "rate_limit.requests_per_second", "rate_limit.burst", "audit.retention"} {
		if got := c.Source(name); got != SourceFile {
			t.Errorf("source of %s = %q, want file", name, got)
		}
	}
	if !c.AuthConfigured() {
		t.Error("AuthConfigured false with keys and JWT")
	}

	// The loaded settings build a working authenticator.
	a, err := auth.New(c.AuthConfig())
	if err != nil {
		t.Fatal(err)
	}
	for key, wantName := range map[string]string{"ci-secret": "ci-bot", "ops-secret": "ops"} {
		p, _, err := a.Verify(t.Context(), key)
		if err != nil || p.Name != wantName {
			t.Errorf("Verify(%s key) = %+v, %v", wantName, p, err)
		}
	}
	jwt := c.AuthConfig().JWT
	if md, url := a.Metadata(), jwt.ResourceMetadataURL(); md == nil || url != "https://mcp.example.com/.well-known/oauth-protected-resource" {
		t.Errorf("JWT metadata %+v at %q", md, url)
	}
}

// TestAuthEnvNames pins the environment variables of the new settings and
// their precedence over the file.
func TestAuthEnvNames(t *testing.T) {
	file := writeYAML(t, fmt.Sprintf(authYAML, hashHex("ops-secret")))
	tests := []struct {
		setting, env, val string
		get               func(*Config) string
		want              string
	}{
		{"auth.jwt.jwks_url", "AGENTS_MCP_JWKS_URL", "https://other.example/jwks", func(c *Config) string { return c.JWT.JWKSURL }, ""},
		{"auth.jwt.issuer", "AGENTS_MCP_JWT_ISSUER", "https://other.example/", func(c *Config) string { return c.JWT.Issuer }, ""},
		{"auth.jwt.audience", "AGENTS_MCP_JWT_AUDIENCE", "other", func(c *Config) string { return c.JWT.Audience }, ""},
		{"auth.jwt.scopes_claim", "AGENTS_MCP_JWT_SCOPES_CLAIM", "permissions", func(c *Config) string { return c.JWT.ScopesClaim }, ""},
		{"auth.jwt.tools_claim", "AGENTS_MCP_JWT_TOOLS_CLAIM", "allowed_tools", func(c *Config) string { return c.JWT.ToolsClaim }, ""},
		{"auth.jwt.resource", "AGENTS_MCP_JWT_RESOURCE", "https://m2.example/mcp", func(c *Config) string { return c.JWT.Resource }, ""},
		{"auth.jwt.authorization_servers", "AGENTS_MCP_JWT_AUTHORIZATION_SERVERS", "https://a.example/, https://b.example/",
			func(c *Config) string { return strings.Join(c.JWT.AuthorizationServers, " ") }, "https://a.example/ https://b.example/"},
		{"rate_limit.requests_per_second", "AGENTS_MCP_RATE_LIMIT", "0.5", func(c *Config) string { return fmt.Sprint(c.RateLimit) }, ""},
		{"rate_limit.burst", "AGENTS_MCP_RATE_BURST", "7", func(c *Config) string { return fmt.Sprint(c.RateBurst) }, ""},
		{"audit.retention", "AGENTS_MCP_AUDIT_RETENTION", "2h0m0s", func(c *Config) string { return c.AuditRetention.String() }, ""},
		{"audit.max_entries", "AGENTS_MCP_AUDIT_MAX_ENTRIES", "5000", func(c *Config) string { return fmt.Sprint(c.AuditMaxEntries) }, ""},
		{"audit.calls", "AGENTS_MCP_AUDIT_CALLS", "log", func(c *Config) string { return c.AuditCalls }, ""},
		{"stdio.api_key", "AGENTS_MCP_API_KEY", "stdio-secret", func(c *Config) string { return c.StdioAPIKey }, ""},
	}
	for _, tt := range tests {
		t.Run(tt.setting, func(t *testing.T) {
			c := mustLoad(t, []string{"--config", file}, map[string]string{"CI_BOT_KEY": "ci-secret", tt.env: tt.val})
			want := tt.want
			if want == "" {
				want = tt.val
			}
			if got := tt.get(c); got != want {
				t.Errorf("%s=%q: got %q, want %q", tt.env, tt.val, got, want)
			}
			if got := c.Source(tt.setting); got != Source("env:"+tt.env) {
				t.Errorf("source of %s = %q", tt.setting, got)
			}
		})
	}
	// The JWT settings alone, from the environment, enable JWT.
	c := mustLoad(t, nil, map[string]string{
		"AGENTS_MCP_JWKS_URL": "https://i.example/jwks", "AGENTS_MCP_JWT_ISSUER": "https://i.example/",
		"AGENTS_MCP_JWT_AUDIENCE": "agents-mcp", "AGENTS_MCP_JWT_RESOURCE": "https://m.example/mcp",
	})
	if !c.AuthConfigured() || !c.JWT.Enabled() || c.JWT.ScopesClaim != "scope" || c.JWT.ToolsClaim != "" {
		t.Errorf("JWT from env: configured %v, %+v", c.AuthConfigured(), c.JWT)
	}
}

func TestAuthDefaults(t *testing.T) {
	c := mustLoad(t, nil, nil)
	if c.RateLimit != 50 || c.RateBurst != 100 || c.AuditRetention != 720*time.Hour || c.JWT.ScopesClaim != "scope" || c.JWT.ToolsClaim != "" {
		t.Errorf("defaults: rate %v burst %d retention %v scopes claim %q tools claim %q", c.RateLimit, c.RateBurst, c.AuditRetention, c.JWT.ScopesClaim, c.JWT.ToolsClaim)
	}
	if c.AuthConfigured() || c.JWT.Enabled() || len(c.AuthKeys) != 0 || c.StdioAPIKey != "" {
		t.Errorf("auth configured by default: %v", c)
	}
	// Zero is a valid choice for both: no rate limit, keep audit forever.
	c = mustLoad(t, nil, map[string]string{"AGENTS_MCP_RATE_LIMIT": "0", "AGENTS_MCP_AUDIT_RETENTION": "0s"})
	if c.RateLimit != 0 || c.AuditRetention != 0 {
		t.Errorf("zeros: rate %v retention %v", c.RateLimit, c.AuditRetention)
	}
}

func TestAuthValidation(t *testing.T) {
	okKey := "- {name: a, key: k1, scopes: [mcp]}\n"
	jwtOK := "  jwt: {jwks_url: 'https://i/jwks', issuer: 'https://i/', audience: a, resource: 'https://m/mcp'}\n"
	tests := []struct {
		name string
		yaml string
		env  map[string]string
		want string
	}{
		{"bad scope", "auth:\n  api_keys:\n  - {name: a, key: k1, scopes: [mcp, admin]}", nil,
			`config: auth.api_keys[0].scopes[1]: "admin" is not one of mcp, admin:read, admin:write`},
		{"no scopes", "auth:\n  api_keys:\n  - {name: a, key: k1}", nil, `config: auth.api_keys[0].scopes: required`},
		{"empty key", "auth:\n  api_keys:\n  - {name: a, key: '', scopes: [mcp]}", nil, `config: auth.api_keys[0].key: required: the key or its SHA-256 (key_sha256)`},
		{"unset variable", "auth:\n  api_keys:\n  - {name: a, key: '${NOPE}', scopes: [mcp]}", nil, `config: auth.api_keys[0].key: environment variable NOPE is not set`},
		{"key and hash", "auth:\n  api_keys:\n  - {name: a, key: k, key_sha256: " + hashHex("k") + ", scopes: [mcp]}", nil, `config: auth.api_keys[0].key: set either`},
		{"bad hash", "auth:\n  api_keys:\n  - {name: a, key_sha256: xyz, scopes: [mcp]}", nil, `config: auth.api_keys[0].key_sha256: must be 64 hex digits`},
		{"no name", "auth:\n  api_keys:\n  - {key: k1, scopes: [mcp]}", nil, `config: auth.api_keys[0].name: required`},
		{"duplicate name", "auth:\n  api_keys:\n  " + okKey + "  - {name: a, key: k2, scopes: [mcp]}", nil,
			`config: auth.api_keys[1].name: "a" is already used by auth.api_keys[0]`},
		{"duplicate key", "auth:\n  api_keys:\n  " + okKey + "  - {name: b, key: k1, scopes: [mcp]}", nil,
			`config: auth.api_keys[1].key: the same key as auth.api_keys[0]`},
		{"duplicate key across env and file", "auth:\n  api_keys:\n  " + okKey, map[string]string{"AGENTS_MCP_API_KEYS": "k0,k1"},
			`config: auth.api_keys[0].key: the same key as api_keys[1]`},
		{"duplicate env keys", "", map[string]string{"AGENTS_MCP_API_KEYS": "k1,k1"}, `config: api_keys[1].key: the same key as api_keys[0]`},
		{"bad pattern", "auth:\n  api_keys:\n  - {name: a, key: k1, scopes: [mcp], tools: ['x__[']}", nil,
			`config: auth.api_keys[0].tools[0]: "x__[" is not a valid pattern`},
		{"negative key rate", "auth:\n  api_keys:\n  - {name: a, key: k1, scopes: [mcp], rate_limit: -1}", nil, `config: auth.api_keys[0].rate_limit: must not be negative`},
		{"unknown key field", "auth:\n  api_keys:\n  - {name: a, key: k1, scopes: [mcp], scope: [mcp]}", nil, `unknown key "scope" (in auth.api_keys entry)`},
		{"unknown jwt field", "auth:\n  jwt: {jwks: x}", nil, `unknown key "jwks" (in auth.jwt)`},
		{"partial jwt", "auth:\n  jwt: {issuer: 'https://i/'}", nil, `config: auth.jwt.jwks_url: required when JWT authentication is configured`},
		{"jwt from env names its source", "", map[string]string{"AGENTS_MCP_JWKS_URL": "ftp://x"},
			`config: auth.jwt.jwks_url: "ftp://x" must be an absolute http or https URL (from env:AGENTS_MCP_JWKS_URL)`},
		{"bad authorization server", "auth:\n" + strings.Replace(jwtOK, "}", ", authorization_servers: [nope]}", 1), nil,
			`config: auth.jwt.authorization_servers[0]: "nope" must be an absolute http or https URL (from file)`},
		{"tools claim with spaces", "auth:\n" + strings.Replace(jwtOK, "}", ", tools_claim: ' tools'}", 1), nil,
			`config: auth.jwt.tools_claim: " tools" must not have surrounding spaces (from file)`},
		{"tools claim is the default scopes claim", "auth:\n" + strings.Replace(jwtOK, "}", ", tools_claim: scope}", 1), nil,
			`config: auth.jwt.tools_claim: "scope" is already the scopes claim; name a different claim (from file)`},
		{"tools claim is the scopes claim", "auth:\n" + strings.Replace(jwtOK, "}", ", scopes_claim: scp}", 1), map[string]string{"AGENTS_MCP_JWT_TOOLS_CLAIM": "scp"},
			`config: auth.jwt.tools_claim: "scp" is already the scopes claim; name a different claim (from env:AGENTS_MCP_JWT_TOOLS_CLAIM)`},
		{"rate not a number", "", map[string]string{"AGENTS_MCP_RATE_LIMIT": "fast"}, `config: AGENTS_MCP_RATE_LIMIT: invalid number "fast"`},
		{"negative rate", "rate_limit: {requests_per_second: -1}", nil, `config: rate_limit.requests_per_second: must be a number >= 0 (0 disables the limit), got -1 (from file)`},
		{"infinite rate", "", map[string]string{"AGENTS_MCP_RATE_LIMIT": "+Inf"}, `config: rate_limit.requests_per_second: must be a number >= 0`},
		{"zero burst", "", map[string]string{"AGENTS_MCP_RATE_BURST": "0"}, `config: rate_limit.burst: must be at least 1, got 0 (from env:AGENTS_MCP_RATE_BURST)`},
		{"burst not a number", "", map[string]string{"AGENTS_MCP_RATE_BURST": "1.5"}, `config: AGENTS_MCP_RATE_BURST: invalid integer "1.5"`},
		{"bad retention", "audit: {retention: 30d}", nil, `config: audit.retention: invalid duration "30d"`},
		{"negative retention", "", map[string]string{"AGENTS_MCP_AUDIT_RETENTION": "-1h"}, `config: audit.retention: must not be negative`},
		{"negative size bound", "audit: {max_entries: -1}", nil, `config: audit.max_entries: must not be negative (0 disables the bound), got -1 (from file)`},
		{"size bound not a number", "", map[string]string{"AGENTS_MCP_AUDIT_MAX_ENTRIES": "1e6"}, `config: AGENTS_MCP_AUDIT_MAX_ENTRIES: invalid integer "1e6"`},
		{"calls elsewhere", "", map[string]string{"AGENTS_MCP_AUDIT_CALLS": "otlp"}, `config: audit.calls: must be "db" or "log", got "otlp" (from env:AGENTS_MCP_AUDIT_CALLS)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var args []string
			if tt.yaml != "" {
				args = []string{"--config", writeYAML(t, tt.yaml+"\n")}
			}
			c, err := load(args, envOf(tt.env), io.Discard)
			if err == nil {
				t.Fatalf("no error; config: %v", c)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error:\n%v\nwant it to contain:\n%s", err, tt.want)
			}
			for _, secret := range []string{"k1", "k2"} {
				if strings.Contains(err.Error(), "key "+secret) || strings.Contains(err.Error(), `"`+secret+`"`) {
					t.Errorf("error shows key %q: %v", secret, err)
				}
			}
		})
	}
}

func TestAuthRedaction(t *testing.T) {
	file := writeYAML(t, fmt.Sprintf(authYAML, hashHex("ops-secret")))
	env := map[string]string{"CI_BOT_KEY": "ci-SECRET-value", "AGENTS_MCP_API_KEY": "stdio-SECRET-value", "AGENTS_MCP_API_KEYS": "env-SECRET-value"}
	c := mustLoad(t, []string{"--config", file}, env)
	var logged bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&logged, nil))
	c.LogSettings(t.Context(), logger)
	logger.Info("whole", "config", c, "key", c.AuthKeys[0])
	outputs := map[string]string{
		"LogSettings": logged.String(),
		"%v":          fmt.Sprintf("%v", c),
		"%+v":         fmt.Sprintf("%+v", *c),
		"%#v":         fmt.Sprintf("%#v", c),
		"keys":        fmt.Sprintf("%v %+v %#v", c.AuthKeys, c.AuthKeys[0], c.AuthKeys[1]),
	}
	for name, out := range outputs {
		for _, s := range []string{"ci-SECRET-value", "stdio-SECRET-value", "env-SECRET-value", hashHex("ops-secret")} {
			if strings.Contains(out, s) {
				t.Errorf("%s output contains secret %q:\n%s", name, s, out)
			}
		}
	}
	got := map[string]Setting{}
	for _, s := range c.Describe() {
		got[s.Name] = s
	}
	want := map[string]string{
		"api_keys":                       "[redacted] (1 key)",
		"auth.api_keys":                  "ci-bot,ops",
		"auth.api_keys[0]":               "name=ci-bot id=key:" + hashHex("ci-SECRET-value")[:12] + " scopes=mcp tools=everything__*,search_tools rate_limit=5",
		"auth.api_keys[1]":               "name=ops id=key:" + hashHex("ops-secret")[:12] + " scopes=admin:read,admin:write burst=3",
		"auth.jwt.issuer":                "https://issuer.example/",
		"auth.jwt.scopes_claim":          "scp",
		"auth.jwt.tools_claim":           "agents_mcp_tools",
		"stdio.api_key":                  "[redacted]",
		"rate_limit.requests_per_second": "20",
		"rate_limit.burst":               "40",
		"audit.retention":                "48h0m0s",
	}
	for name, w := range want {
		if got[name].Value != w {
			t.Errorf("%s = %q, want %q", name, got[name].Value, w)
		}
	}
	if got["auth.api_keys[1]"].Source != SourceFile || got["stdio.api_key"].Source != "env:AGENTS_MCP_API_KEY" {
		t.Errorf("sources: %q %q", got["auth.api_keys[1]"].Source, got["stdio.api_key"].Source)
	}
}

func TestCheckExposure(t *testing.T) {
	keyFile := writeYAML(t, "auth:\n  api_keys:\n  - {name: a, key: k1, scopes: [mcp]}\n")
	jwtEnv := map[string]string{"AGENTS_MCP_JWKS_URL": "https://i/jwks", "AGENTS_MCP_JWT_ISSUER": "https://i/", "AGENTS_MCP_JWT_AUDIENCE": "a", "AGENTS_MCP_JWT_RESOURCE": "https://m/mcp"}
	tests := []struct {
		name       string
		args       []string
		env        map[string]string
		configured bool
		refused    bool
	}{
		{"loopback without auth", nil, nil, false, false},
		{"public without auth", []string{"--addr", "0.0.0.0:8080"}, nil, false, true},
		{"public, insecure", []string{"--addr", "0.0.0.0:8080", "--insecure"}, nil, false, false},
		{"public with env keys", []string{"--addr", ":8080"}, map[string]string{"AGENTS_MCP_API_KEYS": "k"}, true, false},
		{"public with file keys", []string{"--addr", ":8080", "--config", keyFile}, nil, true, false},
		{"public with JWT", []string{"--addr", ":8080"}, jwtEnv, true, false},
		{"stdio key alone is no server credential", []string{"--addr", ":8080"}, map[string]string{"AGENTS_MCP_API_KEY": "k"}, false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := mustLoad(t, tt.args, tt.env)
			if c.AuthConfigured() != tt.configured {
				t.Errorf("AuthConfigured = %v, want %v", c.AuthConfigured(), tt.configured)
			}
			err := c.CheckExposure()
			if (err != nil) != tt.refused {
				t.Fatalf("CheckExposure = %v, want refused %v", err, tt.refused)
			}
			if err != nil && (!strings.Contains(err.Error(), "--insecure") || !strings.Contains(err.Error(), "AGENTS_MCP_API_KEYS")) {
				t.Errorf("error does not say how to fix it: %v", err)
			}
		})
	}
}

// TestAuditFileSettings reads the audit section's size bound and call
// destination from the file, and their defaults without it.
func TestAuditFileSettings(t *testing.T) {
	c := mustLoad(t, nil, nil)
	if c.AuditMaxEntries != DefaultAuditMaxEntries || c.AuditCalls != AuditCallsDB {
		t.Errorf("defaults: max entries %d, calls %q", c.AuditMaxEntries, c.AuditCalls)
	}
	c = mustLoad(t, []string{"--config", writeYAML(t, "audit: {max_entries: 0, calls: log}\n")}, nil)
	if c.AuditMaxEntries != 0 || c.AuditCalls != AuditCallsLog || c.Source("audit.max_entries") != SourceFile || c.Source("audit.calls") != SourceFile {
		t.Errorf("from the file: max entries %d (%s), calls %q (%s)", c.AuditMaxEntries, c.Source("audit.max_entries"), c.AuditCalls, c.Source("audit.calls"))
	}
}
