package remote

import agentsmcp "github.com/agents-mcp/agents-mcp"

// The upstream definition lives in the root package, so that the admin API
// and the config loader depend on it and not on this package. These names
// are the ones this package's code uses for it.

// Upstream transports.
const (
	TransportStreamable = agentsmcp.UpstreamStreamable
	TransportSSE        = agentsmcp.UpstreamSSE
	TransportStdio      = agentsmcp.UpstreamStdio
)

// Defaults applied by [Config.WithDefaults].
const (
	DefaultTimeout        = agentsmcp.DefaultUpstreamTimeout
	DefaultMaxConcurrency = agentsmcp.DefaultUpstreamMaxConcurrency
	DefaultMaxBackoff     = agentsmcp.DefaultUpstreamMaxBackoff
)

// NamePattern is [agentsmcp.UpstreamNamePattern].
const NamePattern = agentsmcp.UpstreamNamePattern

type (
	// Config is [agentsmcp.UpstreamConfig].
	Config = agentsmcp.UpstreamConfig
	// ToolFilter is [agentsmcp.UpstreamToolFilter].
	ToolFilter = agentsmcp.UpstreamToolFilter
	// ConfigProblem is [agentsmcp.UpstreamConfigProblem].
	ConfigProblem = agentsmcp.UpstreamConfigProblem
)
