package main

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/api/auth"
	"github.com/agents-mcp/agents-mcp/api/telemetry"
	"github.com/agents-mcp/agents-mcp/cmd/agents-mcp/internal/config"
	"github.com/agents-mcp/agents-mcp/internal/storedform"
	"github.com/agents-mcp/agents-mcp/memory/auditlog"
	"github.com/agents-mcp/agents-mcp/router"
)

// security is who may call what, how often, and the trail of it: built
// before the app so that a refused stdio credential does no work.
type security struct {
	authn   *auth.Authenticator
	limiter *auth.Limiter
	// stdio is the principal of the stdio session; nil for serve, whose
	// requests each carry their own.
	stdio *agentsmcp.Principal

	// Set by assemble, once the store is open; the hooks below read them
	// through the app.
	audit *auditlog.Recorder
	// authFailures summarises the refusals of each client address, so that
	// a flood of bad credentials adds a few entries a minute to the trail.
	authFailures *auditlog.Summarizer
	metrics      *telemetry.Metrics
}

func newSecurity(cfg *config.Config, logger *slog.Logger) (*security, error) {
	acfg := cfg.AuthConfig()
	acfg.Logger = logger
	s := &security{limiter: auth.NewLimiter(cfg.RateLimit, cfg.RateBurst)}
	acfg.OnFailure = s.authFailed
	authn, err := auth.New(acfg)
	if err != nil {
		return nil, err
	}
	s.authn = authn
	s.limiter.OnReject = func(r *http.Request, p *agentsmcp.Principal, retryAfter time.Duration) {
		s.metrics.ObserveRateLimited(telemetry.TransportOf(r))
		who := "none"
		if p != nil {
			who = p.ID
		}
		if s.authFailures == nil {
			return
		}
		s.authFailures.Record(auth.ClientAddress(r), &agentsmcp.AuditEntry{
			Kind: agentsmcp.AuditAuthFailure, Principal: who, Target: r.Method + " " + r.URL.Path,
			RequestID: r.Header.Get(agentsmcp.RequestIDHeader), Outcome: agentsmcp.AuditDenied,
			Error: fmt.Sprintf("rate limited; retry after %s", retryAfter.Round(time.Millisecond)),
		})
	}
	return s, nil
}

// authFailed counts a refused HTTP request and audits it, summarised per
// client address (see auditlog.Summarizer).
func (s *security) authFailed(r *http.Request, principalHint string, status int, reason string) {
	s.metrics.ObserveAuthFailure(telemetry.AuthFailureReason(status, principalHint))
	if s.authFailures == nil {
		return // before the store is open: nothing is served yet
	}
	s.authFailures.Record(auth.ClientAddress(r), &agentsmcp.AuditEntry{
		Kind: agentsmcp.AuditAuthFailure, Principal: principalHint, Target: r.Method + " " + r.URL.Path,
		Transport: telemetry.TransportOf(r), RequestID: r.Header.Get(agentsmcp.RequestIDHeader),
		Outcome: agentsmcp.AuditDenied, Error: fmt.Sprintf("%d %s", status, reason),
	})
}

func (s *security) record(e *agentsmcp.AuditEntry) {
	if s.audit != nil {
		s.audit.Record(e)
	}
}

// routerAccess is the router's part: stdio's principal, its rate limit
// (HTTP requests are limited in front of the transports) and the virtual
// server it serves (--server; "" under serve).
func (s *security) routerAccess(stdioServer string) router.AccessOptions {
	if s.stdio == nil {
		return router.AccessOptions{VirtualServer: stdioServer}
	}
	access := router.AccessOptions{Default: s.stdio, VirtualServer: stdioServer}
	if s.authn.Configured() {
		access.Admit = s.limiter.Allow
	}
	return access
}

// mcpHTTP wraps the MCP endpoints: credentials with scope mcp (an anonymous
// principal when none are configured), then the caller's rate limit. Rate
// limits are per credential: without credentials (loopback only) the one
// local user is not limited.
func (s *security) mcpHTTP(h http.Handler) http.Handler {
	h = withTransport(h)
	if !s.authn.Configured() {
		return s.authn.Middleware(agentsmcp.ScopeMCP)(h)
	}
	return s.authn.Middleware(agentsmcp.ScopeMCP)(s.limiter.Middleware(h))
}

// chargeBatch charges the messages of a JSON-RPC batch beyond the first
// (which mcpHTTP charged with the request) to the caller's rate limit, so
// that a batch of a thousand calls costs a thousand requests. Nil without
// credentials, as mcpHTTP does not limit then.
func (s *security) chargeBatch() func(http.ResponseWriter, *http.Request, int) bool {
	if !s.authn.Configured() {
		return nil
	}
	return s.limiter.Admit
}

