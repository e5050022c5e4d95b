package toolperf_test

import (
	"maps"
	"math"
	"testing"
	"time"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/internal/toolperf"
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
	got := toolperf.SumCalls(calls, now)
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
		!a.ErrorClasses[0].LastAt.Equal(t0) || a.ErrorClasses[1].Class != toolperf.ErrorClassRateLimited {
		t.Errorf("a's classes (in order of first appearance): %+v", a.ErrorClasses)
	}
	if a.Buckets[0] != 3 || a.Buckets[toolperf.LatencyBucket(30*time.Millisecond)] != 1 {
		t.Errorf("a's buckets %v", a.Buckets)
	}
	// As of the last call: the success and the quota failure weigh 1, the
	// timeout a day before 1/2, the late one two days before 1/4.
	if !a.Recent.At.Equal(a.LastCallAt) || math.Abs(a.Recent.Successes-1) > 1e-9 || math.Abs(a.Recent.Failures-1.75) > 1e-9 {
		t.Errorf("a's recent outcomes %+v, want 1 success and 1.75 failures", a.Recent)
	}
	if b.Calls != 1 || b.Errors != 0 || !b.LastCallAt.Equal(now) || b.Buckets[toolperf.LatencyBucket(2*time.Minute)] != 1 {
		t.Errorf("b: %+v", b)
	}
}

func TestToolErrorClass(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"", toolperf.ErrorClassOther},
		{" \n ", toolperf.ErrorClassOther},
		{"Timeout\nstack", toolperf.ErrorClassTimeout},
		{"GET /v1/items/{id}: no answer within 10s", toolperf.ErrorClassTimeout},
		{"context deadline exceeded", toolperf.ErrorClassTimeout},
		{"GET /x: dial tcp 127.0.0.1:1: connect: connection refused", toolperf.ErrorClassConnRefused},
		{"POST /x: read tcp: connection reset by peer", toolperf.ErrorClassConnReset},
		{"upstream files: EOF", toolperf.ErrorClassConnReset},
		{"dial tcp: lookup api.example: no such host", toolperf.ErrorClassHostNotFound},
		{"tls: failed to verify certificate: x509: unknown authority", toolperf.ErrorClassTLS},
		{`HTTP 404 Not Found: {"error":"no post alice-42"}`, "http 404"},
		{"service unavailable (503)\nretry later", "http 503"},
		{"status code: 429, slow down", "http 429"},
		{"quota exceeded", toolperf.ErrorClassRateLimited},
		{"Not authorized for blog (no credential). Authorize at https://as.example/authorize?state=s3cr3t, then retry.", toolperf.ErrorClassAuthorization},
		{"the path parameter \"id\" is missing", toolperf.ErrorClassInvalidArguments},
		{"MCP error -32602: invalid params: expected string at /name", toolperf.ErrorClassInvalidArguments},
		{"ENOENT: no such file /home/alice/diary.txt", toolperf.ErrorClassNotFound},
		{"open /etc/shadow: permission denied", toolperf.ErrorClassPermissionDenied},
		{"GET /x: the answer is larger than the limit of 10 bytes (max_response_bytes)", toolperf.ErrorClassTooLarge},
		{"upstream files is down: connecting", toolperf.ErrorClassUnavailable},
		{"dial 169.254.169.254:80: refused by the egress policy", toolperf.ErrorClassEgress},
		{"user alice has no mailbox; password hunter2", toolperf.ErrorClassOther},
	} {
		got := toolperf.ErrorClass(tt.in)
		if got != tt.want {
			t.Errorf("ToolErrorClass(%q) = %q, want %q", tt.in, got, tt.want)
		}
		if again := toolperf.ErrorClass(got); again != got {
			t.Errorf("ToolErrorClass(%q) = %q: a class is not its own class", got, again)
		}
	}
}

// Rows stored before classes were normalised hold error texts: a reader
// gets their classes, counts merged, the most frequent first.
func TestCommonErrorClasses(t *testing.T) {
	got := toolperf.CommonErrors([]toolperf.ErrorClassCount{
		{Class: "GET https://api.example/x?k=SECRET: connection refused", Count: 4},
		{Class: "HTTP 500 Internal Server Error: boom", Count: 3},
		{Class: "connection refused", Count: 2},
		{Class: "timeout", Count: 1},
		{Class: "http 502", Count: 1},
		{Class: "http 503", Count: 1},
		{Class: "something of alice's", Count: 1},
	})
	want := map[string]int64{"connection refused": 6, "http 500": 3, "timeout": 1, "http 502": 1, "http 503": 1}
	if !maps.Equal(got, want) {
		t.Errorf("CommonErrorClasses = %v, want %v", got, want)
	}
	if got := toolperf.LastErrorClass(""); got != "" {
		t.Errorf("LastErrorClass(\"\") = %q", got)
	}
}

func TestToolErrorClassHTTPStatus(t *testing.T) {
	for in, want := range map[string]string{
		"HTTP/1.1 502 Bad Gateway":                 "http 502",
		"http: 404":                                "http 404",
		`Get "http://127.0.0.1:1/x": EOF`:          toolperf.ErrorClassConnReset,
		"http 127.0.0.1 refused":                   toolperf.ErrorClassOther,
		"status 200 but the body was not JSON":     "http 200",
		"upstream answered (404) for /users/alice": "http 404",
	} {
		if got := toolperf.ErrorClass(in); got != want {
			t.Errorf("ToolErrorClass(%q) = %q, want %q", in, got, want)
		}
	}
}
