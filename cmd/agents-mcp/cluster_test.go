package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	mgoclient "github.com/mark3labs/mcp-go/client"
	mgotransport "github.com/mark3labs/mcp-go/client/transport"
	mgo "github.com/mark3labs/mcp-go/mcp"
)

// clusterEnv runs TestClusterBehindHAProxy (make test-cluster); it
// takes a minute and needs Debian's haproxy.
const clusterEnv = "AGENTS_MCP_TEST_CLUSTER"

// clusterCall is one call a driver made through the load balancer.
type clusterCall struct {
	ID         string // sent in callIDHeader
	Start, End int64  // Unix milliseconds
	OK         bool
	Error      string
}

// TestClusterBehindHAProxy runs three `serve` replicas on one FerretDB
// with sessions.shared, behind HAProxy (round-robin, no affinity), and
// drives them for 60 s (AGENTS_MCP_CLUSTER_SECONDS) with a TypeScript SDK
// client and an mcp-go client (2025-11-25 stateful sessions) and
// 2026-07-28 stateless calls. Half-way through it kills one replica with
// SIGKILL, while slow calls of an upstream tool (it sleeps 5 s) are in
// flight on every replica: those on the killed replica must end with an
// error at the client soon after the kill, not hang, and those on the
// others must succeed. It checks that no call failed but those in flight at the kill,
// that every driver kept calling successfully after it (the sessions
// continue on the other replicas), that sessions were opened again on
// replicas other than the one that created them, and that a broken stream
// resumes with Last-Event-ID through the balancer.
func TestClusterBehindHAProxy(t *testing.T) {
	if os.Getenv(clusterEnv) != "1" {
		t.Skip("set " + clusterEnv + "=1 (make test-cluster): three replicas behind HAProxy for a minute")
	}
	t.Parallel() // beside TestRealClientsStayConnected: both mostly wait
	haproxy, err := exec.LookPath("haproxy")
	if err != nil {
		t.Fatal("haproxy is not installed (apt-get install -y haproxy)")
	}
	seconds := 60
	if s := os.Getenv("AGENTS_MCP_CLUSTER_SECONDS"); s != "" {
		if seconds, err = strconv.Atoi(s); err != nil {
			t.Fatal(err)
		}
	}
	slow := startSlowUpstream(t)
	reps := startSharedReplicas(t, 3, "AGENTS_MCP_CONFIG="+slow.configFile(t))
	upstreamSessions := slow.replicaSessions(t, reps)
	lb, lbLog := startHAProxy(t, haproxy, reps)
	ctx, cancel := context.WithTimeout(t.Context(), time.Duration(seconds+60)*time.Second)
	defer cancel()
	end := time.Now().Add(time.Duration(seconds) * time.Second)
	// The Go drivers call until end, and at least driveAfterKill past the
	// kill: on a loaded machine the slow calls can take long to set up.
	const driveAfterKill = 10 * time.Second
	var driveUntil atomic.Int64
	driveUntil.Store(end.UnixMilli())
	driving := func() bool { return time.Now().UnixMilli() < driveUntil.Load() }

	var wg sync.WaitGroup
	results := map[string][]clusterCall{}
	var mu sync.Mutex
	record := func(driver string, calls []clusterCall) {
		mu.Lock()
		defer mu.Unlock()
		results[driver] = calls
	}
	wg.Add(3)
	go func() { defer wg.Done(); record("mcp-go", driveMCPGo(ctx, t, lb, driving)) }()
	go func() { defer wg.Done(); record("stateless-2026", driveStateless(ctx, lb, driving)) }()
	go func() { defer wg.Done(); record("typescript-sdk", driveTypeScript(ctx, t, lb, seconds)) }()

	time.Sleep(time.Until(end.Add(-time.Duration(seconds) * time.Second / 2)))
	// Slow calls in flight on every replica at the kill: those on the
	// killed one must fail with an error soon after it (not hang until a
	// client timeout), the others succeed.
	const slowCalls, slowMs, inFlightBound = 12, 5000, 30 * time.Second
	var killed int64
	inFlight := slowCallsAcrossKill(t, slow, lb, upstreamSessions, slowCalls, slowMs, inFlightBound, func() {
		killed = time.Now().UnixMilli()
		driveUntil.Store(max(driveUntil.Load(), killed+driveAfterKill.Milliseconds()))
		_ = reps[0].cmd.Process.Kill()
		_ = reps[0].cmd.Wait()
	})
	t.Logf("killed replica 0 at %d", killed)
	wg.Wait()

	onVictim := 0
	for _, c := range inFlight {
		after := c.returned.UnixMilli() - killed
		switch {
		case c.replica == 0:
			onVictim++
			if c.err == nil {
				t.Errorf("slow call %s on the killed replica succeeded", c.tag)
			} else if after > 10_000 {
				t.Errorf("slow call %s on the killed replica failed only %d ms after the kill (a hang until a timeout): %v", c.tag, after, c.err)
			} else {
				t.Logf("slow call %s on the killed replica: error %d ms after the kill: %v", c.tag, after, c.err)
			}
		case c.replica > 0:
			if c.err != nil {
				t.Errorf("slow call %s on live replica %d failed: %v", c.tag, c.replica, c.err)
			}
		default:
			t.Errorf("slow call %s: no replica known to have served it (err %v)", c.tag, c.err)
		}
	}
	if onVictim == 0 {
		t.Errorf("none of the %d slow calls was in flight on the killed replica", slowCalls)
	}

	servedBy := callServers(lbLog.String())
	for driver, calls := range results {
		var ok, failed, inFlight, after, traced int
		for _, c := range calls {
			servers := servedBy[c.ID]
			if len(servers) > 0 {
				traced++
			}
			switch {
			case c.OK:
				ok++
				if c.Start > killed {
					after++
				}
			case c.End >= killed && slices.Contains(servers, "r0"):
				// Sent to the killed replica (HAProxy's log says so) and
				// not ended before the kill: it may fail, with an error.
				inFlight++
			case len(servers) == 0 && c.Start <= killed && c.End >= killed:
				// In flight at the kill, and not in HAProxy's log (it drops
				// lines when its stdout is not read fast enough): it may
				// have been on the killed replica.
				inFlight++
			case len(servers) == 0 && c.End >= killed && c.Start <= killed+killSettles && connectionLost(c.Error):
				// Sent just after the kill, not in HAProxy's log, and its
				// connection lost (EOF, reset): HAProxy, not yet aware that
				// the replica died, may have sent it on a connection to the
				// killed replica and closed the client's in turn (seen:
				// mcp-go, EOF 13 ms after the kill, under load).
				inFlight++
			default:
				failed++
				t.Errorf("%s: call %s, through %v, not on the killed replica, failed (%d..%d ms from the kill): %s",
					driver, c.ID, servers, c.Start-killed, c.End-killed, c.Error)
			}
		}
		t.Logf("%s: %d calls (%d in HAProxy's log), %d ok (%d after the kill), %d failed in flight on the killed replica (or unlogged and in flight at the kill), %d other failures",
			driver, len(calls), traced, ok, after, inFlight, failed)
		// HAProxy drops log lines when its stdout is not read fast enough,
		// which a loaded machine (make test runs this beside e2e) makes
		// likely; an unlogged call is judged by the kill time above. This
		// only checks that the attribution works at all.
		if traced < len(calls)/2 {
			t.Errorf("%s: HAProxy's log names the replica of only %d of %d calls", driver, traced, len(calls))
		}
		if after == 0 {
			t.Errorf("%s: no call succeeded after the kill", driver)
		}
	}
	reopened := 0
	for _, p := range reps {
		if strings.Contains(p.logs.String(), "opened a session of another replica") {
			reopened++
		}
	}
	if reopened < 2 {
		t.Errorf("sessions were opened again on %d replicas, want at least 2 (does the balancer keep affinity?)", reopened)
	}
	resumeThrough(t, lb, lb)
}

