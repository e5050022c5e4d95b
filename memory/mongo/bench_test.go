package mongo

import (
	"testing"

	"github.com/agents-mcp/agents-mcp/memory/storetest"
)

// BenchmarkStore runs the shared store benchmark (storetest.Bench: filtered
// pages of learnings, a point read, RecordToolCall, CreateLearning) on the
// embedded FerretDB, seeded with 1,000 learnings where memory/sqlite seeds
// 10,000.
//
// The data set is small because FerretDB scans: its SQLite backend pushes
// down only _id equality, so every other query and every update reads the
// whole collection and uses none of the indexes, and it serialises our
// counter updates per tool (see DB.lockKey). The figures say how the
// code behaves on FerretDB, not what MongoDB would do: there the Find
// pages are index range scans (the *_createdAt_id indexes, words_* for
// text) and every update touches one document by _id.
func BenchmarkStore(b *testing.B) {
	b.Run("rows=1k", func(b *testing.B) {
		storetest.Bench(b, func(b *testing.B) storetest.Services {
			db := openDB(b)
			return storetest.Services{Insights: db, Learnings: db, ToolPerformance: db, Patterns: db, Outbox: db}
		}, 1_000)
	})
}

// BenchmarkTaskWrites compares writing a step transition of a 200-step
// task whole (UpdateTask) and as a change (UpdateTaskSteps: $set of
// steps.<i>, $push of the events), on FerretDB; see BenchmarkStore for why
// its figures are not MongoDB's.
func BenchmarkTaskWrites(b *testing.B) {
	storetest.BenchTaskWrites(b, func(b *testing.B) storetest.Services {
		db := openDB(b)
		return storetest.Services{Tasks: db}
	})
}
