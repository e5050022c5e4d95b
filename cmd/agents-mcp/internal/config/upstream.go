package config

import (
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"time"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/internal/validate"
	"github.com/agents-mcp/agents-mcp/remote"
)

// Upstream transports.
const (
	TransportStreamable = remote.TransportStreamable
	TransportSSE        = remote.TransportSSE
	TransportStdio      = remote.TransportStdio
)

// MinUpstreamSyncInterval keeps the replicas from polling the store for
// upstreams in a busy loop.
const MinUpstreamSyncInterval = 100 * time.Millisecond

// Upstream is a remote MCP server whose tools are re-exported; the remote
// pool owns its definition and validation.
type Upstream = agentsmcp.UpstreamConfig

// ToolFilter selects the upstream tools that are exposed.
type ToolFilter = agentsmcp.UpstreamToolFilter

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
		Auth:            strings.ToLower(strings.TrimSpace(fu.Auth)),
		Command:         fu.Command,
		Args:            fu.Args,
		Tools:           ToolFilter{Allow: fu.Tools.Allow, Deny: fu.Tools.Deny},
		Timeout:         DefaultUpstreamTimeout,
		MaxConcurrency:  remote.DefaultMaxConcurrency,
		MaxBackoff:      remote.DefaultMaxBackoff,
		ProtocolVersion: strings.TrimSpace(fu.ProtocolVersion),
	}
	if strings.TrimSpace(fu.Delegation) != "" {
		errs = append(errs, fieldError(field+".delegation", "%s", upstreamDelegationRefused))
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
	parseDuration := func(name, value string, into *time.Duration) {
		if t := strings.TrimSpace(value); t != "" {
			d, err := time.ParseDuration(t)
			if err != nil {
				errs = append(errs, fieldError(field+"."+name, "invalid duration %q", value))
			} else {
				*into = d
			}
		}
	}
	parseDuration("timeout", fu.Timeout, &u.Timeout)
	parseDuration("max_backoff", fu.MaxBackoff, &u.MaxBackoff)
	if fu.MaxConcurrency != 0 {
		u.MaxConcurrency = fu.MaxConcurrency
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

// upstreamDelegationRefused explains why an upstream cannot act with its
// caller's token (ADR 0012 D7b): http_tools sources can.
const upstreamDelegationRefused = "is not available for MCP upstreams: the MCP authorization specification forbids token " +
	"passthrough (a server must not pass on the token its client sent it, and an MCP server must accept only tokens issued for it); " +
	"use auth: oauth for per-caller tokens of the upstream's own authorization server, or an http_tools source with delegation for an HTTP API"

// validateUpstream checks one upstream and names each problem after the
// entry's position in the file (prefix, e.g. "upstreams[0]").
func validateUpstream(u *Upstream, prefix string) []error {
	var errs []error
	for _, p := range validate.UpstreamConfigProblems(u) {
		errs = append(errs, fieldError(prefix+"."+p.Field, "%s", p.Message))
	}
	return errs
}

func sortedKeys(m map[string]string) []string { return slices.Sorted(maps.Keys(m)) }
