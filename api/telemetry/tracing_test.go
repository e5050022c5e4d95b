package telemetry

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	collectortrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"
)

// useTestTracing makes a provider that records spans in memory the global
// one, with W3C propagation, until t ends. Tests that use it must not run
// in parallel.
func useTestTracing(t *testing.T) *tracetest.InMemoryExporter {
	t.Helper()
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	prevTP, prevProp := otel.GetTracerProvider(), otel.GetTextMapPropagator()
	otel.SetTracerProvider(tp)
	otel.SetTextMapPropagator(propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{}))
	t.Cleanup(func() {
		_ = tp.Shutdown(context.Background())
		otel.SetTracerProvider(prevTP)
		otel.SetTextMapPropagator(prevProp)
	})
	return exp
}

func spanContextOf(ctx context.Context) trace.SpanContext { return trace.SpanContextFromContext(ctx) }

// clearOTelEnv unsets, for t, the variables that turn tracing on.
func clearOTelEnv(t *testing.T) {
	for _, k := range []string{"OTEL_SDK_DISABLED", "OTEL_TRACES_EXPORTER", "OTEL_EXPORTER_OTLP_ENDPOINT",
		"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_PROTOCOL", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL",
		"OTEL_SERVICE_NAME", "OTEL_RESOURCE_ATTRIBUTES", "OTEL_TRACES_SAMPLER"} {
		t.Setenv(k, "")
	}
}

