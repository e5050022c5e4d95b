package router_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/remote"
	"github.com/agents-mcp/agents-mcp/router"
	"github.com/agents-mcp/agents-mcp/router/internal/routertest"
)

// fastFixture is a router with a task backend and a real upstream "up" (a go-sdk server over
// streamable HTTP, joined through the remote pool), served over HTTP to
// alice (every tool) and bob (only up__echo), as in serve.
type fastFixture struct {
	r   *router.Router
	h   *router.HTTPHandler
	url string

	mu    sync.Mutex
	calls []router.ToolCallRecord

	writes atomic.Int64 // Write calls on the server's connections

	waiting   chan struct{} // a call of "wait" started
	cancelled chan struct{} // a call of "wait" saw its context end
	release   chan struct{} // ends the calls of "wait"
}

func newFastFixture(t *testing.T, opts router.HTTPOptions) *fastFixture {
	t.Helper()
	f := &fastFixture{waiting: make(chan struct{}, 8), cancelled: make(chan struct{}, 8), release: make(chan struct{})}
	r := router.New(router.Options{Version: "test", OnToolCall: func(c router.ToolCallRecord) {
		f.mu.Lock()
		f.calls = append(f.calls, c)
		f.mu.Unlock()
	}})
	// A task backend, as serve has: its middleware joins the chain, and
	// the listen check reads the body of every POST.
	r.AddTaskBackend(&ownedTasks{hub: router.NewTaskHub()})
	up := mcp.NewServer(&mcp.Implementation{Name: "up", Version: "1"}, nil)
	type echoArgs struct {
		Message string `json:"message"`
	}
	mcp.AddTool(up, &mcp.Tool{Name: "echo"}, func(_ context.Context, _ *mcp.CallToolRequest, in echoArgs) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "Echo: " + in.Message}}}, nil, nil
	})
	mcp.AddTool(up, &mcp.Tool{Name: "boom"}, func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "it broke"}}}, nil, nil
	})
	mcp.AddTool(up, &mcp.Tool{Name: "wait"}, func(ctx context.Context, _ *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		f.waiting <- struct{}{}
		select {
		case <-ctx.Done():
			f.cancelled <- struct{}{}
			return nil, nil, ctx.Err()
		case <-f.release:
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "released"}}}, nil, nil
		}
	})
	upSrv := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return up }, nil))
	t.Cleanup(upSrv.Close)
	pool := remote.NewPool(remote.Options{Registry: r})
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = pool.Close(ctx)
	})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := pool.AddFromConfig(ctx, agentsmcp.UpstreamConfig{Name: "up", Transport: remote.TransportStreamable, URL: upSrv.URL, Timeout: 5 * time.Second}); err != nil {
		t.Fatal(err)
	}
	for {
		if st, _ := pool.Status("up"); st.State == remote.StateReady && st.Tools == 3 {
			break
		}
		if ctx.Err() != nil {
			t.Fatal("upstream up never became ready")
		}
		time.Sleep(10 * time.Millisecond)
	}
	principals := map[string]*agentsmcp.Principal{
		"alice": {ID: "key:alice"},
		"bob":   {ID: "key:bob", Tools: []string{"up__echo"}},
	}
	verify := func(_ context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
		p, ok := principals[token]
		if !ok {
			return nil, auth.ErrInvalidToken
		}
		return &auth.TokenInfo{UserID: p.ID, Expiration: time.Now().Add(time.Hour), Extra: map[string]any{agentsmcp.TokenInfoPrincipal: p}}, nil
	}
	opts.Authenticate = auth.RequireBearerToken(verify, nil)
	f.r, f.h = r, r.HTTPHandler(opts)
	srv := httptest.NewUnstartedServer(f.h)
	srv.Listener = countingListener{Listener: srv.Listener, writes: &f.writes}
	srv.Start()
	t.Cleanup(func() {
		select {
		case <-f.release:
		default:
			close(f.release)
		}
		f.h.Close()
		r.CloseSessions(context.Background())
		srv.CloseClientConnections()
		srv.Close()
	})
	f.url = srv.URL + "/mcp"
	return f
}

