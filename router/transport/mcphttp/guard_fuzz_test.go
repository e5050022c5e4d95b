package mcphttp

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/agents-mcp/agents-mcp/router/internal/rpcid"
)

// FuzzJSONRPCGuard feeds arbitrary bodies to the guard in front of /mcp. The
// guard must never panic, must either pass the body on unchanged or answer
// with a well-formed JSON-RPC error of a code it documents, and must accept
// every well-formed request of a known method. What it passes on is at
// most maxBatch messages, each beyond the first charged to the rate limit
// (the batch path), and never a request with a fractional id.
func FuzzJSONRPCGuard(f *testing.F) {
	for _, seed := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":"x","method":"tools/call","params":{"name":"a","arguments":{"b":[1,2,{"c":null}]}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":3,"method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":1,"result":{}}`,
		`[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/progress"}]`,
		`{"jsonrpc":"2.0","id":1.5,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":{},"method":"ping"}`,
		`{"jsonrpc":2,"method":[]}`,
		`not json`, ``, `[]`, `null`, `"str"`, `{"jsonrpc":"2.0","id":1,"method":""}`,
		`[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2,"method":"ping"},{"jsonrpc":"2.0","id":3,"method":"ping"},{"jsonrpc":"2.0","id":4,"method":"ping"},{"jsonrpc":"2.0","id":5,"method":"ping"}]`,
		`[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2.5,"method":"ping"}]`,
		`{"jsonrpc":"2.0","id":-1E2,"method":"ping"}`,
	} {
		f.Add([]byte(seed), "")
		f.Add([]byte(seed), "2025-11-25")
	}
	f.Fuzz(func(t *testing.T, body []byte, version string) {
		var forwarded []byte
		next := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			forwarded, _ = io.ReadAll(r.Body)
			w.WriteHeader(299)
		})
		const maxBatch = 4
		charged := -1
		g := &JSONRPCGuard{MaxBodyBytes: 1 << 16, MaxBatchMessages: maxBatch, ChargeBatch: func(_ http.ResponseWriter, _ *http.Request, extra int) bool {
			if charged != -1 {
				t.Fatal("ChargeBatch called twice for one body")
			}
			charged = extra
			return true
		}}
		req := httptest.NewRequest(http.MethodPost, "/mcp", bytes.NewReader(body))
		if version != "" {
			req.Header.Set("Mcp-Protocol-Version", version)
		}
		rec := httptest.NewRecorder()
		g.Wrap(next).ServeHTTP(rec, req)

		switch rec.Code {
		case 299:
			if !bytes.Equal(forwarded, body) {
				t.Fatalf("body changed on the way through: %q -> %q", body, forwarded)
			}
			messages := []json.RawMessage{forwarded}
			if trimmed := bytes.TrimSpace(forwarded); len(trimmed) > 0 && trimmed[0] == '[' {
				if err := json.Unmarshal(trimmed, &messages); err != nil {
					t.Fatalf("passed on a batch that is not a JSON array: %q", body)
				}
			}
			if len(messages) > maxBatch {
				t.Fatalf("passed on a batch of %d messages, over the limit of %d", len(messages), maxBatch)
			}
			if want := len(messages) - 1; want > 0 && charged != want || want == 0 && charged != -1 {
				t.Fatalf("a body of %d messages charged %d extra, want %d: %q", len(messages), charged, want, body)
			}
			for _, m := range messages {
				if rpcid.Inexact(m) {
					t.Fatalf("passed on a fractional id: %q", m)
				}
			}
			return
		case http.StatusAccepted:
			return
		}
		var reply struct {
			JSONRPC string          `json:"jsonrpc"`
			ID      json.RawMessage `json:"id"`
			Error   *struct {
				Code    int    `json:"code"`
				Message string `json:"message"`
			} `json:"error"`
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &reply); err != nil || reply.JSONRPC != "2.0" || reply.Error == nil || reply.ID == nil {
			t.Fatalf("status %d with a body that is not a JSON-RPC error: %q (%v)", rec.Code, rec.Body.Bytes(), err)
		}
		switch reply.Error.Code {
		case -32700, -32600, -32601:
		default:
			t.Fatalf("undocumented code %d for %q", reply.Error.Code, body)
		}
		if reply.Error.Code == -32700 && json.Valid(bytes.TrimSpace(body)) && len(bytes.TrimSpace(body)) > 0 {
			t.Fatalf("valid JSON %q reported as a parse error", body)
		}
	})
}