func TestTracesExporterFromEnv(t *testing.T) {
	tests := []struct {
		env      map[string]string
		exporter string
		on       bool
	}{
		{nil, "", false},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318"}, "otlp", true},
		{map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://collector:4318/v1/traces"}, "otlp", true},
		{map[string]string{"OTEL_TRACES_EXPORTER": "otlp"}, "otlp", true},
		{map[string]string{"OTEL_TRACES_EXPORTER": "console"}, "console", true},
		{map[string]string{"OTEL_TRACES_EXPORTER": "none", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318"}, "", false},
		{map[string]string{"OTEL_SDK_DISABLED": "TRUE", "OTEL_TRACES_EXPORTER": "otlp"}, "", false},
		{map[string]string{"OTEL_SDK_DISABLED": "false", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318"}, "otlp", true},
	}
	for _, tt := range tests {
		exporter, on := tracesExporterFromEnv(func(k string) string { return tt.env[k] })
		if exporter != tt.exporter || on != tt.on {
			t.Errorf("%v: (%q, %v), want (%q, %v)", tt.env, exporter, on, tt.exporter, tt.on)
		}
	}
}

func TestSetupTracingUnconfiguredIsNoop(t *testing.T) {
	for _, env := range []map[string]string{
		nil,
		{"OTEL_TRACES_EXPORTER": "none", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:1"},
		{"OTEL_SDK_DISABLED": "true", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:1"},
	} {
		clearOTelEnv(t)
		for k, v := range env {
			t.Setenv(k, v)
		}
		before := otel.GetTracerProvider()
		var logs bytes.Buffer
		shutdown, err := SetupTracing(context.Background(), TracingConfig{Version: "v1", Logger: slog.New(slog.NewJSONHandler(&logs, nil))})
		if err != nil {
			t.Fatalf("%v: SetupTracing: %v", env, err)
		}
		if otel.GetTracerProvider() != before {
			t.Errorf("%v: a tracer provider was installed", env)
		}
		if logs.Len() > 0 {
			t.Errorf("%v: logged %s", env, logs.String())
		}
		if err := shutdown(context.Background()); err != nil {
			t.Errorf("%v: shutdown: %v", env, err)
		}
	}
}

func TestSetupTracingRefusals(t *testing.T) {
	tests := []struct {
		env    map[string]string
		stdout bool
		want   string
	}{
		{map[string]string{"OTEL_TRACES_EXPORTER": "console"}, true, "stdout"},
		{map[string]string{"OTEL_TRACES_EXPORTER": "zipkin-please"}, false, "zipkin-please"},
		{map[string]string{"OTEL_TRACES_EXPORTER": "otlp,console"}, false, "several"},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:1", "OTEL_EXPORTER_OTLP_PROTOCOL": "carrier-pigeon"}, false, "protocol"},
	}
	for _, tt := range tests {
		clearOTelEnv(t)
		for k, v := range tt.env {
			t.Setenv(k, v)
		}
		before := otel.GetTracerProvider()
		_, err := SetupTracing(context.Background(), TracingConfig{StdoutInUse: tt.stdout})
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%v: error %v, want one mentioning %q", tt.env, err, tt.want)
		}
		if otel.GetTracerProvider() != before {
			t.Errorf("%v: a tracer provider was installed despite the error", tt.env)
		}
	}
}

// otlpReceiver is an OTLP/HTTP trace endpoint: it decodes what it is sent.
type otlpReceiver struct {
	mu       sync.Mutex
	requests []*collectortrace.ExportTraceServiceRequest
}

func (o *otlpReceiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	var req collectortrace.ExportTraceServiceRequest
	if r.URL.Path != "/v1/traces" || proto.Unmarshal(body, &req) != nil {
		http.Error(w, "bad export", http.StatusBadRequest)
		return
	}
	o.mu.Lock()
	o.requests = append(o.requests, &req)
	o.mu.Unlock()
	b, _ := proto.Marshal(&collectortrace.ExportTraceServiceResponse{})
	w.Header().Set("Content-Type", "application/x-protobuf")
	_, _ = w.Write(b)
}

func TestSetupTracingOTLP(t *testing.T) {
	recv := &otlpReceiver{}
	srv := httptest.NewServer(recv)
	defer srv.Close()
	clearOTelEnv(t)
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", srv.URL)
	t.Setenv("OTEL_RESOURCE_ATTRIBUTES", "deployment.environment=test")
	prevTP, prevErr := otel.GetTracerProvider(), otel.GetErrorHandler()
	t.Cleanup(func() { otel.SetTracerProvider(prevTP); otel.SetErrorHandler(prevErr) })

	var logs bytes.Buffer
	shutdown, err := SetupTracing(context.Background(), TracingConfig{ServiceName: "agents-mcp-test", Version: "v7", Logger: slog.New(slog.NewJSONHandler(&logs, nil))})
	if err != nil {
		t.Fatalf("SetupTracing: %v", err)
	}
	if _, ok := otel.GetTracerProvider().(*sdktrace.TracerProvider); !ok {
		t.Fatalf("global provider is %T, want the SDK's", otel.GetTracerProvider())
	}
	_, span := otel.Tracer("test").Start(context.Background(), "exported span")
	span.End()
	if err := shutdown(context.Background()); err != nil { // flushes
		t.Fatalf("shutdown: %v", err)
	}
	if !strings.Contains(logs.String(), `"exporter":"otlp"`) {
		t.Errorf("no log line saying where traces go: %s", logs.String())
	}

	recv.mu.Lock()
	defer recv.mu.Unlock()
	var found bool
	for _, req := range recv.requests {
		for _, rs := range req.GetResourceSpans() {
			attrs := map[string]string{}
			for _, kv := range rs.GetResource().GetAttributes() {
				attrs[kv.GetKey()] = kv.GetValue().GetStringValue()
			}
			for _, ss := range rs.GetScopeSpans() {
				for _, s := range ss.GetSpans() {
					if s.GetName() != "exported span" {
						continue
					}
					found = true
					if attrs["service.name"] != "agents-mcp-test" || attrs["service.version"] != "v7" || attrs["deployment.environment"] != "test" {
						t.Errorf("resource = %v", attrs)
					}
				}
			}
		}
	}
	if !found {
		t.Errorf("the OTLP receiver did not get the span (%d export requests)", len(recv.requests))
	}
}

func TestHTTPMiddleware(t *testing.T) {
	exp := useTestTracing(t)
	const parentTrace, parentSpan = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
	var seenHeader string
	var seenCtx trace.SpanContext
	h := HTTPMiddleware(RequestIDMiddleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seenHeader = r.Header.Get("Traceparent")
		seenCtx = spanContextOf(r.Context())
	})))

	req := httptest.NewRequest(http.MethodPost, "/mcp", nil)
	req.Header.Set("Traceparent", "00-"+parentTrace+"-"+parentSpan+"-01")
	req.Header.Set(RequestIDHeader, "rid-1")
	h.ServeHTTP(httptest.NewRecorder(), req)

	spans := exp.GetSpans()
	if len(spans) != 1 {
		t.Fatalf("%d spans, want 1", len(spans))
	}
	s := spans[0]
	if s.Name != "POST /mcp" || s.SpanKind != trace.SpanKindServer {
		t.Errorf("span %q kind %v, want server span POST /mcp", s.Name, s.SpanKind)
	}
	if s.SpanContext.TraceID().String() != parentTrace || s.Parent.SpanID().String() != parentSpan {
		t.Errorf("span %v with parent %v, want a child of the caller's span", s.SpanContext, s.Parent)
	}
	if seenCtx.SpanID() != s.SpanContext.SpanID() {
		t.Errorf("handler's context holds span %v, want the server span %v", seenCtx.SpanID(), s.SpanContext.SpanID())
	}
	if want := "00-" + parentTrace + "-" + s.SpanContext.SpanID().String() + "-01"; seenHeader != want {
		t.Errorf("handler saw traceparent %q, want %q (the server span)", seenHeader, want)
	}
	var rid bool
	for _, a := range s.Attributes {
		rid = rid || (string(a.Key) == "agents_mcp.request_id" && a.Value.AsString() == "rid-1")
	}
	if !rid {
		t.Errorf("span attributes %v lack agents_mcp.request_id", s.Attributes)
	}

	exp.Reset()
	for _, tt := range []struct{ method, path, name string }{
		{"GET", "/healthz", ""}, {"GET", "/metrics", ""},
		{"GET", "/admin/v1/upstreams/files", "GET /admin"}, {"GET", "/sse", "GET /sse"}, {"PUT", "/whatever/42", "PUT"},
	} {
		exp.Reset()
		h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(tt.method, tt.path, nil))
		spans := exp.GetSpans()
		switch {
		case tt.name == "" && len(spans) != 0:
			t.Errorf("%s %s: traced as %q", tt.method, tt.path, spans[0].Name)
		case tt.name != "" && (len(spans) != 1 || spans[0].Name != tt.name):
			t.Errorf("%s %s: spans %v, want one named %q", tt.method, tt.path, spans, tt.name)
		}
	}
}

func TestPropagatingTransport(t *testing.T) {
	useTestTracing(t)
	var got []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = append(got, r.Header.Get("Traceparent"))
	}))
	defer srv.Close()
	client := &http.Client{Transport: PropagatingTransport(nil)}

	ctx, span := otel.Tracer("test").Start(context.Background(), "caller")
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL, nil)
	res, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	span.End()
	req2, _ := http.NewRequestWithContext(context.Background(), http.MethodPost, srv.URL, nil)
	if res, err = client.Do(req2); err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	client.CloseIdleConnections()

	sc := span.SpanContext()
	if want := "00-" + sc.TraceID().String() + "-" + sc.SpanID().String() + "-01"; len(got) != 2 || got[0] != want || got[1] != "" {
		t.Errorf("upstream saw traceparent %q, want [%q, \"\"]", got, want)
	}
	if req.Header.Get("Traceparent") != "" {
		t.Error("the transport changed the caller's request")
	}
}
