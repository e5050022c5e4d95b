package router

import (
	"context"
	"net/http"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/agents-mcp/agents-mcp/internal/testutil"
	"github.com/agents-mcp/agents-mcp/internal/tracing"
	"github.com/agents-mcp/agents-mcp/localtools"
)

// This file holds the router's share of the promise "metrics and spans cost
// no allocation when disabled": what a tools/call does for tracing, with
// no tracer provider installed, as agents-mcp runs without OTEL_*.

// callTelemetryFixture is a call as the router sees it: the request's
// headers (as a go-sdk streamable client sends them, without trace
// context), the tool's entry and the provider's result.
func callTelemetryFixture() (http.Header, *toolEntry, *mcp.CallToolResult) {
	h := http.Header{
		"Accept":               {"application/json, text/event-stream"},
		"Content-Type":         {"application/json"},
		"Mcp-Protocol-Version": {"2025-11-25"},
		"Mcp-Session-Id":       {"ABCDEFGHIJKLMNOPQRSTUVWXYZ"},
		"X-Request-Id":         {"0123456789abcdef"},
	}
	e := &toolEntry{tool: &mcp.Tool{Name: "upstream__echo"}, provider: localtools.New()}
	return h, e, &mcp.CallToolResult{}
}

// callTelemetry is the tracing work of one call: accessMiddleware's trace
// context, then dispatch's span around the provider.
func callTelemetry(ctx context.Context, h http.Header, e *toolEntry, res *mcp.CallToolResult) {
	ctx = requestTraceContext(ctx, h)
	_, span := startCallSpan(ctx, e)
	if span != nil {
		defer span.End()
	}
	setCallOutcome(span, res, nil)
}

// callTelemetryNoopSpans is the same work as the router did it before:
// the trace context always reset and extracted with
// propagation.HeaderCarrier, and a no-op span started, given its outcome
// and ended. It is the baseline of BenchmarkCallTelemetry.
func callTelemetryNoopSpans(ctx context.Context, h http.Header, e *toolEntry, res *mcp.CallToolResult) {
	ctx = trace.ContextWithSpanContext(ctx, trace.SpanContext{})
	ctx = otel.GetTextMapPropagator().Extract(ctx, propagation.HeaderCarrier(h))
	_, span := otel.Tracer(tracerName).Start(ctx, "tools/call "+e.tool.Name, trace.WithAttributes(
		attribute.String("agents_mcp.tool", e.tool.Name), attribute.String("agents_mcp.source", e.provider.Name())))
	defer span.End()
	if callError(res, nil) == "" {
		span.SetAttributes(attribute.String("agents_mcp.outcome", "ok"))
	}
}

// useServePropagator sets the global propagator that telemetry.SetupTracing
// sets in serve, whether tracing is on or not.
func useServePropagator() {
	otel.SetTextMapPropagator(propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{}))
}

// TestCallTelemetryFreeWhenTracingOff fails if the router's tracing work
// of a call allocates again with tracing off. It runs in a process of its
// own, where no test has installed a tracer provider.
func TestCallTelemetryFreeWhenTracingOff(t *testing.T) {
	if !testutil.InOwnProcess(t) {
		return
	}
	if !tracing.Off() {
		t.Fatal("tracing.Off() = false in a process where no tracer provider was installed")
	}
	useServePropagator()
	h, e, res := callTelemetryFixture()
	ctx := context.Background()
	if n := testing.AllocsPerRun(1000, func() { callTelemetry(ctx, h, e, res) }); n != 0 {
		t.Errorf("the router's tracing of a call allocates %v times per call with tracing off; want 0", n)
	}
	// The baseline did allocate: the measure can see allocations.
	if n := testing.AllocsPerRun(100, func() { callTelemetryNoopSpans(ctx, h, e, res) }); n == 0 {
		t.Error("the no-op span baseline does not allocate: AllocsPerRun sees nothing here")
	}
}

// BenchmarkCallTelemetry measures the router's tracing work of one
// tools/call with tracing off (no tracer provider, serve's propagator,
// headers without trace context): "off" is today's code, "noop-span-baseline"
// the same work as it was done before (a no-op span started anyway).
// Run it with -run '^$', so that no test has installed a provider.
func BenchmarkCallTelemetry(b *testing.B) {
	if !tracing.Off() {
		b.Skip("a tracer provider is installed in this process; run with -run '^$'")
	}
	useServePropagator()
	h, e, res := callTelemetryFixture()
	ctx := context.Background()
	b.Run("off", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			callTelemetry(ctx, h, e, res)
		}
	})
	b.Run("noop-span-baseline", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			callTelemetryNoopSpans(ctx, h, e, res)
		}
	})
}
