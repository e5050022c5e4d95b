package storetest

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/internal/toolperf"
)

func init() {
	suite["ToolPerfRoundTrip"] = testToolPerfRoundTrip
	suite["ToolPerfHistogram"] = testToolPerfHistogram
	suite["ToolPerfConcurrent"] = testToolPerfConcurrent
	suite["ToolPerfCommonErrors"] = testToolPerfCommonErrors
	suite["ToolPerfInvalid"] = testToolPerfInvalid
	suite["ToolPerfNotFound"] = testToolPerfNotFound
	suite["ToolPerfList"] = testToolPerfList
	suite["ToolPerfReliabilityEvidence"] = testToolPerfReliabilityEvidence
	suite["ToolPerfErrorClassesCarryNoRequestText"] = testToolPerfErrorClassesCarryNoRequestText
}

func record(t *testing.T, s Services, calls ...agentsmcp.ToolCall) {
	t.Helper()
	for _, c := range calls {
		if err := s.ToolPerformance.RecordToolCall(t.Context(), c); err != nil {
			t.Fatalf("RecordToolCall(%+v): %v", c, err)
		}
	}
}

func findPerf(t *testing.T, s Services, tool string) *agentsmcp.ToolPerformance {
	t.Helper()
	p, err := s.ToolPerformance.FindToolPerformance(t.Context(), tool)
	if err != nil {
		t.Fatalf("FindToolPerformance(%q): %v", tool, err)
	}
	if p.Tool != tool {
		t.Errorf("FindToolPerformance(%q).Tool = %q", tool, p.Tool)
	}
	if len(p.Buckets) != len(agentsmcp.LatencyBucketBounds)+1 {
		t.Fatalf("%s: %d buckets, want %d", tool, len(p.Buckets), len(agentsmcp.LatencyBucketBounds)+1)
	}
	return p
}

// sum adds the buckets: every call is in exactly one.
func sum(buckets []int64) (n int64) {
	for _, b := range buckets {
		n += b
	}
	return n
}

func testToolPerfRoundTrip(t *testing.T, s Services) {
	loc := time.FixedZone("X", 5*3600+1800)
	record(t, s,
		agentsmcp.ToolCall{Tool: "files__read_file", Duration: 3 * time.Millisecond, At: at(10).In(loc).Add(123456789)},
		agentsmcp.ToolCall{Tool: "files__read_file", Duration: 40 * time.Millisecond, Error: "ENOENT: no such file", At: at(30)},
		// Older than the previous call: LastCallAt keeps the latest.
		agentsmcp.ToolCall{Tool: "files__read_file", Duration: 2 * time.Second, At: at(20)},
	)
	p := findPerf(t, s, "files__read_file")
	if p.Calls != 3 || p.Errors != 1 {
		t.Errorf("calls %d errors %d, want 3 and 1", p.Calls, p.Errors)
	}
	want := make([]int64, len(agentsmcp.LatencyBucketBounds)+1)
	want[0], want[3], want[8] = 1, 1, 1
	if !slices.Equal(p.Buckets, want) {
		t.Errorf("buckets %v, want %v", p.Buckets, want)
	}
	if !maps.Equal(p.CommonErrors, map[string]int64{toolperf.ErrorClassNotFound: 1}) {
		t.Errorf("common errors %v, want the one error", p.CommonErrors)
	}
	checkTime(t, "LastCallAt", p.LastCallAt, at(30))
	if got := toolperf.SuccessRate(p); got != 2.0/3 {
		t.Errorf("success rate %v, want 2/3", got)
	}

	// A zero At means now.
	before := time.Now()
	record(t, s, agentsmcp.ToolCall{Tool: "now", Duration: time.Millisecond})
	after := time.Now()
	p = findPerf(t, s, "now")
	checkRecent(t, "LastCallAt of a call without At", p.LastCallAt, before, after)
	if len(p.CommonErrors) != 0 || p.Errors != 0 {
		t.Errorf("a successful call counted errors: %d, %v", p.Errors, p.CommonErrors)
	}

	// Tool names are exact and may hold any character.
	for _, name := range []string{"Files__Read_File", "a.b", "$where", "x y", "ünï"} {
		record(t, s, agentsmcp.ToolCall{Tool: name, Duration: time.Millisecond, At: at(1)})
		if p := findPerf(t, s, name); p.Calls != 1 {
			t.Errorf("%q: %d calls, want 1", name, p.Calls)
		}
	}
	if p := findPerf(t, s, "files__read_file"); p.Calls != 3 {
		t.Errorf("other tools changed files__read_file: %d calls", p.Calls)
	}
}