// withTransport names the MCP transport in the context of each request,
// and so of the sessions they open, for the audit trail.
func withTransport(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(w, r.WithContext(agentsmcp.WithTransport(r.Context(), telemetry.TransportOf(r))))
	})
}

// adminHTTP wraps the admin API: credentials (the API checks each route's
// scope), then the caller's rate limit.
func (s *security) adminHTTP(h http.Handler) http.Handler {
	if !s.authn.Configured() {
		return s.authn.Authenticate(h)
	}
	return s.authn.Authenticate(s.limiter.Middleware(h))
}

// metricsHTTP wraps /metrics: with credentials configured, a credential
// with scope metrics (a scraper's) or admin:read, then the caller's rate
// limit; without, open, as everything is on loopback. Its series name
// every tool and source, which a caller of the MCP endpoints alone may not
// learn.
func (s *security) metricsHTTP(h http.Handler) http.Handler {
	if !s.authn.Configured() {
		return s.authn.Authenticate(h)
	}
	return s.authn.Authenticate(s.authn.RequireAnyScope(agentsmcp.ScopeMetrics, agentsmcp.ScopeAdminRead)(s.limiter.Middleware(h)))
}

// readyHTTP wraps /readyz: open to probes, which send no credential and
// get the status alone; a request with a credential is authenticated (a
// bad one refused, 401), so that readinessDetailed can show the checks to
// a caller with admin:read.
func (s *security) readyHTTP(h http.Handler) http.Handler {
	return s.authn.AuthenticateIfPresented(h)
}

// readinessDetailed reports whether the caller of r sees /readyz's checks
// (database path, upstream and source names, failure reasons): a caller
// with admin:read, as for the admin API's views of the same things; the
// anonymous principal of a server without credentials has it.
func (s *security) readinessDetailed(r *http.Request) bool {
	return agentsmcp.PrincipalFrom(r.Context()).HasScope(agentsmcp.ScopeAdminRead)
}

// taskWritten turns a router record of tasks/update or tasks/cancel into
// an audit entry: a write, like resume_task and cancel_task (ADR 0010, A7).
func (s *security) taskWritten(c router.TaskWriteRecord) {
	args, _ := json.Marshal(map[string]any{"taskId": c.TaskID, "keys": c.Keys})
	e := &agentsmcp.AuditEntry{
		Kind: agentsmcp.AuditMCPWrite, Principal: c.Principal, Target: c.Method + " " + c.TaskID,
		RequestID: c.RequestID, Arguments: args, Latency: c.Duration, Outcome: agentsmcp.AuditOK,
		Error: c.Error, Transport: c.Transport,
	}
	if c.Error != "" {
		e.Outcome = agentsmcp.AuditError
	}
	if e.Principal == "" {
		e.Principal = agentsmcp.AnonymousPrincipal
	}
	if s.stdio != nil && e.Transport == "" {
		e.Transport = telemetry.TransportStdio
	}
	s.record(e)
}

// toolCalled turns a router record into an audit entry and metrics.
func (s *security) toolCalled(c router.ToolCallRecord) {
	if c.Refused == "" {
		s.metrics.ObserveToolCall(telemetry.ToolCall{Tool: c.Tool, Source: c.Source, Duration: c.Duration, Failed: c.Error != ""})
	}
	e := &agentsmcp.AuditEntry{
		Kind: agentsmcp.AuditToolCall, Principal: c.Principal, Target: c.Tool, RequestID: c.RequestID,
		Arguments: c.Arguments, Latency: c.Duration, Outcome: agentsmcp.AuditOK, Error: c.Error,
		Transport: c.Transport, ClientProfile: c.ClientProfile,
	}
	if c.Client != "" || c.ClientVersion != "" {
		// The client names itself: bound it, as an entry with a longer
		// field would be refused whole.
		e.Client = storedform.TruncateUTF8(strings.ToValidUTF8(c.Client+"/"+c.ClientVersion, "\uFFFD"), agentsmcp.MaxAuditFieldBytes)
	}
	if c.Method != "" { // a refused read of a resource, template or prompt
		e.Kind, e.Target = agentsmcp.AuditMCPRead, c.Method+" "+c.Tool
	}
	switch {
	case c.Refused != "":
		e.Outcome, e.Error = agentsmcp.AuditDenied, c.Refused
	case c.Error != "":
		e.Outcome = agentsmcp.AuditError
	}
	if e.Principal == "" {
		// A step of a task created without a principal (before tasks
		// recorded their creator); every other step carries its task's
		// creator, whoever resumed it and on whichever replica.
		e.Principal = "executor"
	}
	if s.stdio != nil && e.Transport == "" {
		e.Transport = telemetry.TransportStdio
	}
	s.record(e)
}
