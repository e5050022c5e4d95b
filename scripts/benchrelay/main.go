// Command benchrelay is the separate-process relay benchmark
// (`make bench-relay`): tools/call of a trivial go-sdk echo upstream, direct
// vs relayed through `agents-mcp serve` (the binary `make build` builds,
// run as its own process on the embedded defaults), vs relayed through
// TBXark/mcp-proxy when its binary is given, and vs the floor (a Go HTTP
// reverse proxy that reads no JSON-RPC: floor.go), in interleaved rounds, at
// 1 and 32 clients, with the clients speaking streamable HTTP and legacy SSE.
//
// The clients run in this process, the upstream in a process of its own
// (this program with -serve-upstream), and each relay is a process of its
// own that reaches the upstream over streamable HTTP on loopback. Every client is a go-sdk client (protocol 2025-11-25) with its
// own session and HTTP transport, connected once and reused. A round runs
// every target for -time at one concurrency and transport, the targets in
// a rotated order; the report gives per target the median over rounds of
// calls/s, p50 and p99 latency, and for the relay processes CPU per call
// (from /proc) and, for agents-mcp, bytes allocated per call (from its
// /metrics, go_memstats_alloc_bytes_total), with ratios to direct from the
// same rounds.
//
// With -soak DURATION it runs the soak benchmark instead (`make
// bench-soak`, soak.go): one agents-mcp process under 32 clients for the
// whole duration, per minute against a control of direct calls, with the
// process's resources and the store's size.
//
// Usage:
//
//	go run ./scripts/benchrelay -bin bin/agents-mcp [-mcp-proxy /path/to/mcp-proxy] [-rounds 5] [-time 2s] [-o FILE]
//	go run ./scripts/benchrelay -bin bin/agents-mcp -soak 10m [-soak-max-entries 100000] [-soak-strict] [-o FILE]
//
// The environment variable MCP_PROXY_BINARY is the default of -mcp-proxy.
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
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
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func main() {
	bin := flag.String("bin", "bin/agents-mcp", "the agents-mcp binary (make build)")
	before := flag.String("bin-before", "", "another agents-mcp binary (an older build) measured in the same rounds as agents-mcp-before, or empty")
	proxy := flag.String("mcp-proxy", os.Getenv("MCP_PROXY_BINARY"), "a TBXark/mcp-proxy binary, or empty to leave it out")
	rounds := flag.Int("rounds", 5, "interleaved rounds")
	per := flag.Duration("time", 2*time.Second, "how long each target runs in each round")
	levels := flag.String("c", "1,32", "numbers of concurrent clients")
	transports := flag.String("transports", "streamable,sse", "client transports")
	env := flag.String("env", os.Getenv("RELAY_BENCH_BINARY_ENV"), "extra environment of the agents-mcp process (space-separated VAR=value)")
	var variants variantFlag
	flag.Var(&variants, "variant", "another agents-mcp process of -bin, measured in the same rounds under extra environment: NAME=VAR=value[,VAR=value...] (repeatable; e.g. gogc400=GOGC=400)")
	soak := flag.Duration("soak", 0, "run the soak benchmark for this long instead of the rounds (make bench-soak; see soak.go)")
	soakClients := flag.Int("soak-clients", 32, "soak: concurrent clients through agents-mcp")
	soakMax := flag.Int64("soak-max-entries", 100_000, "soak: audit.max_entries of the agents-mcp process (it must be reached within the soak)")
	soakMinute := flag.Duration("soak-minute", time.Minute, "soak: the reporting period (shorter only to try the harness)")
	soakSlice := flag.Duration("soak-slice", 10*time.Second, "soak: one relay window plus one control window; a minute holds minute/slice of them")
	soakControl := flag.Duration("soak-control", 2*time.Second, "soak: the control window (direct calls) of each slice")
	soakStrict := flag.Bool("soak-strict", false, "soak: exit 1 when the verdict fails (default: report it and exit 0)")
	outFile := flag.String("o", "", "also write the report to this file")
	floor := flag.Bool("floor", true, "also measure the floor: a process relaying HTTP byte for byte, reading no JSON-RPC (floor.go)")
	floorAddr := flag.String("serve-floor", "", "serve the floor relay on this address and wait (how the benchmark starts it)")
	floorUpstream := flag.String("floor-upstream", "", "the upstream base URL of -serve-floor")
	serveOnly := flag.Bool("serve-upstream", false, "serve the echo upstream, print its base URL, and wait (how the benchmark starts its upstream process)")
	flag.Parse()
	if *floorAddr != "" {
		log.Fatal(serveFloor(*floorAddr, *floorUpstream))
	}
	if *serveOnly {
		up, _, err := serveUpstream()
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(up)
		select {} // until the benchmark kills this process
	}
	out := io.Writer(os.Stdout)
	if *outFile != "" {
		f, err := os.Create(*outFile)
		if err != nil {
			log.Fatal(err)
		}
		// Writes go straight to the file (no buffer), so the exits
		// below lose nothing; the file closes with the process.
		out = io.MultiWriter(os.Stdout, f)
	}
	if *soak > 0 {
		ok, err := runSoak(soakConfig{bin: *bin, env: strings.Fields(*env), duration: *soak, minute: *soakMinute,
			slice: *soakSlice, control: *soakControl, clients: *soakClients, maxEntries: *soakMax, out: out})
		if err != nil {
			log.Fatal(err)
		}
		if !ok && *soakStrict {
			os.Exit(1)
		}
		return
	}
	var conc []int
	for f := range strings.SplitSeq(*levels, ",") {
		n, err := strconv.Atoi(f)
		if err != nil || n < 1 {
			log.Fatalf("-c: bad level %q", f)
		}
		conc = append(conc, n)
	}
	r, err := run(config{bin: *bin, before: *before, proxy: *proxy, floor: *floor, rounds: *rounds, per: *per, conc: conc,
		transports: strings.Split(*transports, ","), env: strings.Fields(*env), variants: variants, out: out})
	if err != nil {
		log.Fatal(err)
	}
	r.print(out)
}

