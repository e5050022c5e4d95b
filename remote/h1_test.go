package remote

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agents-mcp/agents-mcp/egress"
	"github.com/agents-mcp/agents-mcp/router"
)

// countingListener counts the connections an upstream accepts.
type countingListener struct {
	net.Listener
	accepted atomic.Int64
}

func (l *countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err == nil {
		l.accepted.Add(1)
	}
	return c, err
}

// h1Upstream serves the fixture's go-sdk server over streamable HTTP on a
// counting listener, answering with JSON bodies or event streams.
func h1Upstream(t *testing.T, jsonResponse bool) (*countingListener, string) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	cl := &countingListener{Listener: l}
	fx := newFixture("up")
	srv := &http.Server{Handler: mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return fx.server },
		&mcp.StreamableHTTPOptions{JSONResponse: jsonResponse})}
	go func() { _ = srv.Serve(cl) }()
	t.Cleanup(func() { _ = srv.Close() })
	return cl, "http://" + l.Addr().String() + "/mcp"
}

// TestH1RawCallsReuseOneConnection: sequential raw calls, with the answer
// as an event stream (chunked) or as a JSON body, go on the single-goroutine
// client over one kept-alive connection.
func TestH1RawCallsReuseOneConnection(t *testing.T) {
	t.Parallel()
	for _, jsonResponse := range []bool{false, true} {
		name := "sse"
		if jsonResponse {
			name = "json"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			cl, url := h1Upstream(t, jsonResponse)
			e := newEnv(t, fastOptions())
			e.add(streamableConfig("up", url))
			tr := e.pool.opts.HTTPTransport.(*HTTPTransport)
			cs := e.httpCaller(nil, callerVersion)
			mustText(t, cs, "up__echo", `{"text":"warm"}`) // the first raw call dials
			accepted, dialed, served := cl.accepted.Load(), tr.h1.dialed.Load(), tr.h1.served.Load()
			const n = 20
			for range n {
				if got := mustText(t, cs, "up__echo", `{"text":"hi"}`); got != `{"text":"hi"}` {
					t.Fatalf("echo = %q", got)
				}
			}
			if d := tr.h1.served.Load() - served; d != n {
				t.Errorf("the single-goroutine client read %d responses for %d calls", d, n)
			}
			if d := tr.h1.dialed.Load() - dialed; d != 0 {
				t.Errorf("%d connections dialed for %d sequential calls, want 0 (the idle one reused)", d, n)
			}
			if d := cl.accepted.Load() - accepted; d != 0 {
				t.Errorf("the upstream accepted %d connections during %d sequential calls, want 0", d, n)
			}
			if dialed != 1 {
				t.Errorf("%d connections dialed by the first raw call, want 1", dialed)
			}
		})
	}
}

// TestH1CancelledRawCallDiscardsItsConnection: a call cancelled while the
// upstream works returns at once, and its connection (mid-response) is
// closed rather than reused; the next call dials anew and works.
func TestH1CancelledRawCallDiscardsItsConnection(t *testing.T) {
	t.Parallel()
	e, fx, _ := rawEnv(t, router.Options{})
	tr := e.pool.opts.HTTPTransport.(*HTTPTransport)
	cs := e.httpCaller(nil, callerVersion)
	mustText(t, cs, "up__echo", `{"text":"warm"}`)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := call(ctx, cs, "up__block", `{"id":"c1"}`)
		done <- err
	}()
	fx.waitStarted(t, 1, 5*time.Second)
	dialed := tr.h1.dialed.Load()
	cancel()
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("the cancelled call succeeded")
		}
	case <-time.After(3 * time.Second):
		t.Fatal("the cancelled call did not return")
	}
	if got := mustText(t, cs, "up__echo", `{"text":"after"}`); got != `{"text":"after"}` {
		t.Errorf("echo after cancel = %q", got)
	}
	// notifications/cancelled took the idle connection (if any), so at
	// least one new one was dialed after the cancelled call's.
	if tr.h1.dialed.Load() == dialed {
		t.Error("no connection was dialed after the cancel: the cancelled call's connection was reused")
	}
}

