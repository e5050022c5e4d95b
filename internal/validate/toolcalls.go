package validate

import agentsmcp "github.com/agents-mcp/agents-mcp"

// ToolCall checks a ToolCall: EINVALID for an empty Tool or a negative
// Duration.
func ToolCall(c agentsmcp.ToolCall) error {
	switch {
	case c.Tool == "":
		return agentsmcp.Errorf(agentsmcp.EINVALID, "tool call: tool is required")
	case c.Duration < 0:
		return agentsmcp.Errorf(agentsmcp.EINVALID, "tool call %q: duration %v is negative", c.Tool, c.Duration)
	}
	return nil
}

// ToolCalls checks a batch for RecordToolCalls: at most
// MaxToolCallBatch calls, each valid.
func ToolCalls(calls []agentsmcp.ToolCall) error {
	if len(calls) > agentsmcp.MaxToolCallBatch {
		return agentsmcp.Errorf(agentsmcp.EINVALID, "tool call batch has %d calls; the limit is %d", len(calls), agentsmcp.MaxToolCallBatch)
	}
	for i, c := range calls {
		if err := ToolCall(c); err != nil {
			return agentsmcp.Errorf(agentsmcp.EINVALID, "tool call %d: %s", i, agentsmcp.ErrorMessage(err))
		}
	}
	return nil
}
