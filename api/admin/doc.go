// Package admin is the admin REST API of agents-mcp, served under
// [Prefix] (/admin/v1): what the server remembers (learnings, insights,
// plan patterns, tool performance), its tasks, plans and thoughts, its
// upstream MCP servers, long-running operations, and the audit trail. The
// API is described by an OpenAPI 3.1 document served at
// /admin/v1/openapi.json, which the tests hold to every route.
//
// Conventions, the same on every route:
//
//   - JSON everywhere. Errors are {"error":{"code":…,"message":…}} with the
//     code one of invalid, not_found, conflict, unauthenticated, forbidden,
//     unavailable, internal, rate_limited and the matching HTTP status; the
//     message of an internal error never carries details, which are logged
//     instead.
//   - Lists answer {"items":[…],"next":"…"}: next, when not empty, is the
//     cursor of the following page (pass it as ?cursor=). Unknown query
//     parameters are refused, so that a typo never silently widens a
//     filter.
//   - Request bodies are at most [Options.MaxBodyBytes] (413 beyond),
//     application/json, and decoded strictly: an unknown field is a 400.
//   - Every write, even one without a body, must carry "Content-Type:
//     application/json" (415 otherwise) and, when it has an Origin header,
//     the server's own origin (403 otherwise): a web page of another site
//     can send neither without a CORS preflight, which is never granted.
//   - Authorisation is per route, from the [agentsmcp.Principal] that the
//     authentication middleware in front of this handler put in the request
//     context: GET routes need scope admin:read, POST and DELETE routes
//     admin:write. No principal is 401, a missing scope 403.
//   - Every write (POST, DELETE), refused or not, is recorded through
//     [Options.Audit] as an [agentsmcp.AuditEntry] of kind admin_write with
//     the route pattern as target and the request body redacted by
//     [redact.Arguments] (and upstream header values removed
//     before that).
//   - Long operations (refreshing an upstream, rebuilding the vector index)
//     answer 202 Accepted with {"operation":{…}} and a Location header
//     naming /admin/v1/operations/{id}, which reports status and progress.
//     Operations belong to the [Handler], not to the request that started
//     them: [Handler.Close] stops them.
//
// Upstreams added through the API may use the streamable and sse
// transports only. A stdio upstream runs a command on the server; taking
// one from the network would be remote code execution, so stdio upstreams
// can only come from the config file. Header values sent for an upstream
// are used as given: ${VAR} references are not expanded, so that an API
// caller cannot make the server send its own environment to a URL of the
// caller's choosing.
package admin