// rawServer is a hand-written HTTP/1.1 server on loopback: serve answers
// each connection's requests.
func rawServer(t *testing.T, serve func(c net.Conn, br *bufio.Reader)) (addr string, accepted *atomic.Int64) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Close() })
	accepted = new(atomic.Int64)
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			accepted.Add(1)
			go func() {
				defer c.Close()
				serve(c, bufio.NewReader(c))
			}()
		}
	}()
	return l.Addr().String(), accepted
}

// rawPostOn posts body to url on tr marked as the raw path's, and returns
// the response body read to its end.
func rawPostOn(ctx context.Context, tr http.RoundTripper, url, body string) (string, error) {
	req, err := http.NewRequestWithContext(withRawRequest(ctx), http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		return "", err
	}
	resp, err := tr.RoundTrip(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return string(b), err
}

// TestH1ConnectionCloseAndIdleClose: an upstream that answers with
// Connection: close, or that closes a kept-alive connection while it is
// idle, costs a new connection, never a failed call.
func TestH1ConnectionCloseAndIdleClose(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		close bool // answer with Connection: close; otherwise close after the answer without saying so
	}{{"connection-close", true}, {"closed-while-idle", false}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			addr, accepted := rawServer(t, func(c net.Conn, br *bufio.Reader) {
				req, err := http.ReadRequest(br)
				if err != nil {
					return
				}
				_, _ = io.Copy(io.Discard, req.Body)
				h := "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n"
				if tc.close {
					h += "Connection: close\r\n"
				}
				_, _ = io.WriteString(c, h+"\r\n{}")
				// Either way the server closes after one answer.
			})
			tr := NewHTTPTransport(nil)
			for i := range 3 {
				got, err := rawPostOn(t.Context(), tr, "http://"+addr+"/mcp", `{"n":1}`)
				if err != nil || got != "{}" {
					t.Fatalf("call %d: %q, %v", i, got, err)
				}
				time.Sleep(20 * time.Millisecond) // let the close arrive while idle
			}
			if n := accepted.Load(); n != 3 {
				t.Errorf("%d connections for 3 calls to a server that closes each, want 3", n)
			}
			if n := tr.h1.served.Load(); n != 3 {
				t.Errorf("the single-goroutine client served %d of 3", n)
			}
		})
	}
}

// TestH1ContextEndUnblocksTheRead: a response that never comes does not hold
// the caller past its context, and the connection is closed.
func TestH1ContextEndUnblocksTheRead(t *testing.T) {
	t.Parallel()
	closed := make(chan struct{})
	addr, _ := rawServer(t, func(c net.Conn, br *bufio.Reader) {
		req, err := http.ReadRequest(br)
		if err != nil {
			return
		}
		_, _ = io.Copy(io.Discard, req.Body)
		_, err = br.ReadByte() // no answer; wait for the client to close
		if errors.Is(err, io.EOF) {
			close(closed)
		}
	})
	tr := NewHTTPTransport(nil)
	ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := rawPostOn(ctx, tr, "http://"+addr+"/mcp", `{}`)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("error = %v, want the context's", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("returned after %s", d)
	}
	select {
	case <-closed:
	case <-time.After(3 * time.Second):
		t.Error("the connection was not closed after the context ended")
	}
}

