// Package telemetry is how agents-mcp is observed in production: Prometheus
// metrics on /metrics ([Metrics]), OpenTelemetry traces exported where the
// standard OTEL_* environment variables say ([SetupTracing],
// [HTTPMiddleware]), and request ids that tie an HTTP answer to the JSON log
// lines it caused ([RequestIDMiddleware], [NewLogHandler]).
//
// Every part is inert until wired: a [Metrics] reads its sources only when
// scraped and owns no goroutine; [SetupTracing] installs nothing that sends
// data unless an exporter is configured; the middlewares only add headers
// and context values.
//
// The packages that emit spans (router, remote, agents) use the OpenTelemetry
// API's global tracer provider (otel.Tracer), not this package, so they stay
// free of exporters and configuration. With no provider installed (tracing
// off), the router, the pool and [HTTPMiddleware] start no span at all
// (internal/tracing.Off): a tools/call then allocates nothing for tracing.
// This package imports none of them, and none of them may import it (the
// dependency rules of architecture_test.go): they read the request id from
// the root package (agentsmcp.RequestIDFrom), and only cmd wires this
// package.
//
// # Metrics
//
// All names start with agents_mcp_. Label values are bounded: tool names
// come from the catalog (others are counted as "unknown"), sources are
// provider names, and no label ever holds a principal, an argument or an
// error text.
//
//	agents_mcp_build_info{version,go_version}                    1
//	agents_mcp_tool_calls_total{tool,source,outcome}             counter; outcome ok|error
//	agents_mcp_tool_call_errors_total{tool,source}               counter
//	agents_mcp_tool_call_duration_seconds{tool}                  histogram
//	agents_mcp_upstream_state{upstream,state}                    1 for the current state, 0 for the others
//	agents_mcp_upstream_tools{upstream}                          tools exposed
//	agents_mcp_tasks{status}                                     stored tasks by status (cached)
//	agents_mcp_vector_outbox_pending                             vector outbox backlog (cached)
//	agents_mcp_vector_outbox_oldest_age_seconds                  age of its oldest entry, 0 when empty
//	agents_mcp_rate_limited_requests_total{transport}            counter
//	agents_mcp_auth_failures_total{reason}                       counter
//	agents_mcp_audit_entries_dropped_total                       counter
//	agents_mcp_audit_entries_evicted_total                       counter; deleted by the size bound, oldest first
//	agents_mcp_tool_performance_dropped_total                    counter
//	agents_mcp_tool_calls_fast_path_total                        counter; tools/call answered by the fast path (ADR 0014)
//	agents_mcp_metrics_source_errors_total{source}               failed reads of tasks or outbox
//
// plus the Go runtime (go_*) and process (process_*) collectors.
//
// # Traces
//
// Span names and attributes emitted by agents-mcp:
//
//	HTTP server spans ([HTTPMiddleware])   "<METHOD> /mcp|/sse|/messages|/admin|/.well-known", or "<METHOD>";
//	                                       agents_mcp.request_id
//	"executor step" (agents)               agents_mcp.task.id, agents_mcp.step.id, agents_mcp.tool,
//	                                       agents_mcp.attempts, agents_mcp.step.status; one "attempt" event per
//	                                       attempt (agents_mcp.attempt, agents_mcp.ok, error.message,
//	                                       agents_mcp.retryable); status Error when the step failed
//	"tools/call <tool>" (router)           agents_mcp.tool, agents_mcp.source, agents_mcp.outcome ok|tool_error|error;
//	                                       the error recorded
//	"upstream call" (remote), client kind  agents_mcp.upstream, agents_mcp.tool (as clients name it),
//	                                       agents_mcp.outcome ok|tool_error|error; the error recorded
//
// Trace context travels in ctx inside the process and as W3C traceparent /
// tracestate headers between processes ([PropagatingTransport] for calls to
// upstreams).
package telemetry
