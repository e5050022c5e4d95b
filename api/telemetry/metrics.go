package telemetry

import (
	"context"
	"log/slog"
	"net/http"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	agentsmcp "github.com/agents-mcp/agents-mcp"
)

// Tool call outcomes, the outcome label of agents_mcp_tool_calls_total.
const (
	OutcomeOK    = "ok"
	OutcomeError = "error"
)

// Tool label values that are not tool names.
const (
	// UnknownTool counts calls of names the catalog does not hold (see
	// [Sources.KnownTool]), so that made-up names never become series.
	UnknownTool = "unknown"
	// OtherTool counts calls of known tools beyond
	// [MetricsOptions.MaxToolLabels] distinct names.
	OtherTool = "other"
)

// UpstreamStates are the states of the agents_mcp_upstream_state gauge,
// those of remote.State. Each upstream has a series per state, 1 for the
// current one and 0 for the others, so that a query need not know which
// series exist.
var UpstreamStates = []string{"connecting", "ready", "degraded", "down"}

// ToolCall describes one finished tool call, as router.ToolCallRecord does:
// the lead's OnToolCall hook converts one into the other.
type ToolCall struct {
	Tool string
	// Source is the provider that served the call: "local" or the name of
	// an upstream.
	Source   string
	Duration time.Duration
	// Failed: the call ended with an error or an error result.
	Failed bool
}

// UpstreamState is what the metrics show of one upstream.
type UpstreamState struct {
	Name  string
	State string // one of UpstreamStates
	Tools int    // tools exposed
}

// TaskCounter counts the stored tasks by status; memory/sqlite and
// memory/mongo implement it. A status missing from the map counts 0.
type TaskCounter = agentsmcp.TaskCounter

// Sources are where a [Metrics] reads the values it reports at scrape
// time. Every field is optional: the metrics of a missing source are not
// reported.
type Sources struct {
	// KnownTool reports whether name is a tool of the catalog (the router's
	// ToolSource); calls of other names are counted as [UnknownTool]. When
	// nil, any name matching [agentsmcp.ToolNamePattern] is taken as known.
	KnownTool func(name string) bool
	// Upstreams returns the state of every upstream (from the pool's
	// Statuses). It is called on every scrape and must be cheap.
	Upstreams func() []UpstreamState
	// Tasks is read at most once per [MetricsOptions.CacheTTL], within
	// [MetricsOptions.SourceTimeout].
	Tasks TaskCounter
	// OutboxBacklog is the store's [agentsmcp.OutboxService.OutboxBacklog],
	// read like Tasks.
	OutboxBacklog func(ctx context.Context) (pending int64, oldest time.Time, err error)
	// AuditDropped returns how many audit entries were dropped so far (a
	// counter that never decreases).
	AuditDropped func() uint64
	// AuditEvicted returns how many audit entries the size bound deleted,
	// oldest first (a counter).
	AuditEvicted func() uint64
	// ToolPerformanceDropped returns how many tool calls were not counted
	// in tool performance because its writer could not keep up or store
	// them (a counter).
	ToolPerformanceDropped func() uint64
	// FastPathCalls returns how many tools/call requests the router's
	// fast path answered (a counter; ADR 0014).
	FastPathCalls func() uint64
}

// MetricsOptions configure a [Metrics]. Zero values select the documented
// defaults.
type MetricsOptions struct {
	// Version is reported in agents_mcp_build_info.
	Version string
	// Sources may also be given, or replaced, later with
	// [Metrics.SetSources].
	Sources Sources
	// SourceTimeout bounds one read of Tasks or OutboxBacklog (default 1s):
	// a slow database costs a scrape that much, then the metric is left
	// out of that scrape.
	SourceTimeout time.Duration
	// CacheTTL is how long a read of Tasks or OutboxBacklog, successful or
	// not, serves later scrapes (default 5s), so that scrapes from several
	// Prometheus servers do not each query the database.
	CacheTTL time.Duration
	// MaxToolLabels bounds the distinct tool names used as label values
	// (default 1000); calls of further tools are counted as [OtherTool].
	MaxToolLabels int
	// Logger receives failed reads of the sources and errors of the
	// /metrics handler; nil discards them.
	Logger *slog.Logger
}