type config struct {
	bin, before, proxy string
	floor              bool
	rounds             int
	per                time.Duration
	conc               []int
	transports         []string
	env                []string
	variants           []variant
	out                io.Writer
}

// variant is another agents-mcp process of the same binary with extra
// environment (GOGC, GOMEMLIMIT), so that runtime settings are compared in
// the same interleaved rounds.
type variant struct {
	name string
	env  []string
}

// variantFlag collects -variant NAME=VAR=value[,VAR=value...].
type variantFlag []variant

func (v *variantFlag) String() string { return fmt.Sprint(*v) }

func (v *variantFlag) Set(s string) error {
	name, env, ok := strings.Cut(s, "=")
	if !ok || name == "" || env == "" {
		return fmt.Errorf("want NAME=VAR=value[,VAR=value...], got %q", s)
	}
	vr := variant{name: "agents-mcp-" + name}
	for e := range strings.SplitSeq(env, ",") {
		if k, _, ok := strings.Cut(e, "="); !ok || k == "" {
			return fmt.Errorf("variant %s: want VAR=value, got %q", name, e)
		}
		vr.env = append(vr.env, e)
	}
	*v = append(*v, vr)
	return nil
}

// target is one way of calling echo: its endpoints per client transport,
// the tool's name there, and, for a relay, its process.
type target struct {
	name      string
	endpoints map[string]string // client transport → endpoint
	tool      string
	proc      *process // nil for direct
}

// sample is one target's run in one round.
type sample struct {
	callsPerSec   float64
	p50, p99      time.Duration
	cpuPerCall    time.Duration // the relay process's; 0 for direct
	bytesPerCall  float64       // agents-mcp's; 0 when unknown
	calls         int
	elapsed       time.Duration
	latencies     []time.Duration // every call's, sorted
	failed        error
	roundPosition int
}

type key struct {
	transport string
	c         int
	target    string
}

type report struct {
	cfg     config
	targets []string
	samples map[key][]sample
	peakRSS map[string]int64 // relay process → peak resident set, bytes; 0 when unknown
}

