package agentsmcp

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/agents-mcp/agents-mcp/internal/redact"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// This file holds the upstream MCP servers as the rest of the server sees
// them: their definition ([UpstreamConfig]), their health
// ([UpstreamStatus]) and their management ([UpstreamManager]). The remote
// package implements them.

// Upstream transports.
const (
	UpstreamStreamable = "streamable"
	UpstreamSSE        = "sse"
	UpstreamStdio      = "stdio"
)

// Defaults applied by [UpstreamConfig.WithDefaults].
const (
	DefaultUpstreamTimeout        = 30 * time.Second
	DefaultUpstreamMaxConcurrency = 32
	// DefaultUpstreamMaxBackoff caps the wait between reconnect attempts. It is
	// short enough that an upstream coming back is ready again within about
	// ten seconds, and long enough that a dead one costs a connect attempt
	// only every few seconds.
	DefaultUpstreamMaxBackoff = 8 * time.Second
)

// UpstreamNamePattern is what an upstream name must match. Names become the prefix
// of remote tool names (`<name>__<tool>`), so they are kept short and free of
// the separator's characters: no two upstreams can produce the same tool
// name.
const UpstreamNamePattern = `^[a-z0-9-]{1,32}$`

// UpstreamConfig describes one upstream MCP server. Header and Env values have their
// ${VAR} references already expanded and are secrets: String, GoString and
// LogValue redact them, and [UpstreamStatus] never carries them.
//
// The remote package implements upstreams of this config (its Pool), the
// config loader reads them from the file, and the admin API from requests.
type UpstreamConfig struct {
	Name      string
	Transport string // streamable | sse | stdio

	// For streamable and sse: an absolute http(s) URL, and extra headers.
	URL     string
	Headers map[string]string
	// Auth is how agents-mcp authorizes to the upstream beyond Headers:
	// empty for nothing more, or UpstreamAuthOAuth (streamable only) for
	// OAuth tokens from the credential store, per caller (ADR 0012). The
	// caller's own token is never passed through.
	Auth string

	// For stdio: the command to start, its arguments and the variables
	// added to the child's environment (on top of remote.EnvAllowlist).
	Command string
	Args    []string
	Env     map[string]string

	Tools UpstreamToolFilter
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

// UpstreamAuthOAuth is the [UpstreamConfig.Auth] of an upstream protected
// by OAuth: each caller's calls go over a session of its own, with its own
// tokens (ADR 0012).
const UpstreamAuthOAuth = "oauth"

// UpstreamToolFilter selects the upstream tools that are exposed, by the upstream's
// own tool names. An empty Allow allows every tool; Deny wins over Allow.
type UpstreamToolFilter struct {
	Allow []string
	Deny  []string
}

// Allows reports whether the upstream tool named tool passes the filter.
func (f UpstreamToolFilter) Allows(tool string) bool {
	if slices.Contains(f.Deny, tool) {
		return false
	}
	return len(f.Allow) == 0 || slices.Contains(f.Allow, tool)
}

// WithDefaults returns a copy of c with zero limits replaced by the package
// defaults.
func (c UpstreamConfig) WithDefaults() UpstreamConfig {
	if c.Timeout == 0 {
		c.Timeout = DefaultUpstreamTimeout
	}
	if c.MaxConcurrency == 0 {
		c.MaxConcurrency = DefaultUpstreamMaxConcurrency
	}
	if c.MaxBackoff == 0 {
		c.MaxBackoff = DefaultUpstreamMaxBackoff
	}
	return c
}

// UpstreamConfigProblem is one invalid field of a [UpstreamConfig]. Field is relative to the
// upstream ("url", "tools.allow[0]"), so a config file loader can prefix it
// with the entry's position and the admin API can report it as it is.
type UpstreamConfigProblem struct {
	Field   string
	Message string
}

func (p UpstreamConfigProblem) Error() string { return p.Field + ": " + p.Message }

// String describes the upstream with header and env values, URL
// credentials and URL query values redacted.
func (c UpstreamConfig) String() string {
	var parts []string
	add := func(k, v string) {
		if v != "" {
			parts = append(parts, k+"="+v)
		}
	}
	redactMap := func(m map[string]string) string {
		var kv []string
		for _, k := range sortedStringKeys(m) {
			kv = append(kv, k+":"+redact.Marker)
		}
		return strings.Join(kv, ",")
	}
	add("name", c.Name)
	add("transport", c.Transport)
	add("url", redact.URL(c.URL))
	add("headers", redactMap(c.Headers))
	add("auth", c.Auth)
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
func (c UpstreamConfig) GoString() string { return "agentsmcp.UpstreamConfig{" + c.String() + "}" }

// LogValue makes slog.Any("upstream", c) log the redacted form.
func (c UpstreamConfig) LogValue() slog.Value { return slog.StringValue(c.String()) }

func sortedStringKeys(m map[string]string) []string { return slices.Sorted(maps.Keys(m)) }

// UpstreamState is the health of an upstream as users see it.
type UpstreamState string

const (
	// UpstreamConnecting: the first connection, or a new one right after the
	// session was lost, is being established. Tools known from the lost
	// session stay listed; calls wait (within their timeout) for the session.
	UpstreamConnecting UpstreamState = "connecting"
	// UpstreamReady: initialize and tools/list succeeded and the session is
	// alive.
	UpstreamReady UpstreamState = "ready"
	// UpstreamDegraded: the session is alive but something is wrong: a health
	// ping or a re-listing failed, or the circuit breaker is open.
	UpstreamDegraded UpstreamState = "degraded"
	// UpstreamDown: connecting failed; the pool retries with backoff, and the
	// upstream's tools are withdrawn until it is ready again.
	UpstreamDown UpstreamState = "down"
)

// Origins of an upstream definition.
const (
	// UpstreamOriginConfig: defined in the config file, the only place where stdio
	// commands may come from.
	UpstreamOriginConfig = "config"
	// UpstreamOriginAPI: added at run time through the pool's Add (the admin API, which
	// keeps it in the store through remote.SharedUpstreams for every replica).
	UpstreamOriginAPI = "api"
)

// UpstreamStatus is a snapshot of one upstream, safe to show to operators: it holds
// no header or environment values, and URLs are redacted.
type UpstreamStatus struct {
	Name      string `json:"name"`
	Transport string `json:"transport"`
	// URL (streamable, sse) with credentials and query values redacted.
	URL string `json:"url,omitempty"`
	// Command (stdio) without its arguments or environment.
	Command string `json:"command,omitempty"`
	Origin  string `json:"origin"`

	State UpstreamState `json:"state"`
	// Reason explains State in a sentence.
	Reason string `json:"reason"`
	// Since is when State last changed.
	Since       time.Time `json:"since"`
	LastError   string    `json:"lastError,omitempty"`
	LastErrorAt time.Time `json:"lastErrorAt,omitzero"`
	// ConnectedAt is when the current (or last) session became ready.
	ConnectedAt time.Time `json:"connectedAt,omitzero"`
	// FailedAttempts counts connect attempts that failed since the upstream
	// was last ready; NextAttemptAt is when the next one is due.
	FailedAttempts int       `json:"failedAttempts"`
	NextAttemptAt  time.Time `json:"nextAttemptAt,omitzero"`

	ProtocolVersion string `json:"protocolVersion,omitempty"`
	ServerName      string `json:"serverName,omitempty"`
	ServerVersion   string `json:"serverVersion,omitempty"`
	// PID of the stdio child (the leader of its process group), 0 if none.
	PID int `json:"pid,omitempty"`

	// Tools is the number of tools exposed (after allow/deny filters);
	// Resources, ResourceTemplates and Prompts likewise.
	Tools             int `json:"tools"`
	Resources         int `json:"resources"`
	ResourceTemplates int `json:"resourceTemplates"`
	Prompts           int `json:"prompts"`
	// Aliases maps the exposed name of each tool whose
	// "<upstream>__<tool>" name would be longer than the 64 characters of
	// [ToolNamePattern] to the upstream's own name of the tool (see
	// remote.ToolAlias).
	Aliases map[string]string `json:"aliases,omitempty"`
	// Problems lists upstream tools, resources or prompts that could not be
	// exposed (invalid names, unusable schemas).
	Problems []string `json:"problems,omitempty"`

	InFlight int `json:"inFlight"`
	// Breaker is the circuit breaker's state: closed, open or half-open.
	Breaker string `json:"breaker"`
}

// UpstreamTransition is one change of an upstream's State, as the replica
// that reports it saw it. Reason is the status's Reason at that moment,
// with errors redacted as in [UpstreamStatus].
type UpstreamTransition struct {
	State  UpstreamState `json:"state"`
	Reason string        `json:"reason"`
	At     time.Time     `json:"at"`
}

// UpstreamManager manages the upstream MCP servers at run time; the admin
// API depends on it. remote.Pool implements it for one process, and
// remote.SharedUpstreams for every replica, keeping additions and
// removals in the store ([UpstreamService]).
type UpstreamManager interface {
	// Add starts an upstream defined at run time, and returns once it is
	// registered and its first connect attempt has ended or ctx is done (a
	// failed attempt is not an error: Status says why). It refuses stdio
	// configs: a command taken from the network would be remote code
	// execution. EINVALID for a bad or stdio config, ECONFLICT for a name
	// in use.
	Add(ctx context.Context, cfg UpstreamConfig) error
	// Remove stops an upstream: its tools, resources and prompts
	// disappear. ENOTFOUND if there is no such upstream.
	Remove(ctx context.Context, name string) error
	// Refresh re-lists an upstream now (or makes a disconnected one try
	// to connect now) and returns its status then. ENOTFOUND if there is
	// no such upstream.
	Refresh(ctx context.Context, name string) (UpstreamStatus, error)
	// Status returns one upstream's status; false if there is none.
	Status(name string) (UpstreamStatus, bool)
	// Statuses returns every upstream's status, sorted by name.
	Statuses() []UpstreamStatus
	// History returns an upstream's last state transitions, oldest first,
	// from the state it started in; false if there is none. It is bounded
	// (the oldest are dropped) and kept in memory by each replica for its
	// own session: it starts over when the upstream is added again or the
	// process restarts. A new Reason in the same State is no transition.
	History(name string) ([]UpstreamTransition, bool)
	// Tools returns the tools an upstream exposes now, under their
	// client-visible names. ENOTFOUND if there is no such upstream.
	Tools(ctx context.Context, name string) ([]*mcp.Tool, error)
}
