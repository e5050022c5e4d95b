package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agents-mcp/agents-mcp/router"
)

// countingUpstream is a real go-sdk MCP server over streamable HTTP whose
// tools count the calls that reach it: the quotas are checked where the
// calls land, not in the gateway's own bookkeeping.
type countingUpstream struct {
	url   string
	calls map[string]*atomic.Int64
}

func startCountingUpstream(t *testing.T, tools ...string) *countingUpstream {
	t.Helper()
	up := &countingUpstream{calls: map[string]*atomic.Int64{}}
	srv := mcp.NewServer(&mcp.Implementation{Name: "counting-upstream", Version: "1"}, nil)
	for _, name := range tools {
		n := &atomic.Int64{}
		up.calls[name] = n
		mcp.AddTool(srv, &mcp.Tool{Name: name, Description: "Counts its calls and answers how many it has had.",
			Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
			func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
				c := n.Add(1)
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: strconv.FormatInt(c, 10)}}}, nil, nil
			})
	}
	ts := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	t.Cleanup(ts.Close)
	up.url = ts.URL
	return up
}

// refusalRecorder adds a bearer key to each request and keeps the status
// and Retry-After of the last response that was not a success.
type refusalRecorder struct {
	key        string
	mu         sync.Mutex
	status     int
	retryAfter string
}

func (r *refusalRecorder) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	req.Header.Set("Authorization", "Bearer "+r.key)
	res, err := http.DefaultTransport.RoundTrip(req)
	if err == nil && res.StatusCode >= 300 {
		r.mu.Lock()
		r.status, r.retryAfter = res.StatusCode, res.Header.Get("Retry-After")
		r.mu.Unlock()
	}
	return res, err
}

func (r *refusalRecorder) last() (int, string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.status, r.retryAfter
}

// connectRecorded connects to the MCP endpoint url ("…/mcp", "…/mcp/<name>").
func connectRecorded(t *testing.T, url string, rec *refusalRecorder) *mcp.ClientSession {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 15*time.Second)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "quota-test", Version: "1"}, nil).
		Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: rec}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func quotaCall(ctx context.Context, cs *mcp.ClientSession, tool string) error {
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: map[string]any{}})
	if err == nil && res.IsError {
		return fmt.Errorf("%s: error result: %v", tool, res.Content)
	}
	return err
}