func testToolPerfHistogram(t *testing.T, s Services) {
	ms := time.Millisecond
	tests := []struct {
		d      time.Duration
		bucket int
	}{
		{0, 0}, {ms, 0}, {5 * ms, 0}, // bounds are inclusive
		{5*ms + 1, 1}, {10 * ms, 1},
		{11 * ms, 2}, {25 * ms, 2},
		{26 * ms, 3}, {99 * ms, 4}, {100 * ms, 4},
		{101 * ms, 5}, {499 * ms, 6}, {time.Second, 7},
		{2 * time.Second, 8}, {5 * time.Second, 9}, {7 * time.Second, 10},
		{30 * time.Second, 11}, {59 * time.Second, 12}, {time.Minute, 12},
		{time.Minute + 1, 13}, {time.Hour, 13}, // the open last bucket
	}
	want := make([]int64, len(agentsmcp.LatencyBucketBounds)+1)
	for i, tt := range tests {
		tool := fmt.Sprint("single_", i)
		record(t, s, agentsmcp.ToolCall{Tool: tool, Duration: tt.d, At: at(i)}, agentsmcp.ToolCall{Tool: "all", Duration: tt.d, At: at(i)})
		single := make([]int64, len(want))
		single[tt.bucket] = 1
		if p := findPerf(t, s, tool); !slices.Equal(p.Buckets, single) {
			t.Errorf("%v: buckets %v, want %v", tt.d, p.Buckets, single)
		}
		want[tt.bucket]++
	}
	p := findPerf(t, s, "all")
	if !slices.Equal(p.Buckets, want) || p.Calls != int64(len(tests)) {
		t.Errorf("all: %d calls, buckets %v, want %d and %v", p.Calls, p.Buckets, len(tests), want)
	}

	// Percentiles come from the histogram: 9 fast calls and 1 slow one.
	for i := range 10 {
		d := 3 * ms
		if i == 9 {
			d = 700 * ms
		}
		record(t, s, agentsmcp.ToolCall{Tool: "p", Duration: d, At: at(i)})
	}
	p = findPerf(t, s, "p")
	for _, q := range []struct {
		q    float64
		want time.Duration
	}{{0.5, 5 * ms}, {0.9, 5 * ms}, {0.95, time.Second}, {0.99, time.Second}, {1, time.Second}} {
		if got := toolperf.Percentile(p, q.q); got != q.want {
			t.Errorf("p%v = %v, want %v (buckets %v)", q.q*100, got, q.want, p.Buckets)
		}
	}
}

