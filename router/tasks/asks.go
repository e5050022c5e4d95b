package tasks

import (
	"maps"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agents-mcp/agents-mcp/internal/mcpwire"
)

// askable keeps, of the questions of an input_required task, those the
// client of caps declared it can answer: an elicitation/create only to a
// client that declared elicitation, sampling/createMessage sampling, and
// roots/list roots, as a server asks nothing else of a client.
//
// A client that declared the Tasks extension but not elicitation (the
// Inspector CLI) hands every question it is given to a form it cannot
// show, and waits there for good instead of polling; shown none, it polls
// until the task ends, which tasks.input_wait bounds. The status message
// still names each question's key, so that such a client can answer with
// tasks/update, or its user with resume_task.
func askable(asks mcp.InputRequestMap, caps mcpwire.Capabilities) mcp.InputRequestMap {
	out := maps.Clone(asks)
	for k, ask := range asks {
		keep := true
		switch ask.(type) {
		case *mcp.ElicitParams:
			keep = caps.Elicitation()
		case *mcp.CreateMessageParams:
			keep = caps.Sampling()
		case *mcp.ListRootsParams:
			keep = caps.Roots()
		}
		if !keep {
			delete(out, k)
		}
	}
	return out
}

// detailedTaskFor is [detailedTask] as the client of caps may be shown it.
func detailedTaskFor(t *mcpwire.MCPTask, caps mcpwire.Capabilities) *DetailedTask {
	d := detailedTask(t)
	if d.InputRequests != nil {
		asks := askable(*d.InputRequests, caps)
		d.InputRequests = &asks
	}
	return d
}
