package storedform_test

import (
	"strings"
	"testing"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/internal/storedform"
)

func TestPatternID(t *testing.T) {
	a := storedform.PatternID("", "goal", []string{"a", "b"})
	if !agentsmcp.IDPattern.MatchString(a) || !strings.HasPrefix(a, "pat_") {
		t.Errorf("patternID = %q, not an id", a)
	}
	if b := storedform.PatternID("", "goal", []string{"a", "b"}); b != a {
		t.Errorf("patternID is not stable: %q then %q", a, b)
	}
	// Pinned: the id is part of the stored data, so its derivation must
	// never change.
	if want := "pat_635KZ2E6Z64Q6NNZEWCGTS0CNW"; a != want {
		t.Errorf("PatternID(goal, [a b]) = %q, want %q", a, want)
	}
	for _, other := range [][]string{{"a b"}, {"b", "a"}, {"ab"}, {"a", "b", ""}, nil} {
		if storedform.PatternID("", "goal", other) == a {
			t.Errorf("PatternID(goal, %q) collides with [a b]", other)
		}
	}
	if storedform.PatternID("", "goal", nil) != storedform.PatternID("", "goal", []string{}) {
		t.Error("nil and empty steps differ")
	}
	// The anonymous principal keeps the ids of the patterns recorded
	// before patterns had a principal; every other principal has its own.
	if storedform.PatternID(agentsmcp.AnonymousPrincipal, "goal", []string{"a", "b"}) != a {
		t.Error("the anonymous principal's pattern id differs from the principal-less one")
	}
	b := storedform.PatternID("key:0123456789ab", "goal", []string{"a", "b"})
	if !agentsmcp.IDPattern.MatchString(b) || b == a || b == storedform.PatternID("key:ba9876543210", "goal", []string{"a", "b"}) {
		t.Errorf("PatternID of a principal = %q: not an id, or not its own", b)
	}
	if want := "pat_"; !strings.HasPrefix(b, want) || b != storedform.PatternID("key:0123456789ab", "goal", []string{"a", "b"}) {
		t.Errorf("PatternID of a principal is not stable: %q", b)
	}
	if storedform.PatternID("key:x", "goal", nil) != storedform.PatternID("key:x", "goal", []string{}) {
		t.Error("nil and empty steps differ for a principal")
	}
}
