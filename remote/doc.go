// Package remote will implement agentsmcp.ToolProvider over a pool of
// upstream MCP servers.
package remote
