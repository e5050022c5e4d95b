package mcptools

import (
	"testing"
	"time"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/agents"
	"github.com/agents-mcp/agents-mcp/internal/storedform"
)

// TestInputWaitEndedStaysEnded: a task whose wait for input ran out is
// shown ended, and an answer that arrives later (a partial or rejected one,
// which pauses the task again) does not show it waiting once more; an
// answer within the wait restarts it.
func TestInputWaitEndedStaysEnded(t *testing.T) {
	const wait = time.Minute
	t0 := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	ev := func(after time.Duration, typ string) agentsmcp.TaskEvent {
		return agentsmcp.TaskEvent{At: t0.Add(after), Type: typ}
	}
	for _, tc := range []struct {
		name      string
		history   []agentsmcp.TaskEvent
		now       time.Duration
		wantEnded bool
		wantEnd   time.Duration
	}{
		{"waiting within the bound", []agentsmcp.TaskEvent{ev(0, "paused")}, 30 * time.Second, false, wait},
		{"waited past the bound", []agentsmcp.TaskEvent{ev(0, "paused")}, 2 * wait, true, wait},
		{"a partial answer within the wait restarts it",
			[]agentsmcp.TaskEvent{ev(0, "paused"), ev(50*time.Second, "step_waiting_input")}, 90 * time.Second, false, 50*time.Second + wait},
		{"a partial answer after the wait does not reopen it",
			[]agentsmcp.TaskEvent{ev(0, "paused"), ev(2*wait, "step_waiting_input"), ev(2*wait, "paused")}, 2*wait + time.Second, true, wait},
	} {
		task := &agentsmcp.Task{Status: agentsmcp.TaskPaused, History: tc.history, UpdatedAt: tc.history[len(tc.history)-1].At}
		end, ended := inputWaitEnded(task, wait, t0.Add(tc.now))
		if ended != tc.wantEnded || !end.Equal(t0.Add(tc.wantEnd)) {
			t.Errorf("%s: ended %v at +%v, want %v at +%v", tc.name, ended, end.Sub(t0), tc.wantEnded, tc.wantEnd)
		}
	}
}

// The wait events storedform reads are the executor's.
func TestInputWaitEventsAreTheExecutors(t *testing.T) {
	if agents.EventInputsRejected != storedform.EventInputsRejected {
		t.Errorf("the executor's refused-inputs event %q is not storedform's %q", agents.EventInputsRejected, storedform.EventInputsRejected)
	}
}
