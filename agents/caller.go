package agents

import (
	"context"
	"encoding/json"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agents-mcp/agents-mcp/internal/mcpwire"
)

// Caller is the client a task reports to while one of its requests waits
// for the task: it receives progress and can be asked for inputs and
// confirmations. A task has no caller when nobody waits (execute_task
// without wait, a task resumed after a restart); it then pauses where it
// would have asked.
type Caller interface {
	// Progress reports that done of total steps have ended; message says
	// what happened last. It must not block for long.
	Progress(ctx context.Context, done, total int, message string)
	// Elicit asks the user for the values described by schema (a flat JSON
	// Schema object, as MCP elicitation allows). It returns the values
	// when the user accepted, ok false when they declined or cancelled,
	// and ENOTIMPLEMENTED when this client cannot be asked.
	Elicit(ctx context.Context, message string, schema json.RawMessage) (values json.RawMessage, ok bool, err error)
	// Session is the MCP session tool calls are made for, so that an
	// upstream's sampling and elicitation requests reach this client; nil
	// when there is none.
	Session() *mcp.ServerSession
	// Request carries the values of the waiting request, not its
	// cancellation, or is nil. Tool calls made while it waits take their
	// values from it, so that an upstream's requests to the client travel
	// on that request's stream (streamable HTTP), as do progress and
	// questions; a client need not open the optional GET stream.
	Request() context.Context
}

// IsMRTRClient reports whether the client of the request in ctx, req,
// speaks MCP 2026-07-28 (mcpwire.ProtocolSessionless) or later, and so is
// asked through input_required results: a server cannot send it requests.
// Its protocol capabilities are those the edge put in ctx
// ([mcpwire.CallCapabilities]).
func IsMRTRClient(ctx context.Context, req *mcp.CallToolRequest) bool {
	return req != nil && mcpwire.CallCapabilities(ctx, req).Sessionless()
}

// ClientCanSample reports whether the client of ss declared sampling and
// can be sent a sampling request: not a client of MCP 2026-07-28 or later
// (mcpwire.ProtocolSessionless), which has no server-to-client requests.
func ClientCanSample(ss *mcp.ServerSession) bool {
	if ss == nil {
		return false
	}
	return mcpwire.SessionCapabilities(ss.InitializeParams()).CanSample()
}
