// Package testutil holds the helpers that the tests of several packages
// share. Only _test.go files import it.
package testutil

import (
	"testing"
	"time"
)

// pollInterval is how often Eventually checks its condition: short next to
// the timeouts tests use, long enough not to busy-loop on a shared machine.
const pollInterval = 10 * time.Millisecond

// Eventually calls cond every 10 ms until it returns true, and fails t
// with t.Fatalf, naming what, when timeout passes first. cond runs on the
// caller's goroutine, so it may call t.Fatal itself to stop early (on an
// error, or when the thing waited for can no longer happen).
func Eventually(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	EventuallyState(t, timeout, what, func() (bool, string) { return cond(), "" })
}

// EventuallyState is [Eventually] for a condition that also describes the
// state it saw: the failure message quotes its last description.
func EventuallyState(t testing.TB, timeout time.Duration, what string, cond func() (ok bool, state string)) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		ok, state := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			if state == "" {
				t.Fatalf("%s: not true within %v", what, timeout)
			} else {
				t.Fatalf("%s: not true within %v; last state: %s", what, timeout, state)
			}
			return // for a testing.TB whose Fatalf returns
		}
		time.Sleep(pollInterval)
	}
}