func (o MetricsOptions) withDefaults() MetricsOptions {
	if o.SourceTimeout <= 0 {
		o.SourceTimeout = time.Second
	}
	if o.CacheTTL <= 0 {
		o.CacheTTL = 5 * time.Second
	}
	if o.MaxToolLabels <= 0 {
		o.MaxToolLabels = 1000
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Version == "" {
		o.Version = "dev"
	}
	return o
}

// Metrics is the Prometheus face of agents-mcp: counters the server feeds
// as things happen (Observe*) and gauges read from [Sources] when scraped.
// It has a registry of its own (with the Go and process collectors), so
// creating several, as tests do, never conflicts. It owns no goroutine;
// a scrape reads the sources on the scraping request's goroutine.
//
// A Metrics is safe for concurrent use. The Observe methods of a nil
// *Metrics do nothing, so optional wiring needs no checks.
type Metrics struct {
	opts    MetricsOptions
	reg     *prometheus.Registry
	handler http.Handler
	src     atomic.Pointer[sourceState]
	now     func() time.Time // time.Now; tests move it

	toolCalls    *prometheus.CounterVec
	toolErrors   *prometheus.CounterVec
	toolDuration *prometheus.HistogramVec
	rateLimited  *prometheus.CounterVec
	authFailures *prometheus.CounterVec
	// Failed reads of the sources, reported by sourcesCollector after its
	// reads so that a scrape shows the failure it saw.
	tasksErrors  atomic.Uint64
	outboxErrors atomic.Uint64

	toolMu     sync.Mutex
	toolLabels sync.Map // tool name → struct{}: the names used as labels so far
	toolCount  int      // entries of toolLabels, under toolMu
	toolSeries toolSeriesCache
}

// NewMetrics returns metrics registered on a registry of their own.
func NewMetrics(opts MetricsOptions) *Metrics {
	opts = opts.withDefaults()
	m := &Metrics{opts: opts, reg: prometheus.NewRegistry(), now: time.Now}
	m.src.Store(&sourceState{Sources: opts.Sources})

	m.toolCalls = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "agents_mcp_tool_calls_total",
		Help: "Tool calls that reached a provider, by tool, source (local or the upstream) and outcome (ok or error).",
	}, []string{"tool", "source", "outcome"})
	m.toolErrors = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "agents_mcp_tool_call_errors_total",
		Help: "Tool calls that ended with an error or an error result, by tool and source.",
	}, []string{"tool", "source"})
	m.toolDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "agents_mcp_tool_call_duration_seconds",
		Help: "Duration of tool calls in the provider, by tool.",
		// From a local lookup (ms) to a slow upstream or a sampling round
		// trip (minutes).
		Buckets: []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 120},
	}, []string{"tool"})
	m.rateLimited = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "agents_mcp_rate_limited_requests_total",
		Help: "Requests refused by the rate limiter, by transport (streamable, sse, stdio, admin, other).",
	}, []string{"transport"})
	m.authFailures = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "agents_mcp_auth_failures_total",
		Help: "Requests refused by authentication or authorisation, by reason.",
	}, []string{"reason"})
	buildInfo := prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "agents_mcp_build_info",
		Help: "Always 1; the labels say which build is running.",
	}, []string{"version", "go_version"})
	buildInfo.WithLabelValues(opts.Version, runtime.Version()).Set(1)

	m.reg.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		m.toolCalls, m.toolErrors, m.toolDuration, m.rateLimited, m.authFailures,
		buildInfo,
		&sourcesCollector{m: m},
	)
	// The series of every transport and reason exist from the start, so
	// that rate() over them works before the first refusal.
	for _, t := range transports {
		m.rateLimited.WithLabelValues(t)
	}
	for _, r := range authFailureReasons {
		m.authFailures.WithLabelValues(r)
	}

	m.handler = promhttp.InstrumentMetricHandler(m.reg, promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{
		ErrorLog: slog.NewLogLogger(opts.Logger.Handler(), slog.LevelWarn),
		// A failing collector must not hide every other metric.
		ErrorHandling:       promhttp.ContinueOnError,
		Registry:            m.reg,
		MaxRequestsInFlight: 4,
		Timeout:             10 * time.Second,
	}))
	return m
}

// Handler serves the metrics in the Prometheus text (or OpenMetrics, when
// asked) format, for GET /metrics.
func (m *Metrics) Handler() http.Handler { return m.handler }

// Registerer is where other packages may register metrics of their own to
// be served by [Metrics.Handler].
func (m *Metrics) Registerer() prometheus.Registerer { return m.reg }

// SetSources replaces the sources read at scrape time, for sources that
// exist only after the Metrics (the pool, created after the router that
// reports tool calls here). Cached reads of the previous sources are
// dropped.
func (m *Metrics) SetSources(s Sources) {
	m.src.Store(&sourceState{Sources: s})
}

