package agentsmcp

import "context"

type requestIDKey struct{}

// WithRequestID returns ctx carrying the id of the request being served,
// for logs and the audit trail.
func WithRequestID(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, requestIDKey{}, id)
}

// RequestIDFrom returns the request id ctx carries, or "".
func RequestIDFrom(ctx context.Context) string {
	id, _ := ctx.Value(requestIDKey{}).(string)
	return id
}

// RequestIDHeader is the HTTP header that carries a request id in and out.
const RequestIDHeader = "X-Request-Id"
