package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// syncBuffer is a bytes.Buffer safe for the server's logger and the test.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func envOf(kv map[string]string) func(string) string {
	return func(k string) string { return kv[k] }
}

// startServe runs `serve` in-process on a free loopback port and returns its
// base URL, a stop function and a channel with the exit code.
func startServe(t testing.TB, env map[string]string, extra ...string) (string, context.CancelFunc, <-chan int, *syncBuffer) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	logs := &syncBuffer{}
	code := make(chan int, 1)
	args := append([]string{"serve", "--addr", "127.0.0.1:0", "--data-dir", t.TempDir()}, extra...)
	go func() { code <- run(ctx, args, envOf(env), &bytes.Buffer{}, logs) }()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		for _, line := range strings.Split(logs.String(), "\n") {
			var rec struct {
				Msg  string `json:"msg"`
				Addr string `json:"addr"`
			}
			if json.Unmarshal([]byte(line), &rec) == nil && rec.Msg == "serving" {
				t.Cleanup(cancel)
				return "http://" + rec.Addr, cancel, code, logs
			}
		}
		select {
		case c := <-code:
			t.Fatalf("serve exited with %d: %s", c, logs.String())
		case <-time.After(10 * time.Millisecond):
		}
	}
	cancel()
	t.Fatalf("serve did not start: %s", logs.String())
	return "", nil, nil, nil
}

func TestServeRefusesNonLoopbackWithoutCredentials(t *testing.T) {
	var stderr bytes.Buffer
	code := run(context.Background(), []string{"serve", "--addr", "0.0.0.0:0", "--data-dir", t.TempDir()}, envOf(nil), &bytes.Buffer{}, &stderr)
	if code != 1 || !strings.Contains(stderr.String(), "refusing to serve on non-loopback address") {
		t.Fatalf("code %d, stderr %q", code, stderr.String())
	}
}

func TestServeRequiresAPIKeyWhenConfigured(t *testing.T) {
	const key = "test-key-0123456789"
	base, _, _, logs := startServe(t, map[string]string{"AGENTS_MCP_API_KEYS": key})
	if strings.Contains(logs.String(), key) {
		t.Fatal("the API key appears in the logs")
	}
	ping := `{"jsonrpc":"2.0","id":1,"method":"ping"}`
	do := func(auth string) int {
		req, _ := http.NewRequest(http.MethodPost, base+"/mcp", strings.NewReader(ping))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode == http.StatusUnauthorized && resp.Header.Get("WWW-Authenticate") == "" {
			t.Error("401 without WWW-Authenticate")
		}
		return resp.StatusCode
	}
	if got := do(""); got != http.StatusUnauthorized {
		t.Errorf("no key: %d, want 401", got)
	}
	if got := do("Bearer wrong"); got != http.StatusUnauthorized {
		t.Errorf("wrong key: %d, want 401", got)
	}
	if got := do("Bearer " + key); got != http.StatusOK {
		t.Errorf("right key: %d, want 200", got)
	}
	resp, err := http.Get(base + "/healthz")
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Errorf("healthz needs no key: %v %v", resp, err)
	}
}

// TestGracefulShutdownFinishesInFlightCalls stops the server while a call
// is running over legacy SSE: the call must complete, and serve must exit 0
// promptly although the SSE stream is still open.
func TestGracefulShutdownFinishesInFlightCalls(t *testing.T) {
	base, stop, code, logs := startServe(t, nil, "--conformance-fixtures")
	ctx := context.Background()
	started := make(chan struct{}, 10)
	client := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, &mcp.ClientOptions{
		ProgressNotificationHandler: func(context.Context, *mcp.ProgressNotificationClientRequest) { started <- struct{}{} },
	})
	cs, err := client.Connect(ctx, &mcp.SSEClientTransport{Endpoint: base + "/sse"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()

	result := make(chan error, 1)
	go func() {
		// Takes about 150 ms: three progress steps 50 ms apart.
		params := &mcp.CallToolParams{Name: "test_tool_with_progress", Arguments: map[string]any{}}
		params.SetProgressToken("p1")
		res, err := cs.CallTool(ctx, params)
		if err == nil && res.IsError {
			err = context.Canceled
		}
		result <- err
	}()
	select {
	case <-started: // the call is running on the server
	case <-time.After(5 * time.Second):
		t.Fatal("no progress from the call")
	}
	stop()
	if err := <-result; err != nil {
		t.Errorf("in-flight call failed during shutdown: %v\n%s", err, logs.String())
	}
	select {
	case c := <-code:
		if c != 0 {
			t.Errorf("exit code %d: %s", c, logs.String())
		}
	case <-time.After(5 * time.Second):
		t.Fatalf("serve did not exit within 5s with an SSE stream open: %s", logs.String())
	}
}

func TestUnknownCommandAndVersion(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := run(context.Background(), []string{"bogus"}, envOf(nil), &out, &errOut); code != 2 {
		t.Errorf("unknown command: code %d", code)
	}
	if code := run(context.Background(), []string{"version"}, envOf(nil), &out, &errOut); code != 0 || !strings.Contains(out.String(), "agents-mcp ") {
		t.Errorf("version: code %d out %q", code, out.String())
	}
	out.Reset()
	if code := run(context.Background(), []string{"serve", "--addr", "nonsense"}, envOf(nil), &out, &errOut); code != 1 || !strings.Contains(errOut.String(), "addr") {
		t.Errorf("bad addr: code %d stderr %q", code, errOut.String())
	}
}
