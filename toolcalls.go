package agentsmcp

import (
	"slices"
	"time"
)

// MaxToolCallBatch bounds one call of
// [ToolPerformanceService.RecordToolCalls], and so the size of one store
// transaction.
const MaxToolCallBatch = 1000

// ToolCallTotals are the calls of one tool in a batch, summed so that a
// store counts the batch with one update per tool, and ends with the same
// figures as if it had recorded the calls one by one in their order.
type ToolCallTotals struct {
	Tool   string
	Calls  int64
	Errors int64
	// Buckets has len(LatencyBucketBounds)+1 entries, as in
	// ToolPerformance.
	Buckets []int64
	// LastCallAt is the latest At; LastSuccessAt and LastFailureAt the
	// latest of each outcome, zero when the batch has none.
	LastCallAt, LastSuccessAt, LastFailureAt time.Time
	// Succeeded: a success is in the batch, so the stored failure streak
	// restarts at TrailingFailures; otherwise TrailingFailures adds to it.
	Succeeded bool
	// TrailingFailures counts the failures after the batch's last success
	// (all its failures when it has none).
	TrailingFailures int64
	// LastErrorClass is the class of the failure that came last in the
	// batch, "" when none failed.
	LastErrorClass string
	// ErrorClasses counts the failures by class, in the order each class
	// first appears in the batch.
	ErrorClasses []ErrorClassCount
	// Recent are the batch's outcomes weighed by age as of LastCallAt
	// (each weight at most 1): a store adds them to its stored weights
	// scaled by OutcomeWeight(LastCallAt, its epoch).
	Recent DecayedCounts
}

// ErrorClassCount is how many failures of one class a batch has, and when
// the last of them was.
type ErrorClassCount struct {
	Class  string
	Count  int64
	LastAt time.Time
}

// SumToolCalls sums calls by tool, in the order each tool first appears. A
// call with a zero At counts at now; an error text counts under its
// [ToolErrorClass]. The calls must be valid (see internal/validate.ToolCalls).
func SumToolCalls(calls []ToolCall, now time.Time) []*ToolCallTotals {
	var out []*ToolCallTotals
	byTool := map[string]*ToolCallTotals{}
	type pending struct {
		at     time.Time
		failed bool
	}
	outcomes := map[string][]pending{}
	for _, c := range calls {
		t := byTool[c.Tool]
		if t == nil {
			t = &ToolCallTotals{Tool: c.Tool, Buckets: make([]int64, len(LatencyBucketBounds)+1)}
			byTool[c.Tool] = t
			out = append(out, t)
		}
		at := c.At
		if at.IsZero() {
			at = now
		}
		t.Calls++
		t.Buckets[LatencyBucket(c.Duration)]++
		t.LastCallAt = later(t.LastCallAt, at)
		failed := c.Error != ""
		outcomes[c.Tool] = append(outcomes[c.Tool], pending{at, failed})
		if !failed {
			t.Succeeded, t.TrailingFailures = true, 0
			t.LastSuccessAt = later(t.LastSuccessAt, at)
			continue
		}
		t.Errors++
		t.TrailingFailures++
		t.LastFailureAt = later(t.LastFailureAt, at)
		cl := ToolErrorClass(c.Error)
		t.LastErrorClass = cl
		i := slices.IndexFunc(t.ErrorClasses, func(e ErrorClassCount) bool { return e.Class == cl })
		if i < 0 {
			t.ErrorClasses = append(t.ErrorClasses, ErrorClassCount{Class: cl, Count: 1, LastAt: at})
			continue
		}
		t.ErrorClasses[i].Count++
		t.ErrorClasses[i].LastAt = later(t.ErrorClasses[i].LastAt, at)
	}
	for _, t := range out {
		t.Recent.At = t.LastCallAt
		for _, o := range outcomes[t.Tool] {
			t.Recent = t.Recent.Add(o.at, o.failed)
		}
	}
	return out
}

// LatencyBucket is the histogram bucket of d: the first of
// LatencyBucketBounds d does not exceed, or the open last bucket.
func LatencyBucket(d time.Duration) int {
	for i, bound := range LatencyBucketBounds {
		if d <= bound {
			return i
		}
	}
	return len(LatencyBucketBounds)
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
