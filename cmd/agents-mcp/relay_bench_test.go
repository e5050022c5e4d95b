package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// relayBenchAnswer is the echo upstream's answer to every tools/call, with
// the request's id in place of %s: the bytes go-sdk's server writes for the
// echo tool's result.
const relayBenchAnswer = `{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"Echo: hello"}]}}`

// relayBenchUpstream serves a go-sdk server with an echo tool over
// streamable HTTP, except that it answers tools/call itself with
// relayBenchAnswer as a JSON body: the upstream's own cost per call is then
// a small fraction of the relay's, so that the benchmark's allocations and
// CPU profile are mostly serve's.
func relayBenchUpstream(b *testing.B) string {
	b.Helper()
	s := mcp.NewServer(&mcp.Implementation{Name: "go", Version: "1"}, nil)
	type echoArgs struct {
		Message string `json:"message"`
	}
	mcp.AddTool(s, &mcp.Tool{Name: "echo"}, func(_ context.Context, _ *mcp.CallToolRequest, in echoArgs) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "Echo: " + in.Message}}}, nil, nil
	})
	sdk := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			body, _ := io.ReadAll(r.Body)
			if bytes.Contains(body, []byte(`"method":"tools/call"`)) {
				var m struct {
					ID json.RawMessage `json:"id"`
				}
				_ = json.Unmarshal(body, &m)
				w.Header().Set("Content-Type", "application/json")
				fmt.Fprintf(w, relayBenchAnswer, m.ID)
				return
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
		}
		sdk.ServeHTTP(w, r)
	}))
	b.Cleanup(srv.Close)
	return srv.URL + "/mcp"
}

// relayBenchServe starts serve in-process, as `make bench-relay` runs it
// (the embedded defaults, the upstream "go" in its config; the log level
// stays info, which startServe needs to see "serving", and serve logs
// nothing per call at info), and returns its base URL once go__echo is
// listed.
func relayBenchServe(b *testing.B) string {
	b.Helper()
	conf := filepath.Join(b.TempDir(), "agents.yaml")
	if err := os.WriteFile(conf, fmt.Appendf(nil, "upstreams:\n  - name: go\n    transport: streamable\n    url: %s\n", relayBenchUpstream(b)), 0o600); err != nil {
		b.Fatal(err)
	}
	base, _, _, logs := startServe(b, nil, "--config", conf)
	b.Cleanup(func() {
		if b.Failed() {
			b.Log(logs.String())
		}
	})
	deadline := time.Now().Add(30 * time.Second)
	for {
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "wait", Version: "1"}, nil).Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: base + "/mcp"}, nil)
		if err == nil {
			res, err := cs.ListTools(context.Background(), nil)
			_ = cs.Close()
			if err == nil && strings.Contains(fmt.Sprint(toolNames(res.Tools)), "go__echo") {
				return base
			}
		}
		if time.Now().After(deadline) {
			b.Fatal("serve never listed go__echo")
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func toolNames(tools []*mcp.Tool) []string {
	var out []string
	for _, t := range tools {
		out = append(out, t.Name)
	}
	return out
}

const relayBenchInit = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}`

// relayBenchCall is the call measured, with its id in place of %d.
const relayBenchCall = `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"go__echo","arguments":{"message":"hello"}}}`

// BenchmarkRelayedCall measures one tools/call relayed by serve, in-process
// with its whole handler stack and every feature of the default
// configuration (sessions, validation, allowlists, rate limit, audit,
// tool performance, metrics), to an upstream that answers at once
// (relayBenchUpstream), one call at a time from one raw HTTP client:
//
//	BenchmarkRelayedCall/streamable  POST /mcp, the answer read from its body
//	BenchmarkRelayedCall/sse         POST /messages, the answer read from the GET /sse stream
//
// Besides ns/op it reports cpu-µs/call, the process's CPU time per call.
// Its allocations, CPU time and profiles (-memprofile, -cpuprofile) include
// the client's and the upstream's, which are small and the same before and
// after a change of serve's, and serve's background writers' (audit, tool
// performance), whose share per call depends on how many calls a batch
// holds; docs/benchmarks.md has the results.
func BenchmarkRelayedCall(b *testing.B) {
	base := relayBenchServe(b)
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}}
	b.Run("streamable", func(b *testing.B) {
		post := func(sid, body string) (*http.Response, error) {
			req, _ := http.NewRequest(http.MethodPost, base+"/mcp", strings.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			if sid != "" {
				req.Header.Set("Mcp-Session-Id", sid)
				req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
			}
			return client.Do(req)
		}
		must := func(resp *http.Response, err error) *http.Response {
			if err != nil {
				b.Fatal(err)
			}
			return resp
		}
		resp := must(post("", relayBenchInit))
		sid := resp.Header.Get("Mcp-Session-Id")
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		resp = must(post(sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`))
		resp.Body.Close()
		resp = must(post(sid, `{"jsonrpc":"2.0","id":2,"method":"ping"}`))
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		want := []byte(`"text":"Echo: hello"`)
		buf := make([]byte, 0, 4096)
		b.ReportAllocs()
		defer reportCPUPerCall(b, processCPU())
		b.ResetTimer()
		for i := range b.N {
			resp := must(post(sid, fmt.Sprintf(relayBenchCall, i+10)))
			buf = buf[:0]
			buf, _ = readAllInto(buf, resp.Body)
			resp.Body.Close()
			if !bytes.Contains(buf, want) {
				b.Fatalf("answer: %d %s", resp.StatusCode, buf)
			}
		}
	})
	b.Run("sse", func(b *testing.B) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+"/sse", nil)
		req.Header.Set("Accept", "text/event-stream")
		resp, err := client.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		defer resp.Body.Close()
		events := bufio.NewReader(resp.Body)
		next := func() string {
			var data string
			for {
				line, err := events.ReadString('\n')
				if err != nil {
					b.Fatalf("stream: %v", err)
				}
				line = strings.TrimRight(line, "\r\n")
				if line == "" && data != "" {
					return data
				}
				if d, ok := strings.CutPrefix(line, "data: "); ok {
					data += d
				}
			}
		}
		endpoint := next()
		if !strings.HasPrefix(endpoint, "http") {
			endpoint = base + endpoint
		}
		post := func(body string) {
			resp, err := client.Post(endpoint, "application/json", strings.NewReader(body))
			if err != nil {
				b.Fatal(err)
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusAccepted {
				b.Fatalf("POST: %d", resp.StatusCode)
			}
		}
		post(relayBenchInit)
		next()
		post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
		post(`{"jsonrpc":"2.0","id":2,"method":"ping"}`)
		next()
		b.ReportAllocs()
		defer reportCPUPerCall(b, processCPU())
		b.ResetTimer()
		for i := range b.N {
			post(fmt.Sprintf(relayBenchCall, i+10))
			if ev := next(); !strings.Contains(ev, `"text":"Echo: hello"`) {
				b.Fatalf("answer: %s", ev)
			}
		}
	})
}

// reportCPUPerCall reports the CPU time this process used per call since
// cpu0 (processCPU), as cpu-µs/call: on a loaded machine it moves far less
// than ns/op, which counts the waits for a core.
func reportCPUPerCall(b *testing.B, cpu0 int64) {
	b.StopTimer()
	b.ReportMetric(float64(processCPU()-cpu0)/1e3/float64(b.N), "cpu-µs/call")
}

// readAllInto appends r's bytes to buf until EOF.
func readAllInto(buf []byte, r io.Reader) ([]byte, error) {
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return buf, err
		}
	}
}
