package remote

import agentsmcp "github.com/agents-mcp/agents-mcp"

// State is [agentsmcp.UpstreamState].
type State = agentsmcp.UpstreamState

// The states of an upstream (see [agentsmcp.UpstreamState]).
const (
	StateConnecting = agentsmcp.UpstreamConnecting
	StateReady      = agentsmcp.UpstreamReady
	StateDegraded   = agentsmcp.UpstreamDegraded
	StateDown       = agentsmcp.UpstreamDown
)

// Origins of an upstream definition ([agentsmcp.UpstreamStatus.Origin]).
const (
	// OriginConfig: the config file, the only source of stdio commands.
	OriginConfig = "config"
	// OriginAPI: added at run time (the admin API).
	OriginAPI = "api"
)

// Status is [agentsmcp.UpstreamStatus].
type Status = agentsmcp.UpstreamStatus

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

// Both the one-process pool and the shared upstreams serve the admin API.
var (
	_ agentsmcp.UpstreamManager = (*Pool)(nil)
	_ agentsmcp.UpstreamManager = (*SharedUpstreams)(nil)
)
