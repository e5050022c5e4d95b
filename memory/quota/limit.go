package quota

import agentsmcp "github.com/agents-mcp/agents-mcp"

// Quota bounds the [agentsmcp.Usage] of each principal; a zero field is no bound.
type Quota struct {
	MaxCount int64 `json:"maxCount,omitempty"`
	MaxBytes int64 `json:"maxBytes,omitempty"`
}

// Admit returns nil when one more record of size bytes fits u, else an
// EQUOTA error naming principal, what ("insights") and the setting prefix.
func (q Quota) Admit(u agentsmcp.Usage, size int64, principal, what, setting string) error {
	switch {
	case q.MaxCount > 0 && u.Count+1 > q.MaxCount:
		return agentsmcp.Errorf(agentsmcp.EQUOTA, "quota exceeded: principal %q holds %d %s, and its quota (%s.max_count) is %d; delete some, or wait for their retention",
			principal, u.Count, what, setting, q.MaxCount)
	case q.MaxBytes > 0 && u.Bytes+size > q.MaxBytes:
		return agentsmcp.Errorf(agentsmcp.EQUOTA, "quota exceeded: principal %q holds %d bytes of %s and this one is %d bytes more; its quota (%s.max_bytes) is %d bytes; delete some, or wait for their retention",
			principal, u.Bytes, what, size, setting, q.MaxBytes)
	}
	return nil
}
