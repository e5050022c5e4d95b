package telemetry

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/memory/sqlite"
)

// gather returns every sample m serves, keyed name{label="value",...}
// with labels sorted; a histogram gives its _count and _sum.
func gather(t *testing.T, m *Metrics) map[string]float64 {
	t.Helper()
	mfs, err := m.reg.Gather()
	if err != nil {
		t.Fatalf("Gather: %v", err)
	}
	out := map[string]float64{}
	for _, mf := range mfs {
		for _, s := range mf.GetMetric() {
			labels := make([]string, 0, len(s.GetLabel()))
			for _, l := range s.GetLabel() {
				labels = append(labels, fmt.Sprintf("%s=%q", l.GetName(), l.GetValue()))
			}
			sort.Strings(labels)
			key := mf.GetName()
			if len(labels) > 0 {
				key += "{" + strings.Join(labels, ",") + "}"
			}
			switch mf.GetType() {
			case dto.MetricType_COUNTER:
				out[key] = s.GetCounter().GetValue()
			case dto.MetricType_GAUGE:
				out[key] = s.GetGauge().GetValue()
			case dto.MetricType_HISTOGRAM:
				k := strings.Replace(key, mf.GetName(), mf.GetName()+"_count", 1)
				out[k] = float64(s.GetHistogram().GetSampleCount())
				out[strings.Replace(key, mf.GetName(), mf.GetName()+"_sum", 1)] = s.GetHistogram().GetSampleSum()
			default:
				out[key] = s.GetUntyped().GetValue()
			}
		}
	}
	return out
}

// wantSamples checks the named samples; a negative want means absent.
func wantSamples(t *testing.T, got map[string]float64, want map[string]float64) {
	t.Helper()
	for k, w := range want {
		g, ok := got[k]
		switch {
		case w < 0 && ok:
			t.Errorf("%s = %v, want it absent", k, g)
		case w >= 0 && !ok:
			t.Errorf("%s is missing", k)
		case w >= 0 && g != w:
			t.Errorf("%s = %v, want %v", k, g, w)
		}
	}
}

func TestToolCallMetrics(t *testing.T) {
	catalog := map[string]bool{"search_tools": true, "files__read": true}
	m := NewMetrics(MetricsOptions{Version: "1.2.3", Sources: Sources{KnownTool: func(n string) bool { return catalog[n] }}})

	m.ObserveToolCall(ToolCall{Tool: "search_tools", Source: "local", Duration: 20 * time.Millisecond})
	m.ObserveToolCall(ToolCall{Tool: "search_tools", Source: "local", Duration: 30 * time.Millisecond})
	m.ObserveToolCall(ToolCall{Tool: "files__read", Source: "files", Duration: time.Second, Failed: true})
	// Names the catalog does not hold, and ones no catalog could, never
	// become label values.
	m.ObserveToolCall(ToolCall{Tool: "made_up", Source: "local"})
	m.ObserveToolCall(ToolCall{Tool: "evil\nname{x=\"1\"}", Source: "Bad Source!"})

	got := gather(t, m)
	wantSamples(t, got, map[string]float64{
		`agents_mcp_tool_calls_total{outcome="ok",source="local",tool="search_tools"}`:   2,
		`agents_mcp_tool_calls_total{outcome="error",source="files",tool="files__read"}`: 1,
		`agents_mcp_tool_call_errors_total{source="files",tool="files__read"}`:           1,
		`agents_mcp_tool_call_errors_total{source="local",tool="search_tools"}`:          -1,
		`agents_mcp_tool_calls_total{outcome="ok",source="local",tool="unknown"}`:        1,
		`agents_mcp_tool_calls_total{outcome="ok",source="unknown",tool="unknown"}`:      1,
		`agents_mcp_tool_calls_total{outcome="ok",source="local",tool="made_up"}`:        -1,
		`agents_mcp_tool_call_duration_seconds_count{tool="search_tools"}`:               2,
		`agents_mcp_tool_call_duration_seconds_sum{tool="search_tools"}`:                 0.05,
		`agents_mcp_tool_call_duration_seconds_count{tool="files__read"}`:                1,
	})
	for k := range got {
		if strings.Contains(k, "evil") || strings.Contains(k, "Bad Source") {
			t.Errorf("user input became a label: %s", k)
		}
	}
	var build bool
	for k, v := range got {
		if strings.HasPrefix(k, `agents_mcp_build_info{`) && strings.Contains(k, `version="1.2.3"`) && v == 1 {
			build = true
		}
	}
	if !build {
		t.Error("agents_mcp_build_info{version=\"1.2.3\"} = 1 is missing")
	}
}

