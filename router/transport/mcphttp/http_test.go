package mcphttp_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agents-mcp/agents-mcp/router"
	"github.com/agents-mcp/agents-mcp/router/internal/routertest"
	"github.com/agents-mcp/agents-mcp/router/transport/mcphttp"
)

func TestGuardAnswersMalformedInputWithJSONRPCErrors(t *testing.T) {
	_, srv := newHTTPServer(t, router.HTTPOptions{MaxBodyBytes: 1 << 20})
	url := srv.URL + "/mcp"
	sid := routertest.Initialize(t, url)
	session := map[string]string{"Mcp-Session-Id": sid, "Mcp-Protocol-Version": "2025-11-25"}

	tests := []struct {
		name       string
		body       []byte
		headers    map[string]string
		wantStatus int
		wantCode   int
		wantID     any
	}{
		{"not json", []byte("not json"), session, 400, -32700, nil},
		{"empty body", []byte("   "), session, 400, -32700, nil},
		{"json but not json-rpc", []byte(`{"foo":1}`), session, 400, -32600, nil},
		{"wrong version tag", []byte(`{"jsonrpc":"1.0","id":5,"method":"ping"}`), session, 400, -32600, float64(5)},
		{"unknown method", []byte(`{"jsonrpc":"2.0","id":7,"method":"nope/nope"}`), session, 200, -32601, float64(7)},
		// MCP 2026-07-28 (SEP-2575) wants 404 for an unknown method; the
		// conformance suite's server-stateless scenario checks it.
		{"unknown method on 2026-07-28", []byte(`{"jsonrpc":"2.0","id":8,"method":"nope/nope"}`), map[string]string{"Mcp-Protocol-Version": "2026-07-28"}, 404, -32601, float64(8)},
		{"notification with id", []byte(`{"jsonrpc":"2.0","id":3,"method":"notifications/initialized"}`), session, 400, -32600, float64(3)},
		{"request without id", []byte(`{"jsonrpc":"2.0","method":"tools/list"}`), session, 400, -32600, nil},
		{"batch on 2025-11-25", []byte(`[{"jsonrpc":"2.0","id":1,"method":"ping"}]`), session, 400, -32600, nil},
		{"empty batch", []byte(`[]`), map[string]string{"Mcp-Session-Id": sid}, 400, -32600, nil},
		{"fractional id", []byte(`{"jsonrpc":"2.0","id":1.5,"method":"ping"}`), session, 400, -32600, nil},
		{"exponent id", []byte(`{"jsonrpc":"2.0","id":1e0,"method":"ping"}`), session, 400, -32600, nil},
		{"batch over the limit", []byte("[" + strings.Repeat(`{"jsonrpc":"2.0","id":1,"method":"ping"},`, router.DefaultMaxBatchMessages) + `{"jsonrpc":"2.0","id":2,"method":"ping"}]`), map[string]string{"Mcp-Session-Id": sid}, 400, -32600, nil},
		{"oversized body", append(append([]byte(`{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"`), bytes.Repeat([]byte("x"), 10<<20)...), `"}}`...), session, 413, -32600, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, data := routertest.Post(t, url, tt.body, tt.headers)
			if resp.StatusCode != tt.wantStatus {
				t.Fatalf("status = %d, want %d (body %q)", resp.StatusCode, tt.wantStatus, data)
			}
			if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
				t.Errorf("Content-Type = %q", ct)
			}
			r := routertest.DecodeReply(t, resp, data)
			if r.Error == nil || r.Error.Code != tt.wantCode {
				t.Fatalf("error = %+v, want code %d", r.Error, tt.wantCode)
			}
			if r.ID != tt.wantID {
				t.Errorf("id = %v, want %v", r.ID, tt.wantID)
			}
			if !bytes.Contains(data, []byte(`"id":`)) {
				t.Errorf("reply has no id member: %s", data)
			}
		})
	}

	// The session still works after all that.
	resp, data := routertest.Post(t, url, []byte(`{"jsonrpc":"2.0","id":9,"method":"tools/list"}`), session)
	if r := routertest.DecodeReply(t, resp, data); r.Error != nil || !bytes.Contains(r.Result, []byte("search_tools")) {
		t.Fatalf("tools/list after bad input: %d %s", resp.StatusCode, data)
	}
	// An unknown notification is accepted and dropped.
	if resp, data := routertest.Post(t, url, []byte(`{"jsonrpc":"2.0","method":"notifications/whatever"}`), session); resp.StatusCode != http.StatusAccepted {
		t.Errorf("unknown notification: %d %s", resp.StatusCode, data)
	}
}

