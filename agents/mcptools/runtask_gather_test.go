package mcptools_test

import (
	"context"
	"encoding/json"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/agents"
	"github.com/agents-mcp/agents-mcp/agents/mcptools"
	"github.com/agents-mcp/agents-mcp/internal/agentstest"
	"github.com/agents-mcp/agents-mcp/localtools"
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

// TestRunTaskGathersOnce: run_task with the builtin planner thinks and
// then plans on what it gathered for the thought: the catalog is searched
// once for the request's one sub-goal, not once by the thought and again
// by the planner, and the plan is still the one the thought's search led
// to (FetchTools' best-worded tool, which fails: the plan, not the
// outcome, is what gathering decides).
func TestRunTaskGathersOnce(t *testing.T) {
	s := agentstest.NewStack(t, agentstest.FetchTools(t))
	counting := &searchCountingCatalog{ToolCatalog: s.Thinker.Gatherer.Catalog}
	s.Thinker.Gatherer.Catalog = counting // the planner's gatherer too
	if s.Planner.Gatherer != s.Thinker.Gatherer {
		t.Fatal("the stack's thinker and planner no longer share a gatherer")
	}
	tools := &mcptools.Tools{Thinker: s.Thinker, Planner: s.Planner, Executor: s.Exec, Thoughts: s.DB, Plans: s.DB, Tasks: s.DB,
		LLM: agents.LLMChooser{Mode: agents.LLMBuiltin}}
	local := localtools.New()
	if err := tools.Register(local); err != nil {
		t.Fatal(err)
	}
	args, _ := json.Marshal(map[string]any{"request": fetchRequest})
	res, err := local.CallTool(t.Context(), &mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{Name: "run_task", Arguments: args}})
	if err != nil {
		t.Fatal(err)
	}
	if out := taskResult(t, res); len(out.Task.Steps) != 1 || out.Task.Steps[0].StepID != "fetch_web_page_fast" {
		t.Fatalf("task ran %+v, want the one step of the best-worded fetch tool", out.Task.Steps)
	}
	if n := counting.searches.Load(); n != 1 {
		t.Errorf("run_task searched the catalog %d times for one sub-goal, want 1 (gathered once, for the thought)", n)
	}
}
