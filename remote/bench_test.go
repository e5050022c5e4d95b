//go:build unix

package remote_test

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/remote"
	"github.com/agents-mcp/agents-mcp/router"
)

// relayBenchEverythingJS is server-everything's entry point, installed by
// scripts/e2e (npm ci). RELAY_BENCH_EVERYTHING overrides it.
const relayBenchEverythingJS = "../scripts/e2e/node_modules/@modelcontextprotocol/server-everything/dist/index.js"

// relayBenchConcurrency are the numbers of concurrent clients measured.
var relayBenchConcurrency = []int{1, 32}

// relayBenchClientProtocol is the protocol version the benchmark clients
// propose: 2025-11-25 by default, the version both upstreams settle on with a
// go-sdk client, so that direct and relayed calls speak the same protocol on
// the client's hop. RELAY_BENCH_CLIENT_PROTOCOL overrides it; "latest" lets
// the SDK propose its newest (2026-07-28, which agents-mcp serves
// statelessly while the upstreams here negotiate down).
func relayBenchClientProtocol() string {
	switch v := os.Getenv("RELAY_BENCH_CLIENT_PROTOCOL"); v {
	case "":
		return "2025-11-25"
	case "latest":
		return ""
	default:
		return v
	}
}

// BenchmarkRelay compares tools/call relayed through agents-mcp to an
// upstream with calling the same upstream directly, in the same
// run, interleaved per concurrency level:
//
//	BenchmarkRelay/<upstream>/direct/c<N>   N clients call <upstream>'s echo
//	BenchmarkRelay/<upstream>/relayed/c<N>  the same N clients call <upstream>__echo on agents-mcp
//
// Upstreams: "go" is a minimal go-sdk server with an echo tool; "everything"
// is @modelcontextprotocol/server-everything 2026.8.31 under Node (skipped
// when node or the package is missing). Everything runs over streamable HTTP
// on loopback: clients → agents-mcp (router.HTTPHandler behind a real
// listener) → remote.Pool's one upstream session → upstream.
//
// Every client is a go-sdk client with its own session and HTTP transport,
// reused for all calls. Besides ns/op (wall time / calls, so 1/throughput at
// c32) each run reports p50-µs and p99-µs over the per-call latencies of its
// last round, calls/s, cpu-µs/call and, for the Go upstream, upstream-dials
// (see relayBenchRun). docs/benchmarks.md has the results.
//
// Environment: RELAY_BENCH_CLIENT_PROTOCOL (see relayBenchClientProtocol),
// RELAY_BENCH_EVERYTHING (server-everything's dist/index.js),
// RELAY_BENCH_BINARY and RELAY_BENCH_BINARY_ENV (relay through a separate
// agents-mcp process; see relayBenchBinary).
func BenchmarkRelay(b *testing.B) {
	b.Run("go", func(b *testing.B) {
		url, dials := relayBenchGoUpstream(b)
		relayBenchCompare(b, "go", url, "echo", dials)
	})
	b.Run("everything", func(b *testing.B) {
		url := relayBenchEverythingUpstream(b)
		relayBenchCompare(b, "everything", url, "echo", nil)
	})
}

// relayBenchCompare builds the relay in front of upstreamURL, connects the
// clients (direct and relayed, max(relayBenchConcurrency) of each) once,
// and runs direct and relayed sub-benchmarks side by side. dials, if not
// nil, counts the TCP connections the upstream accepts.
func relayBenchCompare(b *testing.B, name, upstreamURL, tool string, dials *atomic.Int64) {
	var relayURL string
	var relayCPU func() time.Duration
	if bin := os.Getenv("RELAY_BENCH_BINARY"); bin != "" {
		relayURL, relayCPU = relayBenchBinary(b, bin, name, upstreamURL, name+"__"+tool)
	} else {
		relayURL = relayBenchRelay(b, name, upstreamURL)
	}
	maxC := slices.Max(relayBenchConcurrency)
	direct := relayBenchClients(b, upstreamURL, maxC)
	relayed := relayBenchClients(b, relayURL, maxC)
	args := map[string]any{"message": "hello"}
	// One call each before measuring: sessions, connections and the
	// relay's compiled schema are warm, as in a long-running deployment.
	for i := range maxC {
		relayBenchCall(b, direct[i], tool, args)
		relayBenchCall(b, relayed[i], name+"__"+tool, args)
	}
	for _, c := range relayBenchConcurrency {
		b.Run(fmt.Sprintf("direct/c%d", c), func(b *testing.B) {
			relayBenchRun(b, direct[:c], tool, args, dials, nil)
		})
		b.Run(fmt.Sprintf("relayed/c%d", c), func(b *testing.B) {
			relayBenchRun(b, relayed[:c], name+"__"+tool, args, dials, relayCPU)
		})
	}
}

