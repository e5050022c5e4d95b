package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// This file puts calls in flight on the replica that the cluster test
// kills: a slow upstream tool (it sleeps) called concurrently through the
// load balancer, half without a session (2026-07-28) and half on
// 2025-11-25 sessions, so that some calls are on the victim when it dies. The
// upstream tells which replica served each call: every replica holds one
// session to it, and a probe sent to each replica directly maps sessions
// to replicas.

// slowUpstream is a go-sdk MCP server with one tool, sleep, that records
// which upstream session (so which replica) served each call, by tag.
type slowUpstream struct {
	url      string
	mu       sync.Mutex
	sessions map[string]string // tag -> upstream session id
}

type sleepArgs struct {
	Tag string `json:"tag"`
	Ms  int    `json:"ms"`
}

func startSlowUpstream(t *testing.T) *slowUpstream {
	t.Helper()
	u := &slowUpstream{sessions: map[string]string{}}
	s := mcp.NewServer(&mcp.Implementation{Name: "slow", Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "sleep", Description: "sleeps ms milliseconds"}, func(ctx context.Context, req *mcp.CallToolRequest, in sleepArgs) (*mcp.CallToolResult, any, error) {
		u.mu.Lock()
		u.sessions[in.Tag] = req.Session.ID()
		u.mu.Unlock()
		select {
		case <-time.After(time.Duration(in.Ms) * time.Millisecond):
		case <-ctx.Done():
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "slept " + in.Tag}}}, nil, nil
	})
	srv := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
	t.Cleanup(srv.Close)
	u.url = srv.URL
	return u
}

func (u *slowUpstream) sessionOf(tag string) string {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.sessions[tag]
}

// configFile writes a config file naming the upstream as "slow", for
// AGENTS_MCP_CONFIG.
func (u *slowUpstream) configFile(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "cluster.yaml")
	cfg := fmt.Sprintf("upstreams:\n  - name: slow\n    transport: streamable\n    url: %s/mcp\n    timeout: 60s\n", u.url)
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// statelessToolCall makes one 2026-07-28 tools/call (no session) through
// base with key-a; an HTTP error, a cut body, a JSON-RPC error or a tool
// error is an error.
func statelessToolCall(ctx context.Context, base, name string, args map[string]any) error {
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": map[string]any{
		"name": name, "arguments": args,
		"_meta": map[string]any{
			"io.modelcontextprotocol/protocolVersion":    "2026-07-28",
			"io.modelcontextprotocol/clientCapabilities": map[string]any{},
			"io.modelcontextprotocol/clientInfo":         map[string]any{"name": "cluster-2026", "version": "1"},
		},
	}})
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, base+"/mcp", strings.NewReader(string(body)))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", "tools/call")
	req.Header.Set("Mcp-Name", name)
	req.Header.Set("Authorization", "Bearer key-a")
	resp, err := unpooledClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return fmt.Errorf("HTTP %d, body cut: %w", resp.StatusCode, err)
	}
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(b), `"result"`) || strings.Contains(string(b), `"isError":true`) {
		return fmt.Errorf("HTTP %d: %.300s", resp.StatusCode, b)
	}
	return nil
}

// replicaSessions calls the slow tool once on each replica directly and
// returns the upstream session id of each replica, by index.
func (u *slowUpstream) replicaSessions(t *testing.T, reps []*serverProcess) map[string]int {
	t.Helper()
	out := map[string]int{}
	for i, p := range reps {
		tag := fmt.Sprintf("probe-%d", i)
		var err error
		// A replica connects its upstreams in the background: retry
		// until the tool is there.
		for deadline := time.Now().Add(30 * time.Second); ; {
			ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
			err = statelessToolCall(ctx, p.base, "slow__sleep", map[string]any{"tag": tag, "ms": 0})
			cancel()
			if err == nil || time.Now().After(deadline) {
				break
			}
			time.Sleep(200 * time.Millisecond)
		}
		if err != nil {
			t.Fatalf("probe of replica %d: %v\n%s", i, err, p.logs.String())
		}
		out[u.sessionOf(tag)] = i
	}
	if len(out) != len(reps) {
		t.Fatalf("the replicas share upstream sessions: %v", out)
	}
	return out
}

// inFlightCall is one slow call made through the balancer around the kill.
type inFlightCall struct {
	tag      string
	session  *mcp.ClientSession // nil: a 2026-07-28 call without a session
	replica  int                // the replica that served it (from the upstream); -1: it never reached one
	err      error
	returned time.Time
}

// slowCallsAcrossKill starts n concurrent slow calls (each sleeps ms at
// the upstream) through lb and returns once every one has returned or
// bound passed; kill runs once they are all in flight at the upstream.
func slowCallsAcrossKill(t *testing.T, u *slowUpstream, lb string, sessions map[string]int, n int, ms int, bound time.Duration, kill func()) []inFlightCall {
	t.Helper()
	calls := make([]inFlightCall, n)
	var wg sync.WaitGroup
	for i := range calls {
		calls[i].tag = fmt.Sprintf("inflight-%d", i)
		calls[i].replica = -1
		if i%2 == 1 {
			// Every other call on a 2025-11-25 session of its own (go-sdk
			// client, no GET stream), opened through the balancer.
			calls[i].tag += "-session"
			calls[i].session = sessionThrough(t, lb)
		}
	}
	// Every session is open before the first call starts: on a loaded
	// machine, opening them one by one can take longer than a call lasts.
	for i := range calls {
		wg.Add(1)
		go func(c *inFlightCall) {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(t.Context(), bound)
			defer cancel()
			args := map[string]any{"tag": c.tag, "ms": ms}
			if c.session != nil {
				c.err = sessionToolCall(ctx, c.session, "slow__sleep", args)
			} else {
				c.err = statelessToolCall(ctx, lb, "slow__sleep", args)
			}
			c.returned = time.Now()
		}(&calls[i])
	}
	// Every call reaches the upstream before the kill.
	for deadline := time.Now().Add(bound); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		reached := 0
		for _, c := range calls {
			if u.sessionOf(c.tag) != "" {
				reached++
			}
		}
		if reached == n {
			break
		}
	}
	kill()
	wg.Wait()
	for i := range calls {
		if r, ok := sessions[u.sessionOf(calls[i].tag)]; ok {
			calls[i].replica = r
		}
	}
	return calls
}

// sessionThrough opens a 2025-11-25 session through lb with go-sdk's
// client, closed at the end of the test.
func sessionThrough(t *testing.T, lb string) *mcp.ClientSession {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "cluster-inflight", Version: "1"}, nil).Connect(ctx,
		&mcp.StreamableClientTransport{Endpoint: lb + "/mcp", HTTPClient: &http.Client{Transport: bearerTransport{token: "key-a"}}, DisableStandaloneSSE: true},
		&mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatalf("session through the balancer: %v", err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

// sessionToolCall calls a tool on cs; a tool error is an error.
func sessionToolCall(ctx context.Context, cs *mcp.ClientSession, name string, args map[string]any) error {
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		return err
	}
	if res.IsError {
		return fmt.Errorf("tool error: %v", res.Content)
	}
	return nil
}