func run(cfg config) (*report, error) {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "benchrelay")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)

	up, stopUp, err := startUpstream()
	if err != nil {
		return nil, err
	}
	defer stopUp()
	targets := []*target{{name: "direct", tool: "echo", endpoints: map[string]string{"streamable": up + "/mcp", "sse": up + "/sse"}}}

	agents, err := startAgents("agents-mcp", cfg.bin, cfg.env, filepath.Join(dir, "after"), up+"/mcp")
	if err != nil {
		return nil, err
	}
	defer agents.proc.stop()
	targets = append(targets, agents)
	if cfg.before != "" {
		old, err := startAgents("agents-mcp-before", cfg.before, cfg.env, filepath.Join(dir, "before"), up+"/mcp")
		if err != nil {
			return nil, err
		}
		defer old.proc.stop()
		targets = append(targets, old)
	}
	for _, v := range cfg.variants {
		t, err := startAgents(v.name, cfg.bin, append(slices.Clone(cfg.env), v.env...), filepath.Join(dir, v.name), up+"/mcp")
		if err != nil {
			return nil, err
		}
		defer t.proc.stop()
		targets = append(targets, t)
	}
	if cfg.floor {
		t, err := startFloor(up)
		if err != nil {
			return nil, err
		}
		defer t.proc.stop()
		targets = append(targets, t)
	}
	if cfg.proxy != "" {
		px, err := startProxy(cfg, dir, up+"/mcp")
		if err != nil {
			return nil, err
		}
		for _, p := range px {
			defer p.stop()
		}
		targets = append(targets, &target{name: "mcp-proxy", tool: "echo", proc: px[0],
			endpoints: map[string]string{"streamable": px[0].url, "sse": px[1].url}})
		// CPU is read from the process that serves the transport measured.
		targets[len(targets)-1].proc.sibling = px[1]
	}

	maxC := slices.Max(cfg.conc)
	clients := map[string]map[string][]*mcp.ClientSession{} // target → transport → clients
	for _, t := range targets {
		clients[t.name] = map[string][]*mcp.ClientSession{}
		for _, tr := range cfg.transports {
			cs, err := connect(ctx, tr, t.endpoints[tr], maxC)
			if err != nil {
				return nil, fmt.Errorf("%s over %s: %w", t.name, tr, err)
			}
			defer func() {
				for _, c := range cs {
					_ = c.Close()
				}
			}()
			for _, c := range cs { // warm: sessions, connections, compiled schemas
				if err := callOnce(ctx, c, t.tool); err != nil {
					return nil, fmt.Errorf("warm-up call to %s over %s: %w", t.name, tr, err)
				}
			}
			clients[t.name][tr] = cs
		}
	}

	rep := &report{cfg: cfg, samples: map[key][]sample{}}
	for _, t := range targets {
		rep.targets = append(rep.targets, t.name)
	}
	for round := range cfg.rounds {
		for _, tr := range cfg.transports {
			for _, c := range cfg.conc {
				for i := range targets {
					t := targets[(i+round)%len(targets)] // rotate who goes first
					s := measure(ctx, t, tr, clients[t.name][tr][:c], cfg.per)
					s.roundPosition = i
					if s.failed != nil {
						return nil, fmt.Errorf("round %d, %s over %s at c=%d: %w", round+1, t.name, tr, c, s.failed)
					}
					k := key{tr, c, t.name}
					rep.samples[k] = append(rep.samples[k], s)
					fmt.Fprintf(cfg.out, "round %d %-10s %-10s c=%-2d %8.0f calls/s p50 %6.0f µs cpu %5.0f µs/call %7.0f B/call\n",
						round+1, tr, t.name, c, s.callsPerSec, us(s.p50), us(s.cpuPerCall), s.bytesPerCall)
				}
			}
		}
	}
	rep.peakRSS = map[string]int64{}
	for _, t := range targets {
		if t.proc != nil {
			rep.peakRSS[t.name] = t.proc.peakRSS()
		}
	}
	return rep, nil
}

func us(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e3 }