// TestH1DialsThroughTheEgressPolicy: a name that passes the request check
// but resolves to a refused address when connecting is refused by the
// single-goroutine client too, and nothing reaches the listener.
func TestH1DialsThroughTheEgressPolicy(t *testing.T) {
	t.Parallel()
	addr, accepted := rawServer(t, func(net.Conn, *bufio.Reader) {})
	_, port, _ := net.SplitHostPort(addr)
	policy, err := egress.New(egress.Config{Deny: []string{"127.0.0.1/32"}})
	if err != nil {
		t.Fatal(err)
	}
	policy = policy.WithResolver(&hostsResolver{answers: map[string][]string{"localhost": {"127.0.0.1"}}})
	tr := NewHTTPTransport(policy)
	_, err = rawPostOn(t.Context(), policy.RoundTripper(tr), "http://localhost:"+port+"/mcp", `{}`)
	if !egress.IsRefused(err) {
		t.Errorf("error = %v, want an egress refusal", err)
	}
	time.Sleep(50 * time.Millisecond)
	if n := accepted.Load(); n != 0 {
		t.Errorf("the listener accepted %d connections", n)
	}
	if n := tr.h1.dialed.Load(); n != 0 {
		t.Errorf("%d connections dialed", n)
	}
}

// TestH1FallsBack: https, unmarked, Expect and proxied requests stay on
// net/http's transport.
func TestH1FallsBack(t *testing.T) {
	t.Parallel()
	tr := NewHTTPTransport(nil)
	for _, tc := range []struct {
		url    string
		marked bool
		header string
		want   bool
	}{
		{"http://127.0.0.1:1/mcp", true, "", true},
		{"https://127.0.0.1:1/mcp", true, "", false},
		{"http://127.0.0.1:1/mcp", false, "", false},
		{"http://127.0.0.1:1/mcp", true, "Expect", false},
	} {
		ctx := context.Background()
		if tc.marked {
			ctx = withRawRequest(ctx)
		}
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, tc.url, bytes.NewReader(nil))
		if tc.header != "" {
			req.Header.Set(tc.header, "100-continue")
		}
		got := req.Context().Value(rawRequestKey{}) != nil && tr.carriesH1(req)
		if got != tc.want {
			t.Errorf("%s marked=%v %s: carried %v, want %v", tc.url, tc.marked, tc.header, got, tc.want)
		}
	}
	limited := NewHTTPTransport(nil)
	limited.MaxConnsPerHost = 4
	req, _ := http.NewRequestWithContext(withRawRequest(context.Background()), http.MethodPost, "http://127.0.0.1:1/mcp", nil)
	if limited.carriesH1(req) {
		t.Error("a request under MaxConnsPerHost went on the single-goroutine client, which does not enforce it")
	}
	proxied := NewHTTPTransport(nil)
	proxied.Proxy = func(*http.Request) (*url.URL, error) { return url.Parse("http://127.0.0.1:3128") }
	req, _ = http.NewRequestWithContext(withRawRequest(context.Background()), http.MethodPost, "http://10.0.0.1/mcp", nil)
	if proxied.carriesH1(req) {
		t.Error("a proxied request went on the single-goroutine client")
	}
}

// TestH1BoundsTheResponseHeader: an upstream whose response header grows
// past MaxResponseHeaderBytes fails the request instead of growing memory.
func TestH1BoundsTheResponseHeader(t *testing.T) {
	t.Parallel()
	addr, _ := rawServer(t, func(c net.Conn, br *bufio.Reader) {
		req, err := http.ReadRequest(br)
		if err != nil {
			return
		}
		_, _ = io.Copy(io.Discard, req.Body)
		_, _ = io.WriteString(c, "HTTP/1.1 200 OK\r\nX-Big: "+strings.Repeat("a", 64<<10)+"\r\nContent-Length: 2\r\n\r\n{}")
	})
	tr := NewHTTPTransport(nil)
	tr.MaxResponseHeaderBytes = 16 << 10
	if _, err := rawPostOn(t.Context(), tr, "http://"+addr+"/mcp", `{}`); !errors.Is(err, errH1HeaderTooLarge) {
		t.Errorf("error = %v, want the header bound's", err)
	}
	tr.MaxResponseHeaderBytes = 1 << 20
	if got, err := rawPostOn(t.Context(), tr, "http://"+addr+"/mcp", `{}`); err != nil || got != "{}" {
		t.Errorf("under a larger bound: %q, %v", got, err)
	}
}