// open starts a session as token whose client declares capabilities
// (JSON), completes the handshake, and waits until the server has taken
// it in.
func (f *fastFixture) open(t *testing.T, token, capabilities string) string {
	t.Helper()
	resp := f.post(t, context.Background(), token, "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":`+capabilities+`,"clientInfo":{"name":"t","version":"1"}}}`)
	sid := resp.Header.Get("Mcp-Session-Id")
	readAll(t, resp)
	if resp.StatusCode != http.StatusOK || sid == "" {
		t.Fatalf("initialize: %d", resp.StatusCode)
	}
	if resp := f.post(t, context.Background(), token, sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`); resp.StatusCode != http.StatusAccepted {
		t.Fatalf("notifications/initialized: %d %s", resp.StatusCode, readAll(t, resp))
	} else {
		readAll(t, resp)
	}
	// go-sdk answers notifications/initialized (202) before it handles
	// it, and until then the fast path leaves the session's calls to
	// go-sdk: a ping, answered only once handled, settles that.
	if resp := f.post(t, context.Background(), token, sid, `{"jsonrpc":"2.0","id":2,"method":"ping"}`); resp.StatusCode != http.StatusOK {
		t.Fatalf("ping: %d %s", resp.StatusCode, readAll(t, resp))
	} else {
		readAll(t, resp)
	}
	return sid
}

