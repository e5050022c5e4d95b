// Package testutil holds the helpers that the tests of several packages
// share. Only _test.go files import it.
package testutil

import (
	"os"
	"os/exec"
	"regexp"
	"strings"
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

// rerunEnv marks a test binary that [InOwnProcess] started.
const rerunEnv = "AGENTS_MCP_TEST_OWN_PROCESS"

// InOwnProcess is for tests that need the process's global state as it is
// before any test changed it, such as OpenTelemetry's global tracer
// provider, which a test can set but never unset. Unless the process is
// already such a rerun, it runs t again, alone, in a new process of the
// test binary, fails t with that run's output if it failed, and returns
// false: t must return. In the rerun it returns true and t goes on. t
// must be a top-level test (its name is the -test.run pattern).
func InOwnProcess(t *testing.T) bool {
	t.Helper()
	if os.Getenv(rerunEnv) == t.Name() {
		return true
	}
	cmd := exec.Command(os.Args[0], "-test.run=^"+regexp.QuoteMeta(t.Name())+"$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), rerunEnv+"="+t.Name())
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s in its own process: %v\n%s", t.Name(), err, out)
	}
	if !strings.Contains(string(out), "--- PASS: "+t.Name()) {
		t.Fatalf("%s in its own process did not run:\n%s", t.Name(), out)
	}
	return false
}
