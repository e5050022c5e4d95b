package admin

import (
	"net/http"

	agentsmcp "github.com/agents-mcp/agents-mcp"
)

// GET /audit: the audit trail, newest first.
func (h *Handler) listAudit(w http.ResponseWriter, r *http.Request) error {
	if h.opts.AuditLog == nil {
		return unavailable("the audit trail")
	}
	p, err := queryParams(r, "principal", "kind", "target", "outcome", "requestId", "since", "until", "limit", "cursor")
	if err != nil {
		return err
	}
	f := agentsmcp.AuditFilter{
		Principal: p.str("principal"), Target: p.str("target"), RequestID: p.str("requestId"), Cursor: p.str("cursor"),
	}
	if f.Kind, err = oneOf(p, "kind", agentsmcp.AuditKinds); err != nil {
		return err
	}
	if f.Outcome, err = oneOf(p, "outcome", agentsmcp.AuditOutcomes); err != nil {
		return err
	}
	if f.Since, f.Until, err = p.window(); err != nil {
		return err
	}
	if f.Limit, err = p.limit(); err != nil {
		return err
	}
	ctx, cancel := h.requestContext(r)
	defer cancel()
	entries, next, err := h.opts.AuditLog.FindAuditEntries(ctx, f)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, newPage(entries, next, ""))
	return nil
}
