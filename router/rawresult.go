package router

import (
	"context"
	"encoding/json"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agents-mcp/agents-mcp/internal/mcpwire"
)

// rawResultMiddleware offers the providers of a client's tools/call an
// [mcpwire.RawToolResult], and writes the JSON a provider set there as the
// answer, unchanged: a relayed upstream's result is then neither decoded
// into a CallToolResult nor encoded again (each costs CPU per call). It does so only for
// callers with a session of a protocol before 2026-07-28, which expect the
// result as the upstream wrote it, and not for calls that may become tasks
// (the task machinery reads the result). Everything around the provider
// runs as on any call: validation, allowlists and rate limits before it,
// the recording after it, which sees the placeholder, an empty successful
// result (a provider sets only successful results: see
// [mcpwire.RawToolResult]).
func rawResultMiddleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if method != "tools/call" {
			return next(ctx, method, req)
		}
		call, ok := req.(*mcp.CallToolRequest)
		if !ok || call.Session == nil || call.Params == nil || mcpwire.TaskModeFrom(ctx) != nil ||
			capabilitiesOf(ctx, call).Sessionless() {
			return next(ctx, method, req)
		}
		h := &mcpwire.RawToolResult{}
		res, err := next(mcpwire.WithRawToolResult(ctx, h), method, req)
		if err == nil {
			if raw, ok := h.Take(res); ok {
				return rawCallResult{CallToolResult: res.(*mcp.CallToolResult), raw: raw}, nil
			}
		}
		return res, err
	}
}

// rawCallResult is an [mcp.Result] (through the embedded placeholder) that
// encodes as the JSON a provider gave.
type rawCallResult struct {
	*mcp.CallToolResult
	raw json.RawMessage
}

func (r rawCallResult) MarshalJSON() ([]byte, error) { return r.raw, nil }

// RawResultJSON is the JSON the provider gave, for a transport that
// writes the answer itself (the tools/call fast path) and can put it in
// the envelope without encoding it as a value first.
func (r rawCallResult) RawResultJSON() json.RawMessage { return r.raw }