// measure runs clients against t for d and returns what it saw.
func measure(ctx context.Context, t *target, transport string, clients []*mcp.ClientSession, d time.Duration) sample {
	proc := t.proc
	if proc != nil && transport == "sse" && proc.sibling != nil {
		proc = proc.sibling
	}
	var cpu0 time.Duration
	var alloc0 float64
	if proc != nil {
		cpu0 = proc.cpu()
		alloc0 = proc.allocated()
	}
	lat := make([][]time.Duration, len(clients))
	var failed atomic.Pointer[error]
	var wg sync.WaitGroup
	deadline := time.Now().Add(d)
	start := time.Now()
	for i, cs := range clients {
		wg.Go(func() {
			params := &mcp.CallToolParams{Name: t.tool, Arguments: map[string]any{"message": "hello"}}
			for time.Now().Before(deadline) {
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
	all := slices.Concat(lat...)
	s := sample{calls: len(all), elapsed: elapsed, latencies: all, callsPerSec: float64(len(all)) / elapsed.Seconds()}
	if e := failed.Load(); e != nil {
		s.failed = *e
		return s
	}
	s.p50, s.p99 = percentiles(all)
	if proc != nil && len(all) > 0 {
		s.cpuPerCall = (proc.cpu() - cpu0) / time.Duration(len(all))
		if a := proc.allocated(); a > 0 {
			s.bytesPerCall = (a - alloc0) / float64(len(all))
		}
	}
	return s
}

// percentiles returns the 50th and 99th percentiles (nearest rank) of d,
// which it sorts.
func percentiles(d []time.Duration) (p50, p99 time.Duration) {
	if len(d) == 0 {
		return 0, 0
	}
	slices.Sort(d)
	rank := func(p float64) time.Duration {
		i := int(p*float64(len(d))+0.999999) - 1
		return d[min(max(i, 0), len(d)-1)]
	}
	return rank(0.50), rank(0.99)
}

func callOnce(ctx context.Context, cs *mcp.ClientSession, tool string) error {
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: map[string]any{"message": "hello"}})
	if err == nil && res.IsError {
		err = fmt.Errorf("error result: %v", res.Content)
	}
	return err
}

// connect opens n go-sdk client sessions to endpoint, each with its own
// HTTP transport, at protocol 2025-11-25 (which the upstream and both
// relays speak, so that every hop speaks the same protocol).
func connect(ctx context.Context, transport, endpoint string, n int) ([]*mcp.ClientSession, error) {
	out := make([]*mcp.ClientSession, 0, n)
	for range n {
		hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 8, IdleConnTimeout: time.Minute}}
		var t mcp.Transport = &mcp.StreamableClientTransport{Endpoint: endpoint, HTTPClient: hc}
		if transport == "sse" {
			t = &mcp.SSEClientTransport{Endpoint: endpoint, HTTPClient: hc}
		}
		c := mcp.NewClient(&mcp.Implementation{Name: "benchrelay", Version: "1"}, nil)
		cs, err := c.Connect(ctx, t, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
		if err != nil {
			return nil, err
		}
		out = append(out, cs)
	}
	return out, nil
}

// serveUpstream serves a go-sdk echo tool ({"message": string} → "Echo:
// …") over streamable HTTP (/mcp) and SSE (/sse) on loopback.
func serveUpstream() (string, func(), error) {
	type echoArgs struct {
		Message string `json:"message" jsonschema:"message to echo"`
	}
	s := mcp.NewServer(&mcp.Implementation{Name: "go-echo", Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "Echoes back the input string"},
		func(_ context.Context, _ *mcp.CallToolRequest, in echoArgs) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "Echo: " + in.Message}}}, nil, nil
		})
	mux := http.NewServeMux()
	mux.Handle("/mcp", mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
	mux.Handle("/sse", mcp.NewSSEHandler(func(*http.Request) *mcp.Server { return s }, nil))
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	srv := &http.Server{Handler: mux}
	go func() { _ = srv.Serve(l) }()
	return "http://" + l.Addr().String(), func() { _ = srv.Close() }, nil
}

// startUpstream runs the echo upstream as a process of its own (this
// program with -serve-upstream), so that a direct call crosses one process
// boundary and a relayed call two, as in a deployment, rather than the
// direct call staying inside the benchmark's process.
func startUpstream() (string, func(), error) {
	self, err := os.Executable()
	if err != nil {
		return "", nil, err
	}
	cmd := exec.Command(self, "-serve-upstream")
	out, err := cmd.StdoutPipe()
	if err != nil {
		return "", nil, err
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		return "", nil, err
	}
	stop := func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		stop()
		return "", nil, fmt.Errorf("the upstream process printed no address: %v", err)
	}
	return strings.TrimSpace(line), stop, nil
}

// process is a relay process.
type process struct {
	cmd     *exec.Cmd
	url     string // its MCP endpoint
	metrics string // its Prometheus endpoint, or ""
	exited  chan struct{}
	stderr  *bytes.Buffer
	sibling *process // mcp-proxy: the process serving SSE
}

func freeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

