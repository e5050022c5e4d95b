package sqlite

import (
	"testing"

	"github.com/agents-mcp/agents-mcp/memory/storetest"
)

// BenchmarkStore runs the shared store benchmark on a fresh file: over 1k
// learnings, the size memory/mongo uses on FerretDB (so the two compare like
// for like in one `make bench` run), and over 10k.
func BenchmarkStore(b *testing.B) {
	open := func(b *testing.B) storetest.Services {
		db := openTest(b)
		return storetest.Services{Insights: db, Learnings: db, ToolPerformance: db, Patterns: db, Outbox: db}
	}
	b.Run("rows=1k", func(b *testing.B) { storetest.Bench(b, open, 1_000) })
	b.Run("rows=10k", func(b *testing.B) { storetest.Bench(b, open, 10_000) })
}

// BenchmarkTaskWrites compares writing a step transition of a 200-step
// task whole and as a change (docs/benchmarks.md, executor overhead).
func BenchmarkTaskWrites(b *testing.B) {
	storetest.BenchTaskWrites(b, func(b *testing.B) storetest.Services {
		db := openTest(b)
		return storetest.Services{Tasks: db}
	})
}
