package sse

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agents-mcp/agents-mcp/internal/testutil"
)

const waitTimeout = 5 * time.Second

type validateParams struct {
	mcp.ParamsBase
	Name string `json:"name"`
}

type validateResult struct {
	mcp.ResultBase
	Valid bool   `json:"valid"`
	Echo  string `json:"echo"`
}

type empty struct{}

// newServer builds an mcp.Server with the tools and methods the tests use.
func newServer() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "test", Version: "v0"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "header"}, func(_ context.Context, req *mcp.CallToolRequest, _ empty) (*mcp.CallToolResult, any, error) {
		var v, user string
		if req.Extra != nil && req.Extra.Header != nil {
			v = req.Extra.Header.Get("X-Test-Header")
		}
		if req.Extra != nil && req.Extra.TokenInfo != nil {
			user = req.Extra.TokenInfo.UserID
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "header=" + v + " user=" + user}}}, nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "sample"}, func(ctx context.Context, req *mcp.CallToolRequest, _ empty) (*mcp.CallToolResult, any, error) {
		res, err := req.Session.CreateMessage(ctx, &mcp.CreateMessageParams{
			MaxTokens: 10,
			Messages:  []*mcp.SamplingMessage{{Role: "user", Content: &mcp.TextContent{Text: "hi"}}},
		})
		if err != nil {
			return nil, nil, err
		}
		text, _ := res.Content.(*mcp.TextContent)
		if text == nil {
			return nil, nil, fmt.Errorf("unexpected content %T", res.Content)
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "sampled=" + text.Text}}}, nil, nil
	})
	err := mcp.AddReceivingCustomMethod(s, "tools/validate", func(_ context.Context, _ *mcp.ServerSession, p *validateParams) (*validateResult, error) {
		return &validateResult{Valid: p.Name != "", Echo: p.Name}, nil
	})
	if err != nil {
		panic(err)
	}
	return s
}

// start serves h on a mux at /sse and /messages, as production does. Cleanup
// closes the handler first, so that httptest.Server.Close does not wait on
// open streams.
func start(t *testing.T, opts *Options) (*Handler, *httptest.Server) {
	t.Helper()
	server := newServer()
	h := NewHandler(func(*http.Request) *mcp.Server { return server }, opts)
	mux := http.NewServeMux()
	mux.Handle("/sse", h)
	mux.Handle("/messages", h)
	ts := httptest.NewServer(mux)
	t.Cleanup(ts.Close)
	t.Cleanup(h.Close)
	return h, ts
}

type headerRoundTripper struct{ next http.RoundTripper }

func (rt headerRoundTripper) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("X-Test-Header", "from-client")
	r.Header.Set("Authorization", "Bearer good")
	return rt.next.RoundTrip(r)
}

func connectClient(t *testing.T, ts *httptest.Server, opts *mcp.ClientOptions) (*mcp.Client, *mcp.ClientSession) {
	t.Helper()
	client := mcp.NewClient(&mcp.Implementation{Name: "client", Version: "v0"}, opts)
	if err := mcp.AddSendingCustomMethod[*validateParams, *validateResult](client, "tools/validate"); err != nil {
		t.Fatal(err)
	}
	httpClient := &http.Client{Transport: headerRoundTripper{http.DefaultTransport}}
	// SSEClientTransport ties the stream's lifetime to the Connect context.
	cs, err := client.Connect(context.Background(), &mcp.SSEClientTransport{Endpoint: ts.URL + "/sse", HTTPClient: httpClient}, nil)
	if err != nil {
		t.Fatalf("Connect: %v", err)
	}
	t.Cleanup(func() { cs.Close() })
	return client, cs
}

func toolText(t *testing.T, res *mcp.CallToolResult) string {
	t.Helper()
	if res.IsError || len(res.Content) != 1 {
		t.Fatalf("unexpected tool result: %+v", res)
	}
	tc, ok := res.Content[0].(*mcp.TextContent)
	if !ok {
		t.Fatalf("content is %T, want *mcp.TextContent", res.Content[0])
	}
	return tc.Text
}