func TestToolLabelsBounded(t *testing.T) {
	m := NewMetrics(MetricsOptions{MaxToolLabels: 2})
	for _, name := range []string{"a", "b", "c", "d", "a"} {
		m.ObserveToolCall(ToolCall{Tool: name, Source: "local"})
	}
	wantSamples(t, gather(t, m), map[string]float64{
		`agents_mcp_tool_calls_total{outcome="ok",source="local",tool="a"}`:     2,
		`agents_mcp_tool_calls_total{outcome="ok",source="local",tool="b"}`:     1,
		`agents_mcp_tool_calls_total{outcome="ok",source="local",tool="other"}`: 2,
		`agents_mcp_tool_calls_total{outcome="ok",source="local",tool="c"}`:     -1,
	})
}

func TestRefusalMetrics(t *testing.T) {
	m := NewMetrics(MetricsOptions{})
	for _, path := range []string{"/mcp", "/sse", "/messages", "/admin/v1/upstreams", "/elsewhere"} {
		m.ObserveRateLimited(TransportOf(httptest.NewRequest(http.MethodPost, path, nil)))
	}
	m.ObserveRateLimited(TransportStdio)
	m.ObserveRateLimited("principal-alice") // not a transport: counted as other
	m.ObserveAuthFailure(AuthFailureReason(http.StatusUnauthorized, "none"))
	m.ObserveAuthFailure(AuthFailureReason(http.StatusUnauthorized, "key:3fa9"))
	m.ObserveAuthFailure(AuthFailureReason(http.StatusForbidden, "usr_1"))
	m.ObserveAuthFailure(AuthFailureReason(http.StatusServiceUnavailable, "jwt:bob"))
	m.ObserveAuthFailure("token abc expired") // free text is not a reason
	wantSamples(t, gather(t, m), map[string]float64{
		`agents_mcp_rate_limited_requests_total{transport="streamable"}`:      1,
		`agents_mcp_rate_limited_requests_total{transport="sse"}`:             2,
		`agents_mcp_rate_limited_requests_total{transport="admin"}`:           1,
		`agents_mcp_rate_limited_requests_total{transport="stdio"}`:           1,
		`agents_mcp_rate_limited_requests_total{transport="other"}`:           2,
		`agents_mcp_auth_failures_total{reason="missing_credentials"}`:        1,
		`agents_mcp_auth_failures_total{reason="invalid_credentials"}`:        1,
		`agents_mcp_auth_failures_total{reason="insufficient_scope"}`:         1,
		`agents_mcp_auth_failures_total{reason="unavailable"}`:                1,
		`agents_mcp_auth_failures_total{reason="other"}`:                      1,
		`agents_mcp_rate_limited_requests_total{transport="principal-alice"}`: -1,
	})
}

func TestNilMetricsObserveNothing(t *testing.T) {
	var m *Metrics
	m.ObserveToolCall(ToolCall{Tool: "x"})
	m.ObserveRateLimited(TransportSSE)
	m.ObserveAuthFailure(AuthOther)
}

