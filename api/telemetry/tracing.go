package telemetry

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"strings"

	"go.opentelemetry.io/contrib/exporters/autoexport"
	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/baggage"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/agents-mcp/agents-mcp/internal/redact"
	"github.com/agents-mcp/agents-mcp/internal/tracing"
)

// TracingConfig configures [SetupTracing]. Where traces go is not part of
// it: that is the standard OpenTelemetry environment (see SetupTracing).
type TracingConfig struct {
	// ServiceName is the service.name resource attribute (default
	// "agents-mcp"); OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES
	// override it.
	ServiceName string
	// Version is the service.version resource attribute.
	Version string
	// Logger receives what the OpenTelemetry SDK reports (failed exports)
	// and one line saying where traces go; nil discards them.
	Logger *slog.Logger
	// StdoutInUse: stdout carries a protocol (MCP over stdio), so the
	// console exporter, which writes spans to stdout, is refused.
	StdoutInUse bool
}

// SetupTracing installs the global OpenTelemetry tracer provider that the
// router, the remote pool and the executor emit spans to, configured by
// the standard environment variables:
//
//   - OTEL_TRACES_EXPORTER: otlp, console or none (one value);
//   - OTEL_EXPORTER_OTLP_ENDPOINT, OTEL_EXPORTER_OTLP_TRACES_ENDPOINT,
//     OTEL_EXPORTER_OTLP_HEADERS, OTEL_EXPORTER_OTLP_PROTOCOL (grpc or
//     http/protobuf, the default), …: the OTLP exporter;
//   - OTEL_TRACES_SAMPLER, OTEL_TRACES_SAMPLER_ARG: sampling (default:
//     parentbased_always_on);
//   - OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES: the resource;
//   - OTEL_SDK_DISABLED=true: no tracing whatever the rest says.
//
// Tracing is on when OTEL_TRACES_EXPORTER names an exporter other than
// none, or, without it, when an OTLP endpoint is set. Otherwise
// SetupTracing installs no provider: spans stay no-ops, nothing is
// exported, no goroutine starts and nothing is logged.
//
// Either way it sets the global propagator to W3C trace context and
// baggage, which costs nothing without spans and lets a caller's trace id
// reach the logs ([NewLogHandler]) and the upstreams
// ([PropagatingTransport]).
//
// shutdown flushes the spans still buffered and stops the exporter; call it
// once, at exit, with a deadline. An error means the environment asks for
// something that cannot be built (an unknown exporter or protocol).
func SetupTracing(ctx context.Context, cfg TracingConfig) (shutdown func(context.Context) error, err error) {
	otel.SetTextMapPropagator(propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{}))
	noop := func(context.Context) error { return nil }
	exporter, on := tracesExporterFromEnv(os.Getenv)
	if !on {
		return noop, nil
	}
	if strings.Contains(exporter, ",") {
		return noop, fmt.Errorf("tracing: OTEL_TRACES_EXPORTER=%q lists several exporters; agents-mcp supports one", exporter)
	}
	if exporter == "console" && cfg.StdoutInUse {
		return noop, errors.New("tracing: OTEL_TRACES_EXPORTER=console writes spans to stdout, which carries MCP in stdio mode; use otlp")
	}
	logger := cfg.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	name := cfg.ServiceName
	if name == "" {
		name = "agents-mcp"
	}

	exp, err := autoexport.NewSpanExporter(ctx)
	if err != nil {
		return noop, fmt.Errorf("tracing: exporter %q (OTEL_TRACES_EXPORTER, OTEL_EXPORTER_OTLP_*): %w", exporter, err)
	}
	// Later options win: the environment overrides the defaults given here.
	res, err := resource.New(ctx,
		resource.WithAttributes(attribute.String("service.name", name), attribute.String("service.version", cfg.Version)),
		resource.WithTelemetrySDK(),
		resource.WithHost(),
		resource.WithFromEnv(),
	)
	if err != nil {
		if res == nil {
			_ = exp.Shutdown(ctx)
			return noop, fmt.Errorf("tracing: resource: %w", err)
		}
		logger.Warn("tracing: part of the resource could not be detected", "error", err)
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
	otel.SetTracerProvider(tp)
	otel.SetErrorHandler(otel.ErrorHandlerFunc(func(err error) {
		logger.Warn("opentelemetry", "error", err.Error())
	}))
	attrs := []any{"exporter", exporter}
	if e := otlpEndpoint(os.Getenv); e != "" && exporter == "otlp" {
		attrs = append(attrs, "endpoint", redact.URL(e)) // OTEL_EXPORTER_OTLP_HEADERS, which hold credentials, never
	}
	logger.Info("tracing enabled", attrs...)
	return tp.Shutdown, nil
}

