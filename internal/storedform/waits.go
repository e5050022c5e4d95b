package storedform

// This file keeps, through the trimming of a task's history, what the MCP
// view of the task reads from that history: how long each wait for an
// answer lasted. tasks.input_wait ends an MCP task whose wait lasted
// longer, and that end must not flip back when the events of the wait are
// trimmed away by later ones. So the trimming puts, in place of the events
// it drops, one event that records the longest wait they held.

import (
	"fmt"
	"strings"
	"time"

	agentsmcp "github.com/agents-mcp/agents-mcp"
)

// The task events that begin a wait for an answer (the vocabulary of the
// executor, package agents): a pause, and while paused, an answer that was
// refused or was only partial (the question is asked again, and the wait
// begins anew).
const (
	EventPaused           = "paused"
	EventInputsRejected   = "inputs_rejected"
	EventStepWaitingInput = "step_waiting_input"
)

// EventHistoryTrimmed is the type of the event that stands first in a
// trimmed history in place of dropped events that held a wait for an
// answer: its Message records the longest of those waits (see
// [TrimHistory]); its At is the time of the last event dropped.
const EventHistoryTrimmed = "history_trimmed"

// Wait is one wait of a task for an answer: it began at Began and lasted
// Lasted, until the next event of the history.
type Wait struct {
	Began  time.Time
	Lasted time.Duration
}

// Waits returns the waits for an answer that history records as over, in
// their order, and when the wait that history ends in began (zero when it
// does not end in one). A wait begins at a paused event, or at a refused
// or partial answer that follows while the task is paused, and ends at
// the next event; an [EventHistoryTrimmed] event gives the wait it
// records.
func Waits(history []agentsmcp.TaskEvent) (waits []Wait, open time.Time) {
	eachWait(history, func(_ int, w Wait) { waits = append(waits, w) })
	if n := len(history); n > 0 && inWait(history) {
		open = history[n-1].At
	}
	return waits, open
}

// eachWait calls yield with each wait of history that is over and the
// index of the event that made the task wait: the first of the run of
// wait events that ends at the wait (a paused event), or the trimmed
// event that records it.
func eachWait(history []agentsmcp.TaskEvent, yield func(head int, w Wait)) {
	head := -1 // the paused event that began the current run; -1: not waiting
	for i, e := range history {
		if head >= 0 {
			yield(head, Wait{Began: history[i-1].At, Lasted: e.At.Sub(history[i-1].At)})
		}
		switch {
		case e.Type == EventPaused:
			head = i
		case head >= 0 && (e.Type == EventInputsRejected || e.Type == EventStepWaitingInput):
			// still paused: the wait begins anew
		default:
			head = -1
			if w, ok := trimmedWait(e); ok {
				yield(i, w)
			}
		}
	}
}

// inWait reports whether history ends waiting for an answer.
func inWait(history []agentsmcp.TaskEvent) bool {
	waiting := false
	for _, e := range history {
		waiting = e.Type == EventPaused || waiting && (e.Type == EventInputsRejected || e.Type == EventStepWaitingInput)
	}
	return waiting
}

// trimmedWaitFormat is the Message of an [EventHistoryTrimmed] event.
const trimmedWaitFormat = "earlier events trimmed; the longest wait for an answer among them began %s and lasted %s"

// trimmedEvent is the event that replaces dropped, events that held w.
func trimmedEvent(dropped []agentsmcp.TaskEvent, w Wait) agentsmcp.TaskEvent {
	return agentsmcp.TaskEvent{At: dropped[len(dropped)-1].At, Type: EventHistoryTrimmed,
		Message: fmt.Sprintf(trimmedWaitFormat, w.Began.UTC().Format(time.RFC3339Nano), w.Lasted)}
}

// trimmedWait reads the wait an [EventHistoryTrimmed] event records.
func trimmedWait(e agentsmcp.TaskEvent) (Wait, bool) {
	if e.Type != EventHistoryTrimmed {
		return Wait{}, false
	}
	rest, ok := strings.CutPrefix(e.Message, "earlier events trimmed; the longest wait for an answer among them began ")
	if !ok {
		return Wait{}, false
	}
	began, lasted, ok := strings.Cut(rest, " and lasted ")
	if !ok {
		return Wait{}, false
	}
	b, err1 := time.Parse(time.RFC3339Nano, began)
	d, err2 := time.ParseDuration(lasted)
	if err1 != nil || err2 != nil {
		return Wait{}, false
	}
	return Wait{Began: b, Lasted: d}, true
}

// trimKeepingWaits returns the newest agentsmcp.MaxTaskHistory events of h,
// which is longer. When the events dropped held a wait for an answer (or
// began the run of wait events a kept one continues), the oldest event
// kept is replaced by an [EventHistoryTrimmed] that records the longest of
// those waits, so that whether a wait lasted longer than a bound reads the
// same before and after.
func trimKeepingWaits(h []agentsmcp.TaskEvent) []agentsmcp.TaskEvent {
	cut := len(h) - agentsmcp.MaxTaskHistory + 1 // one slot for the trimmed event
	var longest Wait
	found := false
	eachWait(h, func(head int, w Wait) {
		if head < cut && (!found || w.Lasted > longest.Lasted) {
			longest, found = w, true
		}
	})
	if !found {
		return append([]agentsmcp.TaskEvent(nil), h[cut-1:]...)
	}
	kept := make([]agentsmcp.TaskEvent, 0, agentsmcp.MaxTaskHistory)
	return append(append(kept, trimmedEvent(h[:cut], longest)), h[cut:]...)
}
