package router

import "time"

// KnownMethodsForTest exposes the guard's method table to the external tests.
func KnownMethodsForTest() map[string]string {
	out := map[string]string{}
	for m, k := range knownMethods {
		if k == callMethod {
			out[m] = "call"
		} else {
			out[m] = "notification"
		}
	}
	return out
}

// WatchersForTest counts the task watchers registered with h, by task id
// watched: one per HTTP handler and task, however many of its streams
// watch the task.
func (h *TaskHub) WatchersForTest() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := 0
	for _, ws := range h.byID {
		n += len(ws)
	}
	return n
}

// SetPrimingDelayForTest sets how long the tools/call fast path holds its
// priming event back, and returns what restores the default.
func SetPrimingDelayForTest(d time.Duration) (restore func()) {
	primingDelayOverride.Store(int64(d))
	return func() { primingDelayOverride.Store(0) }
}
