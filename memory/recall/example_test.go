package recall_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/memory/embed"
	"github.com/agents-mcp/agents-mcp/memory/recall"
	"github.com/agents-mcp/agents-mcp/memory/sqlite"
	"github.com/agents-mcp/agents-mcp/memory/vectors"
	"github.com/agents-mcp/agents-mcp/memory/vectorsync"
)

// A Searcher ranks what memory holds by meaning, and falls back to the
// store's word filter when the embedder or the index fails: the mode says
// which answered.
func ExampleSearcher() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "recall-example")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	db, err := sqlite.Open(ctx, filepath.Join(dir, "memory.db"))
	if err != nil {
		panic(err)
	}
	defer db.Close()
	index := vectors.NewFlat(embed.HashDimensions)
	syncer, err := vectorsync.New(vectorsync.Config{Outbox: db, Index: index, Embedder: embed.Hash{},
		Sources: []vectorsync.Source{vectorsync.Learnings(db)}})
	if err != nil {
		panic(err)
	}
	for _, q := range []string{"export the payroll to the finance vault", "what is the weather in Paris"} {
		if err := db.CreateLearning(ctx, &agentsmcp.Learning{Query: q, Outcome: agentsmcp.OutcomeSuccess}); err != nil {
			panic(err)
		}
	}
	if _, err := syncer.Drain(ctx); err != nil { // the index follows the store
		panic(err)
	}

	s := &recall.Searcher{Index: index, Embedder: embed.Hash{}, Learnings: db, Insights: db, Patterns: db}
	found, mode, err := s.SimilarLearnings(ctx, recall.NewQuery("weather forecast for Paris"), agentsmcp.LearningFilter{}, 1)
	if err != nil {
		panic(err)
	}
	fmt.Println(mode, found[0].Learning.Query)
	// Output: semantic what is the weather in Paris
}
