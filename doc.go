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
// The algorithms over these types live in small leaf packages named by
// their concern, which import the root (never the reverse): the invariants
// that the types document are checked by internal/validate (validate.Plan,
// validate.Task, validate.UpstreamConfig…), tool performance's arithmetic
// is internal/toolperf, the redacted views shown over MCP and the admin API
// are internal/view, the stored form of a task is internal/storedform, a
// credential put on a request is internal/credapply and what the registry
// accepts of a tool is internal/toolschema.
//
// Which package may import which is stated in docs/architecture.md
// (Dependencies) and enforced by TestDependenciesPointInward.
//
// # Vocabulary
//
// The provider of a tool, the local tools or one upstream, is named by its
// Source: "local" for the server's own tools, the upstream's name otherwise.
// Every type that records where a tool came from calls the field Source
// ([RegisteredTool.Source], [ToolInfo.Source], router.ToolCallRecord.Source,
// [LearningFilter.Source]) or Sources ([Learning.Sources]); JSON keeps the
// names it had ("source", "upstreams"). An upstream is one MCP server the
// pool connects to, defined by an [UpstreamConfig] (the one name of that
// type) and stored as an [UpstreamDefinition]. [Insight.Source] is another
// sense of the word: who recorded the insight.
//
// The MCP protocol types of github.com/modelcontextprotocol/go-sdk/mcp are the
// vocabulary of tools and tool results here (see docs/adr/0002).
package agentsmcp
