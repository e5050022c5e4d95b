package toolperf

import (
	"slices"
	"time"

	agentsmcp "github.com/agents-mcp/agents-mcp"
)

// CallTotals are the calls of one tool in a batch, summed so that a
// store counts the batch with one update per tool, and ends with the same
// figures as if it had recorded the calls one by one in their order.
type CallTotals struct {
	Tool   string
	Calls  int64
	Errors int64
	// Buckets has len(agentsmcp.LatencyBucketBounds)+1 entries, as in
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
	Recent agentsmcp.DecayedCounts
}

// ErrorClassCount is how many failures of one class a batch has, and when
// the last of them was.
type ErrorClassCount struct {
	Class  string
	Count  int64
	LastAt time.Time
}

// SumCalls sums calls by tool, in the order each tool first appears. A
// call with a zero At counts at now; an error text counts under its
// [ErrorClass]. The calls must be valid (see internal/validate.ToolCalls).
func SumCalls(calls []agentsmcp.ToolCall, now time.Time) []*CallTotals {
	var out []*CallTotals
	byTool := map[string]*CallTotals{}
	type pending struct {
		at     time.Time
		failed bool
	}
	outcomes := map[string][]pending{}
	for _, c := range calls {
		t := byTool[c.Tool]
		if t == nil {
			t = &CallTotals{Tool: c.Tool, Buckets: make([]int64, len(agentsmcp.LatencyBucketBounds)+1)}
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
		cl := ErrorClass(c.Error)
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
			t.Recent = AddOutcome(t.Recent, o.at, o.failed)
		}
	}
	return out
}

// LatencyBucket is the histogram bucket of d: the first of
// agentsmcp.LatencyBucketBounds d does not exceed, or the open last bucket.
func LatencyBucket(d time.Duration) int {
	for i, bound := range agentsmcp.LatencyBucketBounds {
		if d <= bound {
			return i
		}
	}
	return len(agentsmcp.LatencyBucketBounds)
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// Percentile estimates the q-quantile (0 < q ≤ 1) of latency as the upper
// bound of the histogram bucket that contains it; the open last bucket
// reports the largest bound. Zero with no calls.
func Percentile(p *agentsmcp.ToolPerformance, q float64) time.Duration {
	var total int64
	for _, n := range p.Buckets {
		total += n
	}
	if total == 0 {
		return 0
	}
	rank := int64(q*float64(total) + 0.999999)
	var seen int64
	for i, n := range p.Buckets {
		seen += n
		if seen >= rank {
			if i < len(agentsmcp.LatencyBucketBounds) {
				return agentsmcp.LatencyBucketBounds[i]
			}
			break
		}
	}
	return agentsmcp.LatencyBucketBounds[len(agentsmcp.LatencyBucketBounds)-1]
}
