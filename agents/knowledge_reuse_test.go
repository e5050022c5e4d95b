package agents_test

import (
	"context"
	"sync/atomic"
	"testing"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/agents"
)

// searchCountingCatalog counts the tool searches made through it.
type searchCountingCatalog struct {
	agentsmcp.ToolCatalog
	searches atomic.Int64
}

func (c *searchCountingCatalog) SearchTools(ctx context.Context, query string, limit int) ([]*agentsmcp.ToolMatch, error) {
	c.searches.Add(1)
	return c.ToolCatalog.SearchTools(ctx, query, limit)
}

// TestPlanReusesOnlyKnowledgeOfItsRequest: given the knowledge a thought
// was made from, the planner plans on it when it was gathered for the same
// request and sub-goals (no search), and gathers afresh when it was
// gathered for another request; either way the plan is the one gathering
// afresh gives.
func TestPlanReusesOnlyKnowledgeOfItsRequest(t *testing.T) {
	s := newStack(t, fetchTools(t))
	counting := &searchCountingCatalog{ToolCatalog: s.thinker.Gatherer.Catalog}
	s.thinker.Gatherer.Catalog = counting // the planner's gatherer too
	ctx := context.Background()
	const request, other = "fetch the web page https://example.com/a", "download the page https://example.com/b"
	th, report, err := s.thinker.Think(ctx, request, nil)
	if err != nil {
		t.Fatal(err)
	}
	fresh, _, err := s.planner.Plan(ctx, agents.PlanRequest{Request: request, Thought: th})
	if err != nil {
		t.Fatal(err)
	}
	before := counting.searches.Load()
	reused, _, err := s.planner.Plan(ctx, agents.PlanRequest{Request: request, Thought: th, Knowledge: report.Knowledge})
	if err != nil {
		t.Fatal(err)
	}
	if n := counting.searches.Load() - before; n != 0 {
		t.Errorf("planning on the thought's knowledge searched %d times, want 0", n)
	}
	if got, want := stepsOf(reused), stepsOf(fresh); got != want {
		t.Errorf("plan on the thought's knowledge %s, gathered afresh %s", got, want)
	}

	before = counting.searches.Load()
	otherPlan, _, err := s.planner.Plan(ctx, agents.PlanRequest{Request: other, Knowledge: report.Knowledge})
	if err != nil {
		t.Fatal(err)
	}
	if n := counting.searches.Load() - before; n == 0 {
		t.Error("the knowledge of another request was planned on: no search for this one")
	}
	if otherPlan.Request != other {
		t.Errorf("plan for %q, want %q", otherPlan.Request, other)
	}
}

// stepsOf renders a plan's tools and arguments.
func stepsOf(p *agentsmcp.Plan) string {
	var s string
	for _, st := range p.Steps {
		s += st.Tool + string(st.Arguments) + ";"
	}
	return s
}