// startHAProxy runs haproxy in front of the replicas and returns its
// base URL and its log (see callServers): round-robin per request, no
// affinity, no reuse of server connections (a request never rides a
// connection to a dead replica), and a refused connection retried on
// another replica.
func startHAProxy(t *testing.T, haproxy string, reps []*serverProcess) (string, *syncBuffer) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	var servers strings.Builder
	for i, p := range reps {
		fmt.Fprintf(&servers, "  server r%d %s check inter 500ms fall 1 rise 2\n", i, strings.TrimPrefix(p.base, "http://"))
	}
	cfg := fmt.Sprintf(`global
  maxconn 2000
  log stdout format raw local0
defaults
  mode http
  log global
  timeout connect 2s
  timeout client 120s
  timeout server 120s
  retries 3
  option redispatch 1
  http-reuse never
frontend mcp
  bind %s
%s  default_backend replicas
backend replicas
  balance roundrobin
  option http-server-close
%s`, addr, haproxyCallLog, servers.String())
	path := filepath.Join(t.TempDir(), "haproxy.cfg")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(haproxy, "-f", path, "-db")
	logs := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = logs, logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("haproxy did not listen on %s: %s", addr, logs.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
	return "http://" + addr, logs
}

// driveMCPGo calls list_tasks through one mcp-go 2025-11-25 session
// every 100 ms while driving.
func driveMCPGo(ctx context.Context, t *testing.T, lb string, driving func() bool) []clusterCall {
	tr, err := mgotransport.NewStreamableHTTP(lb+"/mcp", mgotransport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer key-a"}),
		mgotransport.WithHTTPHeaderFunc(mcpGoCallHeaders),
		// Its own pool: the connections of other calls never serve it.
		mgotransport.WithHTTPBasicClient(&http.Client{Transport: &http.Transport{}}))
	if err != nil {
		t.Error(err)
		return nil
	}
	c := mgoclient.NewClient(tr, mgoclient.WithProtocolVersion("2025-11-25"))
	defer c.Close()
	if err := c.Start(ctx); err != nil {
		t.Error(err)
		return nil
	}
	if _, err := c.Initialize(ctx, mgo.InitializeRequest{Params: mgo.InitializeParams{
		ClientInfo: mgo.Implementation{Name: "cluster-mcp-go", Version: "1"},
	}}); err != nil {
		t.Errorf("mcp-go initialize: %v", err)
		return nil
	}
	var calls []clusterCall
	for driving() {
		start := time.Now().UnixMilli()
		id := newCallID("mcp-go")
		cctx, cancel := context.WithTimeout(withCallID(ctx, id), 10*time.Second)
		res, err := c.CallTool(cctx, mgo.CallToolRequest{Params: mgo.CallToolParams{Name: "list_tasks", Arguments: map[string]any{}}})
		cancel()
		call := clusterCall{ID: id, Start: start, End: time.Now().UnixMilli(), OK: err == nil && !res.IsError}
		if err != nil {
			call.Error = err.Error()
		} else if res.IsError {
			call.Error = fmt.Sprint(res.Content)
		}
		calls = append(calls, call)
		time.Sleep(100 * time.Millisecond)
	}
	return calls
}

