// Package agentsmcp holds the domain of agents-mcp: the types every layer
// shares and the small interfaces that the outer packages implement.
//
// The layout follows the "standard package layout": this root package imports
// nothing from its own subpackages. Each subpackage implements these
// interfaces for one concern or dependency and depends inward:
//
//   - router: the MCP / JSON-RPC face (tools/list, tools/call, tools/validate,
//     streamable HTTP, legacy SSE, stdio).
//   - remote: a [ToolProvider] over upstream MCP servers, and the
//     [UpstreamManager] of the admin API.
//   - localtools: the [ToolProvider] of in-process tools, a leaf.
//   - memory: storage, vector memory and recall (memory/recall).
//   - agents: thought, plan and execute, over these interfaces only.
//   - api: the admin and health HTTP face.
//   - cmd/agents-mcp: wiring only.
//
// Which package may import which is stated in docs/architecture.md
// (Dependencies) and enforced by TestDependenciesPointInward.
//
// The MCP protocol types of github.com/modelcontextprotocol/go-sdk/mcp are the
// vocabulary of tools and tool results here (see docs/adr/0002).
package agentsmcp