// waitForUpstreamTool waits until base lists tool (the upstream connected).
func waitForUpstreamTool(t *testing.T, cs *mcp.ClientSession, tool string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		res, err := cs.ListTools(t.Context(), nil)
		if err == nil {
			for _, tl := range res.Tools {
				if tl.Name == tool {
					return
				}
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("%s never listed", tool)
}

const callQuotaConfig = `upstreams:
  - name: up
    transport: streamable
    url: %s/mcp
auth:
  api_keys:
    - name: alice
      key: alice-quota-key-0001
      scopes: [mcp]
      call_quotas:
        - {upstream: up, tool: echo, limit: 3, window: 1h}
        - {upstream: up, tool: tick, limit: 1, window: 3s}
    - name: bob
      key: bob-quota-key-0002
      scopes: [mcp]
      call_quotas:
        - {upstream: up, tool: echo, limit: 3, window: 1h}
virtual_servers:
  - name: metered
    tools: [{upstream: up}]
    call_quotas: [{upstream: up, tool: free, limit: 1, window: 1h}]
`

// TestCallQuotaSharedByReplicas runs two `serve` processes on one FerretDB
// database with a key whose quota admits 3 calls of up__echo per hour, and
// calls through both in turn: the fourth call, whichever replica it
// reaches, is answered HTTP 429 with Retry-After and the JSON-RPC
// rate-limit error, and the upstream saw exactly three calls. Another key
// has its own counter; a tool outside the quota is not counted; a quota of
// one call per 3 s admits a call again once its window has ended.
func TestCallQuotaSharedByReplicas(t *testing.T) {
	if testing.Short() {
		t.Skip("starts FerretDB and two server processes")
	}
	mongoURI := startReplicaFerretDB(t)
	up := startCountingUpstream(t, "echo", "tick", "free")
	configFile := filepath.Join(t.TempDir(), "agents-mcp.yaml")
	if err := os.WriteFile(configFile, fmt.Appendf(nil, callQuotaConfig, up.url), 0o600); err != nil {
		t.Fatal(err)
	}
	env := []string{"MONGODB_URI=" + mongoURI, "MONGODB_DATABASE=" + fmt.Sprintf("quota_%d", time.Now().UnixNano()),
		"AGENTS_MCP_CONFIG=" + configFile, "AGENTS_MCP_LLM=builtin"}
	a := startServerProcess(t, t.TempDir(), env...)
	b := startServerProcess(t, t.TempDir(), env...)

	aliceRec := map[string]*refusalRecorder{"a": {key: "alice-quota-key-0001"}, "b": {key: "alice-quota-key-0001"}}
	alice := map[string]*mcp.ClientSession{"a": connectRecorded(t, a.base+"/mcp", aliceRec["a"]), "b": connectRecorded(t, b.base+"/mcp", aliceRec["b"])}
	for _, cs := range alice {
		waitForUpstreamTool(t, cs, "up__echo")
	}
	ctx := t.Context()
	for i, replica := range []string{"a", "b", "a"} {
		if err := quotaCall(ctx, alice[replica], "up__echo"); err != nil {
			t.Fatalf("call %d through %s: %v", i+1, replica, err)
		}
	}
	err := quotaCall(ctx, alice["b"], "up__echo")
	if err == nil {
		t.Fatal("the fourth call of up__echo was admitted; the quota is 3 per hour across replicas")
	}
	status, retryAfter := aliceRec["b"].last()
	if status != http.StatusTooManyRequests {
		t.Errorf("fourth call: HTTP %d, want 429 (err %v)", status, err)
	}
	if secs, perr := strconv.Atoi(retryAfter); perr != nil || secs < 1 || secs > 3600 {
		t.Errorf("fourth call: Retry-After %q, want whole seconds within the hour", retryAfter)
	}
	if got := up.calls["echo"].Load(); got != 3 {
		t.Errorf("the upstream received %d calls of echo, want 3", got)
	}
	// The other replica refuses too, and a tool outside the quota is free.
	if err := quotaCall(ctx, alice["a"], "up__echo"); err == nil {
		t.Error("replica a admitted a fifth call")
	}
	for range 4 {
		if err := quotaCall(ctx, alice["a"], "up__free"); err != nil {
			t.Fatalf("up__free is in no quota: %v", err)
		}
	}
	// Bob's counter is his own.
	bob := connectRecorded(t, b.base+"/mcp", &refusalRecorder{key: "bob-quota-key-0002"})
	if err := quotaCall(ctx, bob, "up__echo"); err != nil {
		t.Fatalf("bob's first call: %v", err)
	}
	if got := up.calls["echo"].Load(); got != 4 {
		t.Errorf("the upstream received %d calls of echo after bob's, want 4", got)
	}

	// A virtual server's quota applies to the calls made through it, on
	// top of the key's, with a counter of its own.
	bobRec := &refusalRecorder{key: "bob-quota-key-0002"}
	metered := connectRecorded(t, b.base+"/mcp/metered", bobRec)
	freeBefore := up.calls["free"].Load()
	if err := quotaCall(ctx, metered, "up__free"); err != nil {
		t.Fatalf("first call through the virtual server: %v", err)
	}
	if err := quotaCall(ctx, metered, "up__free"); err == nil {
		t.Error("a second call of up__free through the virtual server was admitted; its quota is 1")
	} else if status, _ := bobRec.last(); status != http.StatusTooManyRequests {
		t.Errorf("second call through the virtual server: HTTP %d, want 429", status)
	}
	if err := quotaCall(ctx, bob, "up__free"); err != nil {
		t.Errorf("up__free outside the virtual server: %v", err)
	}
	if got := up.calls["free"].Load() - freeBefore; got != 2 {
		t.Errorf("the upstream received %d calls of free, want 2", got)
	}

	// The window resets: one call of tick per 3 s. Start just after a
	// window begins, so that both calls fall in it.
	window := 3 * time.Second
	time.Sleep(time.Until(time.Now().Truncate(window).Add(window + 100*time.Millisecond)))
	if err := quotaCall(ctx, alice["a"], "up__tick"); err != nil {
		t.Fatalf("first tick: %v", err)
	}
	if err := quotaCall(ctx, alice["b"], "up__tick"); err == nil {
		t.Fatal("a second tick in the same 3 s window was admitted")
	}
	time.Sleep(time.Until(time.Now().Truncate(window).Add(window + 100*time.Millisecond)))
	if err := quotaCall(ctx, alice["b"], "up__tick"); err != nil {
		t.Fatalf("tick in the next window: %v", err)
	}
	if got := up.calls["tick"].Load(); got != 2 {
		t.Errorf("the upstream received %d calls of tick, want 2", got)
	}
}

// TestCallQuotaOverStdio: a stdio session (the key named by
// AGENTS_MCP_API_KEY) refused by its quota gets the JSON-RPC rate-limit
// error, with the wait in its data, and the upstream is not called.
func TestCallQuotaOverStdio(t *testing.T) {
	up := startCountingUpstream(t, "echo", "tick")
	configFile := filepath.Join(t.TempDir(), "agents-mcp.yaml")
	if err := os.WriteFile(configFile, fmt.Appendf(nil, callQuotaConfig, up.url), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$", "--", "stdio", "--data-dir", t.TempDir())
	cmd.Env = append(os.Environ(), childEnv+"=1", "AGENTS_MCP_LLM=builtin", "AGENTS_MCP_CONFIG="+configFile,
		"AGENTS_MCP_API_KEY=alice-quota-key-0001")
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "quota-stdio", Version: "1"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	waitForUpstreamTool(t, cs, "up__echo")
	for i := range 3 {
		if err := quotaCall(ctx, cs, "up__echo"); err != nil {
			t.Fatalf("call %d: %v", i+1, err)
		}
	}
	err = quotaCall(ctx, cs, "up__echo")
	var werr *jsonrpc.Error
	if !errors.As(err, &werr) || werr.Code != router.CodeRateLimited {
		t.Fatalf("fourth call: %v, want JSON-RPC error %d", err, router.CodeRateLimited)
	}
	if !containsAll(string(werr.Data), `"retryAfterMs":`, `"setting":"auth.api_keys[name=alice].call_quotas"`) {
		t.Errorf("error data %s lacks the wait or the setting", werr.Data)
	}
	if got := up.calls["echo"].Load(); got != 3 {
		t.Errorf("the upstream received %d calls, want 3", got)
	}
}

func containsAll(s string, parts ...string) bool {
	for _, p := range parts {
		if !strings.Contains(s, p) {
			return false
		}
	}
	return true
}
