package main

// This file adapts the router and the executor to the admin API's
// interfaces (api must not import them).

import (
	"context"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/agents"
	"github.com/agents-mcp/agents-mcp/api/admin"
	"github.com/agents-mcp/agents-mcp/router"
	"github.com/agents-mcp/agents-mcp/router/toolsearch"
)

// adminCatalog is the router's catalog and search_tools' ranker as the
// admin API's GET /tools serves them: the console's Tools page ranks as
// search_tools does because it asks the same ranker.
type adminCatalog struct {
	router *router.Router
	ranker toolsearch.Ranker
}

func (c adminCatalog) Tools() []admin.CatalogTool {
	tools := c.router.Tools()
	out := make([]admin.CatalogTool, 0, len(tools))
	for _, t := range tools {
		src, _ := c.router.ToolSource(t.Name)
		out = append(out, admin.CatalogTool{Name: t.Name, Source: src, Description: t.Description})
	}
	return out
}

func (c adminCatalog) Search(ctx context.Context, query, scope string, limit int) ([]admin.CatalogTool, string, string) {
	res := c.ranker.Search(ctx, query, scope, limit)
	out := make([]admin.CatalogTool, len(res.Tools))
	for i, m := range res.Tools {
		out[i] = admin.CatalogTool{Name: m.Name, Source: m.Source, Description: m.Description, Score: m.Score, Why: m.Why}
	}
	return out, res.Mode, res.Note
}

// adminResumer answers a paused task for the admin API, as resume_task
// does for a client that is not waiting (no caller: a question the task
// still has pauses it again).
type adminResumer struct{ executor *agents.Executor }

func (r adminResumer) Resume(ctx context.Context, id string, in admin.ResumeInput) (*agentsmcp.Task, error) {
	return r.executor.Resume(ctx, id, agents.ResumeRequest{Inputs: in.Inputs, Confirm: in.Confirm, Reject: in.Reject}, nil)
}
