package toolperf

import agentsmcp "github.com/agents-mcp/agents-mcp"

// SuccessRate is the share of p's calls without error, 0 with no calls.
func SuccessRate(p *agentsmcp.ToolPerformance) float64 {
	if p.Calls == 0 {
		return 0
	}
	return float64(p.Calls-p.Errors) / float64(p.Calls)
}
