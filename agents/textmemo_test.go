package agents

import (
	"strconv"
	"strings"
	"testing"
)

// The memo answers what the function answers, computes a text once, and
// stays bounded: long texts are not kept, and a full memo starts over.
func TestTextMemoAnswersAndStaysBounded(t *testing.T) {
	var m textMemo
	calls := 0
	upper := func(s string) string { calls++; return strings.ToUpper(s) }
	for range 3 {
		if got := m.of("weather in Paris", upper); got != "WEATHER IN PARIS" {
			t.Fatalf("of = %q", got)
		}
	}
	if calls != 1 {
		t.Errorf("a text kept was computed %d times, want once", calls)
	}
	long := strings.Repeat("x", memoMaxText+1)
	m.of(long, upper)
	m.of(long, upper)
	if calls != 3 {
		t.Errorf("a text over memoMaxText was kept (%d calls, want 3)", calls)
	}
	for i := range memoMaxEntries + 10 {
		m.of("request "+strconv.Itoa(i), upper)
	}
	if n := len(m.m); n > memoMaxEntries {
		t.Errorf("memo holds %d texts, more than %d", n, memoMaxEntries)
	}
	// The memo answers as the functions do.
	for _, req := range []string{"What is the weather in Paris today?", "Find the 3 largest files under /data", "Echo the message 'hello'"} {
		if GoalOf(req) != goalOf(req) || FamilyOf(req) != familyOf(req) {
			t.Errorf("%q: memo and function differ", req)
		}
	}
}
