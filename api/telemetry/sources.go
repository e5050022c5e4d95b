package telemetry

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	agentsmcp "github.com/agents-mcp/agents-mcp"
)

// sourceState is one set of [Sources] with the cached reads of its
// database-backed ones; SetSources replaces it whole.
type sourceState struct {
	Sources
	tasks  cached[map[agentsmcp.TaskStatus]int64]
	outbox cached[outboxBacklog]
}

type outboxBacklog struct {
	pending int64
	oldest  time.Time
}

// cached is the last read of a source. Failures are cached as well, so
// that a database that is down is asked once per TTL, not once per scrape.
type cached[T any] struct {
	mu  sync.Mutex
	at  time.Time // of the last read, zero before the first
	val T
	ok  bool // the last read succeeded
}

// get returns the value of the last read if it is younger than ttl, and
// otherwise reads again within timeout. fresh reports that a read was made
// now; err is its failure.
func (c *cached[T]) get(now time.Time, ttl, timeout time.Duration, read func(context.Context) (T, error)) (val T, ok, fresh bool, err error) {
	c.mu.Lock()
	defer c.mu.Unlock() // concurrent scrapes wait for the read in flight, then share it
	if !c.at.IsZero() && now.Sub(c.at) < ttl {
		return c.val, c.ok, false, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	v, err := read(ctx)
	c.at = now
	if err != nil {
		var zero T
		c.val, c.ok = zero, false
		return zero, false, true, err
	}
	c.val, c.ok = v, true
	return v, true, true, nil
}

var (
	upstreamStateDesc = prometheus.NewDesc("agents_mcp_upstream_state",
		"State of each upstream: 1 for its current state (connecting, ready, degraded, down), 0 for the others.",
		[]string{"upstream", "state"}, nil)
	upstreamToolsDesc = prometheus.NewDesc("agents_mcp_upstream_tools",
		"Tools each upstream exposes.", []string{"upstream"}, nil)
	tasksDesc = prometheus.NewDesc("agents_mcp_tasks",
		"Stored tasks by status (read at most every few seconds).", []string{"status"}, nil)
	outboxPendingDesc = prometheus.NewDesc("agents_mcp_vector_outbox_pending",
		"Entries of the vector outbox not yet applied to the vector index.", nil, nil)
	outboxAgeDesc = prometheus.NewDesc("agents_mcp_vector_outbox_oldest_age_seconds",
		"Age of the oldest pending vector outbox entry; 0 when none is pending.", nil, nil)
	sourceErrorsDesc = prometheus.NewDesc("agents_mcp_metrics_source_errors_total",
		"Failed or timed-out reads of a metrics source (tasks, outbox) during scrapes.", []string{"source"}, nil)
	auditDroppedDesc = prometheus.NewDesc("agents_mcp_audit_entries_dropped_total",
		"Audit entries dropped because the audit writer could not keep up or store them.", nil, nil)
	auditEvictedDesc = prometheus.NewDesc("agents_mcp_audit_entries_evicted_total",
		"Audit entries deleted, oldest first, to keep the trail within its size bound (audit.max_entries).", nil, nil)
	toolPerfDroppedDesc = prometheus.NewDesc("agents_mcp_tool_performance_dropped_total",
		"Tool calls not counted in tool performance because its writer could not keep up or store them.", nil, nil)
	fastPathDesc = prometheus.NewDesc("agents_mcp_tool_calls_fast_path_total",
		"tools/call requests answered by the router's fast path rather than go-sdk's streamable handler (ADR 0014).", nil, nil)
)

// sourcesCollector reports the values of the current [Sources] when
// scraped.
type sourcesCollector struct{ m *Metrics }

func (c *sourcesCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{upstreamStateDesc, upstreamToolsDesc, tasksDesc, outboxPendingDesc, outboxAgeDesc, sourceErrorsDesc, auditDroppedDesc, auditEvictedDesc, toolPerfDroppedDesc, fastPathDesc} {
		ch <- d
	}
}

func (c *sourcesCollector) Collect(ch chan<- prometheus.Metric) {
	src := c.m.src.Load()
	if src.Upstreams != nil {
		collectUpstreams(ch, src.Upstreams())
	}
	if src.Tasks != nil {
		c.collectTasks(ch, src)
	}
	if src.OutboxBacklog != nil {
		c.collectOutbox(ch, src)
	}
	ch <- prometheus.MustNewConstMetric(sourceErrorsDesc, prometheus.CounterValue, float64(c.m.tasksErrors.Load()), "tasks")
	ch <- prometheus.MustNewConstMetric(sourceErrorsDesc, prometheus.CounterValue, float64(c.m.outboxErrors.Load()), "outbox")
	for _, c := range []struct {
		desc *prometheus.Desc
		get  func() uint64
	}{{auditDroppedDesc, src.AuditDropped}, {auditEvictedDesc, src.AuditEvicted}, {toolPerfDroppedDesc, src.ToolPerformanceDropped}, {fastPathDesc, src.FastPathCalls}} {
		if c.get != nil {
			ch <- prometheus.MustNewConstMetric(c.desc, prometheus.CounterValue, float64(c.get()))
		}
	}
}

func collectUpstreams(ch chan<- prometheus.Metric, ups []UpstreamState) {
	seen := make(map[string]bool, len(ups))
	for _, u := range ups {
		if seen[u.Name] {
			continue // two series of one name would fail the whole scrape
		}
		seen[u.Name] = true
		for _, s := range UpstreamStates {
			v := 0.0
			if s == u.State {
				v = 1
			}
			ch <- prometheus.MustNewConstMetric(upstreamStateDesc, prometheus.GaugeValue, v, u.Name, s)
		}
		if !slices.Contains(UpstreamStates, u.State) && u.State != "" {
			// A state added to remote before it is added here still shows.
			ch <- prometheus.MustNewConstMetric(upstreamStateDesc, prometheus.GaugeValue, 1, u.Name, u.State)
		}
		ch <- prometheus.MustNewConstMetric(upstreamToolsDesc, prometheus.GaugeValue, float64(u.Tools), u.Name)
	}
}

func (c *sourcesCollector) collectTasks(ch chan<- prometheus.Metric, src *sourceState) {
	counts, ok, fresh, err := src.tasks.get(c.m.now(), c.m.opts.CacheTTL, c.m.opts.SourceTimeout, src.Tasks.CountTasksByStatus)
	if fresh && err != nil {
		c.m.tasksErrors.Add(1)
		c.m.opts.Logger.Warn("metrics: count tasks by status", "error", agentsmcp.ErrorMessage(err))
	}
	if !ok {
		return // left out of the scrape rather than reported as zero
	}
	for _, s := range agentsmcp.TaskStatuses {
		ch <- prometheus.MustNewConstMetric(tasksDesc, prometheus.GaugeValue, float64(counts[s]), string(s))
	}
}

func (c *sourcesCollector) collectOutbox(ch chan<- prometheus.Metric, src *sourceState) {
	read := func(ctx context.Context) (outboxBacklog, error) {
		n, oldest, err := src.OutboxBacklog(ctx)
		return outboxBacklog{pending: n, oldest: oldest}, err
	}
	now := c.m.now()
	b, ok, fresh, err := src.outbox.get(now, c.m.opts.CacheTTL, c.m.opts.SourceTimeout, read)
	if fresh && err != nil {
		c.m.outboxErrors.Add(1)
		c.m.opts.Logger.Warn("metrics: vector outbox backlog", "error", agentsmcp.ErrorMessage(err))
	}
	if !ok {
		return
	}
	age := 0.0
	if b.pending > 0 && !b.oldest.IsZero() {
		age = max(now.Sub(b.oldest).Seconds(), 0)
	}
	ch <- prometheus.MustNewConstMetric(outboxPendingDesc, prometheus.GaugeValue, float64(b.pending))
	ch <- prometheus.MustNewConstMetric(outboxAgeDesc, prometheus.GaugeValue, age)
}
