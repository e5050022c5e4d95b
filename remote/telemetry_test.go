package remote

import (
	"context"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/internal/testutil"
	"github.com/agents-mcp/agents-mcp/internal/tracing"
)

// The pool's share of the promise "spans cost no allocation when disabled":
// the "upstream call" span of CallTool with no tracer provider installed.

func upstreamSpan(ctx context.Context, u *upstream, req *mcp.CallToolRequest, res *mcp.CallToolResult) {
	_, span := u.startCallSpan(ctx, req)
	if span != nil {
		endCallSpan(span, res, nil)
	}
}

// upstreamNoopSpan is what CallTool did before: a no-op span started and
// ended anyway. It is the baseline of BenchmarkUpstreamCallSpan.
func upstreamNoopSpan(ctx context.Context, u *upstream, req *mcp.CallToolRequest, res *mcp.CallToolResult) {
	_, span := otel.Tracer(tracerName).Start(ctx, "upstream call", trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(
		attribute.String("agents_mcp.upstream", u.cfg.Name),
		attribute.String("agents_mcp.tool", req.Params.Name),
	))
	endCallSpan(span, res, nil)
}

func upstreamSpanFixture() (*upstream, *mcp.CallToolRequest, *mcp.CallToolResult) {
	return &upstream{cfg: agentsmcp.UpstreamConfig{Name: "upstream"}}, &mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{Name: "echo"}}, &mcp.CallToolResult{}
}

// TestUpstreamCallSpanFreeWhenTracingOff fails if the span of an upstream
// call allocates again with tracing off. It runs in a process of its own,
// where no test has installed a tracer provider.
func TestUpstreamCallSpanFreeWhenTracingOff(t *testing.T) {
	if !testutil.InOwnProcess(t) {
		return
	}
	if !tracing.Off() {
		t.Fatal("tracing.Off() = false in a process where no tracer provider was installed")
	}
	u, req, res := upstreamSpanFixture()
	ctx := context.Background()
	if n := testing.AllocsPerRun(1000, func() { upstreamSpan(ctx, u, req, res) }); n != 0 {
		t.Errorf("the upstream call span allocates %v times per call with tracing off; want 0", n)
	}
	if n := testing.AllocsPerRun(100, func() { upstreamNoopSpan(ctx, u, req, res) }); n == 0 {
		t.Error("the no-op span baseline does not allocate: AllocsPerRun sees nothing here")
	}
}

// BenchmarkUpstreamCallSpan measures the span of an upstream call with
// tracing off: "off" is today's code, "noop-span-baseline" the no-op span
// started before. Run it with -run '^$' (no provider installed by a test).
func BenchmarkUpstreamCallSpan(b *testing.B) {
	if !tracing.Off() {
		b.Skip("a tracer provider is installed in this process; run with -run '^$'")
	}
	u, req, res := upstreamSpanFixture()
	ctx := context.Background()
	b.Run("off", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			upstreamSpan(ctx, u, req, res)
		}
	})
	b.Run("noop-span-baseline", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			upstreamNoopSpan(ctx, u, req, res)
		}
	})
}
