// Package agentsmcp holds the domain of agents-mcp: the types every layer
// shares, the interfaces between packages with their error codes
// (error.go), and the values requests carry in their context. It imports
// none of its subpackages; each implements these interfaces for one
// concern (router: the MCP face; remote: upstreams; localtools; memory:
// storage and recall; agents: thought, plan, execute; api: HTTP faces) and
// cmd/agents-mcp wires them. Behaviour over these types lives in leaf
// packages named by concern (internal/validate checks the invariants the
// types document, internal/toolperf, internal/view, internal/storedform,
// internal/credapply, internal/toolschema); what the root holds is stated
// in docs/architecture.md.
//
// # Vocabulary
//
// The provider of a tool is its Source: "local" for the server's own
// tools, an upstream's name otherwise ([RegisteredTool.Source],
// [ToolInfo.Source], [Learning.Sources]; JSON keeps "source" and
// "upstreams"). An upstream is defined by an [UpstreamConfig] and stored
// as an [UpstreamDefinition]. [Insight.Source] is who recorded an insight.
// Tools and tool results are go-sdk's mcp types (docs/adr/0002).
package agentsmcp