// relayBenchRun makes b.N calls spread over the clients, each client one
// call at a time, and reports latency percentiles, throughput, the CPU time
// of this process per call (clients, relay and the Go upstream; not a Node
// upstream) and, with dials, the connections the upstream accepted during
// the run (0 when every hop reuses its connections). relayCPU, if not nil,
// is the CPU time of an agents-mcp process relaying the calls.
func relayBenchRun(b *testing.B, clients []*mcp.ClientSession, tool string, args map[string]any, dials *atomic.Int64, relayCPU func() time.Duration) {
	ctx := context.Background()
	lat := make([][]time.Duration, len(clients))
	var next atomic.Int64
	var wg sync.WaitGroup
	var failed atomic.Pointer[error]
	var dials0 int64
	if dials != nil {
		dials0 = dials.Load()
	}
	cpu0 := relayBenchCPU()
	var relayCPU0 time.Duration
	if relayCPU != nil {
		relayCPU0 = relayCPU()
	}
	b.ResetTimer()
	start := time.Now()
	for i, cs := range clients {
		lat[i] = make([]time.Duration, 0, b.N/len(clients)+1)
		wg.Go(func() {
			params := &mcp.CallToolParams{Name: tool, Arguments: args}
			for next.Add(1) <= int64(b.N) {
				t0 := time.Now()
				res, err := cs.CallTool(ctx, params)
				lat[i] = append(lat[i], time.Since(t0))
				if err == nil && res.IsError {
					err = fmt.Errorf("error result: %v", res.Content)
				}
				if err != nil {
					failed.CompareAndSwap(nil, &err)
					return
				}
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	cpu := relayBenchCPU() - cpu0
	if err := failed.Load(); err != nil {
		b.Fatalf("call %s: %v", tool, *err)
	}
	p50, p99 := relayBenchPercentiles(slices.Concat(lat...))
	b.ReportMetric(float64(p50.Nanoseconds())/1e3, "p50-µs")
	b.ReportMetric(float64(p99.Nanoseconds())/1e3, "p99-µs")
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "calls/s")
	b.ReportMetric(float64(cpu.Nanoseconds())/1e3/float64(b.N), "cpu-µs/call")
	if dials != nil {
		b.ReportMetric(float64(dials.Load()-dials0), "upstream-dials")
	}
	if relayCPU != nil {
		b.ReportMetric(float64((relayCPU()-relayCPU0).Nanoseconds())/1e3/float64(b.N), "relay-cpu-µs/call")
	}
}

// relayBenchCPU is the user+system CPU time this process has used.
func relayBenchCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// relayBenchPercentiles returns the 50th and 99th percentiles (nearest
// rank) of d, which it sorts.
func relayBenchPercentiles(d []time.Duration) (p50, p99 time.Duration) {
	if len(d) == 0 {
		return 0, 0
	}
	slices.Sort(d)
	rank := func(p float64) time.Duration {
		i := int(p*float64(len(d))+0.999999) - 1 // ceil(p·n) − 1
		return d[min(max(i, 0), len(d)-1)]
	}
	return rank(0.50), rank(0.99)
}

func TestRelayBenchPercentiles(t *testing.T) {
	var d []time.Duration
	for i := 100; i >= 1; i-- {
		d = append(d, time.Duration(i))
	}
	if p50, p99 := relayBenchPercentiles(d); p50 != 50 || p99 != 99 {
		t.Errorf("1..100: p50, p99 = %d, %d; want 50, 99", p50, p99)
	}
	if p50, p99 := relayBenchPercentiles([]time.Duration{7}); p50 != 7 || p99 != 7 {
		t.Errorf("one sample: p50, p99 = %d, %d; want 7, 7", p50, p99)
	}
	if p50, p99 := relayBenchPercentiles(nil); p50 != 0 || p99 != 0 {
		t.Errorf("no samples: p50, p99 = %d, %d; want 0, 0", p50, p99)
	}
}

// relayBenchCall makes one call and fails the benchmark if it does not
// succeed.
func relayBenchCall(b *testing.B, cs *mcp.ClientSession, tool string, args map[string]any) {
	b.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args})
	if err == nil && res.IsError {
		err = fmt.Errorf("error result: %v", res.Content)
	}
	if err != nil {
		b.Fatalf("warm-up call of %s: %v", tool, err)
	}
}

// relayBenchClients connects n go-sdk clients to endpoint, each with its own
// HTTP transport (like n independent client processes).
func relayBenchClients(b *testing.B, endpoint string, n int) []*mcp.ClientSession {
	ctx := context.Background()
	out := make([]*mcp.ClientSession, n)
	for i := range out {
		hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 8, IdleConnTimeout: time.Minute}}
		c := mcp.NewClient(&mcp.Implementation{Name: "relay-bench", Version: "1"}, nil)
		cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: endpoint, HTTPClient: hc}, &mcp.ClientSessionOptions{ProtocolVersion: relayBenchClientProtocol()})
		if err != nil {
			b.Fatalf("connect client %d to %s: %v", i, endpoint, err)
		}
		b.Cleanup(func() {
			_ = cs.Close()
			hc.CloseIdleConnections()
		})
		out[i] = cs
	}
	return out
}

