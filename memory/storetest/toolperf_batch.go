package storetest

import (
	"fmt"
	"maps"
	"testing"
	"time"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/internal/toolperf"
)

func init() {
	suite["ToolPerfBatchMatchesOneByOne"] = testToolPerfBatchMatchesOneByOne
	suite["ToolPerfBatchInvalid"] = testToolPerfBatchInvalid
}

// testToolPerfBatchMatchesOneByOne records the same calls twice, under two
// prefixes: one call at a time, and in batches; both must end with the
// same figures, whatever the order of outcomes within a batch.
func testToolPerfBatchMatchesOneByOne(t *testing.T, s Services) {
	type call struct {
		tool string
		ms   int // duration
		err  string
		hl   float64 // half-lives after base
	}
	// Batches chosen to cover the failure streak (a batch without a
	// success adds to it, one with a success restarts it), late calls,
	// several tools and classes in one batch, and an epoch far away.
	batches := [][]call{
		{{"a", 3, "", 0}, {"a", 30, "timeout", 0.5}, {"b", 700, "", 0.5}},
		{{"a", 3, "timeout", 1}, {"a", 3, "quota exceeded", 1.25}},
		{{"b", 3, "boom\nstack", 1}, {"a", 3, "timeout", 1.5}, {"a", 3, "", 1.5}, {"a", 60_000, "quota exceeded", 2}, {"a", 3, "timeout", 2}},
		{{"a", 3, "", 0.25}, {"b", 3, "", 1.75}}, // late: times never move back
		{{"a", 12, "", 40}, {"b", 3, "boom", 40}, {"a", 3, "timeout", 41}},
	}
	tc := func(prefix string, c call) agentsmcp.ToolCall {
		return agentsmcp.ToolCall{Tool: prefix + c.tool, Duration: time.Duration(c.ms) * time.Millisecond, Error: c.err, At: halfLives(c.hl)}
	}
	for _, batch := range batches {
		var calls []agentsmcp.ToolCall
		for _, c := range batch {
			record(t, s, tc("one.", c))
			calls = append(calls, tc("batch.", c))
		}
		if err := s.ToolPerformance.RecordToolCalls(t.Context(), calls); err != nil {
			t.Fatalf("RecordToolCalls(%d calls): %v", len(calls), err)
		}
		for _, tool := range []string{"a", "b"} {
			compareToolPerf(t, findPerf(t, s, "one."+tool), findPerf(t, s, "batch."+tool))
		}
	}
}

// compareToolPerf checks that two tools have the same figures.
func compareToolPerf(t *testing.T, one, batch *agentsmcp.ToolPerformance) {
	t.Helper()
	what := fmt.Sprintf("%s vs %s", one.Tool, batch.Tool)
	if one.Calls != batch.Calls || one.Errors != batch.Errors || one.ConsecutiveFailures != batch.ConsecutiveFailures ||
		one.LastErrorClass != batch.LastErrorClass {
		t.Errorf("%s: calls %d/%d, errors %d/%d, streak %d/%d, last error class %q/%q", what, one.Calls, batch.Calls,
			one.Errors, batch.Errors, one.ConsecutiveFailures, batch.ConsecutiveFailures, one.LastErrorClass, batch.LastErrorClass)
	}
	if fmt.Sprint(one.Buckets) != fmt.Sprint(batch.Buckets) || !maps.Equal(one.CommonErrors, batch.CommonErrors) {
		t.Errorf("%s: buckets %v/%v, common errors %v/%v", what, one.Buckets, batch.Buckets, one.CommonErrors, batch.CommonErrors)
	}
	for _, tt := range []struct {
		name       string
		one, batch time.Time
	}{{"LastCallAt", one.LastCallAt, batch.LastCallAt}, {"LastSuccessAt", one.LastSuccessAt, batch.LastSuccessAt}, {"LastFailureAt", one.LastFailureAt, batch.LastFailureAt}} {
		if !tt.one.Equal(tt.batch) {
			t.Errorf("%s: %s %v/%v", what, tt.name, tt.one, tt.batch)
		}
	}
	as := one.LastCallAt
	r1, r2 := toolperf.DecayedAs(one.Recent, as), toolperf.DecayedAs(batch.Recent, as)
	if !near(r2.Successes, r1.Successes, 1e-9) || !near(r2.Failures, r1.Failures, 1e-9) {
		t.Errorf("%s: recent outcomes as of %v: %+v one by one, %+v batched", what, as, r1, r2)
	}
}

func testToolPerfBatchInvalid(t *testing.T, s Services) {
	ctx := t.Context()
	ok := agentsmcp.ToolCall{Tool: "fine", Duration: time.Millisecond, At: at(0)}
	for name, calls := range map[string][]agentsmcp.ToolCall{
		"no tool":        {ok, {Duration: time.Millisecond}},
		"negative":       {ok, {Tool: "neg", Duration: -1}},
		"too many calls": make([]agentsmcp.ToolCall, agentsmcp.MaxToolCallBatch+1),
	} {
		if name == "too many calls" {
			for i := range calls {
				calls[i] = ok
			}
		}
		wantCode(t, s.ToolPerformance.RecordToolCalls(ctx, calls), agentsmcp.EINVALID, "RecordToolCalls: "+name)
	}
	if err := s.ToolPerformance.RecordToolCalls(ctx, nil); err != nil {
		t.Errorf("RecordToolCalls(nil) = %v, want a no-op", err)
	}
	list, err := s.ToolPerformance.ListToolPerformance(ctx)
	if err != nil || len(list) != 0 {
		t.Fatalf("a refused batch was counted: %d tools, %v", len(list), err)
	}
}
