package validate

// UpstreamConfigProblem is one invalid field of an [agentsmcp.UpstreamConfig]; Field
// is relative to the upstream ("url", "tools.allow[0]").
type UpstreamConfigProblem struct {
	Field   string
	Message string
}

func (p UpstreamConfigProblem) Error() string { return p.Field + ": " + p.Message }