func start(name string, args, env []string) (*process, error) {
	cmd := exec.Command(name, args...)
	cmd.Env = append(os.Environ(), env...)
	p := &process{cmd: cmd, exited: make(chan struct{}), stderr: &bytes.Buffer{}}
	cmd.Stderr, cmd.Stdout = p.stderr, io.Discard
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	go func() { _ = cmd.Wait(); close(p.exited) }()
	return p, nil
}

func (p *process) stop() {
	_ = p.cmd.Process.Signal(os.Interrupt)
	select {
	case <-p.exited:
	case <-time.After(10 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.exited
	}
}

// waitTool waits until the process offers tool over streamable HTTP or
// SSE.
func (p *process) waitTool(transport, tool string) error {
	deadline := time.Now().Add(60 * time.Second)
	for {
		cs, err := connect(context.Background(), transport, p.url, 1)
		if err == nil {
			res, err := cs[0].ListTools(context.Background(), nil)
			_ = cs[0].Close()
			if err == nil && slices.ContainsFunc(res.Tools, func(t *mcp.Tool) bool { return t.Name == tool }) {
				return nil
			}
		}
		select {
		case <-p.exited:
			return fmt.Errorf("%s exited: %s", p.cmd.Path, p.stderr.String())
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s did not offer %s within 60 s: %s", p.cmd.Path, tool, p.stderr.String())
		}
	}
}

// peakRSS is the process's peak resident set size (VmHWM in
// /proc/PID/status) in bytes, or 0. It covers the whole run, warm-up included.
func (p *process) peakRSS() int64 {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", p.cmd.Process.Pid))
	if err != nil {
		return 0
	}
	return parseHWM(string(data))
}

// parseHWM reads the VmHWM line (in kB) of a /proc/PID/status text, or 0.
func parseHWM(status string) int64 { return parseStatusKB(status, "VmHWM") }

// parseStatusKB reads the field (VmHWM, VmRSS: a size in kB) of a
// /proc/PID/status text in bytes, or 0.
func parseStatusKB(status, field string) int64 {
	for line := range strings.SplitSeq(status, "\n") {
		if rest, ok := strings.CutPrefix(line, field+":"); ok {
			f := strings.Fields(rest)
			if len(f) == 2 && f[1] == "kB" {
				if n, err := strconv.ParseInt(f[0], 10, 64); err == nil {
					return n * 1024
				}
			}
		}
	}
	return 0
}

// cpu is the user+system CPU time of the process, from /proc (10 ms
// ticks), or 0.
func (p *process) cpu() time.Duration {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p.cmd.Process.Pid))
	if err != nil {
		return 0
	}
	rest := data[bytes.LastIndexByte(data, ')')+2:]
	f := strings.Fields(string(rest))
	if len(f) < 13 {
		return 0
	}
	utime, _ := strconv.ParseInt(f[11], 10, 64)
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(utime+stime) * 10 * time.Millisecond
}

// allocated is go_memstats_alloc_bytes_total from the process's /metrics,
// or 0.
func (p *process) allocated() float64 {
	return p.scrape()["go_memstats_alloc_bytes_total"]
}

// scrape reads the series without labels from the process's /metrics
// (name → value); nil when it has none or cannot be read.
func (p *process) scrape() map[string]float64 {
	if p.metrics == "" {
		return nil
	}
	resp, err := http.Get(p.metrics)
	if err != nil {
		return nil
	}
	defer resp.Body.Close()
	return parseMetrics(resp.Body)
}

// parseMetrics reads the unlabelled series of a Prometheus text exposition.
func parseMetrics(r io.Reader) map[string]float64 {
	out := map[string]float64{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == '#' || strings.ContainsRune(line, '{') {
			continue
		}
		name, v, ok := strings.Cut(line, " ")
		if !ok {
			continue
		}
		if f, err := strconv.ParseFloat(strings.TrimSpace(v), 64); err == nil {
			out[name] = f
		}
	}
	return out
}

// startAgents runs `agents-mcp serve` with the upstream in its config.
func startAgents(name, bin string, env []string, dir, upstream string) (*target, error) {
	bin, _ = filepath.Abs(bin)
	addr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	conf := filepath.Join(dir, "agents.yaml")
	if err := os.WriteFile(conf, fmt.Appendf(nil, "upstreams:\n  - name: go\n    transport: streamable\n    url: %s\n", upstream), 0o600); err != nil {
		return nil, err
	}
	p, err := start(bin, []string{"serve", "--addr", addr, "--data-dir", filepath.Join(dir, "data"), "--config", conf, "--log-level", "warn"}, env)
	if err != nil {
		return nil, err
	}
	p.url, p.metrics = "http://"+addr+"/mcp", "http://"+addr+"/metrics"
	if err := p.waitTool("streamable", "go__echo"); err != nil {
		p.stop()
		return nil, err
	}
	return &target{name: name, tool: "go__echo", proc: p,
		endpoints: map[string]string{"streamable": "http://" + addr + "/mcp", "sse": "http://" + addr + "/sse"}}, nil
}