// relayBenchRelay serves agents-mcp (router + remote pool, with upstream
// `name` at upstreamURL) on a loopback listener and returns its /mcp URL.
func relayBenchRelay(b *testing.B, name, upstreamURL string) string {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	r := router.New(router.Options{})
	pool := remote.NewPool(remote.Options{Registry: r})
	if err := pool.AddFromConfig(ctx, agentsmcp.UpstreamConfig{Name: name, Transport: remote.TransportStreamable, URL: upstreamURL}); err != nil {
		b.Fatal(err)
	}
	if st, _ := pool.Status(name); st.State != remote.StateReady {
		b.Fatalf("upstream %s is %s: %s (last error: %s)", name, st.State, st.Reason, st.LastError)
	}
	h := r.HTTPHandler(router.HTTPOptions{})
	srv := httptest.NewServer(h)
	b.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		h.Close()
		r.CloseSessions(ctx)
		srv.Close()
		_ = pool.Close(ctx)
	})
	return srv.URL + "/mcp"
}

// relayBenchGoUpstream serves a minimal go-sdk MCP server with an echo tool
// (same contract as server-everything's: {"message": string} → "Echo: …")
// over streamable HTTP on loopback and returns its endpoint and a count of
// the connections it has accepted.
func relayBenchGoUpstream(b *testing.B) (string, *atomic.Int64) {
	type echoArgs struct {
		Message string `json:"message" jsonschema:"message to echo"`
	}
	s := mcp.NewServer(&mcp.Implementation{Name: "go-echo", Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "Echoes back the input string"},
		func(_ context.Context, _ *mcp.CallToolRequest, in echoArgs) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "Echo: " + in.Message}}}, nil, nil
		})
	dials := new(atomic.Int64)
	srv := httptest.NewUnstartedServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
	srv.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			dials.Add(1)
		}
	}
	srv.Start()
	b.Cleanup(srv.Close)
	return srv.URL + "/mcp", dials
}

