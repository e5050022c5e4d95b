package config

import (
	"errors"
	"fmt"
	"maps"
	"net/url"
	"os"
	"regexp"
	"slices"
	"strings"
	"time"
)

// Upstream transports.
const (
	TransportStreamable = "streamable"
	TransportSSE        = "sse"
	TransportStdio      = "stdio"
)

// UpstreamNamePattern is what an upstream name must match. Names become the
// prefix of remote tool names (`<name>__<tool>`), so they are kept short and
// free of the separator's characters.
const UpstreamNamePattern = `^[a-z0-9-]{1,32}$`

var (
	upstreamNameRE    = regexp.MustCompile(UpstreamNamePattern)
	protocolVersionRE = regexp.MustCompile(`^[0-9]{4}-[0-9]{2}-[0-9]{2}$`)
)

// Upstream is a remote MCP server whose tools are re-exported. Header and Env
// values have their ${VAR} references already expanded and are secrets: the
// String, GoString and LogValue methods redact them.
type Upstream struct {
	Name      string
	Transport string // streamable | sse | stdio

	// For streamable and sse: an absolute http(s) URL, and extra headers.
	URL     string
	Headers map[string]string

	// For stdio: the command to start, its arguments and extra environment.
	Command string
	Args    []string
	Env     map[string]string

	Tools ToolFilter
	// Timeout bounds each call to the upstream; Load sets
	// DefaultUpstreamTimeout when the file leaves it out.
	Timeout time.Duration
	// ProtocolVersion pins the MCP protocol version (YYYY-MM-DD); empty
	// negotiates.
	ProtocolVersion string
}

// ToolFilter selects the upstream tools that are exposed. An empty Allow
// allows every tool; Deny wins over Allow.
type ToolFilter struct {
	Allow []string
	Deny  []string
}

// resolve turns a file entry into an Upstream: ${VAR} references in header and
// env values are expanded through getenv and the timeout is parsed. Structural
// checks are left to validate so that they also apply to upstreams added at
// run time.
func (fu fileUpstream) resolve(field string, getenv func(string) string) (Upstream, []error) {
	var errs []error
	u := Upstream{
		Name:            strings.TrimSpace(fu.Name),
		Transport:       strings.ToLower(strings.TrimSpace(fu.Transport)),
		URL:             strings.TrimSpace(fu.URL),
		Command:         fu.Command,
		Args:            fu.Args,
		Tools:           ToolFilter{Allow: fu.Tools.Allow, Deny: fu.Tools.Deny},
		Timeout:         DefaultUpstreamTimeout,
		ProtocolVersion: strings.TrimSpace(fu.ProtocolVersion),
	}
	expand := func(kind string, in map[string]string) map[string]string {
		if in == nil {
			return nil
		}
		out := make(map[string]string, len(in))
		for _, k := range sortedKeys(in) {
			v, err := expandEnv(in[k], getenv)
			if err != nil {
				errs = append(errs, fieldError(fmt.Sprintf("%s.%s.%s", field, kind, k), "%v", err))
			}
			out[k] = v
		}
		return out
	}
	u.Headers = expand("headers", fu.Headers)
	u.Env = expand("env", fu.Env)
	if t := strings.TrimSpace(fu.Timeout); t != "" {
		d, err := time.ParseDuration(t)
		if err != nil {
			errs = append(errs, fieldError(field+".timeout", "invalid duration %q", fu.Timeout))
		} else {
			u.Timeout = d
		}
	}
	return u, errs
}

// expandEnv expands ${VAR} and $VAR like os.Expand. "$$" is a literal "$",
// so that values can contain one. A variable that is unset or empty is an
// error: sending "Bearer " upstream would fail later and less clearly.
func expandEnv(s string, getenv func(string) string) (string, error) {
	var missing []string
	out := os.Expand(s, func(name string) string {
		if name == "$" {
			return "$"
		}
		v := getenv(name)
		if v == "" {
			missing = append(missing, name)
		}
		return v
	})
	if len(missing) > 0 {
		if len(missing) == 1 {
			return "", fmt.Errorf("environment variable %s is not set", missing[0])
		}
		return "", fmt.Errorf("environment variables %s are not set", strings.Join(missing, ", "))
	}
	return out, nil
}

// Validate checks one upstream on its own; uniqueness of names across
// upstreams is the caller's business. Errors name the field relative to the
// upstream (e.g. "url: ..."), so the admin API can report them as they are.
func (u *Upstream) Validate() error {
	return errors.Join(u.validate("")...)
}

func (u *Upstream) validate(prefix string) []error {
	var errs []error
	bad := func(field, format string, args ...any) {
		msg := fmt.Sprintf(format, args...)
		if prefix == "" {
			errs = append(errs, fmt.Errorf("%s: %s", field, msg))
			return
		}
		errs = append(errs, fieldError(prefix+"."+field, "%s", msg))
	}
	if !upstreamNameRE.MatchString(u.Name) {
		bad("name", "%q must match %s", u.Name, UpstreamNamePattern)
	}
	switch u.Transport {
	case TransportStreamable, TransportSSE:
		if u.URL == "" {
			bad("url", "required for transport %s", u.Transport)
		} else if err := checkHTTPURL(u.URL); err != nil {
			bad("url", "%q %v", redactURL(u.URL), err)
		}
		if u.Command != "" {
			bad("command", "only valid with transport stdio")
		}
		if len(u.Args) > 0 {
			bad("args", "only valid with transport stdio")
		}
		if len(u.Env) > 0 {
			bad("env", "only valid with transport stdio")
		}
		for _, k := range sortedKeys(u.Headers) {
			if !isToken(k) {
				bad("headers", "%q is not a valid header name", k)
			}
		}
	case TransportStdio:
		if strings.TrimSpace(u.Command) == "" {
			bad("command", "required for transport stdio")
		}
		if u.URL != "" {
			bad("url", "not allowed with transport stdio")
		}
		if len(u.Headers) > 0 {
			bad("headers", "not allowed with transport stdio")
		}
		for _, k := range sortedKeys(u.Env) {
			if k == "" || strings.ContainsAny(k, "=\x00") {
				bad("env", "%q is not a valid variable name", k)
			}
		}
	case "":
		bad("transport", "required: one of streamable, sse, stdio")
	default:
		bad("transport", "%q is not one of streamable, sse, stdio", u.Transport)
	}
	for i, t := range u.Tools.Allow {
		if strings.TrimSpace(t) == "" {
			bad(fmt.Sprintf("tools.allow[%d]", i), "empty tool name")
		}
	}
	for i, t := range u.Tools.Deny {
		if strings.TrimSpace(t) == "" {
			bad(fmt.Sprintf("tools.deny[%d]", i), "empty tool name")
		}
	}
	if u.Timeout <= 0 {
		bad("timeout", "must be positive, got %s", u.Timeout)
	}
	if u.ProtocolVersion != "" && !protocolVersionRE.MatchString(u.ProtocolVersion) {
		bad("protocol_version", "%q is not a YYYY-MM-DD protocol version", u.ProtocolVersion)
	}
	return errs
}

// checkHTTPURL accepts only absolute http(s) URLs with a host.
func checkHTTPURL(s string) error {
	p, err := url.Parse(s)
	if err != nil {
		return errors.New("is not a valid URL")
	}
	if p.Scheme != "http" && p.Scheme != "https" {
		return errors.New("must be an absolute http or https URL")
	}
	if p.Host == "" {
		return errors.New("has no host")
	}
	return nil
}

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
