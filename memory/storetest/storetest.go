// Package storetest is the behavioural suite every memory store must pass:
// memory/sqlite (the embedded default) and memory/mongo (production, tested
// on FerretDB). A store is correct when Run passes against it.
//
// The suite checks the contracts written in the root package's doc comments
// (memory.go, plan.go, task.go, audit.go, upstream.go, credential.go), and
// nothing a store may choose freely. In particular it does
// not decide whether a text word also matches as a prefix or substring of a
// stored word, and it checks common-error trimming only with errors recorded
// most frequent first. Each test stores at most about 50 items, so that the
// suite stays fast on FerretDB, which scans; the one exception fills the
// store up to MaxUpstreamDefinitions (256 small documents).
package storetest

import (
	"context"
	"slices"
	"testing"

	agentsmcp "github.com/agents-mcp/agents-mcp"
)

// Services bundles the services of one store under test.
type Services struct {
	Insights        agentsmcp.InsightService
	Learnings       agentsmcp.LearningService
	ToolPerformance agentsmcp.ToolPerformanceService
	Patterns        agentsmcp.PatternService
	Thoughts        agentsmcp.ThoughtService
	Plans           agentsmcp.PlanService
	Tasks           agentsmcp.TaskService
	TaskCounts      agentsmcp.TaskCounter
	Outbox          agentsmcp.OutboxService
	Audit           agentsmcp.AuditService
	Upstreams       agentsmcp.UpstreamService
	VirtualServers  agentsmcp.VirtualServerService
	Credentials     agentsmcp.CredentialService
	// Usage and InsightPruner, when set, are tested (usage.go).
	Usage         agentsmcp.UsageService
	InsightPruner agentsmcp.InsightPruner
	// CallCounters, when set, is tested (call_counters.go).
	CallCounters agentsmcp.CallCounterService
	// RawCredentials returns everything the store holds for credentials
	// and OAuth states, as text (rows or documents, every column): the
	// suite checks that no secret appears in it.
	RawCredentials func(ctx context.Context) (string, error)
}

// Run runs the suite, one subtest per behaviour, in name order. open must
// return services over a fresh, empty store each time it is called, and
// arrange its cleanup with t.Cleanup.
func Run(t *testing.T, open func(t *testing.T) Services) {
	t.Helper()
	names := make([]string, 0, len(suite))
	for name := range suite {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		t.Run(name, func(t *testing.T) { suite[name](t, open(t)) })
	}
}

// suite maps test names to tests; the files of this package add to it, one
// file per aggregate.
var suite = map[string]func(t *testing.T, s Services){}
