package telemetry

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/propagation"

	"github.com/agents-mcp/agents-mcp/internal/testutil"
	"github.com/agents-mcp/agents-mcp/internal/tracing"
)

// This file holds this package's share of the promise "metrics and spans
// cost no allocation when disabled": HTTPMiddleware with no tracer
// provider installed, and the tool-call metrics.

// discardWriter is a ResponseWriter that allocates nothing, so that what
// AllocsPerRun counts is the middleware's.
type discardWriter struct{ h http.Header }

func (w discardWriter) Header() http.Header       { return w.h }
func (discardWriter) Write(p []byte) (int, error) { return len(p), nil }
func (discardWriter) WriteHeader(int)             {}

// mcpRequest is a POST /mcp as a go-sdk streamable client sends it, without
// trace context.
func mcpRequest() *http.Request {
	r := httptest.NewRequest(http.MethodPost, "/mcp", http.NoBody)
	r.Header.Set("Accept", "application/json, text/event-stream")
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	r.Header.Set("Mcp-Session-Id", "ABCDEFGHIJKLMNOPQRSTUVWXYZ")
	return r
}

func useServePropagator() {
	otel.SetTextMapPropagator(propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{}))
}

// TestHTTPMiddlewareFreeWhenTracingOff fails if HTTPMiddleware allocates
// again with tracing off. It runs in a process of its own, where no test
// has installed a tracer provider.
func TestHTTPMiddlewareFreeWhenTracingOff(t *testing.T) {
	if !testutil.InOwnProcess(t) {
		return
	}
	if !tracing.Off() {
		t.Fatal("tracing.Off() = false in a process where no tracer provider was installed")
	}
	useServePropagator()
	var served int
	next := http.HandlerFunc(func(http.ResponseWriter, *http.Request) { served++ })
	h := HTTPMiddleware(next)
	r, w := mcpRequest(), discardWriter{h: http.Header{}}
	if n := testing.AllocsPerRun(1000, func() { h.ServeHTTP(w, r) }); n != 0 {
		t.Errorf("HTTPMiddleware allocates %v times per request with tracing off; want 0", n)
	}
	if served == 0 {
		t.Fatal("the handler behind the middleware was not called")
	}
	// otelhttp with its no-op span, as before: the measure sees allocations.
	traced := tracedHandler(next)
	if n := testing.AllocsPerRun(100, func() { traced.ServeHTTP(w, r) }); n == 0 {
		t.Error("otelhttp with a no-op span does not allocate: AllocsPerRun sees nothing here")
	}
}

// TestObserveToolCallDoesNotAllocate: counting a call of a tool already
// seen allocates nothing, and a nil *Metrics (metrics not wired) neither.
func TestObserveToolCallDoesNotAllocate(t *testing.T) {
	if raceDetector {
		t.Skip("allocations are not counted under the race detector (race_test.go)")
	}
	m := NewMetrics(MetricsOptions{})
	c := ToolCall{Tool: "upstream__echo", Source: "upstream", Duration: time.Millisecond}
	m.ObserveToolCall(c) // the first call of a tool makes its series
	failed := c
	failed.Failed = true
	m.ObserveToolCall(failed)
	if n := testing.AllocsPerRun(1000, func() { m.ObserveToolCall(c); m.ObserveToolCall(failed) }); n != 0 {
		t.Errorf("ObserveToolCall allocates %v times per two calls; want 0", n)
	}
	var off *Metrics
	if n := testing.AllocsPerRun(1000, func() { off.ObserveToolCall(c) }); n != 0 {
		t.Errorf("ObserveToolCall of a nil *Metrics allocates %v times; want 0", n)
	}
}

// BenchmarkHTTPMiddleware measures HTTPMiddleware around a handler that
// does nothing, with tracing off (no tracer provider, serve's propagator,
// a request without trace context): "off" is today's middleware,
// "otelhttp-noop-baseline" otelhttp's handler with its no-op span, as
// before. Run it with -run '^$' (no provider installed by a test).
func BenchmarkHTTPMiddleware(b *testing.B) {
	if !tracing.Off() {
		b.Skip("a tracer provider is installed in this process; run with -run '^$'")
	}
	useServePropagator()
	next := http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})
	r, w := mcpRequest(), discardWriter{h: http.Header{}}
	for _, v := range []struct {
		name string
		h    http.Handler
	}{{"off", HTTPMiddleware(next)}, {"otelhttp-noop-baseline", tracedHandler(next)}} {
		b.Run(v.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				v.h.ServeHTTP(w, r)
			}
		})
	}
}
