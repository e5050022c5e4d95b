package syncloop

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"
)

// lockedBuffer is a log destination safe for the loop's goroutine and the
// test's.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestRunLogsTransitionsOnly runs a loop whose store fails three times and
// then recovers, and checks that it synced repeatedly, logged the failure
// once and the recovery once, and stopped with its context.
func TestRunLogsTransitionsOnly(t *testing.T) {
	var logs lockedBuffer
	calls := make(chan int, 100)
	n := 0
	l := Loop{
		Sync: func(ctx context.Context) error {
			n++
			calls <- n
			if _, ok := ctx.Deadline(); !ok {
				t.Error("Sync ran without a deadline")
			}
			if n <= 3 {
				return errors.New("store down")
			}
			return nil
		},
		Timeout: time.Second, Logger: slog.New(slog.NewTextHandler(&logs, nil)),
		Failing: "cannot read the store", Recovered: "the store is readable again",
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() { defer close(done); l.Run(ctx, time.Millisecond) }()
	for c := range calls {
		if c == 6 {
			break
		}
	}
	cancel()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not return after its context was cancelled")
	}
	out := logs.String()
	if strings.Count(out, "cannot read the store") != 1 || strings.Count(out, "the store is readable again") != 1 {
		t.Errorf("want one failure and one recovery logged, got:\n%s", out)
	}
}
