package agentsmcp

import (
	"math"
	"time"
)

// ReliabilityHalfLife is how long it takes for the weight of a tool call's
// outcome in [DecayedCounts] to halve: a failure a day old counts half as
// much as one now, so old failures fade and a tool that recovered comes
// back. It is part of how stores weigh outcomes (they add weights relative
// to a stored instant), so changing it changes the meaning of stored
// weights.
const ReliabilityHalfLife = 24 * time.Hour

// DecayedCounts are a tool's call outcomes, each weighed by
// 2^(-age/ReliabilityHalfLife), as of At: to weigh them as of another
// instant, see [DecayedCounts.As]. A store may keep At far from now (it
// moves it only to keep the weights small), so read them through As.
type DecayedCounts struct {
	Successes float64   `json:"successes"`
	Failures  float64   `json:"failures"`
	At        time.Time `json:"at"`
}

// OutcomeWeight is the weight, as of the instant of, of an outcome at at:
// 2^((at-of)/ReliabilityHalfLife), above 1 for an outcome after of.
func OutcomeWeight(at, of time.Time) float64 {
	return math.Exp2(float64(at.Sub(of)) / float64(ReliabilityHalfLife))
}

// As returns the counts as of t.
func (c DecayedCounts) As(t time.Time) DecayedCounts {
	if c.At.IsZero() {
		return DecayedCounts{At: t}
	}
	f := OutcomeWeight(c.At, t)
	return DecayedCounts{Successes: c.Successes * f, Failures: c.Failures * f, At: t}
}

// Add counts one outcome at at; the counts stay as of c.At (or at, for
// zero counts).
func (c DecayedCounts) Add(at time.Time, failed bool) DecayedCounts {
	if c.At.IsZero() {
		c.At = at
	}
	w := OutcomeWeight(at, c.At)
	if failed {
		c.Failures += w
	} else {
		c.Successes += w
	}
	return c
}

// ReliabilityEvidence is what a reliability estimate is made from: the
// decayed outcomes and the current failure streak. [ToolPerformance.Evidence]
// gives a tool's overall evidence; narrower records (per task family, say)
// give theirs the same way and are estimated by the same policy.
type ReliabilityEvidence struct {
	Recent DecayedCounts
	// ConsecutiveFailures counts the failures since the last success.
	ConsecutiveFailures int64
	LastSuccessAt       time.Time
	LastFailureAt       time.Time
	LastErrorClass      string
}

// Reliability is the estimate of a tool's chance to succeed, and whether
// it should be avoided for now.
type Reliability struct {
	// Estimate is the posterior mean of the success probability: the
	// policy's prior plus the decayed counts, in (0, 1).
	Estimate float64 `json:"estimate"`
	// Successes and Failures are the decayed counts as of the estimate.
	Successes           float64 `json:"successes"`
	Failures            float64 `json:"failures"`
	ConsecutiveFailures int64   `json:"consecutiveFailures"`
	LastErrorClass      string  `json:"lastErrorClass,omitempty"`
	// CoolingDown: the tool failed FailureStreak times or more in a row
	// and its cool-down has not ended; it is not to be chosen while an
	// alternative exists.
	CoolingDown   bool      `json:"coolingDown,omitempty"`
	CoolDownUntil time.Time `json:"coolDownUntil,omitzero"`
	// ProbeDue: the tool is on a failure streak but its cool-down ended;
	// one call may probe whether it recovered. A failed probe starts a
	// longer cool-down, a successful one ends the streak.
	ProbeDue bool `json:"probeDue,omitempty"`
}

// ReliabilityPolicy turns evidence into a [Reliability]. Zero fields take
// the defaults of [DefaultReliabilityPolicy].
type ReliabilityPolicy struct {
	// PriorSuccesses and PriorFailures are the Beta prior's pseudo-counts:
	// a tool never called is estimated at PriorSuccesses/(sum).
	PriorSuccesses, PriorFailures float64
	// FailureStreak is how many consecutive failures start a cool-down.
	FailureStreak int64
	// CoolDown is the first cool-down, counted from the last failure; each
	// failure beyond FailureStreak (a failed probe) doubles it, up to
	// MaxCoolDown.
	CoolDown, MaxCoolDown time.Duration
}

// DefaultReliabilityPolicy: a uniform prior (an unknown tool is estimated
// at 0.5, neither trusted nor shunned), a cool-down after 2 failures in a
// row, of 1 minute doubling to at most 1 hour. Two, because a task stops
// retrying a tool after its second identical error (a permanent failure)
// and repairs the step with another tool: a streak of 3 would then never
// form, and a tool that fails every call would be shunned by its estimate
// alone, never probed to see whether it recovered.
var DefaultReliabilityPolicy = ReliabilityPolicy{PriorSuccesses: 1, PriorFailures: 1, FailureStreak: 2, CoolDown: time.Minute, MaxCoolDown: time.Hour}
