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

// SetPrimingDelayForTest sets how long the tools/call fast path holds its
// priming event back, and returns what restores the default.
func SetPrimingDelayForTest(d time.Duration) (restore func()) {
	primingDelayOverride.Store(int64(d))
	return func() { primingDelayOverride.Store(0) }
}
