package admin

import (
	"net/http"
	"time"

	agentsmcp "github.com/agents-mcp/agents-mcp"
)

// This file serves the two small routes the console needs besides the
// resources: who the caller is, and the counts of its Overview page.

// Whoami is the caller as the server authenticated it: what the console
// shows as signed in, and the scopes it checks before it offers a page or
// a button, so that a key without admin:read gets a clear refusal.
type Whoami struct {
	ID     string   `json:"id"`
	Name   string   `json:"name,omitempty"`
	Scopes []string `json:"scopes"`
}

// GET /whoami: any authenticated caller, whatever its scopes.
func (h *Handler) whoami(w http.ResponseWriter, r *http.Request) {
	defer h.recoverPanic(w, r)
	p := agentsmcp.PrincipalFrom(r.Context())
	if p == nil {
		h.refuse(w, r, errorf(http.StatusUnauthorized, CodeUnauthenticated, "authentication is required"), agentsmcp.ScopeAdminRead)
		return
	}
	if _, err := queryParams(r); err != nil {
		h.fail(w, r, err)
		return
	}
	scopes := p.Scopes
	if scopes == nil {
		scopes = []string{}
	}
	writeJSON(w, http.StatusOK, Whoami{ID: p.ID, Name: p.Name, Scopes: scopes})
}

// Summary holds the counts of the console's Overview: tasks by status and
// the vector outbox backlog. A part whose source is not configured, or
// failed, is null, with the reason in Problems; the other part is still
// answered.
type Summary struct {
	Tasks    map[agentsmcp.TaskStatus]int64 `json:"tasks"`
	Outbox   *OutboxSummary                 `json:"outbox"`
	Problems []string                       `json:"problems,omitempty"`
}

// OutboxSummary is the vector outbox backlog: entries not yet in the
// vector index, and when the oldest was enqueued (absent when none is).
type OutboxSummary struct {
	Pending int64      `json:"pending"`
	Oldest  *time.Time `json:"oldest,omitempty"`
}

// GET /summary
func (h *Handler) summary(w http.ResponseWriter, r *http.Request) error {
	if _, err := queryParams(r); err != nil {
		return err
	}
	ctx, cancel := h.requestContext(r)
	defer cancel()
	var s Summary
	if h.opts.TaskCounter == nil {
		s.Problems = append(s.Problems, "tasks: not configured")
	} else if counts, err := h.opts.TaskCounter.CountTasksByStatus(ctx); err != nil {
		s.Problems = append(s.Problems, "tasks: "+agentsmcp.ErrorMessage(err))
	} else {
		s.Tasks = counts
	}
	if h.opts.OutboxBacklog == nil {
		s.Problems = append(s.Problems, "outbox: not configured")
	} else if n, oldest, err := h.opts.OutboxBacklog(ctx); err != nil {
		s.Problems = append(s.Problems, "outbox: "+agentsmcp.ErrorMessage(err))
	} else {
		s.Outbox = &OutboxSummary{Pending: n}
		if !oldest.IsZero() {
			s.Outbox.Oldest = &oldest
		}
	}
	writeJSON(w, http.StatusOK, s)
	return nil
}