// startProxy runs two mcp-proxy processes, one serving streamable HTTP and
// one SSE (it serves one type per process), each relaying the upstream as
// server "go".
func startProxy(cfg config, dir, upstream string) ([]*process, error) {
	var out []*process
	for _, typ := range []string{"streamable-http", "sse"} {
		addr, err := freeAddr()
		if err != nil {
			return nil, err
		}
		conf := map[string]any{
			"mcpProxy": map[string]any{"baseURL": "http://" + addr, "addr": addr, "name": "mcp-proxy", "version": "1", "type": typ,
				"options": map[string]any{"logEnabled": false}},
			"mcpServers": map[string]any{"go": map[string]any{"transportType": "streamable-http", "url": upstream}},
		}
		data, _ := json.Marshal(conf)
		path := filepath.Join(dir, "mcp-proxy-"+typ+".json")
		if err := os.WriteFile(path, data, 0o600); err != nil {
			return nil, err
		}
		p, err := start(cfg.proxy, []string{"--config", path}, nil)
		if err != nil {
			return nil, err
		}
		transport := "streamable"
		p.url = "http://" + addr + "/go/"
		if typ == "sse" {
			transport, p.url = "sse", "http://"+addr+"/go/sse"
		}
		if err := p.waitTool(transport, "echo"); err != nil {
			p.stop()
			return nil, err
		}
		out = append(out, p)
	}
	return out, nil
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// print writes the summary: per transport and concurrency, each target's
// medians over the rounds, and the medians of its per-round ratios to
// direct (each round's direct run is its pair).
func (r *report) print(w io.Writer) {
	fmt.Fprintf(w, "\nmedians over %d rounds of %s per target (ratios: median of per-round ratios to direct)\n", r.cfg.rounds, r.cfg.per)
	fmt.Fprintln(w, "| transport | clients | target | calls/s | p50 µs | p99 µs | throughput vs direct | p50 vs direct | relay CPU µs/call | relay B/call |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|---|")
	for _, tr := range r.cfg.transports {
		for _, c := range r.cfg.conc {
			direct := r.samples[key{tr, c, "direct"}]
			for _, name := range r.targets {
				ss := r.samples[key{tr, c, name}]
				var cps, p50, p99, cpu, b, tput, lat []float64
				for i, s := range ss {
					cps, p50, p99 = append(cps, s.callsPerSec), append(p50, us(s.p50)), append(p99, us(s.p99))
					cpu, b = append(cpu, us(s.cpuPerCall)), append(b, s.bytesPerCall)
					if i < len(direct) {
						tput = append(tput, s.callsPerSec/direct[i].callsPerSec)
						lat = append(lat, float64(s.p50)/float64(direct[i].p50))
					}
				}
				ratio := func(x []float64, f string) string {
					if name == "direct" {
						return "1"
					}
					return fmt.Sprintf(f, median(x))
				}
				relay := func(x []float64, f string) string {
					if name == "direct" || median(x) == 0 {
						return "–"
					}
					return fmt.Sprintf(f, median(x))
				}
				fmt.Fprintf(w, "| %s | %d | %s | %.0f | %.0f | %.0f | %s | %s | %s | %s |\n", tr, c, name,
					median(cps), median(p50), median(p99), ratio(tput, "%.2f×"), ratio(lat, "%.2f×"),
					relay(cpu, "%.0f"), relay(b, "%.0f"))
			}
		}
	}
	if len(r.peakRSS) > 0 {
		fmt.Fprintln(w, "\npeak RSS of each relay process over the whole run (VmHWM)")
		for _, name := range r.targets {
			if rss, ok := r.peakRSS[name]; ok && rss > 0 {
				fmt.Fprintf(w, "- %s: %.1f MiB\n", name, float64(rss)/(1<<20))
			}
		}
	}
}
