package toolperf

import (
	"time"

	agentsmcp "github.com/agents-mcp/agents-mcp"
)

func withDefaults(p agentsmcp.ReliabilityPolicy) agentsmcp.ReliabilityPolicy {
	d := agentsmcp.DefaultReliabilityPolicy
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
func Prior(p agentsmcp.ReliabilityPolicy) float64 {
	p = withDefaults(p)
	return p.PriorSuccesses / (p.PriorSuccesses + p.PriorFailures)
}

// CoolDownAfter is the cool-down that follows the streak-th consecutive
// failure: none below FailureStreak, then CoolDown doubled for each
// failure beyond it, capped at MaxCoolDown.
func CoolDownAfter(p agentsmcp.ReliabilityPolicy, streak int64) time.Duration {
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
func Estimate(p agentsmcp.ReliabilityPolicy, e agentsmcp.ReliabilityEvidence, now time.Time) agentsmcp.Reliability {
	p = withDefaults(p)
	c := e.Recent.As(now)
	r := agentsmcp.Reliability{
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
