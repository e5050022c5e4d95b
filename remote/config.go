package remote

import (
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"regexp"
	"slices"
	"strings"
	"time"

	"golang.org/x/net/http/httpguts"

	agentsmcp "github.com/agents-mcp/agents-mcp"
)

// Upstream transports.
const (
	TransportStreamable = "streamable"
	TransportSSE        = "sse"
	TransportStdio      = "stdio"
)

// Defaults applied by [Config.WithDefaults].
const (
	DefaultTimeout        = 30 * time.Second
	DefaultMaxConcurrency = 32
	// DefaultMaxBackoff caps the wait between reconnect attempts. It is
	// short enough that an upstream coming back is ready again within about
	// ten seconds, and long enough that a dead one costs a connect attempt
	// only every few seconds.
	DefaultMaxBackoff = 8 * time.Second
)

// NamePattern is what an upstream name must match. Names become the prefix
// of remote tool names (`<name>__<tool>`), so they are kept short and free of
// the separator's characters: no two upstreams can produce the same tool
// name.
const NamePattern = `^[a-z0-9-]{1,32}$`

var (
	nameRE            = regexp.MustCompile(NamePattern)
	protocolVersionRE = regexp.MustCompile(`^[0-9]{4}-[0-9]{2}-[0-9]{2}$`)
)

// Config describes one upstream MCP server. Header and Env values have their
// ${VAR} references already expanded and are secrets: String, GoString and
// LogValue redact them, and [Status] never carries them.
type Config struct {
	Name      string
	Transport string // streamable | sse | stdio

	// For streamable and sse: an absolute http(s) URL, and extra headers.
	URL     string
	Headers map[string]string

	// For stdio: the command to start, its arguments and the variables
	// added to the child's environment (on top of [EnvAllowlist]).
	Command string
	Args    []string
	Env     map[string]string

	Tools ToolFilter
	// Timeout bounds each call to the upstream (and each connect attempt).
	Timeout time.Duration
	// ProtocolVersion pins the MCP protocol version (YYYY-MM-DD); empty
	// negotiates, falling back to older versions when the upstream refuses
	// the newest.
	ProtocolVersion string
	// MaxConcurrency bounds the calls in flight to this upstream; more
	// wait (within their timeout) for a slot.
	MaxConcurrency int
	// MaxBackoff caps the wait between reconnect attempts.
	MaxBackoff time.Duration
}

// ToolFilter selects the upstream tools that are exposed, by the upstream's
// own tool names. An empty Allow allows every tool; Deny wins over Allow.
type ToolFilter struct {
	Allow []string
	Deny  []string
}

// Allows reports whether the upstream tool named tool passes the filter.
func (f ToolFilter) Allows(tool string) bool {
	if slices.Contains(f.Deny, tool) {
		return false
	}
	return len(f.Allow) == 0 || slices.Contains(f.Allow, tool)
}

// WithDefaults returns a copy of c with zero limits replaced by the package
// defaults.
func (c Config) WithDefaults() Config {
	if c.Timeout == 0 {
		c.Timeout = DefaultTimeout
	}
	if c.MaxConcurrency == 0 {
		c.MaxConcurrency = DefaultMaxConcurrency
	}
	if c.MaxBackoff == 0 {
		c.MaxBackoff = DefaultMaxBackoff
	}
	return c
}

// ConfigProblem is one invalid field of a [Config]. Field is relative to the
// upstream ("url", "tools.allow[0]"), so a config file loader can prefix it
// with the entry's position and the admin API can report it as it is.
type ConfigProblem struct {
	Field   string
	Message string
}

func (p ConfigProblem) Error() string { return p.Field + ": " + p.Message }

// Validate checks one upstream on its own; uniqueness of names across
// upstreams is the pool's business. The error joins every [ConfigProblem].
func (c *Config) Validate() error {
	var errs []error
	for _, p := range c.Problems() {
		errs = append(errs, p)
	}
	return errors.Join(errs...)
}

// Problems lists every invalid field of c, in field order. Zero limits are
// problems: call [Config.WithDefaults] first to accept the defaults.
func (c *Config) Problems() []ConfigProblem {
	var out []ConfigProblem
	bad := func(field, format string, args ...any) {
		out = append(out, ConfigProblem{Field: field, Message: fmt.Sprintf(format, args...)})
	}
	if !nameRE.MatchString(c.Name) {
		bad("name", "%q must match %s", c.Name, NamePattern)
	}
	switch c.Transport {
	case TransportStreamable, TransportSSE:
		if c.URL == "" {
			bad("url", "required for transport %s", c.Transport)
		} else if err := agentsmcp.CheckHTTPURL(c.URL); err != nil {
			bad("url", "%q %v", agentsmcp.RedactURL(c.URL), err)
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
		for _, k := range sortedKeys(c.Headers) {
			if !isToken(k) {
				bad("headers", "%q is not a valid header name", agentsmcp.TruncateUTF8(k, 64))
			} else if !httpguts.ValidHeaderFieldValue(c.Headers[k]) {
				// The value is a secret: only its name is quoted.
				bad("headers", "the value of %s contains a control character (CR, LF, NUL or another): refused, since it could inject headers", k)
			}
		}
	case TransportStdio:
		if strings.TrimSpace(c.Command) == "" {
			bad("command", "required for transport stdio")
		}
		if c.URL != "" {
			bad("url", "not allowed with transport stdio")
		}
		if len(c.Headers) > 0 {
			bad("headers", "not allowed with transport stdio")
		}
		for _, k := range sortedKeys(c.Env) {
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

// String describes the upstream with header and env values, URL
// credentials and URL query values redacted.
func (c Config) String() string {
	var parts []string
	add := func(k, v string) {
		if v != "" {
			parts = append(parts, k+"="+v)
		}
	}
	redactMap := func(m map[string]string) string {
		var kv []string
		for _, k := range sortedKeys(m) {
			kv = append(kv, k+":"+agentsmcp.Redacted)
		}
		return strings.Join(kv, ",")
	}
	add("name", c.Name)
	add("transport", c.Transport)
	add("url", agentsmcp.RedactURL(c.URL))
	add("headers", redactMap(c.Headers))
	add("command", c.Command)
	if len(c.Args) > 0 {
		add("args", fmt.Sprintf("%q", c.Args))
	}
	add("env", redactMap(c.Env))
	add("tools.allow", strings.Join(c.Tools.Allow, ","))
	add("tools.deny", strings.Join(c.Tools.Deny, ","))
	if c.Timeout != 0 {
		add("timeout", c.Timeout.String())
	}
	add("protocol_version", c.ProtocolVersion)
	if c.MaxConcurrency != 0 {
		add("max_concurrency", fmt.Sprint(c.MaxConcurrency))
	}
	if c.MaxBackoff != 0 {
		add("max_backoff", c.MaxBackoff.String())
	}
	return strings.Join(parts, " ")
}

// GoString makes %#v as safe as %v.
func (c Config) GoString() string { return "remote.Config{" + c.String() + "}" }

// LogValue makes slog.Any("upstream", c) log the redacted form.
func (c Config) LogValue() slog.Value { return slog.StringValue(c.String()) }

// isToken reports whether s is an RFC 9110 token, the syntax of header names.
func isToken(s string) bool {
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

func sortedKeys(m map[string]string) []string { return slices.Sorted(maps.Keys(m)) }
