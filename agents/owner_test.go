package agents_test

import (
	"context"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/agents"
	"github.com/agents-mcp/agents-mcp/localtools"
)

// alice and bob are two principals of one server.
var (
	alice = &agentsmcp.Principal{ID: "key:aaaaaaaaaaaa", Scopes: []string{agentsmcp.ScopeMCP}}
	bob   = &agentsmcp.Principal{ID: "key:bbbbbbbbbbbb", Scopes: []string{agentsmcp.ScopeMCP}}
)

// TestPlannerReusesOnlyTheCallersOwnPlans: a plan holds the values its
// creator gave (arguments, secrets), so the builtin planner's reuse of a
// past successful plan, and the past plans shown to a model, are the
// caller's own.
func TestPlannerReusesOnlyTheCallersOwnPlans(t *testing.T) {
	s := newFetchPageStack(t)
	run := func(p *agentsmcp.Principal, request string) (*agentsmcp.Plan, *agents.PlanReport) {
		t.Helper()
		th, plan, report := s.runAs(t, p, request)
		if th.Principal != p.ID || plan.Principal != p.ID {
			t.Errorf("thought of %q, plan of %q, want %s", th.Principal, plan.Principal, p.ID)
		}
		return plan, report
	}
	first, _ := run(alice, "fetch the web page https://example.com/a")
	if _, report := run(alice, "fetch the web page https://example.com/b"); report.ReusedPlan != first.ID {
		t.Fatalf("alice's second plan reused %q, want her first %s (the test needs reuse to happen)", report.ReusedPlan, first.ID)
	}
	if _, report := run(bob, "fetch the web page https://example.com/c"); report.ReusedPlan != "" {
		t.Errorf("bob's plan reused %s, a plan of alice", report.ReusedPlan)
	}
}

// newFetchPageStack is a stack whose one local tool, fetch_page, downloads
// a web page by url.
func newFetchPageStack(t *testing.T) *stack {
	return newStack(t, func(l *localtools.Provider) {
		if err := localtools.Add(l, &mcp.Tool{Name: "fetch_page", Description: "download a web page by url"},
			func(_ context.Context, _ *mcp.CallToolRequest, in urlIn) (*mcp.CallToolResult, map[string]any, error) {
				return nil, map[string]any{"status": 200, "url": in.URL}, nil
			}); err != nil {
			t.Fatal(err)
		}
	})
}

// runAs thinks, plans and runs request on behalf of p, and fails the test
// unless the task succeeds.
func (s *stack) runAs(t *testing.T, p *agentsmcp.Principal, request string) (*agentsmcp.Thought, *agentsmcp.Plan, *agents.PlanReport) {
	t.Helper()
	ctx := agentsmcp.WithPrincipal(context.Background(), p)
	th, _, err := s.thinker.Think(ctx, request, nil)
	if err != nil {
		t.Fatal(err)
	}
	plan, report, err := s.planner.Plan(ctx, agents.PlanRequest{Request: request, Thought: th})
	if err != nil {
		t.Fatal(err)
	}
	task, err := s.exec.Start(ctx, plan, nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if done, err := s.exec.Wait(t.Context(), task.ID); err != nil || done.Status != agentsmcp.TaskSucceeded {
		t.Fatalf("task %v: %v", done.Status, err)
	}
	return th, plan, report
}
