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