func TestGoSDKClient(t *testing.T) {
	h, ts := start(t, nil)
	_, cs := connectClient(t, ts, nil)
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()

	if got := h.SessionCount(); got != 1 {
		t.Errorf("SessionCount = %d, want 1", got)
	}
	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatalf("ListTools: %v", err)
	}
	names := map[string]bool{}
	for _, tool := range tools.Tools {
		names[tool.Name] = true
	}
	if !names["header"] || !names["sample"] {
		t.Errorf("ListTools = %v, want header and sample", names)
	}

	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "header"})
	if err != nil {
		t.Fatalf("CallTool: %v", err)
	}
	if got, want := toolText(t, res), "header=from-client user="; got != want {
		t.Errorf("tool saw %q, want %q (RequestExtra.Header not propagated)", got, want)
	}

	vres, err := mcp.CallCustomMethod[*validateParams, *validateResult](ctx, cs, "tools/validate", &validateParams{Name: "x"})
	if err != nil {
		t.Fatalf("custom method tools/validate: %v", err)
	}
	if !vres.Valid || vres.Echo != "x" {
		t.Errorf("tools/validate = %+v, want valid echo x", vres)
	}

	cs.Close()
	testutil.Eventually(t, waitTimeout, "session removal after client close", func() bool { return h.SessionCount() == 0 })
}

// The token verified by auth middleware in front of the handler reaches tools
// through RequestExtra.TokenInfo.
func TestTokenInfo(t *testing.T) {
	server := newServer()
	h := NewHandler(func(*http.Request) *mcp.Server { return server }, nil)
	verify := func(_ context.Context, tok string, _ *http.Request) (*auth.TokenInfo, error) {
		if tok != "good" {
			return nil, auth.ErrInvalidToken
		}
		return &auth.TokenInfo{UserID: "u1", Expiration: time.Now().Add(time.Hour)}, nil
	}
	mux := http.NewServeMux()
	mux.Handle("/sse", h)
	mux.Handle("/messages", h)
	ts := httptest.NewServer(auth.RequireBearerToken(verify, nil)(mux))
	t.Cleanup(ts.Close)
	t.Cleanup(h.Close)
	_, cs := connectClient(t, ts, nil)
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "header"})
	if err != nil {
		t.Fatalf("CallTool: %v", err)
	}
	if got, want := toolText(t, res), "header=from-client user=u1"; got != want {
		t.Errorf("tool saw %q, want %q", got, want)
	}
}

func TestServerToClientRequest(t *testing.T) {
	_, ts := start(t, nil)
	_, cs := connectClient(t, ts, &mcp.ClientOptions{
		CreateMessageHandler: func(_ context.Context, req *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			return &mcp.CreateMessageResult{Model: "m", Role: "assistant", Content: &mcp.TextContent{Text: "pong"}}, nil
		},
	})
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "sample"})
	if err != nil {
		t.Fatalf("CallTool: %v", err)
	}
	if got, want := toolText(t, res), "sampled=pong"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

// rawStream is a hand-written SSE peer: it records every event, including
// comment lines (as event ":"), so tests can assert the wire format.
type rawStream struct {
	t        *testing.T
	resp     *http.Response
	endpoint string // absolute URL of the session endpoint
	events   chan sseEvent
	cancel   context.CancelFunc
	done     chan struct{} // closed when the reader goroutine exits
}

type sseEvent struct{ name, data string }

func openStream(t *testing.T, ts *httptest.Server) *rawStream {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, ts.URL+"/sse", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		cancel()
		t.Fatalf("GET /sse: %v", err)
	}
	s := &rawStream{t: t, resp: resp, events: make(chan sseEvent, 256), cancel: cancel, done: make(chan struct{})}
	go s.read(ctx)
	t.Cleanup(func() { s.close() })
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /sse status = %d", resp.StatusCode)
	}
	ev := s.next()
	if ev.name != "endpoint" || !strings.HasPrefix(ev.data, "/messages?sessionId=") {
		t.Fatalf("first event = %+v, want endpoint /messages?sessionId=...", ev)
	}
	s.endpoint = ts.URL + ev.data
	return s
}

func (s *rawStream) read(ctx context.Context) {
	defer close(s.done)
	defer s.resp.Body.Close()
	sc := bufio.NewScanner(s.resp.Body)
	var ev sseEvent
	emit := func(e sseEvent) bool {
		select {
		case s.events <- e:
			return true
		case <-ctx.Done():
			return false
		}
	}
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if ev.name != "" && !emit(ev) {
				return
			}
			ev = sseEvent{}
		case strings.HasPrefix(line, ":"):
			if !emit(sseEvent{name: ":", data: line}) {
				return
			}
		case strings.HasPrefix(line, "event: "):
			ev.name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			ev.data += strings.TrimPrefix(line, "data: ")
		}
	}
}