func testToolPerfConcurrent(t *testing.T, s Services) {
	const goroutines, perGoroutine = 8, 25
	var wg sync.WaitGroup
	errs := make(chan error, goroutines*perGoroutine)
	for g := range goroutines {
		wg.Go(func() {
			for i := range perGoroutine {
				c := agentsmcp.ToolCall{Tool: "hot", Duration: time.Duration(g*perGoroutine+i) * time.Millisecond, At: at(i)}
				if i%5 == 0 {
					c.Error = "boom"
				}
				if err := s.ToolPerformance.RecordToolCall(t.Context(), c); err != nil {
					errs <- err
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("concurrent RecordToolCall: %v", err)
	}
	p := findPerf(t, s, "hot")
	const total = goroutines * perGoroutine
	if p.Calls != total || p.Errors != total/5 {
		t.Errorf("calls %d errors %d, want %d and %d: increments were lost", p.Calls, p.Errors, total, total/5)
	}
	if n := sum(p.Buckets); n != total {
		t.Errorf("buckets hold %d calls, want %d: %v", n, total, p.Buckets)
	}
	// Durations are 0…199 ms: 6 in ≤5ms, 5 in (5,10], 15 in (10,25], 25 in
	// (25,50], 50 in (50,100], 99 in (100,250].
	want := []int64{6, 5, 15, 25, 50, 99, 0, 0, 0, 0, 0, 0, 0, 0}
	if !slices.Equal(p.Buckets, want) {
		t.Errorf("buckets %v, want %v", p.Buckets, want)
	}
	if p.CommonErrors[toolperf.ErrorClassOther] != total/5 {
		t.Errorf("common errors %v, want %s: %d", p.CommonErrors, toolperf.ErrorClassOther, total/5)
	}
	checkTime(t, "LastCallAt", p.LastCallAt, at(perGoroutine-1))
	// Seconds apart, a day's half-life: every outcome weighs about 1.
	recent := toolperf.DecayedAs(p.Recent, at(perGoroutine-1))
	if !near(recent.Successes, total-total/5, 0.01) || !near(recent.Failures, total/5, 0.01) {
		t.Errorf("recent outcomes %+v, want about %d successes and %d failures: weights were lost", recent, total-total/5, total/5)
	}
}

// near reports whether got is within tolerance (relative) of want.
func near(got, want, tolerance float64) bool {
	return math.Abs(got-want) <= tolerance*max(math.Abs(want), 1e-9)
}

// halfLives is base plus n reliability half-lives.
func halfLives(n float64) time.Time {
	return base.Add(time.Duration(n * float64(agentsmcp.ReliabilityHalfLife)))
}

func testToolPerfReliabilityEvidence(t *testing.T, s Services) {
	call := func(at time.Time, errText string) agentsmcp.ToolCall {
		return agentsmcp.ToolCall{Tool: "weather", Duration: time.Millisecond, Error: errText, At: at}
	}
	check := func(what string, p *agentsmcp.ToolPerformance, as time.Time, successes, failures float64, streak int64) {
		t.Helper()
		recent := toolperf.DecayedAs(p.Recent, as)
		if !near(recent.Successes, successes, 1e-6) || !near(recent.Failures, failures, 1e-6) {
			t.Errorf("%s: recent outcomes as of %v = %v successes, %v failures; want %v and %v", what, as, recent.Successes, recent.Failures, successes, failures)
		}
		if p.ConsecutiveFailures != streak {
			t.Errorf("%s: %d consecutive failures, want %d", what, p.ConsecutiveFailures, streak)
		}
	}

	record(t, s, call(halfLives(0), ""))
	p := findPerf(t, s, "weather")
	check("one success", p, halfLives(0), 1, 0, 0)
	checkTime(t, "LastSuccessAt", p.LastSuccessAt, halfLives(0))
	if !p.LastFailureAt.IsZero() || p.LastErrorClass != "" {
		t.Errorf("no failure yet, but LastFailureAt %v, LastErrorClass %q", p.LastFailureAt, p.LastErrorClass)
	}

	// Each half-life halves what came before.
	record(t, s, call(halfLives(1), "service unavailable (503)\nretry later"), call(halfLives(2), "quota exceeded"))
	p = findPerf(t, s, "weather")
	check("two failures", p, halfLives(2), 0.25, 1.5, 2)
	check("two failures, a half-life on", p, halfLives(3), 0.125, 0.75, 2)
	checkTime(t, "LastFailureAt", p.LastFailureAt, halfLives(2))
	checkTime(t, "LastSuccessAt", p.LastSuccessAt, halfLives(0))
	if p.LastErrorClass != toolperf.ErrorClassRateLimited {
		t.Errorf("LastErrorClass %q, want the class of the last failure", p.LastErrorClass)
	}
	if ev := toolperf.Evidence(p); ev.ConsecutiveFailures != 2 || ev.LastErrorClass != toolperf.ErrorClassRateLimited || !ev.LastFailureAt.Equal(p.LastFailureAt) {
		t.Errorf("Evidence() %+v does not carry the record", ev)
	}

	// A success ends the streak; the last failure is still known.
	record(t, s, call(halfLives(2), ""))
	p = findPerf(t, s, "weather")
	check("a success after the failures", p, halfLives(2), 1.25, 1.5, 0)
	if p.LastErrorClass != toolperf.ErrorClassRateLimited {
		t.Errorf("a success changed LastErrorClass to %q", p.LastErrorClass)
	}
	checkTime(t, "LastFailureAt", p.LastFailureAt, halfLives(2))

	// A call recorded late never moves the times back.
	record(t, s, call(halfLives(1), "late failure"))
	p = findPerf(t, s, "weather")
	checkTime(t, "LastFailureAt after a late failure", p.LastFailureAt, halfLives(2))
	check("a late failure", p, halfLives(2), 1.25, 2, 1)

	// Long after, the old outcomes have faded to nothing, and the weights
	// stay finite however far time goes.
	for _, n := range []float64{100, 2000} {
		record(t, s, call(halfLives(n), ""))
		p = findPerf(t, s, "weather")
		recent := toolperf.DecayedAs(p.Recent, halfLives(n))
		if !near(recent.Successes, 1, 1e-6) || recent.Failures > 1e-6 || math.IsInf(p.Recent.Successes, 0) || math.IsNaN(p.Recent.Successes) {
			t.Errorf("%v half-lives on: recent outcomes %+v (stored %+v), want one success and the rest faded", n, recent, p.Recent)
		}
	}
}

func testToolPerfCommonErrors(t *testing.T, s Services) {
	// MaxCommonErrors+2 classes; the most frequent are recorded first, so
	// that a store that trims as it goes keeps exact counts too.
	classes := agentsmcp.MaxCommonErrors + 2
	want := map[string]int64{}
	n := 0
	for c := range classes {
		class := fmt.Sprintf("http %d", 500+c)
		count := classes + 1 - c // distinct counts: no ties at the cut
		if c < agentsmcp.MaxCommonErrors {
			want[class] = int64(count)
		}
		for range count {
			record(t, s, agentsmcp.ToolCall{Tool: "flaky", Duration: time.Millisecond, Error: class, At: at(n)})
			n++
		}
	}
	record(t, s, agentsmcp.ToolCall{Tool: "flaky", Duration: time.Millisecond, At: at(n)})
	p := findPerf(t, s, "flaky")
	if p.Calls != int64(n+1) || p.Errors != int64(n) {
		t.Errorf("calls %d errors %d, want %d and %d", p.Calls, p.Errors, n+1, n)
	}
	if !maps.Equal(p.CommonErrors, want) {
		t.Errorf("common errors %v, want the %d most frequent: %v", p.CommonErrors, agentsmcp.MaxCommonErrors, want)
	}
	if got := toolperf.SuccessRate(p); got != 1/float64(n+1) {
		t.Errorf("success rate %v, want %v", got, 1/float64(n+1))
	}
}

func testToolPerfInvalid(t *testing.T, s Services) {
	ctx := t.Context()
	for _, c := range []agentsmcp.ToolCall{
		{Tool: "", Duration: time.Millisecond},
		{Tool: "neg", Duration: -time.Millisecond},
	} {
		wantCode(t, s.ToolPerformance.RecordToolCall(ctx, c), agentsmcp.EINVALID, fmt.Sprintf("RecordToolCall(%+v)", c))
	}
	list, err := s.ToolPerformance.ListToolPerformance(ctx)
	if err != nil || len(list) != 0 {
		t.Fatalf("invalid calls were recorded: %d tools, %v", len(list), err)
	}
}

func testToolPerfNotFound(t *testing.T, s Services) {
	ctx := t.Context()
	record(t, s, agentsmcp.ToolCall{Tool: "known", Duration: time.Millisecond, At: at(0)})
	for _, tool := range []string{"unknown", "", "Known", "know", ".*"} {
		_, err := s.ToolPerformance.FindToolPerformance(ctx, tool)
		wantCode(t, err, agentsmcp.ENOTFOUND, fmt.Sprintf("FindToolPerformance(%q)", tool))
	}
}

func testToolPerfList(t *testing.T, s Services) {
	ctx := t.Context()
	list, err := s.ToolPerformance.ListToolPerformance(ctx)
	if err != nil || len(list) != 0 {
		t.Fatalf("ListToolPerformance on an empty store: %d tools, %v", len(list), err)
	}
	calls := map[string]int{"b": 5, "a": 3, "d": 3, "c": 1, "e": 7}
	i := 0
	for _, tool := range []string{"a", "b", "c", "d", "e"} {
		for range calls[tool] {
			c := agentsmcp.ToolCall{Tool: tool, Duration: time.Duration(i) * time.Millisecond, At: at(i)}
			if tool == "b" {
				c.Error = "nope"
			}
			record(t, s, c)
			i++
		}
	}
	list, err = s.ToolPerformance.ListToolPerformance(ctx)
	if err != nil {
		t.Fatalf("ListToolPerformance: %v", err)
	}
	var got []string
	for _, p := range list {
		got = append(got, p.Tool)
		if p.Calls != int64(calls[p.Tool]) || sum(p.Buckets) != p.Calls {
			t.Errorf("%s: %d calls, buckets %v; want %d", p.Tool, p.Calls, p.Buckets, calls[p.Tool])
		}
		if one := findPerf(t, s, p.Tool); fmt.Sprint(one) != fmt.Sprint(p) {
			t.Errorf("%s: listed %+v, found %+v", p.Tool, p, one)
		}
	}
	if want := []string{"e", "b", "a", "d", "c"}; !slices.Equal(got, want) {
		t.Errorf("ListToolPerformance order %v, want %v (calls descending, ties by name)", got, want)
	}
}

// testToolPerfErrorClassesCarryNoRequestText: tool performance is shared by
// every principal, so what it keeps of an error is its class, never the
// text, which quotes one caller's arguments and the credential the request
// carried.
func testToolPerfErrorClassesCarryNoRequestText(t *testing.T, s Services) {
	const secret, private = "Zq7sharedApiKeyValue", "alice-private-note"
	errs := []string{
		"GET /v1/items/{id}: Get \"http://127.0.0.1:1/v1/items/" + private + "?k=" + secret + "\": dial tcp 127.0.0.1:1: connect: connection refused",
		"HTTP 404 Not Found: no item " + private + " (key " + secret + ")",
		"user " + private + " has no mailbox",
		"upstream timed out after 30s while reading " + private,
	}
	for i, e := range errs {
		record(t, s, agentsmcp.ToolCall{Tool: "shared_api", Duration: time.Millisecond, Error: e, At: at(i)})
	}
	p := findPerf(t, s, "shared_api")
	want := map[string]int64{toolperf.ErrorClassConnRefused: 1, "http 404": 1, toolperf.ErrorClassOther: 1, toolperf.ErrorClassTimeout: 1}
	if !maps.Equal(p.CommonErrors, want) || p.LastErrorClass != toolperf.ErrorClassTimeout {
		t.Errorf("common errors %v, last %q; want the classes %v, last %q", p.CommonErrors, p.LastErrorClass, want, toolperf.ErrorClassTimeout)
	}
	list, err := s.ToolPerformance.ListToolPerformance(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	for _, lp := range list {
		for class := range lp.CommonErrors {
			if strings.Contains(class, secret) || strings.Contains(class, private) {
				t.Errorf("%s: error class %q holds request text", lp.Tool, class)
			}
		}
	}
}
