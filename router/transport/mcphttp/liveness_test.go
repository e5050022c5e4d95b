package mcphttp_test

import (
	"bufio"
	"context"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agents-mcp/agents-mcp/router"
	"github.com/agents-mcp/agents-mcp/router/internal/routertest"
	"github.com/agents-mcp/agents-mcp/router/transport/session"
)

// The liveness of HTTP sessions (router/transport/session/liveness.go),
// with a keepalive interval of tick.
const tick = 150 * time.Millisecond

// legacyStream opens a legacy SSE session as alice with a raw client that
// reads its stream but never answers the server's requests (as
// mark3labs/mcp-go's SSE transport does), initializes it, and returns the
// endpoint to POST to and the count of pings the stream carried.
func legacyStream(t *testing.T, base string) (endpoint string, pings *atomic.Int32) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+"/sse", nil)
	req.Header.Set("Authorization", "Bearer alice")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	pings = &atomic.Int32{}
	got := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(resp.Body)
		event := ""
		for sc.Scan() {
			line := sc.Text()
			if e, ok := strings.CutPrefix(line, "event: "); ok {
				event = e
			}
			if d, ok := strings.CutPrefix(line, "data: "); ok {
				if event == "endpoint" {
					got <- d
				}
				if strings.Contains(d, `"method":"ping"`) {
					pings.Add(1)
				}
			}
		}
	}()
	select {
	case endpoint = <-got:
	case <-time.After(5 * time.Second):
		t.Fatal("no endpoint event")
	}
	if !strings.HasPrefix(endpoint, "http") {
		endpoint = base + endpoint
	}
	for _, body := range []string{routertest.InitializeBody, `{"jsonrpc":"2.0","method":"notifications/initialized"}`} {
		if status := postLegacy(t, endpoint, body); status != http.StatusAccepted {
			t.Fatalf("POST %s: %d", body, status)
		}
	}
	return endpoint, pings
}

func postLegacy(t *testing.T, endpoint, body string) int {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, endpoint, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer alice")
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// TestBusyClientThatDropsPingsStaysConnected: a client that never answers
// pings but keeps calling is never pinged (it is not idle) and never
// closed, for many keepalive intervals.
func TestBusyClientThatDropsPingsStaysConnected(t *testing.T) {
	srv := newSessionServer(t, router.HTTPOptions{KeepAlive: tick, SessionTimeout: time.Minute})
	endpoint, pings := legacyStream(t, srv.URL)
	for i := range 20 { // 2 s: more than ten intervals
		time.Sleep(tick / 3)
		if status := postLegacy(t, endpoint, ping); status != http.StatusAccepted {
			t.Fatalf("request %d after %s: HTTP %d", i, time.Duration(i)*tick/3, status)
		}
	}
	if n := pings.Load(); n != 0 {
		t.Errorf("a busy session was pinged %d times", n)
	}
}

// TestIdleClientIsJudgedByWhatItAnswers: an idle client that never
// answered a ping is pinged but not closed for missing them; the idle
// timeout closes it. An idle client that answered pings and then stops
// (its process froze) is closed after MissedPings.
func TestIdleClientIsJudgedByWhatItAnswers(t *testing.T) {
	t.Run("never answers", func(t *testing.T) {
		srv := newSessionServer(t, router.HTTPOptions{KeepAlive: tick, SessionTimeout: 12 * tick})
		endpoint, pings := legacyStream(t, srv.URL)
		time.Sleep(7 * tick)
		if status := postLegacy(t, endpoint, ping); status != http.StatusAccepted || pings.Load() < 3 {
			t.Fatalf("after %d unanswered pings: HTTP %d, want the session alive", pings.Load(), status)
		}
		time.Sleep(16 * tick)
		if status := postLegacy(t, endpoint, ping); status != http.StatusNotFound {
			t.Fatalf("past the idle timeout: HTTP %d, want 404", status)
		}
	})
	t.Run("stops answering", func(t *testing.T) {
		srv := newSessionServer(t, router.HTTPOptions{KeepAlive: tick, SessionTimeout: time.Minute})
		var frozen atomic.Bool
		answered := make(chan struct{}, 16)
		thaw := make(chan struct{})
		c := mcp.NewClient(&mcp.Implementation{Name: "freezes", Version: "1"}, nil)
		c.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
			return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
				if method == "ping" {
					if frozen.Load() {
						// Frozen: not even a late error answer.
						<-thaw
						return nil, ctx.Err()
					}
					defer func() { answered <- struct{}{} }()
				}
				return next(ctx, method, req)
			}
		})
		cs, err := c.Connect(t.Context(), &mcp.SSEClientTransport{Endpoint: srv.URL + "/sse",
			HTTPClient: &http.Client{Transport: routertest.Bearer{Token: "alice", Base: http.DefaultTransport}}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer cs.Close()
		defer close(thaw) // before the Close above, which waits for the handler
		select {
		case <-answered:
		case <-time.After(20 * tick):
			t.Fatal("an idle session was not pinged")
		}
		frozen.Store(true)
		// The client's own requests would count as activity: it is asked
		// only once the session should have ended.
		time.Sleep(3 * session.MissedPings * tick)
		for deadline := time.Now().Add(40 * tick); ; {
			ctx, cancel := context.WithTimeout(t.Context(), tick)
			err := cs.Ping(ctx, nil)
			cancel()
			if err != nil {
				break
			}
			if time.Now().After(deadline) {
				t.Fatal("the session of a client that stopped answering was not closed")
			}
			time.Sleep(tick)
		}
	})
}

// TestStreamableSessionWithoutAStreamIsNotPinged: a streamable session
// without a GET stream has nowhere to receive a ping: it is not pinged,
// and stays open while idle for many intervals (until the idle timeout).
func TestStreamableSessionWithoutAStreamIsNotPinged(t *testing.T) {
	srv := newSessionServer(t, router.HTTPOptions{KeepAlive: tick, SessionTimeout: time.Minute})
	sid := openSession(t, srv, "alice", true)
	time.Sleep(8 * tick)
	if status, body, _ := sessionRequest(t, srv, "alice", http.MethodPost, sid, ping); status != http.StatusOK {
		t.Fatalf("after %s idle: %d %s", 8*tick, status, body)
	}
}
