package toolperf

import (
	"time"

	agentsmcp "github.com/agents-mcp/agents-mcp"
)

// ReliabilityEvidence is what a reliability estimate is made from, for a
// tool ([Evidence]) or a narrower record.
type ReliabilityEvidence struct {
	Recent              agentsmcp.DecayedCounts
	ConsecutiveFailures int64
	LastSuccessAt       time.Time
	LastFailureAt       time.Time
	LastErrorClass      string
}

// Reliability is a tool's estimated chance to succeed, and whether to avoid
// it for now.
type Reliability struct {
	// Estimate is the posterior mean: prior plus decayed counts, in (0, 1).
	Estimate            float64 `json:"estimate"`
	Successes           float64 `json:"successes"`
	Failures            float64 `json:"failures"`
	ConsecutiveFailures int64   `json:"consecutiveFailures"`
	LastErrorClass      string  `json:"lastErrorClass,omitempty"`
	// CoolingDown: FailureStreak failures in a row and the cool-down is on;
	// not to be chosen while an alternative exists.
	CoolingDown   bool      `json:"coolingDown,omitempty"`
	CoolDownUntil time.Time `json:"coolDownUntil,omitzero"`
	// ProbeDue: the cool-down ended; one call may probe recovery.
	ProbeDue bool `json:"probeDue,omitempty"`
}

// ReliabilityPolicy turns evidence into a [Reliability] ([Estimate]);
// zero fields take [DefaultReliabilityPolicy]'s.
type ReliabilityPolicy struct {
	// PriorSuccesses and PriorFailures are the Beta prior's pseudo-counts.
	PriorSuccesses, PriorFailures float64
	// FailureStreak consecutive failures start a cool-down.
	FailureStreak int64
	// CoolDown doubles with each further failure, up to MaxCoolDown.
	CoolDown, MaxCoolDown time.Duration
}

// DefaultReliabilityPolicy: a uniform prior, a cool-down after 2 failures
// in a row (a task gives up a tool after its second identical error, so 3
// would never form) of 1 minute doubling to 1 hour.
var DefaultReliabilityPolicy = ReliabilityPolicy{PriorSuccesses: 1, PriorFailures: 1, FailureStreak: 2, CoolDown: time.Minute, MaxCoolDown: time.Hour}

// Evidence is p's overall reliability evidence.
func Evidence(p *agentsmcp.ToolPerformance) ReliabilityEvidence {
	return ReliabilityEvidence{Recent: p.Recent, ConsecutiveFailures: p.ConsecutiveFailures,
		LastSuccessAt: p.LastSuccessAt, LastFailureAt: p.LastFailureAt, LastErrorClass: p.LastErrorClass}
}
