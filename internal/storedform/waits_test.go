package storedform

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	agentsmcp "github.com/agents-mcp/agents-mcp"
)

// longestWait is the longest wait for an answer history records as over.
func longestWait(history []agentsmcp.TaskEvent) time.Duration {
	waits, _ := Waits(history)
	var longest time.Duration
	for _, w := range waits {
		longest = max(longest, w.Lasted)
	}
	return longest
}

// TestTrimHistoryKeepsTheLongestWait: whatever the events dropped (a
// pause, refused or partial answers that restart the wait, a run of them
// cut in its middle, a history trimmed before), the trimmed history
// records the same longest wait for an answer as the whole one, and ends
// with the same newest events.
func TestTrimHistoryKeepsTheLongestWait(t *testing.T) {
	types := []string{EventPaused, EventStepWaitingInput, EventInputsRejected, "step_started", "step_succeeded", "resumed"}
	rng := rand.New(rand.NewPCG(1, 2))
	t0 := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	for round := range 300 {
		var all, stored []agentsmcp.TaskEvent // every event; what a store keeps
		at := t0
		for range 1 + rng.IntN(4) {
			for range rng.IntN(agentsmcp.MaxTaskHistory) {
				at = at.Add(time.Duration(rng.IntN(3600)) * time.Second)
				e := agentsmcp.TaskEvent{At: at, Type: types[rng.IntN(len(types))]}
				all, stored = append(all, e), append(stored, e)
			}
			stored = TrimHistory(stored)
			if want := len(all); len(stored) != min(want, agentsmcp.MaxTaskHistory) {
				t.Fatalf("round %d: %d events kept of %d", round, len(stored), want)
			}
			if got, want := longestWait(stored), longestWait(all); got != want {
				t.Fatalf("round %d: the trimmed history's longest wait is %v, the whole one's %v", round, got, want)
			}
			if n := len(stored) - 1; n > 0 && !slices.Equal(stored[1:], all[len(all)-n:]) {
				t.Fatalf("round %d: the newest events are not kept in order", round)
			}
		}
	}
}

// A history that holds no wait is trimmed to its newest events alone.
func TestTrimHistoryWithoutWaits(t *testing.T) {
	var h []agentsmcp.TaskEvent
	for i := range agentsmcp.MaxTaskHistory + 3 {
		h = append(h, agentsmcp.TaskEvent{At: time.Unix(int64(i), 0), Type: "tick"})
	}
	if got := TrimHistory(h); !slices.Equal(got, h[3:]) {
		t.Errorf("trimmed to %d events starting %+v; want the newest %d", len(got), got[0], agentsmcp.MaxTaskHistory)
	}
}
