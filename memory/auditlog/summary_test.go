package auditlog_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/internal/testutil"
	"github.com/agents-mcp/agents-mcp/memory/auditlog"
)

func authFailure(hint string) *agentsmcp.AuditEntry {
	return &agentsmcp.AuditEntry{Principal: hint, Kind: agentsmcp.AuditAuthFailure, Target: "POST /mcp",
		Outcome: agentsmcp.AuditDenied, Error: "401 invalid API key"}
}

type sourceArgs struct {
	Source        string  `json:"source"`
	Count         int     `json:"count"`
	WindowSeconds float64 `json:"windowSeconds"`
}

// TestSummarizerBoundsAFlood: 5,000 failures from one address and 3 from
// another within a window leave at most SummaryFirst+1 entries per
// address, whose counts add up to every failure; a failure after the
// window opens a new one.
func TestSummarizerBoundsAFlood(t *testing.T) {
	db := openStore(t)
	rec := auditlog.New(db, auditlog.Options{FlushInterval: 10 * time.Millisecond})
	stopRec := start(t, rec)
	window := 500 * time.Millisecond
	sum := auditlog.NewSummarizer(rec, window)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		sum.Run(ctx)
	}()

	for i := range 5000 {
		sum.Record("10.0.0.1", authFailure(fmt.Sprintf("key:%012d", i%7)))
	}
	for range 3 {
		sum.Record("10.0.0.2", authFailure("key:aaaaaaaaaaaa"))
	}
	if auditlog.SummaryFirst <= 3 {
		t.Fatal("the second source's 3 failures are meant to come among its first few")
	}
	// The first source: its first few and one summary; the second: its 3 as they came.
	want := uint64(auditlog.SummaryFirst + 1 + 3)
	testutil.Eventually(t, 5*time.Second, "the summaries of the first window", func() bool { return rec.Written() == want })
	sum.Record("10.0.0.1", authFailure("key:bbbbbbbbbbbb")) // a new window
	cancel()
	<-done // Run flushes nothing more: the new window has no others yet
	stopRec()

	counts := map[string]int{}
	entries := map[string]int{}
	for _, e := range stored(t, db) {
		var a sourceArgs
		if err := json.Unmarshal(e.Arguments, &a); err != nil {
			t.Fatalf("entry %+v: arguments %s: %v", e, e.Arguments, err)
		}
		counts[a.Source] += a.Count
		entries[a.Source]++
		if a.WindowSeconds != window.Seconds() {
			t.Errorf("windowSeconds %v", a.WindowSeconds)
		}
		if a.Count > 1 {
			if !strings.Contains(e.Error, fmt.Sprintf("%d more like this from %s", a.Count, a.Source)) {
				t.Errorf("summary error %q does not say what it stands for", e.Error)
			}
			if e.Principal != "(several)" {
				t.Errorf("summary of %s names %q, want (several)", a.Source, e.Principal)
			}
		}
	}
	if counts["10.0.0.1"] != 5001 || counts["10.0.0.2"] != 3 {
		t.Errorf("counts %v, want every failure: 5001 and 3", counts)
	}
	if entries["10.0.0.1"] != auditlog.SummaryFirst+2 || entries["10.0.0.2"] != 3 {
		t.Errorf("entries per source %v, want %d (the first few, a summary, the next window's first) and 3 (as they came)", entries, auditlog.SummaryFirst+2)
	}
}

// TestSummarizerFlushesOnStop: the counted failures of a window still open
// when Run stops are written, not lost.
func TestSummarizerFlushesOnStop(t *testing.T) {
	db := openStore(t)
	rec := auditlog.New(db, auditlog.Options{FlushInterval: 10 * time.Millisecond})
	stopRec := start(t, rec)
	sum := auditlog.NewSummarizer(rec, time.Hour)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		sum.Run(ctx)
	}()
	for range 10 {
		sum.Record("::1", authFailure("none"))
	}
	cancel()
	<-done
	stopRec()
	total := 0
	for _, e := range stored(t, db) {
		var a sourceArgs
		_ = json.Unmarshal(e.Arguments, &a)
		total += a.Count
	}
	if total != 10 {
		t.Errorf("%d failures accounted for, want 10", total)
	}
}
