package mcpwire

// ProtocolSessionless is the first MCP revision without sessions (2026-07-28):
// no initialize, the protocol version in every request's _meta, no
// server-to-client requests (a tool asks with input_required, SEP-2322), the
// log level per request, and the Tasks extension (SEP-2663). MCP revisions
// are dates, so they compare as strings.
const ProtocolSessionless = "2026-07-28"

// Revision is an MCP protocol revision, a date ("2025-11-25") as a client
// negotiated it or sends it in Mcp-Protocol-Version; empty when none is
// known. What a revision lets a peer do is read through its methods, the
// one place where revisions are compared (they are dates, so they compare
// as strings).
type Revision string

// Sessionless reports whether r is [ProtocolSessionless] or later: no
// sessions, no server-to-client requests, input_required and the Tasks
// extension. An unknown revision is not.
func (r Revision) Sessionless() bool { return r >= ProtocolSessionless }

// Batches reports whether a peer of r may send JSON-RPC batches: every
// revision before 2025-06-18, which removed them, and an unknown one.
func (r Revision) Batches() bool { return r < "2025-06-18" }

// Legacy reports whether r is known and older than 2025-06-18, where
// structuredContent and resource_link content appeared: such a client
// knows neither.
func (r Revision) Legacy() bool { return r != "" && r < "2025-06-18" }

// Primes reports whether a client of r expects go-sdk's priming event at
// the start of an SSE response stream (2025-11-25 and later).
func (r Revision) Primes() bool { return r >= "2025-11-25" }
