package agentsmcp

import (
	"encoding/json"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// RegisteredTool is one tool as the registry (the router) holds it. It is
// never modified after registration (a changed tool is a new one), so a
// reader may key what it derives by its address, and must modify nothing.
type RegisteredTool struct {
	// Tool is the tool as listed, under its client-visible name.
	Tool *mcp.Tool
	// Source: "local" or an upstream's name (as [ToolInfo.Source]).
	Source string
	// InputSchema is the schema tools/list serves and calls are validated by.
	InputSchema json.RawMessage
}
