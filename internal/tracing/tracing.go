// Package tracing lets the packages that emit spans (router, remote,
// api/telemetry) skip every allocation of a span when no tracer provider
// is installed, which is how agents-mcp runs unless OTEL_* asks for
// traces (see telemetry.SetupTracing). Without it, a no-op span still
// costs its options, its attributes, its span value and a context per
// call: about 1.1 KB and 19 allocations per relayed tools/call, and
// otelhttp's handler 2.6 KB and 33 more per HTTP request.
//
// It imports no package of the module, so that router and remote, which
// may not import api, share it with api/telemetry.
package tracing

import (
	"fmt"
	"net/http"
	"reflect"
	"sync/atomic"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
)

// unset is the OpenTelemetry API's default global tracer provider, the
// one in place until otel.SetTracerProvider is called: it makes no-op
// spans until it is given a delegate, the first provider ever set, and
// it stays in use where it was handed out. It is nil when a package set
// a provider while being initialised, before this one: then [Off] never
// reports true, which costs allocations but never a span.
var unset, placeholder = defaultProvider()

// probe is the instrumentation name [Off] asks the default provider for.
const probe = "github.com/agents-mcp/agents-mcp/internal/tracing"

// delegated is set once the default provider was seen to delegate to a
// provider that records.
var delegated atomic.Bool

func defaultProvider() (trace.TracerProvider, reflect.Type) {
	tp := otel.GetTracerProvider()
	// The type is internal to the API module; its name is what tells
	// the default apart from a provider someone installed.
	if fmt.Sprintf("%T", tp) != "*global.tracerProvider" {
		return nil, nil
	}
	return tp, reflect.TypeOf(tp.Tracer(probe))
}

// Off reports whether spans started now would be no-ops that nobody
// records: no tracer provider was installed, or the one in use is the
// API's noop provider. A caller may then skip starting the span. What it
// must keep is the trace context already in ctx (a caller's traceparent),
// which a no-op span would only have carried on unchanged.
//
// It never allocates. With no provider installed it costs a lock of the
// API's default provider; once that provider delegates to a real one,
// Off stays false. One consequence: OpenTelemetry's eBPF
// auto-instrumentation, which hooks the default provider's no-op spans,
// sees none of the spans skipped here.
func Off() bool {
	tp := otel.GetTracerProvider()
	if _, ok := tp.(noop.TracerProvider); ok {
		return true
	}
	if unset == nil || tp != unset || delegated.Load() {
		return false
	}
	// The default provider hands out its own placeholder tracers until it
	// has a delegate, then the delegate's tracers.
	switch tr := tp.Tracer(probe); {
	case reflect.TypeOf(tr) == placeholder:
		return true
	case isNoop(tr):
		return true
	}
	delegated.Store(true)
	return false
}

func isNoop(tr trace.Tracer) bool {
	_, ok := tr.(noop.Tracer)
	return ok
}

// HeaderCarrier is propagation.HeaderCarrier without its allocations:
// propagators ask for lower-case keys ("traceparent", "baggage"), which
// http.Header.Get canonicalises into a new string on every call. This
// carrier canonicalises short keys on the stack instead, and looks them
// up the same way, so it finds exactly what HeaderCarrier finds.
type HeaderCarrier http.Header

var _ propagation.ValuesGetter = HeaderCarrier(nil)

// Get returns the first value of key, as http.Header.Get does.
func (c HeaderCarrier) Get(key string) string {
	if v := c.Values(key); len(v) > 0 {
		return v[0]
	}
	return ""
}

// Values returns every value of key, as http.Header.Values does; the
// Baggage propagator reads them all.
func (c HeaderCarrier) Values(key string) []string {
	var buf [64]byte
	k, ok := canonical(buf[:0], key)
	if !ok {
		return http.Header(c).Values(key)
	}
	return c[string(k)] // a map index by string(bytes) does not allocate
}

// Set sets key to value, as propagation.HeaderCarrier does.
func (c HeaderCarrier) Set(key, value string) { http.Header(c).Set(key, value) }

// Keys lists the keys of the header, as propagation.HeaderCarrier does.
func (c HeaderCarrier) Keys() []string { return propagation.HeaderCarrier(c).Keys() }

// canonical appends to dst the canonical MIME form of key when key is
// short and made of letters, digits and hyphens only, the keys for which
// that form is first letter and each letter after a hyphen upper case,
// the others lower case (textproto.CanonicalMIMEHeaderKey). ok is false
// for any other key, which the caller leaves to net/http.
func canonical(dst []byte, key string) (out []byte, ok bool) {
	if key == "" || len(key) > cap(dst) {
		return nil, false
	}
	upper := true
	for i := 0; i < len(key); i++ {
		c := key[i]
		switch {
		case 'a' <= c && c <= 'z':
			if upper {
				c -= 'a' - 'A'
			}
		case 'A' <= c && c <= 'Z':
			if !upper {
				c += 'a' - 'A'
			}
		case '0' <= c && c <= '9' || c == '-':
		default:
			return nil, false
		}
		dst = append(dst, c)
		upper = c == '-'
	}
	return dst, true
}
