package sse

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// FuzzPOST sends arbitrary bodies to a live session's message endpoint. Every
// body must be accepted (202) or refused with a JSON-RPC error body, and the
// session must survive: no panic, no hang, no dead stream.
func FuzzPOST(f *testing.F) {
	for _, seed := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"x","arguments":{}}}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`,
		`{"jsonrpc":"2.0","id":9,"result":{}}`,
		`[{"jsonrpc":"2.0","id":1,"method":"ping"}]`,
		`{"jsonrpc":"2.0","id":3,"method":"notifications/initialized"}`,
		`not json`, ``, `{}`, `null`,
	} {
		f.Add([]byte(seed))
	}
	server := mcp.NewServer(&mcp.Implementation{Name: "fuzz", Version: "1"}, nil)
	h := NewHandler(func(*http.Request) *mcp.Server { return server }, &Options{MaxRequestBodyBytes: 1 << 16, KeepAlive: -1})
	mux := http.NewServeMux()
	mux.Handle("/sse", h)
	mux.Handle("/messages", h)
	ts := httptest.NewServer(mux)
	defer ts.Close()
	defer h.Close()

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, ts.URL+"/sse", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		f.Fatal(err)
	}
	defer resp.Body.Close()
	endpoint := readEndpoint(resp.Body)
	if endpoint == "" {
		f.Fatal("no endpoint event")
	}
	go func() { _, _ = io.Copy(io.Discard, resp.Body) }() // keep the stream drained

	f.Fuzz(func(t *testing.T, body []byte) {
		r, err := http.Post(ts.URL+endpoint, "application/json", bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		data, _ := io.ReadAll(r.Body)
		r.Body.Close()
		switch r.StatusCode {
		case http.StatusAccepted:
			return
		case http.StatusBadRequest, http.StatusRequestEntityTooLarge:
			var reply struct {
				Error *struct{ Code int } `json:"error"`
			}
			if json.Unmarshal(data, &reply) != nil || reply.Error == nil {
				t.Fatalf("status %d without a JSON-RPC error body: %q", r.StatusCode, data)
			}
		default:
			t.Fatalf("status %d for %q: %s (the session may have died)", r.StatusCode, body, data)
		}
	})
}
