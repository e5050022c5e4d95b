package remote

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// drainTestServer answers every POST with a first part at once and the rest
// after tail, and counts the connections it accepts.
func drainTestServer(t *testing.T, tail time.Duration) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	var conns atomic.Int64
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body) // so that the server notices a client going away
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, "data: answer\n\n")
		w.(http.Flusher).Flush()
		select {
		case <-time.After(tail):
		case <-r.Context().Done():
		}
		_, _ = io.WriteString(w, ": end\n\n")
	}))
	srv.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	t.Cleanup(srv.Close)
	return srv, &conns
}

func drainTestClient() *http.Client {
	return &http.Client{Transport: drainingTransport{base: NewHTTPTransport(nil)}}
}

// The way go-sdk reads a call's answer: the first part, then the caller's
// context ends, then the rest is drained and the body closed. The connection
// must be reused.
func TestDrainingTransportReusesConnectionAfterCancel(t *testing.T) {
	srv, conns := drainTestServer(t, 20*time.Millisecond)
	client := drainTestClient()
	defer client.CloseIdleConnections()
	for range 3 {
		ctx, cancel := context.WithCancel(context.Background())
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL, strings.NewReader("{}"))
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, len("data: answer\n\n"))
		if _, err := io.ReadFull(resp.Body, buf); err != nil {
			t.Fatal(err)
		}
		cancel() // the call has its answer and returns
		if _, err := io.Copy(io.Discard, resp.Body); err != nil {
			t.Fatalf("drain after cancel: %v", err)
		}
		resp.Body.Close()
	}
	if n := conns.Load(); n != 1 {
		t.Errorf("%d connections for 3 sequential requests; want 1 (reused)", n)
	}
}

// Cancellation while waiting for the response headers aborts the request at
// once, as without the wrapper.
func TestDrainingTransportCancelsBeforeHeaders(t *testing.T) {
	block := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		select {
		case <-block:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(block)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL, strings.NewReader("{}"))
	start := time.Now()
	_, err := drainTestClient().Do(req)
	if err == nil {
		t.Fatal("request succeeded")
	}
	if !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, context.Canceled) {
		t.Errorf("error %v is not a context error", err)
	}
	if d := time.Since(start); d > drainGrace/2 {
		t.Errorf("request ended %s after start; want about 50ms", d)
	}
}

// A body still unread drainGrace after the context ended is aborted.
func TestDrainingTransportAbortsHungBodyAfterGrace(t *testing.T) {
	srv, _ := drainTestServer(t, time.Hour)
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL, strings.NewReader("{}"))
	resp, err := drainTestClient().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	cancel()
	start := time.Now()
	_, err = io.Copy(io.Discard, resp.Body)
	if err == nil {
		t.Fatal("reading a hung body ended without an error")
	}
	if d := time.Since(start); d < drainGrace/2 || d > 5*drainGrace {
		t.Errorf("hung body aborted after %s; want about %s", d, drainGrace)
	}
}
