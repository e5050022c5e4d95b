package agentsmcp

import "context"

type requestIDKey struct{}

// WithRequestID returns ctx carrying the request's id (logs, audit).
func WithRequestID(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, requestIDKey{}, id)
}

// RequestIDFrom returns the request id ctx carries, or "".
func RequestIDFrom(ctx context.Context) string {
	id, _ := ctx.Value(requestIDKey{}).(string)
	return id
}

type transportKey struct{}

// WithTransport returns ctx carrying the transport's name ("streamable",
// "sse", "stdio"), set on a session's context, for the audit trail.
func WithTransport(ctx context.Context, name string) context.Context {
	return context.WithValue(ctx, transportKey{}, name)
}

// TransportFrom returns the transport name ctx carries, or "".
func TransportFrom(ctx context.Context) string {
	name, _ := ctx.Value(transportKey{}).(string)
	return name
}

// RequestIDHeader is the HTTP header that carries a request id in and out.
const RequestIDHeader = "X-Request-Id"
