package agentsmcp

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/agents-mcp/agents-mcp/internal/redact"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

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
	// DefaultUpstreamMaxBackoff: a returning upstream is ready within ~10 s.
	DefaultUpstreamMaxBackoff = 8 * time.Second
)

// UpstreamNamePattern is what an upstream name (its tools' prefix) must match.
const UpstreamNamePattern = `^[a-z0-9-]{1,32}$`

// UpstreamConfig describes one upstream MCP server (remote implements it).
// Headers and Env hold expanded secrets: String, GoString and LogValue
// redact them, and [UpstreamStatus] never carries them.
type UpstreamConfig struct {
	Name      string
	Transport string // streamable | sse | stdio

	// URL and Headers: streamable and sse only.
	URL     string
	Headers map[string]string
	// Auth is "" or UpstreamAuthOAuth (streamable only): per-caller OAuth
	// tokens from the credential store (ADR 0012).
	Auth string

	// Command, Args, Env: stdio only (Env adds to remote.EnvAllowlist).
	Command string
	Args    []string
	Env     map[string]string

	Tools UpstreamToolFilter
	// Timeout bounds each call and each connect attempt.
	Timeout time.Duration
	// ProtocolVersion pins the MCP version; empty negotiates.
	ProtocolVersion string
	// MaxConcurrency bounds the calls in flight; more wait for a slot.
	MaxConcurrency int
	// MaxBackoff caps the wait between reconnect attempts.
	MaxBackoff time.Duration
}

// UpstreamAuthOAuth: each caller's calls use a session with its own tokens.
const UpstreamAuthOAuth = "oauth"

// UpstreamToolFilter selects tools by upstream name: empty Allow allows all; Deny wins.
type UpstreamToolFilter struct {
	Allow []string
	Deny  []string
}

// WithDefaults returns c with zero limits set to the defaults.
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

// String describes c with header and env values and URL secrets redacted.
func (c UpstreamConfig) String() string {
	nonZero := func(v any, zero bool) string {
		if zero {
			return ""
		}
		return fmt.Sprint(v)
	}
	args := ""
	if len(c.Args) > 0 {
		args = fmt.Sprintf("%q", c.Args)
	}
	return redact.Fields("name", c.Name, "transport", c.Transport, "url", redact.URL(c.URL),
		"headers", redact.Keys(c.Headers), "auth", c.Auth, "command", c.Command, "args", args,
		"env", redact.Keys(c.Env), "tools.allow", strings.Join(c.Tools.Allow, ","),
		"tools.deny", strings.Join(c.Tools.Deny, ","), "timeout", nonZero(c.Timeout, c.Timeout == 0),
		"protocol_version", c.ProtocolVersion, "max_concurrency", nonZero(c.MaxConcurrency, c.MaxConcurrency == 0),
		"max_backoff", nonZero(c.MaxBackoff, c.MaxBackoff == 0))
}

// GoString makes %#v as safe as %v.
func (c UpstreamConfig) GoString() string { return "agentsmcp.UpstreamConfig{" + c.String() + "}" }

// LogValue makes slog.Any("upstream", c) log the redacted form.
func (c UpstreamConfig) LogValue() slog.Value { return slog.StringValue(c.String()) }

// UpstreamState is the health of an upstream as users see it.
type UpstreamState string

const (
	// UpstreamConnecting: (re)connecting; known tools stay listed, calls wait.
	UpstreamConnecting UpstreamState = "connecting"
	// UpstreamReady: the session is up and listed.
	UpstreamReady UpstreamState = "ready"
	// UpstreamDegraded: alive, but a ping or listing failed or the breaker is open.
	UpstreamDegraded UpstreamState = "degraded"
	// UpstreamDown: connecting failed; retried with backoff, tools withdrawn.
	UpstreamDown UpstreamState = "down"
)

// UpstreamStatus is a snapshot of one upstream, safe to show: no header or
// environment values, URLs redacted.
type UpstreamStatus struct {
	Name      string `json:"name"`
	Transport string `json:"transport"`
	URL       string `json:"url,omitempty"`
	// Command (stdio) without its arguments or environment.
	Command string `json:"command,omitempty"`
	Origin  string `json:"origin"` // remote.OriginConfig or remote.OriginAPI

	State UpstreamState `json:"state"`
	// Reason explains State in a sentence.
	Reason string `json:"reason"`
	// Since: State's last change; NextAttemptAt: the next connect attempt.
	Since          time.Time `json:"since"`
	LastError      string    `json:"lastError,omitempty"`
	LastErrorAt    time.Time `json:"lastErrorAt,omitzero"`
	ConnectedAt    time.Time `json:"connectedAt,omitzero"`
	FailedAttempts int       `json:"failedAttempts"`
	NextAttemptAt  time.Time `json:"nextAttemptAt,omitzero"`

	ProtocolVersion string `json:"protocolVersion,omitempty"`
	ServerName      string `json:"serverName,omitempty"`
	ServerVersion   string `json:"serverVersion,omitempty"`
	// PID of the stdio child (the leader of its process group), 0 if none.
	PID int `json:"pid,omitempty"`

	// Counts exposed after the allow/deny filters.
	Tools             int `json:"tools"`
	Resources         int `json:"resources"`
	ResourceTemplates int `json:"resourceTemplates"`
	Prompts           int `json:"prompts"`
	// Aliases maps exposed names cut to 64 characters to upstream names.
	Aliases map[string]string `json:"aliases,omitempty"`
	// Problems lists what could not be exposed (bad names or schemas).
	Problems []string `json:"problems,omitempty"`

	InFlight int `json:"inFlight"`
	// Breaker is closed, open or half-open.
	Breaker string `json:"breaker"`
}

// UpstreamTransition is one change of an upstream's State on one replica.
type UpstreamTransition struct {
	State  UpstreamState `json:"state"`
	Reason string        `json:"reason"`
	At     time.Time     `json:"at"`
}

// UpstreamManager manages the upstreams at run time, for the admin API:
// remote.Pool on one process, remote.SharedUpstreams across replicas.
type UpstreamManager interface {
	// Add starts an upstream and returns once its first connect attempt ended
	// (a failed attempt is no error). EINVALID for a bad or stdio config (a
	// command from the network would be remote code execution), ECONFLICT for
	// a name in use.
	Add(ctx context.Context, cfg UpstreamConfig) error
	// Remove stops an upstream and withdraws what it exposed. ENOTFOUND.
	Remove(ctx context.Context, name string) error
	// Refresh re-lists (or reconnects) an upstream now. ENOTFOUND.
	Refresh(ctx context.Context, name string) (UpstreamStatus, error)
	// Status returns one upstream's status; false if there is none.
	Status(name string) (UpstreamStatus, bool)
	// Statuses returns every upstream's status, sorted by name.
	Statuses() []UpstreamStatus
	// History returns the last state transitions, oldest first (bounded, per replica).
	History(name string) ([]UpstreamTransition, bool)
	// Tools returns what an upstream exposes now. ENOTFOUND.
	Tools(ctx context.Context, name string) ([]*mcp.Tool, error)
}