// tracesExporterFromEnv says which exporter the environment selects, and
// whether tracing is on at all.
func tracesExporterFromEnv(getenv func(string) string) (exporter string, on bool) {
	if strings.EqualFold(strings.TrimSpace(getenv("OTEL_SDK_DISABLED")), "true") {
		return "", false
	}
	switch e := strings.TrimSpace(getenv("OTEL_TRACES_EXPORTER")); e {
	case "none":
		return "", false
	case "":
		if otlpEndpoint(getenv) == "" {
			return "", false
		}
		return "otlp", true
	default:
		return e, true
	}
}

func otlpEndpoint(getenv func(string) string) string {
	if e := strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")); e != "" {
		return e
	}
	return strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_ENDPOINT"))
}

// untracedPaths are probed every few seconds; spans of them would be noise.
var untracedPaths = map[string]bool{"/healthz": true, "/readyz": true, "/metrics": true}

// tracedRoutes are the first path segments that name a route in span
// names; other paths are named by their method alone, so that span names
// stay few.
var tracedRoutes = map[string]string{
	"mcp": "/mcp", "sse": "/sse", "messages": "/messages", "admin": "/admin", ".well-known": "/.well-known",
}

// HTTPMiddleware starts a server span for every request (except /healthz,
// /readyz and /metrics), continuing the caller's trace when the request
// carries W3C trace context. The span is in the request's context for
// next. It also rewrites the request's traceparent header to that span,
// because MCP handlers see the request's headers (RequestExtra.Header) but
// not its context: the router extracts the trace context from there, so
// its spans are children of this one. Put it outermost, before
// [RequestIDMiddleware].
//
// With tracing off (no tracer provider installed, see [SetupTracing]) it
// skips otelhttp, whose no-op span still cost about 2.6 KB and 33
// allocations per request, and only extracts the caller's trace context
// and baggage into the request's context, which is all the no-op span
// passed on: logs and upstreams see the same trace id either way.
func HTTPMiddleware(next http.Handler) http.Handler {
	expose := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if trace.SpanContextFromContext(r.Context()).IsValid() {
			otel.GetTextMapPropagator().Inject(r.Context(), propagation.HeaderCarrier(r.Header))
		}
		next.ServeHTTP(w, r)
	})
	traced := tracedHandler(expose)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !tracing.Off() {
			traced.ServeHTTP(w, r)
			return
		}
		if !untracedPaths[r.URL.Path] {
			// Free without trace headers (tracing.HeaderCarrier).
			ctx := otel.GetTextMapPropagator().Extract(r.Context(), tracing.HeaderCarrier(r.Header))
			if trace.SpanContextFromContext(ctx).IsValid() || baggage.FromContext(ctx).Len() > 0 {
				r = r.WithContext(ctx)
			}
		}
		expose.ServeHTTP(w, r)
	})
}

// tracedHandler is [HTTPMiddleware] with tracing on: otelhttp's server
// span around next.
func tracedHandler(next http.Handler) http.Handler {
	return otelhttp.NewHandler(next, "http.server",
		otelhttp.WithFilter(func(r *http.Request) bool { return !untracedPaths[r.URL.Path] }),
		otelhttp.WithSpanNameFormatter(func(_ string, r *http.Request) string {
			first, _, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
			if route, ok := tracedRoutes[first]; ok {
				return r.Method + " " + route
			}
			return r.Method
		}),
	)
}

// PropagatingTransport returns a RoundTripper that adds the W3C trace
// context of each request's context (traceparent, tracestate) to its
// headers, so that an upstream MCP server that traces joins the caller's
// trace. It starts no spans: the remote pool's "upstream call" span is the
// client side. A nil base means http.DefaultTransport; the remote pool
// wraps its own (remote.NewHTTPTransport).
func PropagatingTransport(base http.RoundTripper) http.RoundTripper {
	if base == nil {
		base = http.DefaultTransport
	}
	return propagatingTransport{base: base}
}

type propagatingTransport struct{ base http.RoundTripper }

func (t propagatingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if !trace.SpanContextFromContext(req.Context()).IsValid() {
		return t.base.RoundTrip(req)
	}
	// A RoundTripper must not change the caller's request.
	out := req.Clone(req.Context())
	otel.GetTextMapPropagator().Inject(req.Context(), propagation.HeaderCarrier(out.Header))
	return t.base.RoundTrip(out)
}

// CloseIdleConnections lets http.Client.CloseIdleConnections reach the
// base transport.
func (t propagatingTransport) CloseIdleConnections() {
	if c, ok := t.base.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}
