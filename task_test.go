package agentsmcp

import (
	"fmt"
	"strings"
	"testing"
)

func TestTaskStatusTerminal(t *testing.T) {
	var terminal []TaskStatus
	for _, s := range TaskStatuses {
		if s.Terminal() {
			terminal = append(terminal, s)
		}
	}
	if fmt.Sprint(terminal) != "[succeeded failed cancelled]" {
		t.Errorf("terminal statuses %v", terminal)
	}
}

func FuzzIsStepID(f *testing.F) {
	for _, s := range []string{"", "a", "s017", "A", "a b", "é", "a-b_c", strings.Repeat("x", 64), strings.Repeat("x", 65), "\x00", "z9"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, id string) {
		if got, want := IsStepID(id), StepIDPattern.MatchString(id); got != want {
			t.Errorf("IsStepID(%q) = %v; StepIDPattern says %v", id, got, want)
		}
	})
}