func TestUpstreamMetrics(t *testing.T) {
	ups := []UpstreamState{{Name: "files", State: "ready", Tools: 11}, {Name: "weather", State: "down"}, {Name: "files", State: "down"}}
	m := NewMetrics(MetricsOptions{})
	if _, ok := gather(t, m)[`agents_mcp_upstream_tools{upstream="files"}`]; ok {
		t.Error("upstream metrics without an Upstreams source")
	}
	m.SetSources(Sources{Upstreams: func() []UpstreamState { return ups }})
	wantSamples(t, gather(t, m), map[string]float64{
		`agents_mcp_upstream_state{state="ready",upstream="files"}`:      1,
		`agents_mcp_upstream_state{state="down",upstream="files"}`:       0,
		`agents_mcp_upstream_state{state="connecting",upstream="files"}`: 0,
		`agents_mcp_upstream_state{state="degraded",upstream="files"}`:   0,
		`agents_mcp_upstream_state{state="down",upstream="weather"}`:     1,
		`agents_mcp_upstream_state{state="ready",upstream="weather"}`:    0,
		`agents_mcp_upstream_tools{upstream="files"}`:                    11,
		`agents_mcp_upstream_tools{upstream="weather"}`:                  0,
	})
}

// countingTasks counts the reads of a real store.
type countingTasks struct {
	TaskCounter
	reads atomic.Int64
}

func (c *countingTasks) CountTasksByStatus(ctx context.Context) (map[agentsmcp.TaskStatus]int64, error) {
	c.reads.Add(1)
	return c.TaskCounter.CountTasksByStatus(ctx)
}

func openStore(t *testing.T) *sqlite.DB {
	t.Helper()
	db, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "agents-mcp.db"))
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return db
}

func TestTaskMetricsCached(t *testing.T) {
	ctx := t.Context()
	db := openStore(t)
	counter := &countingTasks{TaskCounter: db}
	m := NewMetrics(MetricsOptions{CacheTTL: 5 * time.Second, Sources: Sources{Tasks: counter}})
	now := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	m.now = func() time.Time { return now }

	for _, s := range []agentsmcp.TaskStatus{agentsmcp.TaskRunning, agentsmcp.TaskRunning, agentsmcp.TaskPaused} {
		if err := db.CreateTask(ctx, &agentsmcp.Task{Request: "r", Status: s}); err != nil {
			t.Fatal(err)
		}
	}
	wantSamples(t, gather(t, m), map[string]float64{
		`agents_mcp_tasks{status="running"}`: 2, `agents_mcp_tasks{status="paused"}`: 1, `agents_mcp_tasks{status="failed"}`: 0,
	})
	if err := db.CreateTask(ctx, &agentsmcp.Task{Request: "r", Status: agentsmcp.TaskFailed}); err != nil {
		t.Fatal(err)
	}
	now = now.Add(4 * time.Second) // within the TTL: the cached counts
	wantSamples(t, gather(t, m), map[string]float64{`agents_mcp_tasks{status="failed"}`: 0})
	now = now.Add(2 * time.Second)
	wantSamples(t, gather(t, m), map[string]float64{`agents_mcp_tasks{status="failed"}`: 1, `agents_mcp_tasks{status="running"}`: 2})
	if n := counter.reads.Load(); n != 2 {
		t.Errorf("the store was read %d times for 3 scrapes over 6s with a 5s TTL, want 2", n)
	}
}

// blockingTasks is a database that never answers.
type blockingTasks struct{}

func (blockingTasks) CountTasksByStatus(ctx context.Context) (map[agentsmcp.TaskStatus]int64, error) {
	<-ctx.Done()
	return nil, ctx.Err()
}

