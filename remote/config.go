package remote

import agentsmcp "github.com/agents-mcp/agents-mcp"

// The upstream definition, agentsmcp.UpstreamConfig, lives in the root
// package, so that the admin API and the config loader depend on it and
// not on this package.

// Upstream transports.
const (
	TransportStreamable = agentsmcp.UpstreamStreamable
	TransportSSE        = agentsmcp.UpstreamSSE
	TransportStdio      = agentsmcp.UpstreamStdio
)

// Defaults applied by [agentsmcp.UpstreamConfig.WithDefaults].
const (
	DefaultTimeout        = agentsmcp.DefaultUpstreamTimeout
	DefaultMaxConcurrency = agentsmcp.DefaultUpstreamMaxConcurrency
	DefaultMaxBackoff     = agentsmcp.DefaultUpstreamMaxBackoff
)

// NamePattern is [agentsmcp.UpstreamNamePattern].
const NamePattern = agentsmcp.UpstreamNamePattern
