package telemetry

import (
	"context"
	"log/slog"

	"go.opentelemetry.io/otel/trace"
)

// Keys of the attributes [NewLogHandler] adds.
const (
	LogKeyRequestID = "request_id"
	LogKeyTraceID   = "trace_id"
	LogKeySpanID    = "span_id"
)

// NewLogHandler wraps h so that every record logged with a context adds,
// at the top level of the record, the context's request id (request_id,
// see [RequestID]) and, when a span is active, its trace_id and span_id
// (hexadecimal, as trace backends show them). Records logged without such
// a context (Logger.Info rather than Logger.InfoContext) are passed on
// unchanged.
func NewLogHandler(h slog.Handler) slog.Handler {
	return &logHandler{base: h, h: h}
}

type logHandler struct {
	base slog.Handler // as given to NewLogHandler
	h    slog.Handler // base with ops applied
	// ops are the WithAttrs and WithGroup calls so far, in order. Once a
	// group is open, attributes added to a record would land in it, so the
	// ids are then added to base and ops replayed.
	ops     []func(slog.Handler) slog.Handler
	grouped bool
}

func (l *logHandler) Enabled(ctx context.Context, level slog.Level) bool {
	return l.h.Enabled(ctx, level)
}

func (l *logHandler) Handle(ctx context.Context, r slog.Record) error {
	ids := contextAttrs(ctx)
	if len(ids) == 0 {
		return l.h.Handle(ctx, r)
	}
	if !l.grouped {
		r = r.Clone() // the caller's record is not ours to change
		r.AddAttrs(ids...)
		return l.h.Handle(ctx, r)
	}
	h := l.base.WithAttrs(ids)
	for _, op := range l.ops {
		h = op(h)
	}
	return h.Handle(ctx, r)
}

func (l *logHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	if len(attrs) == 0 {
		return l
	}
	return l.with(func(h slog.Handler) slog.Handler { return h.WithAttrs(attrs) }, false)
}

func (l *logHandler) WithGroup(name string) slog.Handler {
	if name == "" {
		return l
	}
	return l.with(func(h slog.Handler) slog.Handler { return h.WithGroup(name) }, true)
}

func (l *logHandler) with(op func(slog.Handler) slog.Handler, group bool) *logHandler {
	ops := make([]func(slog.Handler) slog.Handler, len(l.ops), len(l.ops)+1)
	copy(ops, l.ops)
	return &logHandler{base: l.base, h: op(l.h), ops: append(ops, op), grouped: l.grouped || group}
}

// contextAttrs are the ids ctx carries, as log attributes.
func contextAttrs(ctx context.Context) []slog.Attr {
	if ctx == nil {
		return nil
	}
	var attrs []slog.Attr
	if id := RequestID(ctx); id != "" {
		attrs = append(attrs, slog.String(LogKeyRequestID, id))
	}
	if sc := trace.SpanContextFromContext(ctx); sc.IsValid() {
		attrs = append(attrs, slog.String(LogKeyTraceID, sc.TraceID().String()), slog.String(LogKeySpanID, sc.SpanID().String()))
	}
	return attrs
}
