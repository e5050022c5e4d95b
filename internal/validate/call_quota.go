package validate

import (
	"path"
	"strings"
	"time"

	agentsmcp "github.com/agents-mcp/agents-mcp"
)

// CallQuota checks q's invariants: Limit > 0; Window between
// [agentsmcp.MinCallQuotaWindow] and [agentsmcp.MaxCallQuotaWindow]; Tool a
// valid path.Match pattern; Upstream without [agentsmcp.NamespaceSeparator].
func CallQuota(q agentsmcp.CallQuota) error {
	switch {
	case q.Limit <= 0:
		return agentsmcp.Errorf(agentsmcp.EINVALID, "call quota: limit must be positive, got %d", q.Limit)
	case time.Duration(q.Window) < agentsmcp.MinCallQuotaWindow || time.Duration(q.Window) > agentsmcp.MaxCallQuotaWindow:
		return agentsmcp.Errorf(agentsmcp.EINVALID, "call quota: window must be between %s and %s, got %s", agentsmcp.MinCallQuotaWindow, agentsmcp.MaxCallQuotaWindow, time.Duration(q.Window))
	case strings.Contains(q.Upstream, agentsmcp.NamespaceSeparator):
		return agentsmcp.Errorf(agentsmcp.EINVALID, "call quota: upstream %q must be a provider's name, without %q", q.Upstream, agentsmcp.NamespaceSeparator)
	}
	if _, err := path.Match(q.Tool, ""); err != nil {
		return agentsmcp.Errorf(agentsmcp.EINVALID, "call quota: tool pattern %q: %v", q.Tool, err)
	}
	return nil
}

// CallQuotas checks each quota of qs and their number (at most
// [agentsmcp.MaxCallQuotas]).
func CallQuotas(qs []agentsmcp.CallQuota) error {
	if len(qs) > agentsmcp.MaxCallQuotas {
		return agentsmcp.Errorf(agentsmcp.EINVALID, "at most %d call quotas, got %d", agentsmcp.MaxCallQuotas, len(qs))
	}
	for i, q := range qs {
		if err := CallQuota(q); err != nil {
			return agentsmcp.Errorf(agentsmcp.EINVALID, "call_quotas[%d]: %s", i, agentsmcp.ErrorMessage(err))
		}
	}
	return nil
}
