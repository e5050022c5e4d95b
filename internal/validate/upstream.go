package validate

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/internal/redact"
	"github.com/agents-mcp/agents-mcp/internal/storedform"
	"golang.org/x/net/http/httpguts"
)

var (
	upstreamNameRE    = regexp.MustCompile(agentsmcp.UpstreamNamePattern)
	protocolVersionRE = regexp.MustCompile(`^[0-9]{4}-[0-9]{2}-[0-9]{2}$`)
)

func sortedStringKeys(m map[string]string) []string { return slices.Sorted(maps.Keys(m)) }

// UpstreamDefinition checks d's invariants; EINVALID names the first one broken.
func UpstreamDefinition(d *agentsmcp.UpstreamDefinition) error {
	switch {
	case d.Name == "":
		return agentsmcp.Errorf(agentsmcp.EINVALID, "upstream definition: name is required")
	case len(d.Name) > agentsmcp.MaxUpstreamNameBytes:
		return agentsmcp.Errorf(agentsmcp.EINVALID, "upstream definition: name is longer than %d bytes", agentsmcp.MaxUpstreamNameBytes)
	case d.Kind != "" && d.Kind != agentsmcp.UpstreamKindMCP && d.Kind != agentsmcp.UpstreamKindHTTP:
		return agentsmcp.Errorf(agentsmcp.EINVALID, "upstream definition %q: kind %q is not %s or %s", d.Name, storedform.TruncateUTF8(d.Kind, 32), agentsmcp.UpstreamKindMCP, agentsmcp.UpstreamKindHTTP)
	case len(d.Config) > maxConfigBytes(d):
		return agentsmcp.Errorf(agentsmcp.EINVALID, "upstream definition %q: config is larger than %d bytes", d.Name, maxConfigBytes(d))
	}
	var obj map[string]json.RawMessage
	if !utf8.Valid(d.Config) || json.Unmarshal(d.Config, &obj) != nil || obj == nil {
		return agentsmcp.Errorf(agentsmcp.EINVALID, "upstream definition %q: config must be a JSON object", d.Name)
	}
	return nil
}

func maxConfigBytes(d *agentsmcp.UpstreamDefinition) int {
	if d.Kind == agentsmcp.UpstreamKindHTTP {
		return agentsmcp.MaxHTTPSourceConfigBytes
	}
	return agentsmcp.MaxUpstreamConfigBytes
}

// UpstreamConfig checks one upstream on its own; uniqueness of names across
// upstreams is the pool's business. The error joins every [UpstreamConfigProblem].
func UpstreamConfig(c *agentsmcp.UpstreamConfig) error {
	var errs []error
	for _, p := range UpstreamConfigProblems(c) {
		errs = append(errs, p)
	}
	return errors.Join(errs...)
}

// UpstreamConfigProblems lists every invalid field of c, in field order. Zero limits are
// problems: call [UpstreamConfig.WithDefaults] first to accept the defaults.
func UpstreamConfigProblems(c *agentsmcp.UpstreamConfig) []UpstreamConfigProblem {
	var out []UpstreamConfigProblem
	bad := func(field, format string, args ...any) {
		out = append(out, UpstreamConfigProblem{Field: field, Message: fmt.Sprintf(format, args...)})
	}
	if !upstreamNameRE.MatchString(c.Name) {
		bad("name", "%q must match %s", c.Name, agentsmcp.UpstreamNamePattern)
	}
	switch c.Transport {
	case agentsmcp.UpstreamStreamable, agentsmcp.UpstreamSSE:
		if c.URL == "" {
			bad("url", "required for transport %s", c.Transport)
		} else if err := HTTPURL(c.URL); err != nil {
			bad("url", "%q %v", redact.URL(c.URL), err)
		}
		if c.Command != "" {
			bad("command", "only valid with transport stdio")
		}
		if len(c.Args) > 0 {
			bad("args", "only valid with transport stdio")
		}
		if len(c.Env) > 0 {
			bad("env", "only valid with transport stdio")
		}
		switch c.Auth {
		case "":
		case agentsmcp.UpstreamAuthOAuth:
			if c.Transport != agentsmcp.UpstreamStreamable {
				bad("auth", "oauth needs transport streamable")
			}
		default:
			bad("auth", "%q is not oauth", storedform.TruncateUTF8(c.Auth, 32))
		}
		for _, k := range sortedStringKeys(c.Headers) {
			if !isHeaderToken(k) {
				bad("headers", "%q is not a valid header name", storedform.TruncateUTF8(k, 64))
			} else if !httpguts.ValidHeaderFieldValue(c.Headers[k]) {
				// The value is a secret: only its name is quoted.
				bad("headers", "the value of %s contains a control character (CR, LF, NUL or another): refused, since it could inject headers", k)
			}
		}
	case agentsmcp.UpstreamStdio:
		if strings.TrimSpace(c.Command) == "" {
			bad("command", "required for transport stdio")
		}
		if c.URL != "" {
			bad("url", "not allowed with transport stdio")
		}
		if len(c.Headers) > 0 {
			bad("headers", "not allowed with transport stdio")
		}
		if c.Auth != "" {
			bad("auth", "not allowed with transport stdio")
		}
		for _, k := range sortedStringKeys(c.Env) {
			if k == "" || strings.ContainsAny(k, "=\x00") {
				bad("env", "%q is not a valid variable name", k)
			}
		}
	case "":
		bad("transport", "required: one of streamable, sse, stdio")
	default:
		bad("transport", "%q is not one of streamable, sse, stdio", c.Transport)
	}
	for i, t := range c.Tools.Allow {
		if strings.TrimSpace(t) == "" {
			bad(fmt.Sprintf("tools.allow[%d]", i), "empty tool name")
		}
	}
	for i, t := range c.Tools.Deny {
		if strings.TrimSpace(t) == "" {
			bad(fmt.Sprintf("tools.deny[%d]", i), "empty tool name")
		}
	}
	if c.Timeout <= 0 {
		bad("timeout", "must be positive, got %s", c.Timeout)
	}
	if c.ProtocolVersion != "" && !protocolVersionRE.MatchString(c.ProtocolVersion) {
		bad("protocol_version", "%q is not a YYYY-MM-DD protocol version", c.ProtocolVersion)
	}
	if c.MaxConcurrency <= 0 {
		bad("max_concurrency", "must be positive, got %d", c.MaxConcurrency)
	}
	if c.MaxBackoff <= 0 {
		bad("max_backoff", "must be positive, got %s", c.MaxBackoff)
	}
	return out
}

// isHeaderToken reports whether s is an RFC 9110 token, the syntax of header names.
func isHeaderToken(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
		case strings.ContainsRune("!#$%&'*+-.^_`|~", r):
		default:
			return false
		}
	}
	return true
}
