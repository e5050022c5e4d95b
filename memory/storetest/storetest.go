// Package storetest is the behavioural suite every memory store must pass:
// memory/sqlite (the embedded default) and memory/mongo (production, tested
// on FerretDB). A store is correct when Run passes against it.
package storetest

import (
	"testing"

	agentsmcp "github.com/agents-mcp/agents-mcp"
)

// Services bundles the services of one store under test.
type Services struct {
	Insights        agentsmcp.InsightService
	Learnings       agentsmcp.LearningService
	ToolPerformance agentsmcp.ToolPerformanceService
	Patterns        agentsmcp.PatternService
}

// Run runs the suite. open must return services over a fresh, empty store
// each time it is called, and arrange its cleanup with t.Cleanup.
func Run(t *testing.T, open func(t *testing.T) Services) {
	t.Helper()
	for name, test := range suite {
		t.Run(name, func(t *testing.T) { test(t, open(t)) })
	}
}

// suite maps test names to tests; the files of this package add to it.
var suite = map[string]func(t *testing.T, s Services){}
