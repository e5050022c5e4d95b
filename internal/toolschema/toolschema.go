// Package toolschema holds what the tool registry and the tool providers
// accept of a tool: a valid name and an object input schema (Check), and a
// schema as the JSON bytes that are served and compiled (JSON). A leaf on
// the root and go-sdk's mcp types.
package toolschema

import (
	"encoding/json"
	"errors"
	"fmt"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Check rejects a tool that go-sdk would panic on or clients would
// refuse: a name that does not match [agentsmcp.ToolNamePattern], or an input schema
// that is not a JSON object with "type": "object". The router checks every
// provider's tools with it, and localtools checks a tool when it is added.
func Check(t *mcp.Tool) error {
	if t == nil {
		return errors.New("nil tool")
	}
	if !agentsmcp.ToolNamePattern.MatchString(t.Name) {
		return fmt.Errorf("tool name %q does not match %s", t.Name, agentsmcp.ToolNamePattern)
	}
	raw := JSON(t.InputSchema)
	var probe struct {
		Type any `json:"type"`
	}
	if len(raw) == 0 || json.Unmarshal(raw, &probe) != nil {
		return fmt.Errorf("tool %q: input schema is not a JSON object", t.Name)
	}
	if probe.Type != "object" {
		return fmt.Errorf("tool %q: input schema must have \"type\": \"object\" (got %v)", t.Name, probe.Type)
	}
	return nil
}

// JSON returns a schema (as an [mcp.Tool] holds it) as JSON,
// passing json.RawMessage and []byte through unchanged, so that upstream
// bytes are what gets compiled and served; nil when it does not encode.
func JSON(schema any) json.RawMessage {
	switch s := schema.(type) {
	case nil:
		return nil
	case json.RawMessage:
		return s
	case []byte:
		return s
	default:
		b, err := json.Marshal(s)
		if err != nil {
			return nil
		}
		return b
	}
}
