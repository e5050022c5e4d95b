package sqlite

import (
	"testing"

	"github.com/agents-mcp/agents-mcp/memory/storetest"
)

// BenchmarkStore runs the shared store benchmark over 10k learnings on a
// fresh file; memory/mongo runs the same one on FerretDB.
func BenchmarkStore(b *testing.B) {
	storetest.Bench(b, func(b *testing.B) storetest.Services {
		db := openTest(b)
		return storetest.Services{Insights: db, Learnings: db, ToolPerformance: db, Patterns: db}
	}, 10_000)
}