func TestKnownMethodsMatchTheSDKServer(t *testing.T) {
	// The guard answers unknown methods itself, so its table must not miss a
	// method the SDK serves: every listed call must get past the SDK's own
	// method check (which would answer 400 "unsupported").
	_, srv := newHTTPServer(t, router.HTTPOptions{})
	url := srv.URL + "/mcp"
	sid := routertest.Initialize(t, url)
	session := map[string]string{"Mcp-Session-Id": sid, "Mcp-Protocol-Version": "2025-11-25"}
	for method, kind := range mcphttp.KnownMethods() {
		if kind != "call" || method == "initialize" || method == "subscriptions/listen" || method == "server/discover" ||
			strings.HasPrefix(method, "tasks/") {
			continue // initialize is done; the others belong to the sessionless protocol
		}
		resp, data := routertest.Post(t, url, []byte(`{"jsonrpc":"2.0","id":1,"method":"`+method+`","params":{}}`), session)
		if resp.StatusCode == http.StatusBadRequest && bytes.Contains(data, []byte("unsupported")) {
			t.Errorf("%s: the SDK does not know it: %s", method, data)
		}
		if r := routertest.DecodeReply(t, resp, data); r.Error != nil && r.Error.Code == -32601 {
			t.Errorf("%s: method not found: %s", method, data)
		}
	}
}

