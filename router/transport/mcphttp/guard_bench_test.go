package mcphttp_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/agents-mcp/agents-mcp/router"
)

// BenchmarkJSONRPCGuard measures the guard in front of /mcp on a typical
// tools/call body (the relay's hot path), against passing the body on
// without a guard (reading it is all the baseline does), and the guard on
// a call with 8 KiB of arguments ("guard-8KiB").
func BenchmarkJSONRPCGuard(b *testing.B) {
	const body = `{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"name":"everything__echo","arguments":{"message":"hello"},"_meta":{"progressToken":7}}}`
	bigBody := `{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"name":"everything__echo","arguments":{"message":"` +
		strings.Repeat("x", 8<<10) + `"},"_meta":{"progressToken":7}}}`
	sink := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = io.Copy(io.Discard, r.Body) })
	run := func(b *testing.B, h http.Handler, body string) {
		b.ReportAllocs()
		w := httptest.NewRecorder()
		for b.Loop() {
			req := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			h.ServeHTTP(w, req)
		}
		if w.Code != http.StatusOK {
			b.Fatalf("status %d: %s", w.Code, w.Body)
		}
	}
	b.Run("guard", func(b *testing.B) {
		run(b, (&router.JSONRPCGuard{MaxBodyBytes: router.DefaultMaxBodyBytes}).Wrap(sink), body)
	})
	b.Run("no-guard-baseline", func(b *testing.B) { run(b, sink, body) })
	b.Run("guard-8KiB", func(b *testing.B) {
		run(b, (&router.JSONRPCGuard{MaxBodyBytes: router.DefaultMaxBodyBytes}).Wrap(sink), bigBody)
	})
}
