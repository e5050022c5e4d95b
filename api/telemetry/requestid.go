package telemetry

import (
	"context"
	"crypto/rand"
	"net/http"
	"time"

	agentsmcp "github.com/agents-mcp/agents-mcp"

	"github.com/oklog/ulid/v2"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"
)

// RequestIDHeader carries a request's id, in requests and in answers.
const RequestIDHeader = agentsmcp.RequestIDHeader

// MaxRequestIDLen is the longest request id taken from a caller.
const MaxRequestIDLen = 128

// WithRequestID returns ctx carrying the request id id (the root
// package's key, which the router and the audit trail read too).
func WithRequestID(ctx context.Context, id string) context.Context {
	return agentsmcp.WithRequestID(ctx, id)
}

// RequestID returns the request id ctx carries, or "".
func RequestID(ctx context.Context) string { return agentsmcp.RequestIDFrom(ctx) }

// NewRequestID returns a new request id: a ULID, 26 characters that sort
// by time.
func NewRequestID() string {
	return ulid.MustNew(ulid.Timestamp(time.Now()), rand.Reader).String()
}

// ValidRequestID reports whether a caller's request id may be used as is:
// 1 to MaxRequestIDLen visible ASCII characters (no space, no control
// character), so that it cannot forge log lines or header values.
func ValidRequestID(id string) bool {
	if id == "" || len(id) > MaxRequestIDLen {
		return false
	}
	for i := 0; i < len(id); i++ {
		if c := id[i]; c < 0x21 || c > 0x7e {
			return false
		}
	}
	return true
}

// RequestIDMiddleware gives every request an id: the caller's X-Request-Id
// when it is valid ([ValidRequestID]), else a new one. The id is set on the
// answer's X-Request-Id header before next runs, in the request's context
// ([RequestID]), on the request's own X-Request-Id header (so that MCP
// handlers, which see only headers, read the same id), and
// as the attribute agents_mcp.request_id of the current span when one is
// recording (put [HTTPMiddleware] before it).
func RequestIDMiddleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.Header.Get(RequestIDHeader)
		if !ValidRequestID(id) {
			id = NewRequestID()
		}
		r.Header.Set(RequestIDHeader, id) // also drops repeated values
		w.Header().Set(RequestIDHeader, id)
		if span := trace.SpanFromContext(r.Context()); span.IsRecording() {
			span.SetAttributes(attribute.String("agents_mcp.request_id", id))
		}
		next.ServeHTTP(w, r.WithContext(WithRequestID(r.Context(), id)))
	})
}