func TestSessionlessProtocolIsServedStatelessly(t *testing.T) {
	_, srv := newHTTPServer(t, router.HTTPOptions{})
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{` +
		`"io.modelcontextprotocol/protocolVersion":"2026-07-28",` +
		`"io.modelcontextprotocol/clientCapabilities":{},` +
		`"io.modelcontextprotocol/clientInfo":{"name":"t","version":"1"}}}}`
	resp, data := routertest.Post(t, srv.URL+"/mcp", []byte(body), map[string]string{"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/list"})
	r := routertest.DecodeReply(t, resp, data)
	if r.Error != nil || !bytes.Contains(r.Result, []byte("search_tools")) {
		t.Fatalf("2026-07-28 tools/list on a stateful endpoint: %d %s", resp.StatusCode, data)
	}
	if resp.Header.Get("Mcp-Session-Id") != "" {
		t.Error("a sessionless request got a session id")
	}
}

func TestSessionlessPOSTToSSEGetsPlainJSON(t *testing.T) {
	_, srv := newHTTPServer(t, router.HTTPOptions{})
	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/sse", strings.NewReader(
		`{"jsonrpc":"2.0","id":"a","method":"tools/validate","params":{"name":"search_tools","arguments":{"limit":0}}}`))
	resp, err := http.DefaultClient.Do(req) // no Content-Type, no Accept: the original clients sent neither
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		t.Fatalf("status %d, Content-Type %q: %s", resp.StatusCode, resp.Header.Get("Content-Type"), data)
	}
	var r struct {
		ID     string                `json:"id"`
		Result router.ValidateResult `json:"result"`
	}
	if err := json.Unmarshal(data, &r); err != nil {
		t.Fatal(err)
	}
	if r.ID != "a" || r.Result.Valid || len(r.Result.Missing) != 1 || r.Result.Missing[0] != "query" {
		t.Errorf("reply = %s", data)
	}
	found := false
	for _, is := range r.Result.Errors {
		found = found || (is.Path == "/limit" && is.Keyword == "minimum")
	}
	if !found {
		t.Errorf("no /limit minimum issue in %s", data)
	}

	resp2, data2 := routertest.Post(t, srv.URL+"/sse", []byte(`{"jsonrpc":"2.0","id":2,"method":"nope"}`), nil)
	if r := routertest.DecodeReply(t, resp2, data2); r.Error == nil || r.Error.Code != -32601 {
		t.Errorf("unknown method via POST /sse: %s", data2)
	}
}

// TestBatchesAreChargedPerMessage: every message of a batch beyond the
// first (which the HTTP rate limit charged) goes to ChargeBatch, on /mcp
// and on the sessionless POST /sse; a refusal stops the whole batch.
func TestBatchesAreChargedPerMessage(t *testing.T) {
	var charged []int
	refuse := false
	_, srv := newHTTPServer(t, router.HTTPOptions{ChargeBatch: func(w http.ResponseWriter, _ *http.Request, extra int) bool {
		charged = append(charged, extra)
		if refuse {
			w.WriteHeader(http.StatusTooManyRequests)
			return false
		}
		return true
	}})
	batch := func(n int) []byte {
		var b strings.Builder
		b.WriteString("[")
		for i := range n {
			if i > 0 {
				b.WriteString(",")
			}
			fmt.Fprintf(&b, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"search_tools","arguments":{"query":"search"}}}`, i+1)
		}
		b.WriteString("]")
		return []byte(b.String())
	}
	// A session of protocol 2025-03-26, which allows batches, and a
	// header-less client that leaves out MCP-Protocol-Version.
	resp, data := routertest.Post(t, srv.URL+"/mcp", []byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`), nil)
	sid := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != 200 || sid == "" {
		t.Fatalf("initialize: %d %s", resp.StatusCode, data)
	}
	routertest.Post(t, srv.URL+"/mcp", []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`), map[string]string{"Mcp-Session-Id": sid})
	session := map[string]string{"Mcp-Session-Id": sid}

	if resp, data := routertest.Post(t, srv.URL+"/sse", batch(5), nil); resp.StatusCode != 200 || bytes.Count(data, []byte(`"result"`)) != 5 {
		t.Fatalf("batch of 5 on POST /sse: %d %s", resp.StatusCode, data)
	}
	if resp, data := routertest.Post(t, srv.URL+"/mcp", batch(4), session); resp.StatusCode != 200 {
		t.Fatalf("batch of 4 on /mcp: %d %s", resp.StatusCode, data)
	}
	routertest.Post(t, srv.URL+"/sse", batch(1), nil) // one message: charged by the HTTP limit alone
	if want := []int{4, 3}; !slices.Equal(charged, want) {
		t.Fatalf("charged %v, want %v", charged, want)
	}
	refuse = true
	for _, path := range []string{"/sse", "/mcp"} {
		if resp, data := routertest.Post(t, srv.URL+path, batch(3), session); resp.StatusCode != http.StatusTooManyRequests || bytes.Contains(data, []byte(`"result"`)) {
			t.Errorf("refused batch on %s: %d %s, want 429 and no call run", path, resp.StatusCode, data)
		}
	}
}

