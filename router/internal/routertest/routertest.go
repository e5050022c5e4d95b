// Package routertest is the harness that the tests of the router and of
// its transports (router/transport/...) share: a router served over real
// loopback HTTP, and the JSON-RPC requests and replies a test sends and
// reads there. It is imported by tests only.
package routertest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/router"
)

// NewHTTPServer serves a router over real HTTP on loopback, with the
// providers that each of with makes for it (search_tools indexes the
// router it is given); the test's cleanup closes both.
func NewHTTPServer(t testing.TB, opts router.HTTPOptions, with ...func(testing.TB, *router.Router) agentsmcp.ToolProvider) (*router.Router, *httptest.Server) {
	t.Helper()
	r := router.New(router.Options{Version: "test"})
	for _, provider := range with {
		if err := r.AddProvider(context.Background(), provider(t, r)); err != nil {
			t.Fatal(err)
		}
	}
	h := r.HTTPHandler(opts)
	srv := httptest.NewServer(h)
	t.Cleanup(func() {
		h.Close()
		r.CloseSessions(context.Background())
		srv.Close()
	})
	return r, srv
}

// RPCReply is a JSON-RPC reply.
type RPCReply struct {
	ID     any             `json:"id"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// Post POSTs body to url as a streamable HTTP client does (JSON, accepting
// JSON and SSE), with headers ("Host" sets the request's host), and
// returns the response and its whole body.
func Post(t testing.TB, url string, body []byte, headers map[string]string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range headers {
		if k == "Host" {
			req.Host = v
			continue
		}
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return resp, data
}

// DecodeReply reads a JSON-RPC reply from a JSON body or the first SSE
// message event.
func DecodeReply(t testing.TB, resp *http.Response, data []byte) RPCReply {
	t.Helper()
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		sc := bufio.NewScanner(bytes.NewReader(data))
		for sc.Scan() {
			// Skip the empty priming event that precedes resumable streams.
			if line, ok := strings.CutPrefix(sc.Text(), "data:"); ok && strings.TrimSpace(line) != "" {
				data = []byte(strings.TrimSpace(line))
				break
			}
		}
	}
	var r RPCReply
	if err := json.Unmarshal(data, &r); err != nil {
		t.Fatalf("reply is not JSON-RPC: %v: %q", err, data)
	}
	return r
}

// Initialize opens a 2025-11-25 session at url and returns its id.
func Initialize(t testing.TB, url string) string {
	t.Helper()
	resp, data := Post(t, url, []byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`), nil)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("initialize: %d %s", resp.StatusCode, data)
	}
	sid := resp.Header.Get("Mcp-Session-Id")
	if sid == "" {
		t.Fatal("no session id")
	}
	Post(t, url, []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`), map[string]string{"Mcp-Session-Id": sid, "Mcp-Protocol-Version": "2025-11-25"})
	return sid
}

// Bearer is an http.RoundTripper that sends Token as a bearer token on
// each request through Base.
type Bearer struct {
	Token string
	Base  http.RoundTripper
}

// RoundTrip implements http.RoundTripper.
func (b Bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.Token)
	return b.Base.RoundTrip(r)
}

// NopWriteCloser is a writer whose Close does nothing: it keeps a test's
// pipe writer open after go-sdk closes its transport's writer.
type NopWriteCloser struct{ io.Writer }

// Close implements io.Closer.
func (NopWriteCloser) Close() error { return nil }

// InitializeBody is the initialize request of a 2025-11-25 client that
// declares no capability: the first message of a stateful session.
const InitializeBody = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
