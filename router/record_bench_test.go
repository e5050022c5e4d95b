package router_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/localtools"
	"github.com/agents-mcp/agents-mcp/memory/auditlog"
	"github.com/agents-mcp/agents-mcp/memory/mcptools"
	"github.com/agents-mcp/agents-mcp/memory/sqlite"
	"github.com/agents-mcp/agents-mcp/router"
)

// BenchmarkCallToolRecorded is BenchmarkCallTool with what serve does after
// every call: an audit entry and a tool-performance count, both written to
// a real SQLite store. ns/op includes writing them: each run ends by
// flushing what is pending, inside the timed region.
//
//   - batched: serve now (mcptools.Recorder and auditlog.Recorder with their
//     defaults: batches of 256 or 100 ms, one transaction each);
//   - per-call-baseline: tool performance written one transaction per call
//     (the former recorder), and the audit in batches of 100 or 1 s
//     (its defaults before);
//   - unrecorded-baseline: the router alone.
//
// The writes run beside the calls, so on a loaded machine their cost shows
// better in cpu-µs/call (the CPU time of the whole process, writers
// included, per call) than in ns/op.
func BenchmarkCallToolRecorded(b *testing.B) {
	b.Run("batched", func(b *testing.B) {
		db := openBenchStore(b)
		perf := mcptools.NewRecorder(db, mcptools.RecorderOptions{})
		audit := auditlog.New(db, auditlog.Options{})
		benchRecorded(b, perf.Record, audit, func(ctx context.Context) error { return perf.Flush(ctx) }, perf.Run)
	})
	b.Run("per-call-baseline", func(b *testing.B) {
		db := openBenchStore(b)
		perf := newPerCallRecorder(db)
		audit := auditlog.New(db, auditlog.Options{BatchSize: 100, FlushInterval: time.Second})
		benchRecorded(b, perf.record, audit, perf.flush, perf.run)
	})
	b.Run("unrecorded-baseline", func(b *testing.B) {
		benchRecorded(b, nil, nil, nil, nil)
	})
}

func openBenchStore(b *testing.B) *sqlite.DB {
	db, err := sqlite.Open(context.Background(), filepath.Join(b.TempDir(), "m.db"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	return db
}

// benchRecorded runs b.N calls of echo through a router whose OnToolCall
// feeds perf and audit (the same entry serve records), then flushes both.
func benchRecorded(b *testing.B, perf func(string, time.Duration, string), audit *auditlog.Recorder,
	flushPerf func(context.Context) error, runPerf func(context.Context)) {
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	defer func() {
		cancel()
		wg.Wait()
	}()
	opts := router.Options{}
	if perf != nil {
		wg.Go(func() { runPerf(ctx) })
		wg.Go(func() { audit.Run(ctx) })
		opts.OnToolCall = func(c router.ToolCallRecord) {
			perf(c.Tool, c.Duration, c.Error)
			audit.Record(&agentsmcp.AuditEntry{
				Kind: agentsmcp.AuditToolCall, Principal: "anonymous", Target: c.Tool, RequestID: c.RequestID,
				Arguments: c.Arguments, Latency: c.Duration, Outcome: agentsmcp.AuditOK, Transport: "streamable",
			})
		}
	}
	r := router.New(opts)
	local := localtools.New()
	type echoArgs struct {
		Text string `json:"text"`
	}
	echo := func(_ context.Context, _ *mcp.CallToolRequest, in echoArgs) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: in.Text}}}, nil, nil
	}
	if err := localtools.Add(local, &mcp.Tool{Name: "echo"}, echo); err != nil {
		b.Fatal(err)
	}
	if err := r.AddProvider(ctx, local); err != nil {
		b.Fatal(err)
	}
	st, ct := mcp.NewInMemoryTransports()
	ss, err := r.Server().Connect(ctx, st, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer ss.Close()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer cs.Close()
	params := &mcp.CallToolParams{Name: "echo", Arguments: json.RawMessage(`{"text":"hello"}`)}
	cpu0 := processCPU()
	for b.Loop() {
		res, err := cs.CallTool(ctx, params)
		if err != nil || res.IsError {
			b.Fatal(res, err)
		}
	}
	if perf != nil {
		if err := flushPerf(ctx); err != nil {
			b.Fatal(err)
		}
		if err := audit.Flush(ctx); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64((processCPU()-cpu0).Microseconds())/float64(b.N), "cpu-µs/call")
	if perf != nil && audit.Dropped() != 0 {
		b.Fatalf("%d audit entries dropped", audit.Dropped())
	}
}

// perCallRecorder writes tool performance one call per transaction, as
// mcptools.Recorder once did: the baseline.
type perCallRecorder struct {
	store   agentsmcp.ToolPerformanceService
	queue   chan agentsmcp.ToolCall
	flushes chan chan struct{}
}

func newPerCallRecorder(store agentsmcp.ToolPerformanceService) *perCallRecorder {
	return &perCallRecorder{store: store, queue: make(chan agentsmcp.ToolCall, 4096), flushes: make(chan chan struct{})}
}

func (r *perCallRecorder) record(tool string, d time.Duration, errText string) {
	select {
	case r.queue <- agentsmcp.ToolCall{Tool: tool, Duration: d, Error: errText, At: time.Now()}:
	default:
	}
}

func (r *perCallRecorder) run(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case c := <-r.queue:
			_ = r.store.RecordToolCall(context.WithoutCancel(ctx), c)
		case done := <-r.flushes:
			for len(r.queue) > 0 {
				_ = r.store.RecordToolCall(context.WithoutCancel(ctx), <-r.queue)
			}
			close(done)
		}
	}
}

func (r *perCallRecorder) flush(ctx context.Context) error {
	done := make(chan struct{})
	select {
	case r.flushes <- done:
	case <-ctx.Done():
		return ctx.Err()
	}
	<-done
	return nil
}

// processCPU is the CPU time this process has used.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
