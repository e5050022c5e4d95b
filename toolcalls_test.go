package agentsmcp_test

import (
	"math"
	"strings"
	"testing"
	"time"

	agentsmcp "github.com/agents-mcp/agents-mcp"
)

func TestSumToolCalls(t *testing.T) {
	t0 := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	now := t0.Add(time.Hour)
	day := agentsmcp.ReliabilityHalfLife
	calls := []agentsmcp.ToolCall{
		{Tool: "a", Duration: time.Millisecond, Error: "Timeout\nstack", At: t0},
		{Tool: "b", Duration: time.Minute * 2},                        // zero At: now
		{Tool: "a", Duration: 30 * time.Millisecond, At: t0.Add(day)}, // success: the streak restarts
		{Tool: "a", Duration: time.Millisecond, Error: "quota", At: t0.Add(day)},
		{Tool: "a", Duration: time.Millisecond, Error: "Timeout", At: t0.Add(-day)}, // late
	}
	class := func(s string) string { line, _, _ := strings.Cut(s, "\n"); return strings.ToLower(line) }
	got := agentsmcp.SumToolCalls(calls, now, class)
	if len(got) != 2 || got[0].Tool != "a" || got[1].Tool != "b" {
		t.Fatalf("tools %+v, want a then b (first appearance)", got)
	}
	a, b := got[0], got[1]
	if a.Calls != 4 || a.Errors != 3 || !a.Succeeded || a.TrailingFailures != 2 || a.LastErrorClass != "timeout" {
		t.Errorf("a: %+v", a)
	}
	if !a.LastCallAt.Equal(t0.Add(day)) || !a.LastSuccessAt.Equal(t0.Add(day)) || !a.LastFailureAt.Equal(t0.Add(day)) {
		t.Errorf("a's times: %v %v %v", a.LastCallAt, a.LastSuccessAt, a.LastFailureAt)
	}
	if len(a.ErrorClasses) != 2 || a.ErrorClasses[0].Class != "timeout" || a.ErrorClasses[0].Count != 2 ||
		!a.ErrorClasses[0].LastAt.Equal(t0) || a.ErrorClasses[1].Class != "quota" {
		t.Errorf("a's classes (in order of first appearance): %+v", a.ErrorClasses)
	}
	if a.Buckets[0] != 3 || a.Buckets[agentsmcp.LatencyBucket(30*time.Millisecond)] != 1 {
		t.Errorf("a's buckets %v", a.Buckets)
	}
	// As of the last call: the success and the quota failure weigh 1, the
	// timeout a day before 1/2, the late one two days before 1/4.
	if !a.Recent.At.Equal(a.LastCallAt) || math.Abs(a.Recent.Successes-1) > 1e-9 || math.Abs(a.Recent.Failures-1.75) > 1e-9 {
		t.Errorf("a's recent outcomes %+v, want 1 success and 1.75 failures", a.Recent)
	}
	if b.Calls != 1 || b.Errors != 0 || !b.LastCallAt.Equal(now) || b.Buckets[agentsmcp.LatencyBucket(2*time.Minute)] != 1 {
		t.Errorf("b: %+v", b)
	}
}
