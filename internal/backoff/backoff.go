// Package backoff computes the wait before retrying a failed operation, so
// that every retry loop of agents-mcp paces itself the same way.
//
// The wait grows exponentially with the number of failures and carries
// "equal jitter": it is drawn uniformly from the upper half of the nominal
// wait. Half of the wait is random, so clients that failed together (the
// replicas of a deployment, the steps of many tasks, the callers of a
// restarted upstream) spread out instead of retrying in step; half is
// fixed, so no retry follows its failure at once, which full jitter (a
// draw from zero to the nominal wait) allows.
package backoff

import (
	"math"
	"math/rand/v2"
	"time"
)

// Delay is the wait before retrying after the n-th consecutive failure
// (n ≥ 1; a smaller n counts as 1). The nominal wait is base doubled n-1
// times and capped at limit (no cap when limit ≤ 0); the result is uniform
// in [nominal/2, nominal]. It is 0 when base ≤ 0, and it never overflows,
// whatever n.
func Delay(base, limit time.Duration, n int) time.Duration {
	if base <= 0 {
		return 0
	}
	d := base
	for k := 1; k < n && d <= math.MaxInt64/2 && (limit <= 0 || d < limit); k++ {
		d *= 2
	}
	if limit > 0 {
		d = min(d, limit)
	}
	half := d / 2
	return half + rand.N(d-half+1)
}