// post sends one JSON-RPC message as a streamable client at 2025-11-25
// would; the caller reads and closes the body.
func (f *fastFixture) post(t *testing.T, ctx context.Context, token, sid, body string) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, f.url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if sid != "" {
		req.Header.Set("Mcp-Session-Id", sid)
		req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

func readAll(t *testing.T, resp *http.Response) string {
	t.Helper()
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// call posts a tools/call and reports the answer and whether the fast path
// served it.
func (f *fastFixture) call(t *testing.T, token, sid, body string) (resp *http.Response, answer string, fast bool) {
	t.Helper()
	before := f.h.FastPathCalls()
	resp = f.post(t, context.Background(), token, sid, body)
	answer = readAll(t, resp)
	return resp, answer, f.h.FastPathCalls() == before+1
}

func toolCall(id int, params string) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":%s}`, id, params)
}

// withMeta is params with an empty _meta, which sends the call to go-sdk.
func withMeta(params string) string { return strings.Replace(params, "{", `{"_meta":{},`, 1) }

var streamIDs = regexp.MustCompile(`id: [A-Z2-7]+_`)

// TestFastPathAnswersAsGoSDKDoes: each call, a success, a validation
// refusal, a tool error, an allowlist refusal, is answered by the fast path
// with the very bytes and headers go-sdk's path gives the same call (made
// to go there by an empty _meta), stream ids aside, and recorded alike.
func TestFastPathAnswersAsGoSDKDoes(t *testing.T) {
	f := newFastFixture(t, router.HTTPOptions{})
	sids := map[string]string{"alice": f.open(t, "alice", `{}`), "bob": f.open(t, "bob", `{}`)}
	for _, tc := range []struct{ name, token, params string }{
		{"success", "alice", `{"name":"up__echo","arguments":{"message":"hi <there> & é"}}`},
		{"invalid arguments", "alice", `{"name":"up__echo","arguments":{"message":7}}`},
		{"tool error", "alice", `{"name":"up__boom","arguments":{}}`},
		{"not allowed", "bob", `{"name":"up__boom"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sid := sids[tc.token]
			fastResp, fastBody, fast := f.call(t, tc.token, sid, toolCall(7, tc.params))
			if !fast {
				t.Fatalf("the fast path did not take %s", tc.params)
			}
			f.mu.Lock()
			fastRec := f.calls[len(f.calls)-1]
			f.mu.Unlock()
			sdkResp, sdkBody, fast := f.call(t, tc.token, sid, toolCall(7, withMeta(tc.params)))
			if fast {
				t.Fatal("the fast path took a call with _meta")
			}
			f.mu.Lock()
			sdkRec := f.calls[len(f.calls)-1]
			f.mu.Unlock()
			if fastResp.StatusCode != sdkResp.StatusCode {
				t.Errorf("status %d, go-sdk %d", fastResp.StatusCode, sdkResp.StatusCode)
			}
			for _, h := range []string{"Content-Type", "Cache-Control", "Connection", "Mcp-Session-Id"} {
				if a, b := fastResp.Header.Get(h), sdkResp.Header.Get(h); a != b {
					t.Errorf("%s %q, go-sdk %q", h, a, b)
				}
			}
			if a, b := streamIDs.ReplaceAllString(fastBody, "id: S_"), streamIDs.ReplaceAllString(sdkBody, "id: S_"); a != b {
				t.Errorf("answer\n%s\ngo-sdk's\n%s", a, b)
			}
			fastRec.Duration, sdkRec.Duration = 0, 0
			if fmt.Sprint(fastRec) != fmt.Sprint(sdkRec) {
				t.Errorf("recorded %+v, go-sdk's %+v", fastRec, sdkRec)
			}
		})
	}
}

// TestFastPathServesGoSDKClients: a go-sdk client's calls take the fast
// path and get their results, over streamable HTTP and legacy SSE.
func TestFastPathServesGoSDKClients(t *testing.T) {
	for _, tc := range []struct {
		name string
		// transport of the client to f's endpoint, with its HTTP client.
		transport func(f *fastFixture, hc *http.Client) mcp.Transport
		opts      *mcp.ClientSessionOptions
	}{
		{"streamable", func(f *fastFixture, hc *http.Client) mcp.Transport {
			return &mcp.StreamableClientTransport{Endpoint: f.url, HTTPClient: hc}
		}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"}},
		// Legacy SSE sessions take the fast path of fastpath_sse.go.
		{"sse", func(f *fastFixture, hc *http.Client) mcp.Transport {
			return &mcp.SSEClientTransport{Endpoint: strings.TrimSuffix(f.url, "/mcp") + "/sse", HTTPClient: hc}
		}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFastFixture(t, router.HTTPOptions{})
			c := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil)
			cs, err := c.Connect(context.Background(), tc.transport(f, &http.Client{Transport: routertest.Bearer{Token: "alice", Base: http.DefaultTransport}}), tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			// See open: once a ping is answered, notifications/initialized has
			// been handled.
			if err := cs.Ping(context.Background(), nil); err != nil {
				t.Fatal(err)
			}
			before := f.h.FastPathCalls()
			for i := range 3 {
				res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "up__echo", Arguments: map[string]any{"message": fmt.Sprint(i)}})
				if err != nil {
					t.Fatal(err)
				}
				if got := res.Content[0].(*mcp.TextContent).Text; got != fmt.Sprintf("Echo: %d", i) {
					t.Errorf("call %d: %q", i, got)
				}
			}
			if n := f.h.FastPathCalls() - before; n != 3 {
				t.Errorf("the fast path served %d of 3 calls", n)
			}
		})
	}
}

// TestFastPathLeavesOtherCallsToGoSDK: what the fast path must not take
// goes to go-sdk and is answered there: another principal's session (404,
// as for an unknown one), a session not yet initialized, a client that can
// be asked for sampling or elicitation, one that set a log level, a call
// with a progress token.
func TestFastPathLeavesOtherCallsToGoSDK(t *testing.T) {
	f := newFastFixture(t, router.HTTPOptions{})
	echo := toolCall(3, `{"name":"up__echo","arguments":{"message":"x"}}`)

	alice := f.open(t, "alice", `{}`)
	if resp, body, fast := f.call(t, "bob", alice, echo); fast || resp.StatusCode != http.StatusNotFound {
		t.Errorf("bob in alice's session: fast %v, %d %s", fast, resp.StatusCode, body)
	}

	resp := f.post(t, context.Background(), "alice", "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	fresh := resp.Header.Get("Mcp-Session-Id")
	readAll(t, resp)
	if _, _, fast := f.call(t, "alice", fresh, echo); fast {
		t.Error("the fast path took a call in a session that had not initialized")
	}

	for _, caps := range []string{`{"sampling":{}}`, `{"elicitation":{}}`} {
		sid := f.open(t, "alice", caps)
		if _, body, fast := f.call(t, "alice", sid, echo); fast || !strings.Contains(body, "Echo: x") {
			t.Errorf("client with %s: fast %v, %s", caps, fast, body)
		}
	}

	logs := f.open(t, "alice", `{}`)
	if _, body, _ := f.call(t, "alice", logs, `{"jsonrpc":"2.0","id":2,"method":"logging/setLevel","params":{"level":"debug"}}`); !strings.Contains(body, `"result"`) {
		t.Fatalf("logging/setLevel: %s", body)
	}
	if _, body, fast := f.call(t, "alice", logs, echo); fast || !strings.Contains(body, "Echo: x") {
		t.Errorf("client that set a log level: fast %v, %s", fast, body)
	}

	progress := toolCall(4, `{"name":"up__echo","arguments":{"message":"x"},"_meta":{"progressToken":"p"}}`)
	if _, body, fast := f.call(t, "alice", alice, progress); fast || !strings.Contains(body, "Echo: x") {
		t.Errorf("call with a progress token: fast %v, %s", fast, body)
	}
	if _, body, fast := f.call(t, "alice", alice, echo); !fast || !strings.Contains(body, "Echo: x") {
		t.Errorf("plain call after all that: fast %v, %s", fast, body)
	}
}

// TestFastPathCancellation: notifications/cancelled, a POST of its own,
// cancels a fast-path call in flight (the upstream's handler sees its
// context end), and a second call with the id in flight is refused as
// go-sdk refuses it.
func TestFastPathCancellation(t *testing.T) {
	f := newFastFixture(t, router.HTTPOptions{})
	sid := f.open(t, "alice", `{}`)
	answer := make(chan string, 1)
	go func() {
		resp := f.post(t, context.Background(), "alice", sid, toolCall(9, `{"name":"up__wait"}`))
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		answer <- string(b)
	}()
	select {
	case <-f.waiting:
	case <-time.After(5 * time.Second):
		t.Fatal("the call never reached the upstream")
	}
	if n := f.h.FastPathCalls(); n != 1 {
		t.Fatalf("the fast path served %d calls, want 1", n)
	}
	resp, body, _ := f.call(t, "alice", sid, toolCall(9, `{"name":"up__echo","arguments":{"message":"x"}}`))
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(body, "duplicate in-flight request ID 9") {
		t.Errorf("second call with id 9 in flight: %d %s", resp.StatusCode, body)
	}
	resp = f.post(t, context.Background(), "alice", sid, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":9}}`)
	if body := readAll(t, resp); resp.StatusCode != http.StatusAccepted {
		t.Errorf("notifications/cancelled: %d %s", resp.StatusCode, body)
	}
	select {
	case <-f.cancelled:
	case <-time.After(5 * time.Second):
		t.Fatal("the upstream's handler was never cancelled")
	}
	select {
	case a := <-answer:
		if !strings.Contains(a, `"id":9`) {
			t.Errorf("answer of the cancelled call: %s", a)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the cancelled call was never answered")
	}
}

// TestFastPathStreamResumes: a client whose stream broke during a
// fast-path call resumes it with Last-Event-ID and gets the answer, as
// from go-sdk's event store, even when it resumes before the answer.
func TestFastPathStreamResumes(t *testing.T) {
	f := newFastFixture(t, router.HTTPOptions{})
	sid := f.open(t, "alice", `{}`)
	ctx, cancel := context.WithCancel(context.Background())
	resp := f.post(t, ctx, "alice", sid, toolCall(11, `{"name":"up__wait"}`))
	line, err := bufio.NewReader(resp.Body).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "id: ") {
		t.Fatalf("first line of the stream: %q, %v", line, err)
	}
	lastID := strings.TrimSpace(strings.TrimPrefix(line, "id: "))
	<-f.waiting
	cancel() // the stream breaks
	resp.Body.Close()

	resumed := make(chan string, 1)
	go func() {
		req, _ := http.NewRequest(http.MethodGet, f.url, nil)
		req.Header.Set("Authorization", "Bearer alice")
		req.Header.Set("Accept", "text/event-stream")
		req.Header.Set("Mcp-Session-Id", sid)
		req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
		req.Header.Set("Last-Event-ID", lastID)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			resumed <- err.Error()
			return
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		resumed <- string(b)
	}()
	time.Sleep(100 * time.Millisecond) // the resumption waits for the answer
	close(f.release)
	select {
	case got := <-resumed:
		if !strings.Contains(got, `"id":11`) || !strings.Contains(got, "released") {
			t.Errorf("resumed stream: %q", got)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the resumed stream never got the answer")
	}
}

// TestFastPathCallsKeepTheSessionAlive: the idle timeout counts fast-path
// POSTs as activity, and still closes the session once they stop.
func TestFastPathCallsKeepTheSessionAlive(t *testing.T) {
	f := newFastFixture(t, router.HTTPOptions{SessionTimeout: 400 * time.Millisecond})
	sid := f.open(t, "alice", `{}`)
	echo := toolCall(5, `{"name":"up__echo","arguments":{"message":"x"}}`)
	for i := range 8 {
		if resp, body, fast := f.call(t, "alice", sid, echo); !fast || resp.StatusCode != http.StatusOK {
			t.Fatalf("call %d, %v after the session opened: fast %v, %d %s", i, time.Duration(i)*150*time.Millisecond, fast, resp.StatusCode, body)
		}
		time.Sleep(150 * time.Millisecond)
	}
	time.Sleep(800 * time.Millisecond)
	if resp, body, fast := f.call(t, "alice", sid, echo); fast || resp.StatusCode != http.StatusNotFound {
		t.Errorf("after the idle timeout: fast %v, %d %s", fast, resp.StatusCode, body)
	}
}

// TestFastPathCallEndsWithItsSession: ending the session (DELETE) cancels
// a fast-path call in flight, and the call's stream ends without an
// answer, as go-sdk ends the streams of a closed session.
func TestFastPathCallEndsWithItsSession(t *testing.T) {
	f := newFastFixture(t, router.HTTPOptions{})
	sid := f.open(t, "alice", `{}`)
	answer := make(chan string, 1)
	go func() {
		resp := f.post(t, context.Background(), "alice", sid, toolCall(13, `{"name":"up__wait"}`))
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		answer <- string(b)
	}()
	<-f.waiting
	req, _ := http.NewRequest(http.MethodDelete, f.url, nil)
	req.Header.Set("Authorization", "Bearer alice")
	req.Header.Set("Mcp-Session-Id", sid)
	req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if body := readAll(t, resp); resp.StatusCode != http.StatusNoContent {
		t.Fatalf("DELETE: %d %s", resp.StatusCode, body)
	}
	select {
	case <-f.cancelled:
	case <-time.After(5 * time.Second):
		t.Fatal("the call went on after its session ended")
	}
	select {
	case a := <-answer:
		if strings.Contains(a, `"id":13`) {
			t.Errorf("a closed session's call was answered: %s", a)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the call's stream never ended")
	}
}

// countingListener counts the Write calls on the connections it accepts:
// each is a write system call on the caller's connection.
type countingListener struct {
	net.Listener
	writes *atomic.Int64
}

func (l countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return countingConn{Conn: c, writes: l.writes}, nil
}

type countingConn struct {
	net.Conn
	writes *atomic.Int64
}

func (c countingConn) Write(b []byte) (int, error) {
	c.writes.Add(1)
	return c.Conn.Write(b)
}

// TestFastPathQuickCallIsOneWrite: a call that answers before the priming
// delay costs one write on the caller's connection, the headers, the
// priming event and the answer together, with a Content-Length rather
// than chunked framing (go-sdk's path writes and flushes each event and
// then the chunked terminator). The delay is made long so that a slow
// test machine does not flush the priming event alone.
func TestFastPathQuickCallIsOneWrite(t *testing.T) {
	defer router.SetPrimingDelayForTest(5 * time.Second)()
	f := newFastFixture(t, router.HTTPOptions{})
	sid := f.open(t, "alice", `{}`)
	for i := range 3 {
		before := f.writes.Load()
		resp, body, fast := f.call(t, "alice", sid, toolCall(20+i, `{"name":"up__echo","arguments":{"message":"x"}}`))
		if !fast || !strings.Contains(body, "Echo: x") {
			t.Fatalf("call %d: fast %v, %s", i, fast, body)
		}
		if n := f.writes.Load() - before; n != 1 {
			t.Errorf("call %d took %d writes on the caller's connection, want 1", i, n)
		}
		if resp.ContentLength != int64(len(body)) || len(resp.TransferEncoding) > 0 {
			t.Errorf("call %d: Content-Length %d, Transfer-Encoding %v for a body of %d bytes", i, resp.ContentLength, resp.TransferEncoding, len(body))
		}
		if !regexp.MustCompile(`^id: [A-Z2-7]+_0\ndata: \n\nevent: message\nid: [A-Z2-7]+_1\ndata: \{.*"id":2\d.*\}\n\n$`).MatchString(body) {
			t.Errorf("call %d: body %q", i, body)
		}
	}
}

// TestFastPathSlowCallPrimesPromptly: a call that outlasts the priming
// delay gets its priming event (its resumption id) while the upstream is
// still working, and the answer after it on the same stream.
func TestFastPathSlowCallPrimesPromptly(t *testing.T) {
	f := newFastFixture(t, router.HTTPOptions{})
	sid := f.open(t, "alice", `{}`)
	resp := f.post(t, context.Background(), "alice", sid, toolCall(30, `{"name":"up__wait"}`))
	defer resp.Body.Close()
	select {
	case <-f.waiting:
	case <-time.After(5 * time.Second):
		t.Fatal("the call never reached the upstream")
	}
	// The upstream holds the call until release is closed: whatever the
	// client reads now was flushed by the priming timer.
	type read struct {
		event string
		err   error
	}
	events := make(chan read, 2)
	br := bufio.NewReader(resp.Body)
	go func() {
		for range 2 {
			var ev strings.Builder
			for {
				line, err := br.ReadString('\n')
				ev.WriteString(line)
				if err != nil {
					events <- read{ev.String(), err}
					return
				}
				if line == "\n" {
					break
				}
			}
			events <- read{ev.String(), nil}
		}
	}()
	select {
	case r := <-events:
		if r.err != nil || !regexp.MustCompile(`^id: [A-Z2-7]+_0\ndata: \n\n$`).MatchString(r.event) {
			t.Fatalf("first event while the call runs: %q, %v", r.event, r.err)
		}
	case <-time.After(2 * time.Second): // before the upstream's timeout of 5 s ends the call
		t.Fatal("the priming event did not arrive while the call ran")
	}
	close(f.release)
	select {
	case r := <-events:
		if r.err != nil || !strings.Contains(r.event, `"id":30`) || !strings.Contains(r.event, "released") {
			t.Fatalf("answer: %q, %v", r.event, r.err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the answer never arrived")
	}
}

// TestFastPathPrimingTimerRacesAnswer: with a delay about as long as a
// call, the timer flushing the priming event and the handler writing the
// answer meet on the same response (go test -race watches them); every
// body still holds the priming event then the answer, once each.
func TestFastPathPrimingTimerRacesAnswer(t *testing.T) {
	f := newFastFixture(t, router.HTTPOptions{})
	sid := f.open(t, "alice", `{}`)
	want := regexp.MustCompile(`^id: [A-Z2-7]+_0\ndata: \n\nevent: message\nid: [A-Z2-7]+_1\ndata: \{.*"Echo: x".*\}\n\n$`)
	for _, d := range []time.Duration{time.Nanosecond, 50 * time.Microsecond, 200 * time.Microsecond, time.Millisecond} {
		restore := router.SetPrimingDelayForTest(d)
		for i := range 20 {
			_, body, fast := f.call(t, "alice", sid, toolCall(100+i, `{"name":"up__echo","arguments":{"message":"x"}}`))
			if !fast || !want.MatchString(body) {
				t.Errorf("delay %v, call %d: fast %v, body %q", d, i, fast, body)
			}
		}
		restore()
	}
}
