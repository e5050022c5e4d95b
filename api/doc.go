// Package api is the operational HTTP face of agents-mcp: /healthz and
// /readyz with named readiness checks and draining ([Health]), and the
// http.Server every route is served by, with its connection time limits
// ([NewServer]). Its subpackages hold the rest: admin (the admin REST API
// under /admin/v1), auth (credentials, scopes and rate limits) and
// telemetry (metrics, tracing and request ids).
package api
