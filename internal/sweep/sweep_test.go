package sweep

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

func TestInterval(t *testing.T) {
	for r, want := range map[time.Duration]time.Duration{
		time.Second:         MinInterval,
		time.Minute:         6 * time.Second,
		24 * time.Hour:      MaxInterval,
		30 * 24 * time.Hour: MaxInterval,
	} {
		if got := Interval(r); got != want {
			t.Errorf("Interval(%s) = %s, want %s", r, got, want)
		}
	}
}

// TestInBatches: batches go on while full, stop at the first short one or
// error, and the count includes what a failing batch deleted.
func TestInBatches(t *testing.T) {
	left := int64(25)
	calls := 0
	n, err := InBatches(t.Context(), 10, func(_ context.Context, limit int) (int64, error) {
		calls++
		d := min(left, int64(limit))
		left -= d
		return d, nil
	})
	if n != 25 || err != nil || calls != 3 {
		t.Fatalf("InBatches = %d, %v after %d calls; want 25, nil after 3", n, err, calls)
	}
	boom := errors.New("store down")
	n, err = InBatches(t.Context(), 10, func(context.Context, int) (int64, error) { return 4, boom })
	if n != 4 || !errors.Is(err, boom) {
		t.Fatalf("InBatches = %d, %v; want 4, %v", n, err, boom)
	}
}

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

// TestLoopSweepsAtOnceThenEveryInterval: the first sweep is immediate, the
// next ones follow the interval with the cut-off at now minus retention,
// a failure and a deletion are logged, and cancelling ctx stops the loop.
func TestLoopSweepsAtOnceThenEveryInterval(t *testing.T) {
	var logs lockedBuffer
	sweeps := make(chan time.Time, 10)
	call := 0
	start := time.Now()
	l := Loop{
		Sweep: func(_ context.Context, before time.Time) (int64, error) {
			call++
			sweeps <- before
			if call == 1 {
				return 2, errors.New("store down")
			}
			return 3, nil
		},
		Retention: time.Hour,
		Interval:  20 * time.Millisecond,
		Logger:    slog.New(slog.NewTextHandler(&logs, nil)),
		What:      "thing retention", BeforeKey: "endedBefore",
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() { defer close(done); l.Run(ctx) }()
	for i := range 2 {
		select {
		case before := <-sweeps:
			if d := start.Sub(before); d < time.Hour-time.Second || d > time.Hour+time.Second {
				t.Errorf("sweep %d: cut-off %s before start, want about an hour", i+1, d)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("sweep %d never came", i+1)
		}
	}
	cancel()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not return after its context was cancelled")
	}
	out := logs.String()
	for _, want := range []string{`level=WARN msg="thing retention failed"`, "deleted=2", "error=\"store down\"", `level=INFO msg="thing retention"`, "deleted=3", "endedBefore="} {
		if !strings.Contains(out, want) {
			t.Errorf("log lacks %q:\n%s", want, out)
		}
	}
}
