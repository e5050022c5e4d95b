package api_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/agents-mcp/agents-mcp/api"
)

// serve runs api.NewServer(h, opts) on a loopback port until the test ends.
func serve(t *testing.T, h http.Handler, opts api.ServerOptions) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := api.NewServer(h, opts)
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = srv.Serve(ln)
	}()
	t.Cleanup(func() {
		_ = srv.Close()
		<-done
	})
	return ln.Addr().String()
}

var shortLimits = api.ServerOptions{
	ReadHeaderTimeout: 300 * time.Millisecond,
	BodyReadTimeout:   500 * time.Millisecond,
	IdleTimeout:       500 * time.Millisecond,
}

// waitClosed reads from c until the server closes it, and reports how long
// that took; it fails the test if it takes longer than limit.
func waitClosed(t *testing.T, c net.Conn, limit time.Duration) time.Duration {
	t.Helper()
	start := time.Now()
	_ = c.SetReadDeadline(start.Add(limit))
	_, err := io.Copy(io.Discard, c)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Fatalf("the server kept the connection open for %v", limit)
	}
	return time.Since(start)
}

func TestServerClosesAConnectionThatSendsNothing(t *testing.T) {
	addr := serve(t, http.NotFoundHandler(), shortLimits)
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	waitClosed(t, c, 5*time.Second)
}

func TestServerClosesAnIdleKeepAliveConnection(t *testing.T) {
	addr := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "ok")
	}), shortLimits)
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := fmt.Fprintf(c, "GET / HTTP/1.1\r\nHost: %s\r\n\r\n", addr); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.Close {
		t.Fatalf("status %d, close %v: want a kept-alive 200", resp.StatusCode, resp.Close)
	}
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := br.ReadByte(); err != io.EOF {
		t.Fatalf("idle keep-alive connection: read %v, want EOF from the server closing it", err)
	}
}

func TestServerCutsATricklingBody(t *testing.T) {
	got := make(chan error, 1)
	addr := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, err := io.ReadAll(r.Body)
		got <- err
	}), shortLimits)
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	// Headers announce 1000 bytes; only 10 come, then nothing.
	if _, err := fmt.Fprintf(c, "POST / HTTP/1.1\r\nHost: %s\r\nContent-Length: 1000\r\n\r\n0123456789", addr); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-got:
		if err == nil {
			t.Fatal("the handler read a whole body that never came")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the handler still waits for the body after 5 s")
	}
}

// TestServerKeepsLongAnswersOpen: once the request is read, the read
// deadline must not end the request (an SSE stream, a long tool call).
func TestServerKeepsLongAnswersOpen(t *testing.T) {
	hold := 3 * shortLimits.BodyReadTimeout
	addr := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, err := io.ReadAll(r.Body); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, "data: first\n\n")
		_ = http.NewResponseController(w).Flush()
		select {
		case <-r.Context().Done():
			return // the test sees the stream end without "last"
		case <-time.After(hold):
		}
		_, _ = io.WriteString(w, "data: last\n\n")
	}), shortLimits)
	for _, tc := range []struct {
		method, body string
	}{{"GET", ""}, {"POST", `{"jsonrpc":"2.0","id":1,"method":"tools/call"}`}} {
		t.Run(tc.method, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			req, err := http.NewRequestWithContext(ctx, tc.method, "http://"+addr+"/", strings.NewReader(tc.body))
			if err != nil {
				t.Fatal(err)
			}
			if tc.body == "" {
				req.Body = http.NoBody
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			all, err := io.ReadAll(resp.Body)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(all), "data: last") {
				t.Fatalf("the answer was cut before %v: %q", hold, all)
			}
		})
	}
}
