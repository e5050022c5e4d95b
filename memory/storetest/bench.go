package storetest

import (
	"fmt"
	"testing"
	"time"

	agentsmcp "github.com/agents-mcp/agents-mcp"
)

// Bench measures the operations the agents run most on the store open
// returns, seeded with rows learnings, so that two stores (SQLite and
// MongoDB/FerretDB) are compared on the same work:
//
//   - FindLearnings/*: one page (limit 20) of filtered learnings;
//   - FindLearningByID: a point read;
//   - RecordToolCall: an update of counters by key, the hot write, one
//     transaction per call; RecordToolCalls/batch=256 the same calls in
//     the recorder's batches (ns/op per call);
//   - CreateLearning: an insert with its list fields.
//
// The reads run first, so they see exactly rows learnings. Learning i
// used tool "tool_<i%10>" and upstream "up_<i%3>", ended with outcome i%4,
// and was created i seconds after a fixed time.
func Bench(b *testing.B, open func(b *testing.B) Services, rows int) {
	s := open(b)
	ctx := b.Context()
	var ids []string
	for i := range rows {
		l := benchLearning(i)
		if err := s.Learnings.CreateLearning(ctx, l); err != nil {
			b.Fatalf("seed learning %d: %v", i, err)
		}
		ids = append(ids, l.ID)
	}
	find := func(name string, f agentsmcp.LearningFilter) {
		b.Run("FindLearnings/"+name, func(b *testing.B) {
			f.Limit = 20
			for b.Loop() {
				items, _, err := s.Learnings.FindLearnings(ctx, f)
				if err != nil || len(items) == 0 {
					b.Fatalf("FindLearnings(%+v): %d items, %v", f, len(items), err)
				}
			}
		})
	}
	find("All", agentsmcp.LearningFilter{})
	find("Tool", agentsmcp.LearningFilter{Tool: "tool_3"})
	find("Tool+Outcome", agentsmcp.LearningFilter{Tool: "tool_3", Outcome: agentsmcp.OutcomeFailure})
	find("Upstream+Since", agentsmcp.LearningFilter{Upstream: "up_1", Since: base.Add(time.Duration(rows/2) * time.Second)})
	find("Outcome+Range", agentsmcp.LearningFilter{Outcome: agentsmcp.OutcomeSuccess, Since: base.Add(time.Duration(rows/4) * time.Second), Until: base.Add(time.Duration(rows/2) * time.Second)})
	find("Text", agentsmcp.LearningFilter{Text: "report weekly"})
	b.Run("FindLearningByID", func(b *testing.B) {
		i := 0
		for b.Loop() {
			if _, err := s.Learnings.FindLearningByID(ctx, ids[i%len(ids)]); err != nil {
				b.Fatal(err)
			}
			i += 7919 // a prime: spread the reads
		}
	})
	b.Run("RecordToolCall", func(b *testing.B) {
		i := 0
		for b.Loop() {
			c := agentsmcp.ToolCall{Tool: fmt.Sprint("tool_", i%10), Duration: time.Duration(i%500) * time.Millisecond, At: at(i)}
			if i%10 == 0 {
				c.Error = fmt.Sprint("error ", i%7)
			}
			if err := s.ToolPerformance.RecordToolCall(ctx, c); err != nil {
				b.Fatal(err)
			}
			i++
		}
	})
	b.Run("RecordToolCalls/batch=256", func(b *testing.B) {
		// The same calls as RecordToolCall, in the batches the tool
		// performance recorder writes; ns/op is per call.
		batch := make([]agentsmcp.ToolCall, 0, 256)
		i := 0
		write := func() {
			if err := s.ToolPerformance.RecordToolCalls(ctx, batch); err != nil {
				b.Fatal(err)
			}
			batch = batch[:0]
		}
		for b.Loop() {
			c := agentsmcp.ToolCall{Tool: fmt.Sprint("tool_", i%10), Duration: time.Duration(i%500) * time.Millisecond, At: at(i)}
			if i%10 == 0 {
				c.Error = fmt.Sprint("error ", i%7)
			}
			if batch = append(batch, c); len(batch) == cap(batch) {
				write()
			}
			i++
		}
		if len(batch) > 0 {
			write()
		}
	})
	b.Run("CreateLearning", func(b *testing.B) {
		i := rows
		for b.Loop() {
			if err := s.Learnings.CreateLearning(ctx, benchLearning(i)); err != nil {
				b.Fatal(err)
			}
			i++
		}
	})
}

// benchWords make up the queries of the seeded learnings.
var benchWords = []string{"list", "issues", "write", "weekly", "report", "deploy", "service", "read", "design", "search"}

func benchLearning(i int) *agentsmcp.Learning {
	return &agentsmcp.Learning{
		Query:     fmt.Sprintf("%s the %s and %s, task %d", benchWords[i%10], benchWords[i*3%10], benchWords[i*7%10], i),
		Goal:      benchWords[i%10] + " " + benchWords[(i+1)%10],
		Steps:     []string{fmt.Sprint("tool_", i%10), fmt.Sprint("tool_", (i+1)%10)},
		Tools:     []string{fmt.Sprint("tool_", i%10), fmt.Sprint("tool_", (i+1)%10)},
		Upstreams: []string{fmt.Sprint("up_", i%3)},
		Outcome:   agentsmcp.Outcomes[i%4],
		Duration:  time.Duration(i%1000) * time.Millisecond,
		CreatedAt: at(i),
	}
}
