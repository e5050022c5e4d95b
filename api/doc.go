// Package api is the operational HTTP face of agents-mcp: health and
// readiness now, and the admin REST API under /admin/v1 (a later issue).
package api
