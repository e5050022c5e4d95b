package tracing

import (
	"context"
	"net/http"
	"net/textproto"
	"slices"
	"strings"
	"testing"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/baggage"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/agents-mcp/agents-mcp/internal/testutil"
)

// TestOff runs in a process of its own, where no provider was set yet:
// Off must follow the global provider, and never report a real one as
// off.
func TestOff(t *testing.T) {
	if !testutil.InOwnProcess(t) {
		return
	}
	if unset == nil {
		t.Fatal("the default global tracer provider was not recognised")
	}
	if !Off() {
		t.Fatal("Off() = false with no tracer provider installed")
	}
	if n := testing.AllocsPerRun(100, func() { _ = Off() }); n != 0 {
		t.Errorf("Off allocates %v times with no provider installed", n)
	}
	prev := otel.GetTracerProvider()
	tp := sdktrace.NewTracerProvider()
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	otel.SetTracerProvider(tp) // the default provider's delegate from now on
	if Off() {
		t.Error("Off() = true with an SDK provider installed")
	}
	otel.SetTracerProvider(noop.NewTracerProvider())
	if !Off() {
		t.Error("Off() = false with the noop provider installed")
	}
	otel.SetTracerProvider(prev) // the API never returns to its default
	if Off() {
		t.Error("Off() = true after the default provider was set back: its spans now go to the SDK provider")
	}
	if n := testing.AllocsPerRun(100, func() { _ = Off() }); n != 0 {
		t.Errorf("Off allocates %v times", n)
	}
}

func TestCanonicalMatchesTextproto(t *testing.T) {
	for _, k := range []string{"traceparent", "tracestate", "baggage", "Baggage", "TRACEPARENT", "x-b3-traceid",
		"uber-trace-id", "a", "-a", "a--b", "x-1a", "1x", "ot-baggage-Foo", "with space", "ünï", "a_b", ""} {
		var buf [64]byte
		got, ok := canonical(buf[:0], k)
		if !ok {
			continue // left to net/http
		}
		if want := textproto.CanonicalMIMEHeaderKey(k); string(got) != want {
			t.Errorf("canonical(%q) = %q, textproto says %q", k, got, want)
		}
	}
}

// TestHeaderCarrierAgrees extracts the same trace context and baggage as
// propagation.HeaderCarrier, without allocating when the headers carry
// none.
func TestHeaderCarrierAgrees(t *testing.T) {
	prop := propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{})
	h := http.Header{}
	h.Set("Traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
	h.Set("Tracestate", "vendor=x")
	h.Add("Baggage", "a=1")
	h.Add("Baggage", "b=2")
	want := prop.Extract(context.Background(), propagation.HeaderCarrier(h))
	got := prop.Extract(context.Background(), HeaderCarrier(h))
	if w, g := trace.SpanContextFromContext(want), trace.SpanContextFromContext(got); !g.IsValid() || !w.Equal(g) {
		t.Errorf("span context %v, HeaderCarrier gives %v", g, w)
	}
	members := func(ctx context.Context) string { // in order: String() follows a map's
		return strings.Join(slices.Sorted(slices.Values(strings.Split(baggage.FromContext(ctx).String(), ","))), ",")
	}
	if w, g := members(want), members(got); g != w || g != "a=1,b=2" {
		t.Errorf("baggage %q, HeaderCarrier gives %q", g, w)
	}
	if got, want := slices.Sorted(slices.Values(HeaderCarrier(h).Keys())), slices.Sorted(slices.Values(propagation.HeaderCarrier(h).Keys())); !slices.Equal(got, want) {
		t.Errorf("Keys() = %v, want %v", got, want)
	}

	plain := http.Header{"Content-Type": {"application/json"}, "Accept": {"application/json, text/event-stream"}}
	ctx := context.Background()
	if n := testing.AllocsPerRun(100, func() { _ = prop.Extract(ctx, HeaderCarrier(plain)) }); n != 0 {
		t.Errorf("extracting from headers without trace context allocates %v times", n)
	}
}
