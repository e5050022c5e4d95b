package testutil

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// recorder is a testing.TB that records Fatalf instead of stopping the
// goroutine; the methods Eventually does not call are left nil.
type recorder struct {
	testing.TB
	fatal []string
}

func (r *recorder) Helper() {}

func (r *recorder) Fatalf(format string, args ...any) {
	r.fatal = append(r.fatal, fmt.Sprintf(format, args...))
}

func TestEventuallyReturnsOnceTrue(t *testing.T) {
	r := &recorder{}
	calls := 0
	Eventually(r, 5*time.Second, "third call", func() bool { calls++; return calls == 3 })
	if calls != 3 || len(r.fatal) != 0 {
		t.Errorf("calls %d, failures %q; want 3 calls and no failure", calls, r.fatal)
	}
}

func TestEventuallyFailsAfterTimeout(t *testing.T) {
	r := &recorder{}
	start := time.Now()
	Eventually(r, 50*time.Millisecond, "never", func() bool { return false })
	if elapsed := time.Since(start); elapsed < 50*time.Millisecond {
		t.Errorf("gave up after %v, before the timeout", elapsed)
	}
	if len(r.fatal) != 1 || r.fatal[0] != "never: not true within 50ms" {
		t.Errorf("failures %q", r.fatal)
	}
}

func TestEventuallyStateQuotesTheLastState(t *testing.T) {
	r := &recorder{}
	n := 0
	EventuallyState(r, 30*time.Millisecond, "count reaches 1000", func() (bool, string) {
		n++
		return false, fmt.Sprintf("count %d", n)
	})
	if len(r.fatal) != 1 || !strings.HasSuffix(r.fatal[0], fmt.Sprintf("; last state: count %d", n)) {
		t.Errorf("failures %q after %d calls", r.fatal, n)
	}
}
