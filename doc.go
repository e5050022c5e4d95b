// Package agentsmcp holds the domain of agents-mcp: the types every layer
// shares, the interfaces between packages with their error codes
// (error.go), and the values requests carry in their context. It imports
// none of its subpackages; what it holds is stated in docs/architecture.md.
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
