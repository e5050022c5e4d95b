package toolperf

import (
	"math"
	"time"

	agentsmcp "github.com/agents-mcp/agents-mcp"
)

// OutcomeWeight is the weight as of of an outcome at at.
func OutcomeWeight(at, of time.Time) float64 {
	return math.Exp2(float64(at.Sub(of)) / float64(agentsmcp.ReliabilityHalfLife))
}

// DecayedAs returns c as of t.
func DecayedAs(c agentsmcp.DecayedCounts, t time.Time) agentsmcp.DecayedCounts {
	if c.At.IsZero() {
		return agentsmcp.DecayedCounts{At: t}
	}
	f := OutcomeWeight(c.At, t)
	return agentsmcp.DecayedCounts{Successes: c.Successes * f, Failures: c.Failures * f, At: t}
}

// AddOutcome counts one outcome at at in c; the counts stay as of c.At
// (at when zero).
func AddOutcome(c agentsmcp.DecayedCounts, at time.Time, failed bool) agentsmcp.DecayedCounts {
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
