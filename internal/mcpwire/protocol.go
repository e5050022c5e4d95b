package mcpwire

// ProtocolSessionless is the first MCP revision without sessions (2026-07-28):
// no initialize, the protocol version in every request's _meta, no
// server-to-client requests (a tool asks with input_required, SEP-2322), the
// log level per request, and the Tasks extension (SEP-2663). MCP revisions
// are dates, so they compare as strings.
const ProtocolSessionless = "2026-07-28"

// Sessionless reports whether the MCP revision v (a date, as negotiated or
// sent in Mcp-Protocol-Version) is [ProtocolSessionless] or later: no
// sessions, no server-to-client requests, input_required and the Tasks
// extension. An empty v (no revision known) is not.
func Sessionless(v string) bool { return v >= ProtocolSessionless }
