package agentsmcp

import (
	"encoding/json"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// RegisteredTool is one tool as the tool registry (the router) holds it:
// the tool tools/list serves, the provider that serves it and the input
// schema its calls are validated against. It is what readers of the
// registry, such as the tool search, are given.
//
// A RegisteredTool is never modified after registration: a tool that its
// provider changes is registered as a new RegisteredTool. A reader may
// therefore keep what it derives from one (a tokenised document, a vector)
// keyed by its address for as long as the registry returns that address,
// and must itself modify nothing in it (Tool and InputSchema are the
// registry's own, not copies).
type RegisteredTool struct {
	// Tool is the tool as its provider listed it, under its client-visible
	// name.
	Tool *mcp.Tool
	// Source is the name of its provider: "local" for the server's own
	// tools, an upstream's name for an upstream's (as [ToolInfo.Source]).
	Source string
	// InputSchema is the tool's input schema as JSON: the bytes tools/list
	// serves and that arguments are validated against.
	InputSchema json.RawMessage
}