// driveStateless makes 2026-07-28 calls (no session) every 100 ms
// while driving.
func driveStateless(ctx context.Context, lb string, driving func() bool) []clusterCall {
	var calls []clusterCall
	for driving() {
		start := time.Now().UnixMilli()
		id := newCallID("stateless")
		err := statelessCall(ctx, lb, id)
		call := clusterCall{ID: id, Start: start, End: time.Now().UnixMilli(), OK: err == nil}
		if err != nil {
			call.Error = err.Error()
		}
		calls = append(calls, call)
		time.Sleep(100 * time.Millisecond)
	}
	return calls
}

func statelessCall(ctx context.Context, lb, id string) error {
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": map[string]any{
		"name": "list_tasks", "arguments": map[string]any{},
		"_meta": map[string]any{
			"io.modelcontextprotocol/protocolVersion":    "2026-07-28",
			"io.modelcontextprotocol/clientCapabilities": map[string]any{},
			"io.modelcontextprotocol/clientInfo":         map[string]any{"name": "cluster-2026", "version": "1"},
		},
	}})
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(cctx, http.MethodPost, lb+"/mcp", strings.NewReader(string(body)))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", "tools/call")
	req.Header.Set("Mcp-Name", "list_tasks")
	req.Header.Set("Authorization", "Bearer key-a")
	req.Header.Set(callIDHeader, id)
	resp, err := unpooledClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(b), `"result"`) || strings.Contains(string(b), `"isError":true`) {
		return fmt.Errorf("HTTP %d: %.300s", resp.StatusCode, b)
	}
	return nil
}

// driveTypeScript runs the TypeScript SDK client of
// scripts/e2e/lib/cluster-client.mjs for seconds.
func driveTypeScript(ctx context.Context, t *testing.T, lb string, seconds int) []clusterCall {
	script, err := filepath.Abs("../../scripts/e2e/lib/cluster-client.mjs")
	if err != nil {
		t.Error(err)
		return nil
	}
	cmd := exec.CommandContext(ctx, "node", script, lb+"/mcp", "key-a", strconv.Itoa(seconds))
	var stderr syncBuffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Errorf("typescript client: %v\n%s", err, stderr.String())
		return nil
	}
	var res struct {
		Calls []struct {
			ID         string
			Start, End int64
			OK         bool
			Error      string
		}
	}
	if err := json.Unmarshal(out, &res); err != nil {
		t.Errorf("typescript client output: %v: %.500s", err, out)
		return nil
	}
	var calls []clusterCall
	for _, c := range res.Calls {
		calls = append(calls, clusterCall{ID: c.ID, Start: c.Start, End: c.End, OK: c.OK, Error: c.Error})
	}
	return calls
}

// killSettles is how long after the SIGKILL a call may still be sent to
// the killed replica: HAProxy learns of its death from a failed
// connection or its next health check.
const killSettles = 2000 // ms

// connectionLost reports whether a call's error is its connection lost
// under it (EOF, reset), as opposed to an answer.
func connectionLost(err string) bool {
	return strings.Contains(err, "EOF") || strings.Contains(err, "connection reset by peer")
}
