package mcpwire

import (
	"context"
	"encoding/json"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// RawToolResult lets a tool provider hand back the result of a tools/call
// as the JSON it already has (a relayed upstream's answer), so that the
// server writes those bytes instead of decoding them into a
// [mcp.CallToolResult] and encoding that again. The server puts one in the
// context of a call whose answer it can write raw ([WithRawToolResult]); a
// provider that finds it may [RawToolResult.Set] the JSON and return the
// placeholder it gets back. Whoever reads the answer in between (the
// router's recording of the call) sees the placeholder, an empty successful
// result, so a provider must only set results that are successful (no
// isError), complete (no input_required, no task) and need no rewriting.
type RawToolResult struct {
	placeholder *mcp.CallToolResult
	raw         json.RawMessage
}

type rawToolResultKey struct{}

// WithRawToolResult returns ctx carrying h.
func WithRawToolResult(ctx context.Context, h *RawToolResult) context.Context {
	return context.WithValue(ctx, rawToolResultKey{}, h)
}

// RawToolResultFrom returns the holder in ctx, or nil when the caller
// wants a decoded result.
func RawToolResultFrom(ctx context.Context) *RawToolResult {
	h, _ := ctx.Value(rawToolResultKey{}).(*RawToolResult)
	return h
}

// Set keeps raw, the JSON of a successful, complete tools/call result, and
// returns the placeholder the provider returns in its place.
func (h *RawToolResult) Set(raw json.RawMessage) *mcp.CallToolResult {
	h.raw = raw
	// Content not nil: go-sdk's server replaces a result without content
	// by a copy (to encode [] rather than null), and Take would miss it.
	h.placeholder = &mcp.CallToolResult{Content: []mcp.Content{}}
	return h.placeholder
}

// Take returns the JSON kept by Set if res is its placeholder (and not
// some other result, from a later fallback or a wrapper that replaced it).
func (h *RawToolResult) Take(res mcp.Result) (json.RawMessage, bool) {
	if h.placeholder == nil {
		return nil, false
	}
	if r, ok := res.(*mcp.CallToolResult); !ok || r != h.placeholder {
		return nil, false
	}
	return h.raw, true
}

// QuietCaller is implemented by a [ToolProvider] whose tools/call may be
// answered by a server outside its MCP library's session handling (the
// router's tools/call fast path). QuietCall reports whether a call of tool
// started now reaches its caller only through the caller's session, and
// only in these ways, each of which the caller turns on itself: progress
// notifications when the request has a progress token, log messages after
// logging/setLevel, and sampling and elicitation requests when the caller
// declared those capabilities. A provider that may ask the caller for
// anything else (roots, say) on a call of tool reports false.
type QuietCaller interface {
	QuietCall(tool string) bool
}