// ObserveToolCall counts one finished tool call. It never blocks (it is
// meant for router.Options.OnToolCall).
func (m *Metrics) ObserveToolCall(c ToolCall) {
	if m == nil {
		return
	}
	tool := m.toolLabel(c.Tool)
	source := sourceLabel(c.Source)
	if c.Failed {
		m.toolErrors.WithLabelValues(tool, source).Inc()
		m.toolCalls.WithLabelValues(tool, source, OutcomeError).Inc()
		m.toolDuration.WithLabelValues(tool).Observe(c.Duration.Seconds())
		return
	}
	s := m.toolSeries.of(m, toolSeriesKey{tool, source})
	s.ok.Inc()
	s.duration.Observe(c.Duration.Seconds())
}

// Transports are the values of the transport label of
// agents_mcp_rate_limited_requests_total.
const (
	TransportStreamable = "streamable"
	TransportSSE        = "sse"
	TransportStdio      = "stdio"
	TransportAdmin      = "admin"
	// TransportREST is the REST bridge, POST /mcp-json.
	TransportREST  = "rest"
	TransportOther = "other"
)

var transports = []string{TransportStreamable, TransportSSE, TransportStdio, TransportAdmin, TransportREST, TransportOther}

// TransportOf names the transport of an HTTP request by its path: /mcp is
// streamable, /sse and /messages are sse, /mcp-json is rest, /admin/... is
// admin, and anything else is other.
func TransportOf(r *http.Request) string {
	p := r.URL.Path
	switch {
	case p == "/mcp" || strings.HasPrefix(p, "/mcp/"):
		return TransportStreamable
	case p == "/sse" || p == "/messages" || strings.HasPrefix(p, "/sse/") || strings.HasPrefix(p, "/messages/"):
		return TransportSSE
	case p == "/mcp-json":
		return TransportREST
	case p == "/admin" || strings.HasPrefix(p, "/admin/"):
		return TransportAdmin
	}
	return TransportOther
}

// ObserveRateLimited counts one request refused by the rate limiter.
// transport is one of the Transport constants (others count as
// [TransportOther]); for HTTP use [TransportOf]. Who was limited is
// deliberately not a label: principals are unbounded.
func (m *Metrics) ObserveRateLimited(transport string) {
	if m == nil {
		return
	}
	if !slices.Contains(transports, transport) {
		transport = TransportOther
	}
	m.rateLimited.WithLabelValues(transport).Inc()
}

// Reasons of agents_mcp_auth_failures_total.
const (
	AuthMissingCredentials = "missing_credentials" // 401 without credentials
	AuthInvalidCredentials = "invalid_credentials" // 401 with credentials that do not verify
	AuthInsufficientScope  = "insufficient_scope"  // 403
	AuthUnavailable        = "unavailable"         // 503: the issuer's keys could not be fetched
	AuthOther              = "other"
)

var authFailureReasons = []string{AuthMissingCredentials, AuthInvalidCredentials, AuthInsufficientScope, AuthUnavailable, AuthOther}

// AuthFailureReason maps what the authenticator reports of a refusal
// (auth.Config.OnFailure's status and principal hint, which is "none" when
// no credentials came) to a reason label.
func AuthFailureReason(status int, principalHint string) string {
	switch status {
	case http.StatusUnauthorized:
		if principalHint == "none" || principalHint == "" {
			return AuthMissingCredentials
		}
		return AuthInvalidCredentials
	case http.StatusForbidden:
		return AuthInsufficientScope
	case http.StatusServiceUnavailable:
		return AuthUnavailable
	}
	return AuthOther
}

// ObserveAuthFailure counts one refused request. reason is one of the Auth
// constants (others count as [AuthOther]); see [AuthFailureReason].
func (m *Metrics) ObserveAuthFailure(reason string) {
	if m == nil {
		return
	}
	if !slices.Contains(authFailureReasons, reason) {
		reason = AuthOther
	}
	m.authFailures.WithLabelValues(reason).Inc()
}

// toolLabel is the tool label of name: the name itself for a known tool,
// while fewer than MaxToolLabels names are in use.
func (m *Metrics) toolLabel(name string) string {
	src := m.src.Load()
	known := isLabelName(name, true) // agentsmcp.ToolNamePattern, without the regexp
	if known && src.KnownTool != nil {
		known = src.KnownTool(name)
	}
	if !known {
		return UnknownTool
	}
	if _, ok := m.toolLabels.Load(name); ok {
		return name
	}
	m.toolMu.Lock()
	defer m.toolMu.Unlock()
	if _, ok := m.toolLabels.Load(name); ok {
		return name
	}
	if m.toolCount >= m.opts.MaxToolLabels {
		return OtherTool
	}
	m.toolLabels.Store(name, struct{}{})
	m.toolCount++
	return name
}

// sourceLabel is s when it looks like a provider name ("local" and
// upstream names: 1 to 64 of a-z, 0-9, '_' and '-'), else "unknown".
func sourceLabel(s string) string {
	if isLabelName(s, false) {
		return s
	}
	return "unknown"
}
