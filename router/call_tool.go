package router

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agents-mcp/agents-mcp/internal/mcpwire"
	"github.com/agents-mcp/agents-mcp/localtools"
)

// CallToolName is the discovery meta-tool that calls any tool the caller
// may use by name ([Router.AddCallTool]).
const CallToolName = "call_tool"

// callToolSchema is written by hand: the arguments are the called tool's,
// checked against its own schema when the call is dispatched.
const callToolSchema = `{"type":"object","properties":{` +
	`"name":{"type":"string","minLength":1,"maxLength":128,"description":"The tool to call, as find_tools names it"},` +
	`"arguments":{"type":"object","description":"The tool's arguments, as its input schema (from find_tools) asks"}},` +
	`"required":["name"],"additionalProperties":false}`

// callToolArgs are the arguments of [CallToolName].
type callToolArgs struct {
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
}

// AddCallTool registers [CallToolName] on l. Its call of tool T with
// arguments A is dispatched again through the entry point the call came
// from, as a tools/call of T with A and everything else of the request
// (its session, headers and credentials, progress token, input responses
// and request state): so T's call gets exactly what a direct tools/call of
// T gets (argument validation, the allowlist, draining, the middleware
// chain, the audit record of T, elicitation, input_required and progress,
// T's result unchanged), and the call of the meta-tool itself is not
// recorded (the audit shows T, not call_tool). A tool the caller may not
// use is refused exactly as a tool that does not exist.
func (r *Router) AddCallTool(l *localtools.Provider) error {
	return localtools.Add(l, &mcp.Tool{
		Name:  CallToolName,
		Title: "Call a tool",
		Description: "Call any tool you may use by its name, with its arguments: use find_tools first to get the name and " +
			"the input schema. The result is the called tool's own.",
		InputSchema: json.RawMessage(callToolSchema),
		Annotations: &mcp.ToolAnnotations{OpenWorldHint: new(true)},
	}, func(ctx context.Context, req *mcp.CallToolRequest, args callToolArgs) (*mcp.CallToolResult, any, error) {
		res, err := r.callThrough(ctx, req, args)
		return res, nil, err
	})
}

// callThrough dispatches outer's call of args.Name again (see
// [Router.AddCallTool]).
func (r *Router) callThrough(ctx context.Context, outer *mcp.CallToolRequest, args callToolArgs) (*mcp.CallToolResult, error) {
	if args.Name == CallToolName {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("%s cannot call itself", CallToolName)}
	}
	params := *outer.Params
	params.Name, params.Arguments = args.Name, args.Arguments
	inner := *outer
	inner.Params = &params
	ctx = withRedispatch(ctx)
	switch entryOf(ctx) {
	case entryBridge:
		return r.callWithoutSession(ctx, &inner)
	case entryInProcess:
		return r.CallTool(ctx, &inner)
	}
	res, err := r.fastHandler()(ctx, "tools/call", &inner)
	if err != nil {
		var rpcErr *jsonrpc.Error
		if errors.As(err, &rpcErr) && rpcErr.Message == notAllowed(args.Name).(*jsonrpc.Error).Message {
			// Through the meta-tool, a tool the caller may not use is one
			// that does not exist, as find_tools never shows it.
			return nil, unknownTool(args.Name)
		}
		return nil, err
	}
	switch res := res.(type) {
	case *mcp.CallToolResult:
		return res, nil
	case rawCallResult:
		// T's answer as its upstream wrote it: handed on raw to the outer
		// call when it writes raw, else decoded.
		if h := mcpwire.RawToolResultFrom(ctx); h != nil {
			return h.Set(res.raw), nil
		}
		var out mcp.CallToolResult
		if err := json.Unmarshal(res.raw, &out); err != nil {
			return nil, fmt.Errorf("decode the result of %q: %w", args.Name, err)
		}
		return &out, nil
	}
	return nil, fmt.Errorf("tools/call of %q answered %T", args.Name, res)
}

// unknownTool is go-sdk's error for a tools/call of a tool it does not
// have (and the fast path's: see [Router.callToolAsSDK]).
func unknownTool(name string) error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("unknown tool %q", name)}
}

// callEntry is the entry point a tools/call came through, for
// [Router.callThrough]: go-sdk's sessions and the fast paths (the zero
// value), the REST bridge, or an in-process call.
type callEntry int

const (
	entrySession callEntry = iota
	entryBridge
	entryInProcess
)

type callEntryKey struct{}

type redispatchKey struct{}

// withEntry returns ctx saying the call came through e.
func withEntry(ctx context.Context, e callEntry) context.Context {
	return context.WithValue(ctx, callEntryKey{}, e)
}

// entryOf returns the entry point ctx's call came through.
func entryOf(ctx context.Context) callEntry {
	e, _ := ctx.Value(callEntryKey{}).(callEntry)
	return e
}

// withRedispatch marks ctx as that of a call dispatched again by the call
// tool: its request was admitted by the rate limit once already, and the
// meta-tool's own call is not recorded.
func withRedispatch(ctx context.Context) context.Context {
	return context.WithValue(ctx, redispatchKey{}, true)
}

// redispatched reports whether ctx is that of a call dispatched again by
// the call tool.
func redispatched(ctx context.Context) bool {
	ok, _ := ctx.Value(redispatchKey{}).(bool)
	return ok
}
