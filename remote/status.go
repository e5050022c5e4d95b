package remote

import (
	"time"
)

// State is the health of an upstream as users see it.
type State string

const (
	// StateConnecting: the first connection, or a new one right after the
	// session was lost, is being established. Tools known from the lost
	// session stay listed; calls wait (within their timeout) for the session.
	StateConnecting State = "connecting"
	// StateReady: initialize and tools/list succeeded and the session is
	// alive.
	StateReady State = "ready"
	// StateDegraded: the session is alive but something is wrong: a health
	// ping or a re-listing failed, or the circuit breaker is open.
	StateDegraded State = "degraded"
	// StateDown: connecting failed; the pool retries with backoff, and the
	// upstream's tools are withdrawn until it is ready again.
	StateDown State = "down"
)

// Origins of an upstream definition.
const (
	// OriginConfig: defined in the config file, the only place where stdio
	// commands may come from.
	OriginConfig = "config"
	// OriginAPI: added at run time through [Pool.Add] (the admin API, which
	// keeps it in the store through [SharedUpstreams] for every replica).
	OriginAPI = "api"
)

// Status is a snapshot of one upstream, safe to show to operators: it holds
// no header or environment values, and URLs are redacted.
type Status struct {
	Name      string `json:"name"`
	Transport string `json:"transport"`
	// URL (streamable, sse) with credentials and query values redacted.
	URL string `json:"url,omitempty"`
	// Command (stdio) without its arguments or environment.
	Command string `json:"command,omitempty"`
	Origin  string `json:"origin"`

	State State `json:"state"`
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
	// Problems lists upstream tools, resources or prompts that could not be
	// exposed (invalid names, unusable schemas).
	Problems []string `json:"problems,omitempty"`

	InFlight int `json:"inFlight"`
	// Breaker is the circuit breaker's state: closed, open or half-open.
	Breaker string `json:"breaker"`
}

// Summary counts upstreams by state, for /readyz.
type Summary struct {
	Total      int `json:"total"`
	Ready      int `json:"ready"`
	Degraded   int `json:"degraded"`
	Connecting int `json:"connecting"`
	Down       int `json:"down"`
	// NotReady names the upstreams that are not ready, with their reasons.
	NotReady map[string]string `json:"notReady,omitempty"`
}