func TestTaskMetricsSlowOrFailingStore(t *testing.T) {
	var logs bytes.Buffer
	m := NewMetrics(MetricsOptions{SourceTimeout: 50 * time.Millisecond, Logger: slog.New(slog.NewJSONHandler(&logs, nil)), Sources: Sources{Tasks: blockingTasks{}}})
	start := time.Now()
	got := gather(t, m)
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("a scrape with a stuck store took %v; the source timeout is 50ms", d)
	}
	wantSamples(t, got, map[string]float64{
		`agents_mcp_tasks{status="running"}`:                     -1, // absent, not a false zero
		`agents_mcp_metrics_source_errors_total{source="tasks"}`: 1,
	})
	if !strings.Contains(logs.String(), "count tasks by status") {
		t.Errorf("the failed read was not logged: %s", logs.String())
	}

	// A closed store fails at once; the failure is cached like a value.
	db := openStore(t)
	_ = db.Close()
	m = NewMetrics(MetricsOptions{Sources: Sources{Tasks: db}})
	gather(t, m)
	wantSamples(t, gather(t, m), map[string]float64{`agents_mcp_metrics_source_errors_total{source="tasks"}`: 1})
}

func TestOutboxMetrics(t *testing.T) {
	db := openStore(t)
	m := NewMetrics(MetricsOptions{CacheTTL: time.Nanosecond, Sources: Sources{OutboxBacklog: db.OutboxBacklog}})
	wantSamples(t, gather(t, m), map[string]float64{
		`agents_mcp_vector_outbox_pending`: 0, `agents_mcp_vector_outbox_oldest_age_seconds`: 0,
	})
	if err := db.CreateInsight(t.Context(), &agentsmcp.Insight{Text: "retries help", Type: agentsmcp.InsightObservation, Confidence: 0.5}); err != nil {
		t.Fatal(err)
	}
	m.now = func() time.Time { return time.Now().Add(time.Minute) }
	got := gather(t, m)
	wantSamples(t, got, map[string]float64{`agents_mcp_vector_outbox_pending`: 1})
	if age := got[`agents_mcp_vector_outbox_oldest_age_seconds`]; age < 59 || age > 120 {
		t.Errorf("oldest entry age = %vs, want about 60s", age)
	}

	m.SetSources(Sources{OutboxBacklog: func(context.Context) (int64, time.Time, error) {
		return 0, time.Time{}, errors.New("store down")
	}})
	wantSamples(t, gather(t, m), map[string]float64{
		`agents_mcp_vector_outbox_pending`: -1, `agents_mcp_metrics_source_errors_total{source="outbox"}`: 1,
	})
}

func TestAuditDroppedMetric(t *testing.T) {
	var dropped, evicted, perfDropped, fast atomic.Uint64
	m := NewMetrics(MetricsOptions{Sources: Sources{AuditDropped: dropped.Load, AuditEvicted: evicted.Load,
		ToolPerformanceDropped: perfDropped.Load, FastPathCalls: fast.Load}})
	dropped.Add(3)
	evicted.Add(5)
	perfDropped.Add(7)
	fast.Add(11)
	wantSamples(t, gather(t, m), map[string]float64{
		`agents_mcp_audit_entries_dropped_total`: 3, `agents_mcp_audit_entries_evicted_total`: 5,
		`agents_mcp_tool_performance_dropped_total`: 7, `agents_mcp_tool_calls_fast_path_total`: 11,
	})
}

func TestMetricsHandler(t *testing.T) {
	m := NewMetrics(MetricsOptions{Version: "v9"})
	m.ObserveToolCall(ToolCall{Tool: "search_tools", Source: "local", Duration: time.Millisecond})
	srv := httptest.NewServer(m.Handler())
	defer srv.Close()
	res, err := http.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusOK || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/plain") {
		t.Fatalf("GET /metrics: %d %s", res.StatusCode, res.Header.Get("Content-Type"))
	}
	for _, want := range []string{
		`agents_mcp_tool_calls_total{outcome="ok",source="local",tool="search_tools"} 1`,
		"# TYPE agents_mcp_tool_call_duration_seconds histogram",
		"go_goroutines ",
		"process_start_time_seconds ",
	} {
		if !strings.Contains(string(body), want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
	// Two Metrics coexist: each has its registry.
	NewMetrics(MetricsOptions{})
}