func (s *rawStream) close() {
	s.cancel()
	<-s.done
}

func (s *rawStream) next() sseEvent {
	s.t.Helper()
	select {
	case ev := <-s.events:
		return ev
	case <-s.done:
		s.t.Fatal("stream ended")
	case <-time.After(waitTimeout):
		s.t.Fatal("timed out waiting for event")
	}
	return sseEvent{}
}

type wireMsg struct {
	ID     any             `json:"id"`
	Result json.RawMessage `json:"result"`
	Error  *jsonrpc.Error  `json:"error"`
}

// response waits for the message event answering id, skipping others.
func (s *rawStream) response(id float64) wireMsg {
	s.t.Helper()
	for {
		ev := s.next()
		if ev.name != "message" {
			continue
		}
		var m wireMsg
		if err := json.Unmarshal([]byte(ev.data), &m); err != nil {
			s.t.Fatalf("bad message event %q: %v", ev.data, err)
		}
		if m.ID == id {
			return m
		}
	}
}

func post(t *testing.T, url, body string) (int, http.Header, []byte) {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatalf("POST: %v", err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, b
}

func (s *rawStream) mustPost(body string) {
	s.t.Helper()
	if code, _, b := post(s.t, s.endpoint, body); code != http.StatusAccepted {
		s.t.Fatalf("POST %s = %d %s, want 202", body, code, b)
	}
}

func (s *rawStream) initialize() {
	s.t.Helper()
	s.mustPost(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}`)
	if m := s.response(1); m.Error != nil {
		s.t.Fatalf("initialize failed: %+v", m.Error)
	}
	s.mustPost(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
}

func TestStreamHeaders(t *testing.T) {
	_, ts := start(t, nil)
	s := openStream(t, ts)
	if ct := s.resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Errorf("Content-Type = %q", ct)
	}
	if cc := s.resp.Header.Get("Cache-Control"); cc != "no-cache" {
		t.Errorf("Cache-Control = %q", cc)
	}
}

func TestRawCustomMethod(t *testing.T) {
	_, ts := start(t, nil)
	s := openStream(t, ts)
	s.initialize()
	s.mustPost(`{"jsonrpc":"2.0","id":5,"method":"tools/validate","params":{"name":"abc"}}`)
	m := s.response(5)
	if m.Error != nil {
		t.Fatalf("tools/validate error: %+v", m.Error)
	}
	var r validateResult
	if err := json.Unmarshal(m.Result, &r); err != nil || !r.Valid || r.Echo != "abc" {
		t.Errorf("tools/validate result = %s (%v)", m.Result, err)
	}
}

// Unknown methods are not filtered by the transport: the session answers them.
func TestUnknownMethodReachesSession(t *testing.T) {
	_, ts := start(t, nil)
	s := openStream(t, ts)
	s.initialize()
	s.mustPost(`{"jsonrpc":"2.0","id":7,"method":"nope/nope"}`)
	m := s.response(7)
	if m.Error == nil || m.Error.Code != jsonrpc.CodeMethodNotFound {
		t.Errorf("response = %+v, want error %d", m, jsonrpc.CodeMethodNotFound)
	}
}

// A notification method sent with an id is a call the transport cannot
// classify, so it is accepted (202) and the session rejects it with an
// Invalid Request error bearing the same id.
func TestNotificationWithID(t *testing.T) {
	_, ts := start(t, nil)
	s := openStream(t, ts)
	s.initialize()
	s.mustPost(`{"jsonrpc":"2.0","id":3,"method":"notifications/initialized"}`)
	m := s.response(3)
	if m.Error == nil || m.Error.Code != jsonrpc.CodeInvalidRequest {
		t.Errorf("response = %+v, want error %d", m, jsonrpc.CodeInvalidRequest)
	}
	// The session is still usable.
	s.mustPost(`{"jsonrpc":"2.0","id":4,"method":"ping"}`)
	if m := s.response(4); m.Error != nil {
		t.Errorf("ping after bad notification: %+v", m.Error)
	}
}

func TestPostErrors(t *testing.T) {
	_, ts := start(t, &Options{MaxRequestBodyBytes: 1024})
	s := openStream(t, ts)
	big := `{"jsonrpc":"2.0","method":"x","params":{"p":"` + strings.Repeat("a", 10*1024) + `"}}`
	for _, tc := range []struct {
		name, url, body string
		status, code    int
		msg             string // substring of the error message, if set
	}{
		{"non-JSON", s.endpoint, "not json", 400, jsonrpc.CodeParseError, ""},
		{"empty", s.endpoint, "", 400, jsonrpc.CodeParseError, ""},
		{"not JSON-RPC", s.endpoint, `{"foo":1}`, 400, jsonrpc.CodeInvalidRequest, "invalid JSON-RPC message"},
		{"batch", s.endpoint, `[{"jsonrpc":"2.0","id":1,"method":"ping"}]`, 400, jsonrpc.CodeInvalidRequest, "batches are not supported"},
		{"oversized", s.endpoint, big, 413, jsonrpc.CodeInvalidRequest, "request body exceeds 1024 bytes"},
		{"unknown session", ts.URL + "/messages?sessionId=nope", `{"jsonrpc":"2.0","id":1,"method":"ping"}`, 404, jsonrpc.CodeInvalidRequest, "unknown or expired session"},
		{"no session", ts.URL + "/messages", `{"jsonrpc":"2.0","id":1,"method":"ping"}`, 400, jsonrpc.CodeInvalidRequest, "sessionId is required"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, hdr, body := post(t, tc.url, tc.body)
			if status != tc.status {
				t.Errorf("status = %d, want %d (body %s)", status, tc.status, body)
			}
			if ct := hdr.Get("Content-Type"); ct != "application/json" {
				t.Errorf("Content-Type = %q", ct)
			}
			var m struct {
				JSONRPC string         `json:"jsonrpc"`
				ID      any            `json:"id"`
				Error   *jsonrpc.Error `json:"error"`
			}
			if err := json.Unmarshal(body, &m); err != nil || m.JSONRPC != "2.0" || m.ID != nil || m.Error == nil {
				t.Fatalf("body %s is not a JSON-RPC error (%v)", body, err)
			}
			if m.Error.Code != int64(tc.code) {
				t.Errorf("code = %d, want %d", m.Error.Code, tc.code)
			}
			if !strings.Contains(m.Error.Message, tc.msg) {
				t.Errorf("message = %q, want it to contain %q", m.Error.Message, tc.msg)
			}
		})
	}
}

func TestLowercaseSessionIDAndSessionlessHook(t *testing.T) {
	var hooked bool
	_, ts := start(t, &Options{OnSessionlessPOST: func(w http.ResponseWriter, r *http.Request) {
		hooked = true
		w.WriteHeader(http.StatusTeapot)
	}})
	s := openStream(t, ts)
	s.initialize()
	lower := strings.Replace(s.endpoint, "sessionId=", "sessionid=", 1)
	if code, _, b := post(t, lower, `{"jsonrpc":"2.0","id":9,"method":"ping"}`); code != http.StatusAccepted {
		t.Fatalf("POST with sessionid = %d %s", code, b)
	}
	s.response(9)
	if code, _, _ := post(t, ts.URL+"/messages", `{}`); code != http.StatusTeapot || !hooked {
		t.Errorf("sessionless POST = %d, hooked = %v", code, hooked)
	}
}

func TestMethodNotAllowed(t *testing.T) {
	_, ts := start(t, nil)
	req, _ := http.NewRequest(http.MethodPut, ts.URL+"/sse", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed || resp.Header.Get("Allow") != "GET, POST" {
		t.Errorf("PUT = %d Allow %q", resp.StatusCode, resp.Header.Get("Allow"))
	}
}

func TestKeepAlive(t *testing.T) {
	_, ts := start(t, &Options{KeepAlive: 10 * time.Millisecond})
	s := openStream(t, ts)
	if ev := s.next(); ev.name != ":" || ev.data != ": keepalive" {
		t.Errorf("event = %+v, want keepalive comment", ev)
	}
}

func TestClientDisconnect(t *testing.T) {
	h, ts := start(t, nil)
	s := openStream(t, ts)
	if h.SessionCount() != 1 {
		t.Fatalf("SessionCount = %d, want 1", h.SessionCount())
	}
	s.close()
	testutil.Eventually(t, waitTimeout, "session removal", func() bool { return h.SessionCount() == 0 })
	if code, _, _ := post(t, s.endpoint, `{"jsonrpc":"2.0","id":1,"method":"ping"}`); code != http.StatusNotFound {
		t.Errorf("POST after disconnect = %d, want 404", code)
	}
}

func TestHandlerClose(t *testing.T) {
	h, ts := start(t, nil)
	s1, s2 := openStream(t, ts), openStream(t, ts)
	s1.initialize()
	h.Close()
	for _, s := range []*rawStream{s1, s2} {
		select {
		case <-s.done:
		case <-time.After(waitTimeout):
			t.Fatal("stream still open after Handler.Close")
		}
	}
	testutil.Eventually(t, waitTimeout, "sessions removed", func() bool { return h.SessionCount() == 0 })
	resp, err := http.Get(ts.URL + "/sse")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("GET after Close = %d, want 503", resp.StatusCode)
	}
	h.Close() // idempotent
}

// A full queue must hold the POST back, not drop the message or answer 202.
func TestQueueBackPressure(t *testing.T) {
	h := NewHandler(func(*http.Request) *mcp.Server { return nil }, nil)
	c := &conn{id: "s", incoming: make(chan jsonrpc.Message, 1), done: make(chan struct{}), ready: make(chan struct{})}
	h.sessions[c.id] = c
	c.incoming <- &jsonrpc.Request{Method: "filler"}

	postAsync := func() chan int {
		ch := make(chan int, 1)
		go func() {
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/messages?sessionId=s", strings.NewReader(`{"jsonrpc":"2.0","method":"n"}`)))
			ch <- rec.Code
		}()
		return ch
	}
	first := postAsync()
	select {
	case code := <-first:
		t.Fatalf("POST to a full queue returned %d without waiting", code)
	case <-time.After(50 * time.Millisecond):
	}
	ctx := context.Background()
	if m, err := c.Read(ctx); err != nil || m.(*jsonrpc.Request).Method != "filler" {
		t.Fatalf("Read = %v, %v", m, err)
	}
	if code := <-first; code != http.StatusAccepted {
		t.Errorf("POST after room freed = %d, want 202", code)
	}
	m, err := c.Read(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if req := m.(*jsonrpc.Request); req.Method != "n" || req.Extra == nil {
		t.Errorf("delivered %+v, want method n with Extra", req)
	}

	// The queue is empty again: fill it, then a blocked POST is released by Close.
	c.incoming <- &jsonrpc.Request{Method: "filler"}
	second := postAsync()
	time.Sleep(20 * time.Millisecond)
	c.Close()
	c.Close()
	if code := <-second; code != http.StatusNotFound {
		t.Errorf("POST blocked on closed session = %d, want 404", code)
	}
	if _, err := c.Read(ctx); err != io.EOF {
		t.Errorf("Read after Close = %v, want io.EOF", err)
	}
}

// Concurrent tool calls make the session write concurrently; -race checks
// that writes to the stream are serialized.
func TestConcurrentCalls(t *testing.T) {
	_, ts := start(t, nil)
	_, cs := connectClient(t, ts, nil)
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	var wg sync.WaitGroup
	errs := make(chan error, 20)
	for range 20 {
		wg.Go(func() {
			if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "header"}); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func TestNoGoroutineLeak(t *testing.T) {
	before := runtime.NumGoroutine()
	func() {
		server := newServer()
		h := NewHandler(func(*http.Request) *mcp.Server { return server }, &Options{KeepAlive: 5 * time.Millisecond})
		mux := http.NewServeMux()
		mux.Handle("/sse", h)
		mux.Handle("/messages", h)
		ts := httptest.NewServer(mux)
		defer ts.Close()
		defer h.Close()
		transport := &http.Transport{}
		defer transport.CloseIdleConnections()
		client := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "v0"}, nil)
		for range 3 {
			cs, err := client.Connect(context.Background(), &mcp.SSEClientTransport{
				Endpoint: ts.URL + "/sse", HTTPClient: &http.Client{Transport: transport},
			}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "header"}); err != nil {
				t.Fatal(err)
			}
			// Sessions are left open: Handler.Close must end them.
		}
	}()
	deadline := time.Now().Add(waitTimeout)
	for runtime.NumGoroutine() > before+2 {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			t.Fatalf("goroutines: before %d, after %d\n%s", before, runtime.NumGoroutine(), buf[:runtime.Stack(buf, true)])
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// A handler parked on a server-to-client request must not keep a session
// alive after its client disconnects: the session waits for in-flight
// handlers when closing, so the transport has to cancel them.
func TestDisconnectWithPendingServerRequest(t *testing.T) {
	h, ts := start(t, nil)
	s := openStream(t, ts)
	s.mustPost(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{"sampling":{}},"clientInfo":{"name":"raw","version":"0"}}}`)
	s.response(1)
	s.mustPost(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	s.mustPost(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"sample","arguments":{}}}`)
	for {
		ev := s.next()
		if ev.name == "message" && strings.Contains(ev.data, `"sampling/createMessage"`) {
			break
		}
	}
	s.close() // never answer the sampling request
	testutil.Eventually(t, waitTimeout, "session removal", func() bool { return h.SessionCount() == 0 })
}

// Once the GET handler has returned its ResponseWriter is dead; a write that
// raced past the ready check must fail instead of touching it.
func TestNoWriteAfterStreamEnds(t *testing.T) {
	server := newServer()
	h := NewHandler(func(*http.Request) *mcp.Server { return server }, nil)
	ctx, cancel := context.WithCancel(context.Background())
	rec := httptest.NewRecorder()
	returned := make(chan struct{})
	go func() {
		defer close(returned)
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/sse", nil).WithContext(ctx))
	}()
	var c *conn
	testutil.Eventually(t, waitTimeout, "session", func() bool {
		h.mu.Lock()
		defer h.mu.Unlock()
		for _, cc := range h.sessions {
			c = cc
		}
		return c != nil
	})
	<-c.ready // the recorder is not safe to read while the handler writes
	cancel()
	<-returned
	n := rec.Body.Len()
	if err := c.writeRaw([]byte("event: message\ndata: {}\n\n")); err == nil {
		t.Error("writeRaw after the GET returned succeeded")
	}
	if rec.Body.Len() != n {
		t.Error("wrote to the ResponseWriter after the GET returned")
	}
	if err := c.Write(context.Background(), &jsonrpc.Request{Method: "x"}); err == nil {
		t.Error("Write after close succeeded")
	}
}

// A session opened by one principal refuses messages from another, so a
// leaked session id is not enough to act in someone else's session.
func TestSessionBelongsToItsPrincipal(t *testing.T) {
	server := newServer()
	h := NewHandler(func(*http.Request) *mcp.Server { return server }, nil)
	verify := func(_ context.Context, tok string, _ *http.Request) (*auth.TokenInfo, error) {
		if tok != "alice" && tok != "bob" {
			return nil, auth.ErrInvalidToken
		}
		return &auth.TokenInfo{UserID: tok, Expiration: time.Now().Add(time.Hour)}, nil
	}
	mux := http.NewServeMux()
	mux.Handle("/sse", h)
	mux.Handle("/messages", h)
	ts := httptest.NewServer(auth.RequireBearerToken(verify, nil)(mux))
	t.Cleanup(ts.Close)
	t.Cleanup(h.Close)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	get, _ := http.NewRequestWithContext(ctx, http.MethodGet, ts.URL+"/sse", nil)
	get.Header.Set("Authorization", "Bearer alice")
	resp, err := http.DefaultClient.Do(get)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	endpoint := readEndpoint(resp.Body)
	if endpoint == "" {
		t.Fatal("no endpoint event")
	}
	postAs := func(token, endpoint string) (int, string) {
		req, _ := http.NewRequest(http.MethodPost, ts.URL+endpoint, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/json")
		r, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Body.Close()
		body, _ := io.ReadAll(r.Body)
		return r.StatusCode, string(body)
	}
	// Bob gets exactly the answer of an id that does not exist: nothing
	// tells him that alice's session is there.
	foreignStatus, foreignBody := postAs("bob", endpoint)
	unknownStatus, unknownBody := postAs("bob", "/messages?sessionId=no-such-session")
	if foreignStatus != http.StatusNotFound || foreignStatus != unknownStatus || foreignBody != unknownBody {
		t.Errorf("bob posting to alice's session: %d %q; to an unknown one: %d %q; want the same 404", foreignStatus, foreignBody, unknownStatus, unknownBody)
	}
	if got, body := postAs("alice", endpoint); got != http.StatusAccepted {
		t.Errorf("alice posting to her own session: %d %s, want 202", got, body)
	}
}

// readEndpoint reads an SSE stream up to its first data line, the endpoint
// event, and returns the endpoint ("" if the stream ends first).
func readEndpoint(r io.Reader) string {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			return v
		}
	}
	return ""
}

// TestFractionalIDIsRefused: an id the SDK would truncate (1.5 → 1) is
// refused on /messages, as on the other endpoints, and never answered.
func TestFractionalIDIsRefused(t *testing.T) {
	server := newServer()
	h := NewHandler(func(*http.Request) *mcp.Server { return server }, nil)
	mux := http.NewServeMux()
	mux.Handle("/sse", h)
	mux.Handle("/messages", h)
	ts := httptest.NewServer(mux)
	t.Cleanup(ts.Close)
	t.Cleanup(h.Close)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	get, _ := http.NewRequestWithContext(ctx, http.MethodGet, ts.URL+"/sse", nil)
	resp, err := http.DefaultClient.Do(get)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	endpoint := readEndpoint(resp.Body)
	for _, id := range []string{"1.5", "2e0", "9007199254740993"} {
		post, err := http.Post(ts.URL+endpoint, "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":`+id+`,"method":"ping"}`))
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(post.Body)
		post.Body.Close()
		if post.StatusCode != http.StatusBadRequest || !strings.Contains(string(body), "-32600") {
			t.Errorf("id %s: %d %s, want 400 with -32600", id, post.StatusCode, body)
		}
	}
}