// relayBenchEverythingUpstream starts server-everything in streamable HTTP
// mode on a free port and returns its endpoint; it skips b when node or the
// package is missing.
func relayBenchEverythingUpstream(b *testing.B) string {
	node, err := exec.LookPath("node")
	if err != nil {
		b.Skip("node is not installed; skipping the server-everything upstream")
	}
	js := os.Getenv("RELAY_BENCH_EVERYTHING")
	if js == "" {
		js = relayBenchEverythingJS
	}
	js, _ = filepath.Abs(js)
	if _, err := os.Stat(js); err != nil {
		b.Skipf("server-everything is not installed at %s (run `npm ci` in scripts/e2e, or set RELAY_BENCH_EVERYTHING); skipping", js)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	_ = l.Close()

	cmd := exec.Command(node, js, "streamableHttp")
	cmd.Env = append(os.Environ(), fmt.Sprintf("PORT=%d", port))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr // stdout (a line per request) is discarded
	if err := cmd.Start(); err != nil {
		b.Fatalf("start server-everything: %v", err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	b.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-exited
	})
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	deadline := time.Now().Add(20 * time.Second)
	for {
		if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
			_ = c.Close()
			break
		}
		select {
		case <-exited:
			b.Fatalf("server-everything exited: %s", stderr.String())
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			<-exited
			b.Fatalf("server-everything did not listen on %s within 20 s: %s", addr, stderr.String())
		}
	}
	return "http://" + addr + "/mcp"
}

// relayBenchBinary runs the relay as its own process, the built agents-mcp
// binary (RELAY_BENCH_BINARY, e.g. bin/agents-mcp from `make build`), with
// the upstream in a config file and RELAY_BENCH_BINARY_ENV (space-separated
// VAR=value, e.g. "GOGC=400") added to its environment, as it runs in
// production (its own GC, the call recorder, the stores). It returns the
// relay's /mcp URL and a reader of the relay process's CPU time.
func relayBenchBinary(b *testing.B, bin, name, upstreamURL, tool string) (string, func() time.Duration) {
	bin, _ = filepath.Abs(bin)
	dir := b.TempDir()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	addr := l.Addr().String()
	_ = l.Close()
	config := fmt.Sprintf("upstreams:\n  - name: %s\n    transport: streamable\n    url: %s\n", name, upstreamURL)
	if err := os.WriteFile(filepath.Join(dir, "config.yaml"), []byte(config), 0o600); err != nil {
		b.Fatal(err)
	}
	cmd := exec.Command(bin, "serve", "--addr", addr, "--data-dir", filepath.Join(dir, "data"),
		"--config", filepath.Join(dir, "config.yaml"), "--log-level", "warn")
	cmd.Env = append(os.Environ(), strings.Fields(os.Getenv("RELAY_BENCH_BINARY_ENV"))...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		b.Fatalf("start %s: %v", bin, err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	b.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
	})
	endpoint := "http://" + addr + "/mcp"
	deadline := time.Now().Add(60 * time.Second)
	for {
		if cs, err := mcp.NewClient(&mcp.Implementation{Name: "relay-bench", Version: "1"}, nil).Connect(context.Background(),
			&mcp.StreamableClientTransport{Endpoint: endpoint, DisableStandaloneSSE: true}, nil); err == nil {
			res, err := cs.ListTools(context.Background(), nil)
			_ = cs.Close()
			if err == nil && slices.ContainsFunc(res.Tools, func(t *mcp.Tool) bool { return t.Name == tool }) {
				break
			}
		}
		select {
		case <-exited:
			b.Fatalf("%s exited: %s", bin, stderr.String())
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			<-exited
			b.Fatalf("%s did not offer %s within 60 s: %s", bin, tool, stderr.String())
		}
	}
	pid := cmd.Process.Pid
	return endpoint, func() time.Duration { return relayBenchProcCPU(pid) }
}

// relayBenchProcCPU is the user+system CPU time of process pid, from
// /proc/<pid>/stat (clock ticks of 10 ms), or 0 if it cannot be read.
func relayBenchProcCPU(pid int) time.Duration {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// The command name (field 2) may contain spaces; fields after it are
	// space-separated: utime and stime are fields 14 and 15.
	rest := data[bytes.LastIndexByte(data, ')')+2:]
	f := strings.Fields(string(rest))
	if len(f) < 13 {
		return 0
	}
	utime, _ := strconv.ParseInt(f[11], 10, 64)
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(utime+stime) * 10 * time.Millisecond
}
