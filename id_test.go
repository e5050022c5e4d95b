package agentsmcp

import (
	"strings"
	"testing"
)

func TestNewID(t *testing.T) {
	a, b := NewID(InsightIDPrefix), NewID(InsightIDPrefix)
	if !IDPattern.MatchString(a) || !strings.HasPrefix(a, "ins_") || a == b {
		t.Errorf("NewID gave %q and %q", a, b)
	}
}

func TestPatternID(t *testing.T) {
	a := PatternID("", "goal", []string{"a", "b"})
	if !IDPattern.MatchString(a) || !strings.HasPrefix(a, "pat_") {
		t.Errorf("patternID = %q, not an id", a)
	}
	if b := PatternID("", "goal", []string{"a", "b"}); b != a {
		t.Errorf("patternID is not stable: %q then %q", a, b)
	}
	// Pinned: the id is part of the stored data, so its derivation must
	// never change.
	if want := "pat_635KZ2E6Z64Q6NNZEWCGTS0CNW"; a != want {
		t.Errorf("PatternID(goal, [a b]) = %q, want %q", a, want)
	}
	for _, other := range [][]string{{"a b"}, {"b", "a"}, {"ab"}, {"a", "b", ""}, nil} {
		if PatternID("", "goal", other) == a {
			t.Errorf("PatternID(goal, %q) collides with [a b]", other)
		}
	}
	if PatternID("", "goal", nil) != PatternID("", "goal", []string{}) {
		t.Error("nil and empty steps differ")
	}
	// The anonymous principal keeps the ids of the patterns recorded
	// before patterns had a principal; every other principal has its own.
	if PatternID(AnonymousPrincipal, "goal", []string{"a", "b"}) != a {
		t.Error("the anonymous principal's pattern id differs from the principal-less one")
	}
	b := PatternID("key:0123456789ab", "goal", []string{"a", "b"})
	if !IDPattern.MatchString(b) || b == a || b == PatternID("key:ba9876543210", "goal", []string{"a", "b"}) {
		t.Errorf("PatternID of a principal = %q: not an id, or not its own", b)
	}
	if want := "pat_"; !strings.HasPrefix(b, want) || b != PatternID("key:0123456789ab", "goal", []string{"a", "b"}) {
		t.Errorf("PatternID of a principal is not stable: %q", b)
	}
	if PatternID("key:x", "goal", nil) != PatternID("key:x", "goal", []string{}) {
		t.Error("nil and empty steps differ for a principal")
	}
}
