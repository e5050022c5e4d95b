package router

import (
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// sessionlessRevision is the first MCP revision without sessions (and with
// resultType, ttlMs and cacheScope on results).
const sessionlessRevision = "2026-07-28"

// usesSessionlessRevision reports whether a request's params say it speaks
// MCP 2026-07-28 or later: that revision carries the protocol version in
// every request's _meta, which is how go-sdk tells the revisions apart too
// (the request is refused before it gets here when the rest of that _meta
// is missing).
func usesSessionlessRevision(p mcp.Params) bool {
	if p == nil {
		return false
	}
	v, _ := p.GetMeta()[mcp.MetaKeyProtocolVersion].(string)
	return v >= sessionlessRevision
}

// resultTypeComplete is the resultType of a final result (2026-07-28).
const resultTypeComplete = "complete"
