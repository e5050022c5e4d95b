package toolperf

import (
	"time"
)

func withDefaults(p ReliabilityPolicy) ReliabilityPolicy {
	d := DefaultReliabilityPolicy
	if p.PriorSuccesses <= 0 || p.PriorFailures <= 0 {
		p.PriorSuccesses, p.PriorFailures = d.PriorSuccesses, d.PriorFailures
	}
	if p.FailureStreak <= 0 {
		p.FailureStreak = d.FailureStreak
	}
	if p.CoolDown <= 0 {
		p.CoolDown = d.CoolDown
	}
	if p.MaxCoolDown < p.CoolDown {
		p.MaxCoolDown = max(d.MaxCoolDown, p.CoolDown)
	}
	return p
}

// Prior is the estimate of a tool without evidence.
func Prior(p ReliabilityPolicy) float64 {
	p = withDefaults(p)
	return p.PriorSuccesses / (p.PriorSuccesses + p.PriorFailures)
}

// CoolDownAfter is the cool-down that follows the streak-th consecutive
// failure: none below FailureStreak, then CoolDown doubled for each
// failure beyond it, capped at MaxCoolDown.
func CoolDownAfter(p ReliabilityPolicy, streak int64) time.Duration {
	p = withDefaults(p)
	if streak < p.FailureStreak {
		return 0
	}
	d := p.CoolDown
	for i := p.FailureStreak; i < streak && d < p.MaxCoolDown; i++ {
		d *= 2
	}
	return min(d, p.MaxCoolDown)
}

// Estimate weighs e as of now.
func Estimate(p ReliabilityPolicy, e ReliabilityEvidence, now time.Time) Reliability {
	p = withDefaults(p)
	c := DecayedAs(e.Recent, now)
	r := Reliability{
		Estimate:            (p.PriorSuccesses + c.Successes) / (p.PriorSuccesses + p.PriorFailures + c.Successes + c.Failures),
		Successes:           c.Successes,
		Failures:            c.Failures,
		ConsecutiveFailures: e.ConsecutiveFailures,
		LastErrorClass:      e.LastErrorClass,
	}
	if cd := CoolDownAfter(p, e.ConsecutiveFailures); cd > 0 {
		r.CoolDownUntil = e.LastFailureAt.Add(cd)
		r.CoolingDown = now.Before(r.CoolDownUntil)
		r.ProbeDue = !r.CoolingDown
	}
	return r
}
