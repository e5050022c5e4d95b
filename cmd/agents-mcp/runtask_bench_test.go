package main

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// runTaskGoalP50 is the goal for the server's own time of a one-step
// run_task with the builtin planner: the round trip over streamable HTTP
// less the time the upstream took to answer.
const runTaskGoalP50 = 20 * time.Millisecond

// timedUpstream is a go-sdk upstream over loopback streamable HTTP with one
// read-only tool, forecast(city), that adds the wall time of every HTTP
// request it serves to busy, so a caller can subtract the upstream's own
// time from a round trip that reached it.
type timedUpstream struct {
	url   string
	busy  atomic.Int64 // nanoseconds spent inside the upstream's handler
	calls atomic.Int64 // forecast calls served
}

func startTimedUpstream(b testing.TB) *timedUpstream {
	b.Helper()
	up := &timedUpstream{}
	srv := mcp.NewServer(&mcp.Implementation{Name: "weather-upstream", Version: "1"}, nil)
	type cityArgs struct {
		City string `json:"city,omitempty" jsonschema:"the city"`
	}
	mcp.AddTool(srv, &mcp.Tool{Name: "forecast", Description: "Weather forecast for the coming days.", Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		func(_ context.Context, _ *mcp.CallToolRequest, a cityArgs) (*mcp.CallToolResult, any, error) {
			up.calls.Add(1)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "sunny in " + a.City}}}, nil, nil
		})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		h.ServeHTTP(w, r)
		up.busy.Add(int64(time.Since(start)))
	}))
	b.Cleanup(hs.Close)
	up.url = hs.URL + "/mcp"
	return up
}

// BenchmarkRunTaskOneStep measures run_task with the builtin planner on a
// one-step request ("get the weather forecast for Lisbon", served by one
// call of the upstream's forecast tool) sent by a go-sdk client to
// `serve` (in process, every default on: SQLite store, vector index,
// learner, audit, metrics) over loopback streamable HTTP. server-p50-ms is
// the goal's measure: each round trip less the upstream's own time
// (timedUpstream.busy). cpu-p50-ms is the process's CPU time per call
// (server, client and upstream together, background writes that fall in
// the window included): on a loaded machine the fairer measure, and an
// upper bound on the server's share. The baseline in the same run is a plain tools/call
// of the same upstream tool through the same server. Each run_task stores
// a learning, so later iterations plan with earlier ones in memory, as a
// server in use does.
//
//	go test -run '^$' -bench RunTaskOneStep -benchtime 200x ./cmd/agents-mcp/
func BenchmarkRunTaskOneStep(b *testing.B) {
	up := startTimedUpstream(b)
	cfgFile := filepath.Join(b.TempDir(), "agents-mcp.yaml")
	if err := os.WriteFile(cfgFile, fmt.Appendf(nil, "upstreams:\n  - name: weather\n    transport: streamable\n    url: %s\n", up.url), 0o600); err != nil {
		b.Fatal(err)
	}
	base, stop, code, logs := startServe(b, nil, "--config", cfgFile)
	b.Cleanup(func() { stop(); <-code })
	ctx := context.Background()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "runtask-bench", Version: "1"}, nil).
		Connect(ctx, &mcp.StreamableClientTransport{Endpoint: base + "/mcp"}, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { cs.Close() })

	measure := func(b *testing.B, params *mcp.CallToolParams) {
		var rtt, server, cpu []time.Duration
		for b.Loop() {
			calls, busy, c0 := up.calls.Load(), up.busy.Load(), processCPU()
			cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
			start := time.Now()
			res, err := cs.CallTool(cctx, params)
			took := time.Since(start)
			cancel()
			if err != nil || res.IsError {
				b.Fatalf("%s: %v %+v\n%s", params.Name, err, res, logs.String())
			}
			if n := up.calls.Load() - calls; n != 1 {
				b.Fatalf("%s made %d upstream calls, want 1: %+v", params.Name, n, res)
			}
			rtt = append(rtt, took)
			server = append(server, took-time.Duration(up.busy.Load()-busy))
			cpu = append(cpu, time.Duration(processCPU()-c0))
		}
		slices.Sort(cpu)
		b.ReportMetric(float64(cpu[len(cpu)/2].Microseconds())/1000, "cpu-p50-ms")
		slices.Sort(rtt)
		slices.Sort(server)
		b.ReportMetric(float64(rtt[len(rtt)/2].Microseconds())/1000, "rtt-p50-ms")
		b.ReportMetric(float64(server[len(server)/2].Microseconds())/1000, "server-p50-ms")
		b.ReportMetric(float64(server[len(server)*95/100].Microseconds())/1000, "server-p95-ms")
	}
	b.Run("run_task", func(b *testing.B) {
		measure(b, &mcp.CallToolParams{Name: "run_task", Arguments: map[string]any{"request": "get the weather forecast for Lisbon"}})
		b.ReportMetric(float64(runTaskGoalP50.Microseconds())/1000, "goal-p50-ms")
	})
	b.Run("tools-call-baseline", func(b *testing.B) {
		measure(b, &mcp.CallToolParams{Name: "weather__forecast", Arguments: map[string]any{"city": "Lisbon"}})
	})
}
