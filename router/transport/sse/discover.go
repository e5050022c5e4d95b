package sse

import (
	"context"
	"encoding/json"
	"log/slog"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// This file keeps server/discover off the legacy transport. HTTP+SSE is
// the transport of MCP 2024-11-05, whose sessions begin with initialize;
// server/discover belongs to the sessionless revisions (2026-07-28 and
// later), which this transport does not carry. Answered by go-sdk, it
// listed the session revisions in the sessionless shape, and each client
// family read that differently. Here it gets what any server of the
// transport's revisions answers, method not found (-32601), so that every
// client that probes with it falls back to initialize the same way.

// methodDiscover is the sessionless revisions' discovery request.
const methodDiscover = "server/discover"

// discoverRefusal returns the answer to data when it is a server/discover
// request, nil otherwise.
func discoverRefusal(data []byte) []byte {
	var msg struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	if json.Unmarshal(data, &msg) != nil || msg.Method != methodDiscover || len(msg.ID) == 0 || string(msg.ID) == "null" {
		return nil
	}
	out, err := json.Marshal(map[string]any{
		"jsonrpc": "2.0",
		"id":      msg.ID,
		"error": map[string]any{
			"code": jsonrpc.CodeMethodNotFound,
			"message": "Method not found: server/discover is not served on the HTTP+SSE transport (MCP 2024-11-05 to 2025-11-25); " +
				"send initialize, or use streamable HTTP (/mcp) for MCP 2026-07-28",
		},
	})
	if err != nil {
		return nil
	}
	return out
}

// refuseDiscover answers data on c's stream when it is a server/discover
// request, and reports whether it did (or would have, on an ended
// session: ended is then true).
func (c *conn) refuseDiscover(data []byte, log *slog.Logger) (taken, ended bool) {
	answer := discoverRefusal(data)
	if answer == nil {
		return false, false
	}
	return true, !c.startFast(func(context.Context) []byte { return answer }, log)
}
