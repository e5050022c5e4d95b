// Package remote puts many upstream MCP servers behind one endpoint: a
// [Pool] keeps one long-lived go-sdk client session per configured upstream
// (streamable HTTP, legacy SSE or a supervised stdio child) and publishes each
// upstream to a [Registry] (the router) as an [agentsmcp.ToolProvider] whose
// tools are named `<upstream>__<tool>` (or, when that is over 64 characters,
// a stable [ToolAlias]), with resources and prompts proxied under namespaced
// URIs and names.
//
// The pool is built to be correct under failure:
//
//   - An upstream is [StateReady] only after initialize and the first
//     tools/list both succeeded; its tools are withdrawn from the registry
//     while it is [StateDown], so clients never see an upstream that is
//     "connected" with no tools or tools that cannot answer.
//   - Every call is bounded by the upstream's timeout, waits for one of
//     MaxConcurrency slots, and passes a circuit breaker that fails fast while
//     the upstream keeps failing.
//   - A lost session (a dead process, a dropped stream, an HTTP 404 for an
//     expired session) is re-established with exponential backoff and jitter,
//     capped at MaxBackoff and never given up; a call that met an expired
//     session is retried once on the new one, since the upstream never saw it.
//   - stdio children run in their own process group with an allowlisted
//     environment, their stderr goes to the log under the upstream's name,
//     and the whole group is killed and reaped on exit, removal or shutdown.
//
// Upstream URLs pass an egress policy ([Options.Egress], package egress)
// when added, on every request and on every connection, and an upstream's
// headers go only to its URL's origin: redirects to another origin are
// refused, and a legacy SSE endpoint on another origin gets no headers.
//
// During a call, progress notifications from the upstream reach the caller
// under the caller's own progress token, cancellation reaches the upstream,
// and sampling, elicitation and logging requests are forwarded to the calling
// client when they can be attributed to it (see [Pool] for the rule).
//
// A call from a client that declared the MCP Tasks extension may become a
// task of the upstream, shown to the client under a handle sealed with
// [Options.StateKey] and bound to the client's principal; [Tasks] serves
// tasks/get, tasks/update and tasks/cancel for those handles.
package remote