// TestFastCall: a message FastCall takes is answered 202 while its call
// still runs (so the client's connection is free for its next message),
// the call's answer is written on the stream, Shutdown waits for the call,
// and the end of the stream cancels a call in flight.
func TestFastCall(t *testing.T) {
	release := make(chan struct{})
	cancelled := make(chan struct{}, 1)
	fast := func(_ *http.Request, _ string, data []byte, start func(func(context.Context) []byte) bool) bool {
		if !strings.Contains(string(data), `"fast"`) {
			return false
		}
		start(func(ctx context.Context) []byte {
			select {
			case <-release:
				return []byte(`{"jsonrpc":"2.0","id":5,"result":{"fast":true}}`)
			case <-ctx.Done():
				cancelled <- struct{}{}
				return nil
			}
		})
		return true
	}
	h, ts := start(t, &Options{FastCall: fast})
	s := openStream(t, ts)
	s.initialize()
	s.mustPost(`{"jsonrpc":"2.0","id":5,"method":"fast"}`) // 202 with the call still running
	// The next message goes through at once, to the server.
	s.mustPost(`{"jsonrpc":"2.0","id":6,"method":"ping"}`)
	if m := s.response(6); m.Error != nil {
		t.Fatalf("ping: %+v", m.Error)
	}
	shut := make(chan int, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
		defer cancel()
		shut <- h.Shutdown(ctx)
	}()
	select {
	case n := <-shut:
		t.Fatalf("Shutdown returned (%d unanswered) while a fast call ran", n)
	case <-time.After(100 * time.Millisecond):
	}
	close(release)
	if m := s.response(5); string(m.Result) != `{"fast":true}` {
		t.Errorf("fast answer: %+v", m)
	}
	if n := <-shut; n != 0 {
		t.Errorf("Shutdown: %d unanswered", n)
	}

	// A call in flight when the stream ends is cancelled.
	release = make(chan struct{})
	h2, ts2 := start(t, &Options{FastCall: fast})
	s2 := openStream(t, ts2)
	s2.initialize()
	s2.mustPost(`{"jsonrpc":"2.0","id":5,"method":"fast"}`)
	s2.close()
	select {
	case <-cancelled:
	case <-time.After(waitTimeout):
		t.Fatal("the fast call went on after its stream ended")
	}
	testutil.Eventually(t, waitTimeout, "session removal", func() bool { return h2.SessionCount() == 0 })
}
