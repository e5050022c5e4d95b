package agentsmcp

import (
	"time"
)

// ReliabilityHalfLife is how long it takes an outcome's weight in
// [DecayedCounts] to halve. Stores weigh outcomes by it: changing it
// changes the meaning of stored weights.
const ReliabilityHalfLife = 24 * time.Hour

// DecayedCounts are outcomes weighed by 2^(-age/half-life) as of At; read
// them through internal/toolperf.DecayedAs.
type DecayedCounts struct {
	Successes float64   `json:"successes"`
	Failures  float64   `json:"failures"`
	At        time.Time `json:"at"`
}
