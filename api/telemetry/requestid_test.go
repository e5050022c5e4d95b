package telemetry

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/trace"
)

func TestValidRequestID(t *testing.T) {
	tests := []struct {
		id   string
		want bool
	}{
		{"01JDZ7YQ8V6N3W2X1Y0Z9A8B7C", true},
		{"req-42_abc.def:ghi/jkl", true},
		{strings.Repeat("a", MaxRequestIDLen), true},
		{"", false},
		{strings.Repeat("a", MaxRequestIDLen+1), false},
		{"two words", false},
		{"line\nbreak", false},
		{"tab\there", false},
		{"nul\x00", false},
		{"del\x7f", false},
		{"café", false},
	}
	for _, tt := range tests {
		if got := ValidRequestID(tt.id); got != tt.want {
			t.Errorf("ValidRequestID(%q) = %v, want %v", tt.id, got, tt.want)
		}
	}
	if id := NewRequestID(); !ValidRequestID(id) || len(id) != 26 {
		t.Errorf("NewRequestID() = %q, not a valid 26-character id", id)
	}
	if a, b := NewRequestID(), NewRequestID(); a == b {
		t.Error("two new request ids are equal")
	}
}

func TestRequestIDMiddleware(t *testing.T) {
	tests := []struct {
		name   string
		header []string // X-Request-Id values sent
		keep   bool     // the first one is kept
	}{
		{"none", nil, false},
		{"valid", []string{"abc-123"}, true},
		{"repeated", []string{"first", "second"}, true},
		{"too long", []string{strings.Repeat("x", 129)}, false},
		{"log forging", []string{"ok\n{\"level\":\"ERROR\"}"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var inCtx, inHeader []string
			h := RequestIDMiddleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				inCtx = append(inCtx, RequestID(r.Context()))
				inHeader = r.Header.Values(RequestIDHeader)
			}))
			req := httptest.NewRequest(http.MethodPost, "/mcp", nil)
			for _, v := range tt.header {
				req.Header.Add(RequestIDHeader, v)
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)

			got := rec.Header().Get(RequestIDHeader)
			switch {
			case tt.keep && got != tt.header[0]:
				t.Errorf("answer's X-Request-Id = %q, want the caller's %q", got, tt.header[0])
			case !tt.keep && (!ValidRequestID(got) || len(got) != 26):
				t.Errorf("answer's X-Request-Id = %q, want a new id", got)
			}
			if len(inCtx) != 1 || inCtx[0] != got {
				t.Errorf("RequestID in the handler = %q, want %q", inCtx, got)
			}
			if len(inHeader) != 1 || inHeader[0] != got {
				t.Errorf("request's X-Request-Id in the handler = %q, want [%q]", inHeader, got)
			}
		})
	}
}

func TestFromHeader(t *testing.T) {
	h := http.Header{}
	h.Set(RequestIDHeader, "from-header")
	h.Set("Traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
	useTestTracing(t)

	ctx := FromHeader(context.Background(), h)
	if got := RequestID(ctx); got != "from-header" {
		t.Errorf("RequestID = %q, want from-header", got)
	}
	if sc := spanContextOf(ctx); sc.TraceID().String() != "4bf92f3577b34da6a3ce929d0e0e4736" || sc.SpanID().String() != "00f067aa0ba902b7" || !sc.IsRemote() {
		t.Errorf("span context = %v, want the remote parent of the traceparent header", sc)
	}

	// The headers win over what ctx carries (in go-sdk, the values of the
	// request that opened the session); what they lack is kept.
	stale := WithRequestID(context.Background(), "session-opener")
	if got := RequestID(FromHeader(stale, h)); got != "from-header" {
		t.Errorf("RequestID = %q, want from-header", got)
	}
	if got := RequestID(FromHeader(stale, http.Header{})); got != "session-opener" {
		t.Errorf("RequestID without a header = %q, want session-opener", got)
	}
	_, staleSpan := otel.Tracer("test").Start(stale, "the session opener's request")
	staleSpan.End()
	if sc := spanContextOf(FromHeader(trace.ContextWithSpan(stale, staleSpan), http.Header{})); sc.IsValid() {
		t.Errorf("span context %v of another request survived headers without trace context", sc)
	}
	own := stale
	bad := http.Header{RequestIDHeader: {"bad id"}}
	if got := RequestID(FromHeader(context.Background(), bad)); got != "" {
		t.Errorf("RequestID from an invalid header = %q, want none", got)
	}
	if FromHeader(own, nil) != own {
		t.Error("FromHeader with nil headers changed ctx")
	}
}
