package telemetry

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
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
