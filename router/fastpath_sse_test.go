package router_test

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/agents-mcp/agents-mcp/router"
)

// sseClient is a raw legacy SSE session with the fast-path fixture's
// router: its stream's 'message' events arrive on events, read by a
// goroutine that ends when the stream does (close, or the fixture's end).
type sseClient struct {
	f        *fastFixture
	token    string
	endpoint string // /messages?sessionId=…
	sid      string
	events   chan string
	close    context.CancelFunc
}

// openSSE opens a legacy SSE session as token whose client declares
// capabilities (JSON); initialize is true to complete the handshake.
func (f *fastFixture) openSSE(t *testing.T, token, capabilities string, initialize bool) *sseClient {
	t.Helper()
	base := strings.TrimSuffix(f.url, "/mcp")
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+"/sse", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Accept", "text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /sse: %d", resp.StatusCode)
	}
	c := &sseClient{f: f, token: token, events: make(chan string, 16), close: cancel}
	endpoint := make(chan string, 1)
	go func() {
		defer resp.Body.Close()
		defer close(c.events)
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(nil, 1<<20)
		var name, data string
		for sc.Scan() {
			line := sc.Text()
			switch {
			case strings.HasPrefix(line, "event: "):
				name = strings.TrimPrefix(line, "event: ")
			case strings.HasPrefix(line, "data: "):
				data += strings.TrimPrefix(line, "data: ")
			case line == "":
				if name == "endpoint" {
					endpoint <- data
				} else if name == "message" {
					c.events <- data
				}
				name, data = "", ""
			}
		}
	}()
	select {
	case e := <-endpoint:
		c.endpoint = base + e
		_, c.sid, _ = strings.Cut(e, "sessionId=")
	case <-time.After(5 * time.Second):
		t.Fatal("no endpoint event")
	}
	if initialize {
		c.request(t, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2024-11-05","capabilities":`+capabilities+`,"clientInfo":{"name":"t","version":"1"}}}`)
		if resp := c.post(t, `{"jsonrpc":"2.0","method":"notifications/initialized"}`); resp.StatusCode != http.StatusAccepted {
			t.Fatalf("notifications/initialized: %d", resp.StatusCode)
		}
		// As for streamable sessions (open): a ping answered means
		// notifications/initialized has been handled.
		c.request(t, `{"jsonrpc":"2.0","id":2,"method":"ping"}`)
	}
	return c
}

// post sends one message of the session as token.
func (c *sseClient) postAs(t *testing.T, token, body string) *http.Response {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, c.endpoint, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	readAll(t, resp)
	return resp
}

func (c *sseClient) post(t *testing.T, body string) *http.Response { return c.postAs(t, c.token, body) }

// next is the next message event on the stream.
func (c *sseClient) next(t *testing.T) string {
	t.Helper()
	select {
	case e, ok := <-c.events:
		if !ok {
			t.Fatal("the stream ended")
		}
		return e
	case <-time.After(5 * time.Second):
		t.Fatal("no message event")
	}
	return ""
}

// request posts a request (202) and returns its answer from the stream.
func (c *sseClient) request(t *testing.T, body string) string {
	t.Helper()
	if resp := c.post(t, body); resp.StatusCode != http.StatusAccepted {
		t.Fatalf("POST %s: %d", body, resp.StatusCode)
	}
	return c.next(t)
}

// call is request for a tools/call, reporting whether the fast path served it.
func (c *sseClient) call(t *testing.T, body string) (answer string, fast bool) {
	t.Helper()
	before := c.f.h.FastPathCalls()
	answer = c.request(t, body)
	return answer, c.f.h.FastPathCalls() == before+1
}

