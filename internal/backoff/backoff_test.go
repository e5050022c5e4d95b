package backoff

import (
	"math"
	"testing"
	"time"
)

func TestDelayBounds(t *testing.T) {
	const ms = time.Millisecond
	tests := []struct {
		name        string
		base, limit time.Duration
		n           int
		nominal     time.Duration
	}{
		{"first failure", 100 * ms, time.Second, 1, 100 * ms},
		{"n below 1 counts as 1", 100 * ms, time.Second, 0, 100 * ms},
		{"doubles", 100 * ms, time.Second, 3, 400 * ms},
		{"capped", 100 * ms, time.Second, 5, time.Second},
		{"capped far out", 100 * ms, time.Second, 1 << 30, time.Second},
		{"no cap", 100 * ms, 0, 8, 12800 * ms},
		{"no cap, no overflow", time.Second, 0, 1 << 30, time.Duration(math.MaxInt64/2 + 1)},
		{"limit below base", time.Second, 100 * ms, 1, 100 * ms},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lo, hi := tt.nominal/2, tt.nominal
			if tt.nominal > math.MaxInt64/2 {
				// Doubling stopped before it would overflow.
				lo, hi = time.Duration(math.MaxInt64/4), time.Duration(math.MaxInt64)
			}
			var seenLow, seenHigh bool
			mid := lo + (hi-lo)/2
			for range 1000 {
				d := Delay(tt.base, tt.limit, tt.n)
				if d < lo || d > hi {
					t.Fatalf("Delay(%v, %v, %d) = %v, want in [%v, %v]", tt.base, tt.limit, tt.n, d, lo, hi)
				}
				seenLow = seenLow || d < mid
				seenHigh = seenHigh || d >= mid
			}
			if !seenLow || !seenHigh {
				t.Errorf("1000 waits all in one half of [%v, %v] (low %v, high %v): not jittered", lo, hi, seenLow, seenHigh)
			}
		})
	}
}

func TestDelayWithoutBase(t *testing.T) {
	for _, base := range []time.Duration{0, -time.Second} {
		if d := Delay(base, time.Minute, 1<<30); d != 0 {
			t.Errorf("Delay(%v, 1m, 2^30) = %v, want 0", base, d)
		}
	}
}
