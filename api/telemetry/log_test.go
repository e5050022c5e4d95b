package telemetry

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// logLines decodes the JSON lines of buf.
func logLines(t *testing.T, buf *bytes.Buffer) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		out = append(out, m)
	}
	return out
}

func TestLogHandler(t *testing.T) {
	var buf bytes.Buffer
	logger := slog.New(NewLogHandler(slog.NewJSONHandler(&buf, nil)))

	// A real span of a real (local) provider.
	tp := sdktrace.NewTracerProvider()
	defer tp.Shutdown(context.Background())
	ctx, span := tp.Tracer("test").Start(WithRequestID(context.Background(), "req-1"), "op")
	defer span.End()
	sc := span.SpanContext()

	logger.InfoContext(ctx, "with ids", "k", "v")
	logger.Info("without context")
	logger.InfoContext(WithRequestID(context.Background(), "req-2"), "request id only")
	logger.With("component", "router").WithGroup("call").InfoContext(ctx, "grouped", "tool", "search_tools")
	logger.WithGroup("empty").InfoContext(context.Background(), "grouped, no ids")

	lines := logLines(t, &buf)
	if len(lines) != 5 {
		t.Fatalf("%d log lines, want 5:\n%s", len(lines), buf.String())
	}
	check := func(i int, key string, want any) {
		t.Helper()
		if got, ok := lines[i][key]; want == nil && ok {
			t.Errorf("line %d (%s): %s = %v, want none", i, lines[i]["msg"], key, got)
		} else if want != nil && got != want {
			t.Errorf("line %d (%s): %s = %v, want %v", i, lines[i]["msg"], key, got, want)
		}
	}
	check(0, "request_id", "req-1")
	check(0, "trace_id", sc.TraceID().String())
	check(0, "span_id", sc.SpanID().String())
	check(0, "k", "v")
	check(1, "request_id", nil)
	check(1, "trace_id", nil)
	check(2, "request_id", "req-2")
	check(2, "trace_id", nil)
	// The ids stay at the top level when a group is open; the group and
	// the earlier attributes are kept.
	check(3, "request_id", "req-1")
	check(3, "trace_id", sc.TraceID().String())
	check(3, "component", "router")
	if call, _ := lines[3]["call"].(map[string]any); call["tool"] != "search_tools" || call["request_id"] != nil {
		t.Errorf("line 3: group call = %v, want {tool: search_tools} only", lines[3]["call"])
	}
	check(4, "request_id", nil)
}

func TestLogHandlerEnabled(t *testing.T) {
	var buf bytes.Buffer
	logger := slog.New(NewLogHandler(slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: slog.LevelWarn})))
	ctx := WithRequestID(context.Background(), "r")
	logger.InfoContext(ctx, "dropped")
	logger.WarnContext(ctx, "kept")
	if s := buf.String(); strings.Contains(s, "dropped") || !strings.Contains(s, `"request_id":"r"`) {
		t.Errorf("log = %s, want only the warning, with its request id", s)
	}
}