// TestSSEFastPathAnswersAsGoSDKDoes: in a legacy SSE session each call, a
// success, a validation refusal, a tool error, an allowlist refusal, is
// answered by the fast path with the very event go-sdk's path writes for
// the same call (made to go there by an empty _meta), and recorded alike.
func TestSSEFastPathAnswersAsGoSDKDoes(t *testing.T) {
	f := newFastFixture(t, router.HTTPOptions{})
	clients := map[string]*sseClient{"alice": f.openSSE(t, "alice", `{}`, true), "bob": f.openSSE(t, "bob", `{}`, true)}
	for _, tc := range []struct{ name, token, params string }{
		{"success", "alice", `{"name":"up__echo","arguments":{"message":"hi <there> & é"}}`},
		{"invalid arguments", "alice", `{"name":"up__echo","arguments":{"message":7}}`},
		{"tool error", "alice", `{"name":"up__boom","arguments":{}}`},
		{"not allowed", "bob", `{"name":"up__boom"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := clients[tc.token]
			fastAnswer, fast := c.call(t, toolCall(7, tc.params))
			if !fast {
				t.Fatalf("the fast path did not take %s", tc.params)
			}
			f.mu.Lock()
			fastRec := f.calls[len(f.calls)-1]
			f.mu.Unlock()
			sdkAnswer, fast := c.call(t, toolCall(7, withMeta(tc.params)))
			if fast {
				t.Fatal("the fast path took a call with _meta")
			}
			f.mu.Lock()
			sdkRec := f.calls[len(f.calls)-1]
			f.mu.Unlock()
			if fastAnswer != sdkAnswer {
				t.Errorf("answer\n%s\ngo-sdk's\n%s", fastAnswer, sdkAnswer)
			}
			fastRec.Duration, sdkRec.Duration = 0, 0
			if fmt.Sprint(fastRec) != fmt.Sprint(sdkRec) {
				t.Errorf("recorded %+v, go-sdk's %+v", fastRec, sdkRec)
			}
		})
	}
}

// TestSSEFastPathLeavesOtherCallsToGoSDK: what the fast path must not take
// goes to go-sdk and is answered there: another principal's session and an
// unknown session (404 alike), a session not yet initialized, a client
// that can be asked for sampling or elicitation, one that set a log level,
// a call with a progress token.
func TestSSEFastPathLeavesOtherCallsToGoSDK(t *testing.T) {
	f := newFastFixture(t, router.HTTPOptions{})
	echo := toolCall(3, `{"name":"up__echo","arguments":{"message":"x"}}`)

	alice := f.openSSE(t, "alice", `{}`, true)
	before := f.h.FastPathCalls()
	if resp := alice.postAs(t, "bob", echo); resp.StatusCode != http.StatusNotFound {
		t.Errorf("bob in alice's session: %d", resp.StatusCode)
	}
	unknown := *alice
	unknown.endpoint = strings.Replace(alice.endpoint, alice.sid, "NOSUCHSESSION", 1)
	if resp := unknown.post(t, echo); resp.StatusCode != http.StatusNotFound {
		t.Errorf("unknown session: %d", resp.StatusCode)
	}
	if n := f.h.FastPathCalls(); n != before {
		t.Errorf("the fast path took %d refused calls", n-before)
	}

	// Initialized, and then told nothing: its first tools/call is what
	// tells go-sdk (and the router) that it has initialized.
	fresh := f.openSSE(t, "alice", `{}`, false)
	fresh.request(t, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2024-11-05","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	if body, fast := fresh.call(t, echo); fast || !strings.Contains(body, "Echo: x") {
		t.Errorf("session not initialized: fast %v, %s", fast, body)
	}

	for _, caps := range []string{`{"sampling":{}}`, `{"elicitation":{}}`} {
		c := f.openSSE(t, "alice", caps, true)
		if body, fast := c.call(t, echo); fast || !strings.Contains(body, "Echo: x") {
			t.Errorf("client with %s: fast %v, %s", caps, fast, body)
		}
	}

	logs := f.openSSE(t, "alice", `{}`, true)
	if body := logs.request(t, `{"jsonrpc":"2.0","id":2,"method":"logging/setLevel","params":{"level":"debug"}}`); !strings.Contains(body, `"result"`) {
		t.Fatalf("logging/setLevel: %s", body)
	}
	if body, fast := logs.call(t, echo); fast || !strings.Contains(body, "Echo: x") {
		t.Errorf("client that set a log level: fast %v, %s", fast, body)
	}

	progress := toolCall(4, `{"name":"up__echo","arguments":{"message":"x"},"_meta":{"progressToken":"p"}}`)
	if body, fast := alice.call(t, progress); fast || !strings.Contains(body, "Echo: x") {
		t.Errorf("call with a progress token: fast %v, %s", fast, body)
	}
	if body, fast := alice.call(t, echo); !fast || !strings.Contains(body, "Echo: x") {
		t.Errorf("plain call after all that: fast %v, %s", fast, body)
	}
}

// TestSSEFastPathCancellation: notifications/cancelled cancels a fast-path
// call in flight (the upstream's handler sees its context end), which is
// then answered with the tool handler's refusal, as on go-sdk's path.
func TestSSEFastPathCancellation(t *testing.T) {
	f := newFastFixture(t, router.HTTPOptions{})
	c := f.openSSE(t, "alice", `{}`, true)
	if resp := c.post(t, toolCall(9, `{"name":"up__wait"}`)); resp.StatusCode != http.StatusAccepted {
		t.Fatalf("tools/call: %d", resp.StatusCode)
	}
	select {
	case <-f.waiting:
	case <-time.After(5 * time.Second):
		t.Fatal("the call never reached the upstream")
	}
	if n := f.h.FastPathCalls(); n != 1 {
		t.Fatalf("the fast path served %d calls, want 1", n)
	}
	if resp := c.post(t, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":9}}`); resp.StatusCode != http.StatusAccepted {
		t.Errorf("notifications/cancelled: %d", resp.StatusCode)
	}
	select {
	case <-f.cancelled:
	case <-time.After(5 * time.Second):
		t.Fatal("the upstream's handler was never cancelled")
	}
	if a := c.next(t); !strings.Contains(a, `"id":9`) || !strings.Contains(a, "was cancelled") {
		t.Errorf("answer of the cancelled call: %s", a)
	}
}

// TestSSEFastPathCallEndsWithItsSession: the end of the session's stream
// cancels a fast-path call in flight.
func TestSSEFastPathCallEndsWithItsSession(t *testing.T) {
	f := newFastFixture(t, router.HTTPOptions{})
	c := f.openSSE(t, "alice", `{}`, true)
	if resp := c.post(t, toolCall(13, `{"name":"up__wait"}`)); resp.StatusCode != http.StatusAccepted {
		t.Fatalf("tools/call: %d", resp.StatusCode)
	}
	<-f.waiting
	c.close() // the client goes away
	select {
	case <-f.cancelled:
	case <-time.After(5 * time.Second):
		t.Fatal("the call went on after its session ended")
	}
	if resp := c.post(t, toolCall(14, `{"name":"up__echo","arguments":{"message":"x"}}`)); resp.StatusCode != http.StatusNotFound {
		t.Errorf("a call in the ended session: %d", resp.StatusCode)
	}
}