// TestCompatPOSTFromAPageMustBeJSON: a page on another localhost port (an
// allowed loopback origin) cannot call tools through POST /sse with a
// simple, preflight-free text/plain request; a JSON one, or one without
// Origin (a non-browser client of the original server), is served.
func TestCompatPOSTFromAPageMustBeJSON(t *testing.T) {
	_, srv := newHTTPServer(t, router.HTTPOptions{})
	call := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"search_tools","arguments":{"query":"x"}}}`)
	for _, tc := range []struct {
		origin, contentType string
		want                int
	}{
		{"http://localhost:3000", "text/plain", http.StatusUnsupportedMediaType},
		{"http://localhost:3000", "application/x-www-form-urlencoded", http.StatusUnsupportedMediaType},
		{"http://localhost:3000", "application/json", http.StatusOK},
		{"", "text/plain", http.StatusOK},
	} {
		req, _ := http.NewRequest(http.MethodPost, srv.URL+"/sse", bytes.NewReader(call))
		req.Header.Set("Content-Type", tc.contentType)
		if tc.origin != "" {
			req.Header.Set("Origin", tc.origin)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tc.want {
			t.Errorf("Origin %q, Content-Type %s: %d %s, want %d", tc.origin, tc.contentType, resp.StatusCode, body, tc.want)
		}
	}
}

func TestRebindingProtection(t *testing.T) {
	_, srv := newHTTPServer(t, router.HTTPOptions{AllowedOrigins: []string{"https://app.example.com"}})
	ping := []byte(`{"jsonrpc":"2.0","id":1,"method":"ping"}`)
	tests := []struct {
		name    string
		headers map[string]string
		want    int
	}{
		{"loopback host", nil, 200},
		{"localhost host", map[string]string{"Host": "localhost:1234"}, 200},
		{"foreign host", map[string]string{"Host": "evil.example.com"}, 403},
		{"foreign origin", map[string]string{"Origin": "http://evil.example.com"}, 403},
		{"null origin", map[string]string{"Origin": "null"}, 403},
		{"loopback origin", map[string]string{"Origin": "http://localhost:6274"}, 200},
		{"allowed origin", map[string]string{"Origin": "https://app.example.com"}, 200},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, path := range []string{"/sse", "/mcp"} {
				resp, data := routertest.Post(t, srv.URL+path, ping, tt.headers)
				// /mcp without a session answers ping in a fresh session: 200.
				if resp.StatusCode != tt.want {
					t.Errorf("%s: status %d, want %d: %s", path, resp.StatusCode, tt.want, data)
				}
			}
		})
	}
}

// TestRebindingProtectionWithoutCredentials: a server without credentials
// off loopback (--insecure) refuses host names a page could rebind, while
// IP addresses (probes, direct clients) and AllowedHosts pass.
func TestRebindingProtectionWithoutCredentials(t *testing.T) {
	for _, tc := range []struct {
		allowed []string
		host    string
		want    int
	}{
		{nil, "10.1.2.3:8080", 204},
		{nil, "[fd00::1]:8080", 204},
		{nil, "evil.example:8080", 403},
		{nil, "localhost:8080", 403}, // not loopback here: the request came from afar
		{[]string{"mcp.example.com"}, "mcp.example.com", 204},
		{[]string{"mcp.example.com"}, "evil.example", 403},
	} {
		p := router.RebindingProtection{AllowedHosts: tc.allowed, NoCredentials: true}
		h := p.Wrap(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(204) }))
		req := httptest.NewRequest(http.MethodPost, "http://"+tc.host+"/admin/v1/upstreams", nil)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != tc.want {
			t.Errorf("Host %s (allowed %v): %d, want %d", tc.host, tc.allowed, rec.Code, tc.want)
		}
	}
}

func TestRebindingProtectionOnNonLoopbackListener(t *testing.T) {
	p := router.RebindingProtection{AllowedHosts: []string{"mcp.example.com"}}
	h := p.Wrap(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(204) }))
	for _, tc := range []struct {
		host string
		want int
	}{{"mcp.example.com", 204}, {"mcp.example.com:443", 204}, {"other.example.com", 403}} {
		req := httptest.NewRequest(http.MethodPost, "http://"+tc.host+"/mcp", nil)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != tc.want {
			t.Errorf("Host %s: %d, want %d", tc.host, rec.Code, tc.want)
		}
	}
}

// TestStatelessOption checks that --stateless serves /mcp without sessions.
func TestStatelessOption(t *testing.T) {
	_, srv := newHTTPServer(t, router.HTTPOptions{Stateless: true})
	resp, data := routertest.Post(t, srv.URL+"/mcp", []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"search_tools","arguments":{"query":"search"}}}`), nil)
	r := routertest.DecodeReply(t, resp, data)
	if r.Error != nil || resp.Header.Get("Mcp-Session-Id") != "" {
		t.Fatalf("stateless call: %d %s (session %q)", resp.StatusCode, data, resp.Header.Get("Mcp-Session-Id"))
	}
	var res mcp.CallToolResult
	if err := json.Unmarshal(r.Result, &res); err != nil || res.IsError {
		t.Fatalf("result %s: %v", r.Result, err)
	}
	get, _ := http.NewRequest(http.MethodGet, srv.URL+"/mcp", nil)
	get.Header.Set("Accept", "text/event-stream")
	gr, err := http.DefaultClient.Do(get)
	if err != nil {
		t.Fatal(err)
	}
	gr.Body.Close()
	if gr.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("GET on stateless /mcp: %d, want 405", gr.StatusCode)
	}
}
