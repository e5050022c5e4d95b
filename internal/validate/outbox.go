package validate

import agentsmcp "github.com/agents-mcp/agents-mcp"

// OutboxRequest checks the arguments of EnqueueOutbox; stores call
// it so that both reject the same requests.
func OutboxRequest(namespace string, op agentsmcp.OutboxOp, docIDs []string) error {
	if namespace == "" {
		return agentsmcp.Errorf(agentsmcp.EINVALID, "outbox namespace is required")
	}
	if op != agentsmcp.OutboxUpsert && op != agentsmcp.OutboxDelete {
		return agentsmcp.Errorf(agentsmcp.EINVALID, "outbox op %q is not upsert or delete", op)
	}
	for _, id := range docIDs {
		if id == "" {
			return agentsmcp.Errorf(agentsmcp.EINVALID, "outbox document id is required")
		}
	}
	return nil
}
