package mcptools_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"path/filepath"
	"testing"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/localtools"
	"github.com/agents-mcp/agents-mcp/memory/embed"
	"github.com/agents-mcp/agents-mcp/memory/mcptools"
	"github.com/agents-mcp/agents-mcp/memory/recall"
	"github.com/agents-mcp/agents-mcp/memory/sqlite"
	"github.com/agents-mcp/agents-mcp/memory/vectors"
	"github.com/agents-mcp/agents-mcp/memory/vectorsync"
	"github.com/agents-mcp/agents-mcp/router"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// BenchmarkQueryMemoryLoopback measures query_memory over streamable HTTP on
// loopback, the way a client calls it, against 2,000 insights and 2,000
// learnings in SQLite and the embedded HNSW index. The baseline, in the
// same run and through the same router, transport and client, is a local
// tool that does nothing; the difference is what memory costs per call
// (embedding the query, the index search, reading the matches).
// calls/s = 1e9 / ns/op (one call at a time).
func BenchmarkQueryMemoryLoopback(b *testing.B) {
	ctx := context.Background()
	db, err := sqlite.Open(ctx, filepath.Join(b.TempDir(), "m.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	index := vectors.NewHNSW(embed.HashDimensions, vectors.HNSWOptions{})
	topics := []string{"deploy", "billing", "report", "backup", "search", "invoice", "upstream", "schema", "cache", "release"}
	for i := range 2000 {
		t := topics[i%len(topics)]
		if err := db.CreateInsight(ctx, &agentsmcp.Insight{Text: fmt.Sprintf("%s note %d: retry the %s step after a timeout", t, i, t), Type: agentsmcp.InsightObservation}); err != nil {
			b.Fatal(err)
		}
		if err := db.CreateLearning(ctx, &agentsmcp.Learning{Query: fmt.Sprintf("run the %s job number %d", t, i), Outcome: agentsmcp.OutcomeSuccess}); err != nil {
			b.Fatal(err)
		}
	}
	s, err := vectorsync.New(vectorsync.Config{Outbox: db, Index: index, Embedder: embed.Hash{},
		Sources: []vectorsync.Source{vectorsync.Learnings(db), vectorsync.Insights(db), vectorsync.Patterns(db)}, Batch: 256})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := s.Drain(ctx); err != nil {
		b.Fatal(err)
	}

	r := router.New(router.Options{})
	local := localtools.New()
	tools := &mcptools.MemoryTools{Recall: &recall.Searcher{Index: index, Embedder: embed.Hash{}, Learnings: db, Insights: db, Patterns: db}, ToolPerformance: db}
	if err := tools.Register(local); err != nil {
		b.Fatal(err)
	}
	type none struct{}
	if err := localtools.Add(local, &mcp.Tool{Name: "noop"}, func(context.Context, *mcp.CallToolRequest, none) (*mcp.CallToolResult, *none, error) {
		return nil, &none{}, nil
	}); err != nil {
		b.Fatal(err)
	}
	if err := r.AddProvider(ctx, local); err != nil {
		b.Fatal(err)
	}
	srv := httptest.NewServer(r.HTTPHandler(router.HTTPOptions{}))
	defer srv.Close()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil).
		Connect(ctx, &mcp.StreamableClientTransport{Endpoint: srv.URL + "/mcp"}, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer cs.Close()

	run := func(b *testing.B, name string, args map[string]any) {
		for b.Loop() {
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
			if err != nil || res.IsError {
				b.Fatal(res, err)
			}
		}
	}
	b.Run("query_memory", func(b *testing.B) {
		run(b, mcptools.QueryMemoryName, map[string]any{"query": "billing step timed out, retry it", "limit": 10})
	})
	b.Run("noop-tool-baseline", func(b *testing.B) { run(b, "noop", map[string]any{}) })
}
