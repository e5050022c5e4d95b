package main

import (
	"context"
	"log/slog"
	"slices"
	"time"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/agents"
	"github.com/agents-mcp/agents-mcp/agents/openai"
	"github.com/agents-mcp/agents-mcp/cmd/agents-mcp/internal/config"
	"github.com/agents-mcp/agents-mcp/memory/mcptools"
	"github.com/agents-mcp/agents-mcp/router"
)

// addAgents registers the thought agent, planner and executor tools and
// returns the executor, whose resume loop the caller starts once the
// upstreams are added.
func (a *app) addAgents(cfg *config.Config, m *memory, recall *mcptools.Recall, search *router.ToolIndex, logger *slog.Logger) (*agents.Executor, error) {
	catalog := router.NewCatalog(a.router, search, a.upstreamHealth)
	gatherer := &agents.Gatherer{Catalog: catalog, Memory: recallMemory{recall, cfg.MemoryVisibility}, Performance: m.store,
		Families: &agents.Families{Embedder: recall.Embedder}}
	learner := &agents.Learner{Learnings: m.store, Patterns: m.store, Insights: m.store, Catalog: catalog, Written: m.syncer.Notify, Logger: logger}
	chooser := agents.LLMChooser{Mode: cfg.LLM}
	if cfg.OpenAIBaseURL != "" || cfg.OpenAIAPIKey != "" {
		client, err := openai.New(openai.Config{BaseURL: cfg.OpenAIBaseURL, APIKey: cfg.OpenAIAPIKey, Model: cfg.LLMModel, Logger: logger})
		if err != nil {
			return nil, err
		}
		chooser.OpenAI = client
	}
	executor := agents.NewExecutor(agents.ExecutorOptions{
		Tasks: m.tasks, Plans: m.plans, Tools: a.router, Catalog: catalog,
		OnEnd: learner.Learn, Repairer: &agents.Repairer{Gatherer: gatherer}, RepairLLM: chooser.Model, Logger: logger,
		LeaseTTL: cfg.TaskLeaseTTL, ResumeInterval: cfg.TaskResumeInterval,
	})
	tools := &agents.Tools{
		Thinker:  &agents.Thinker{Gatherer: gatherer, Thoughts: m.thoughts},
		Planner:  &agents.Planner{Gatherer: gatherer, Validator: a.router, Plans: m.plans, Tasks: m.tasks},
		Executor: executor, Thoughts: m.thoughts, Plans: m.plans, Tasks: m.tasks,
		LLM: chooser, Logger: logger,
	}
	if err := tools.Register(a.local); err != nil {
		return nil, err
	}
	return executor, nil
}

// upstreamHealth is the state of an upstream for the planner; empty for a
// source that is not an upstream (the local tools).
func (a *app) upstreamHealth(source string) string {
	if a.pool == nil {
		return ""
	}
	st, ok := a.pool.Status(source)
	if !ok {
		return ""
	}
	return string(st.State)
}

// recallMemory adapts the memory tools' recall (semantic, with a lexical
// fallback) to what the agents read before thinking and planning. Like the
// memory tools, it reads under visibility: the thought agent and planner
// run in the call of the principal who asked, and learn from that
// principal's past tasks only, unless memory is shared.
type recallMemory struct {
	r          *mcptools.Recall
	visibility agentsmcp.MemoryVisibility
}

func (m recallMemory) SimilarLearnings(ctx context.Context, text string, max int) ([]*agentsmcp.Learning, error) {
	f := agentsmcp.LearningFilter{Principal: m.visibility.ReaderScope(ctx)}
	hits, _, err := m.r.SimilarLearnings(ctx, mcptools.NewQuery(text), f, max)
	if err != nil {
		return nil, err
	}
	out := make([]*agentsmcp.Learning, len(hits))
	for i, h := range hits {
		out[i] = h.Learning
	}
	return out, nil
}

// RelevantInsights returns the insights learned in the task family of text
// first, then those about the candidate tools (their pitfalls decide
// between tools), then those resembling text.
func (m recallMemory) RelevantInsights(ctx context.Context, text string, tools []string, max int) ([]*agentsmcp.Insight, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	scope := m.visibility.ReaderScope(ctx)
	var out []*agentsmcp.Insight
	add := func(in *agentsmcp.Insight) {
		if len(out) < max && !slices.ContainsFunc(out, func(x *agentsmcp.Insight) bool { return x.ID == in.ID }) {
			out = append(out, in)
		}
	}
	family, _, err := m.r.Insights.FindInsights(ctx, agentsmcp.InsightFilter{AppliesTo: agents.FamilyTag(agents.FamilyOf(text)), Principal: scope, Limit: max / 2})
	if err != nil {
		return out, err
	}
	for _, in := range family {
		add(in)
	}
	for _, tool := range tools {
		ins, _, err := m.r.Insights.FindInsights(ctx, agentsmcp.InsightFilter{AppliesTo: tool, Principal: scope, Limit: 3})
		if err != nil {
			return out, err
		}
		for _, in := range ins {
			add(in)
		}
	}
	hits, _, err := m.r.SimilarInsights(ctx, mcptools.NewQuery(text), agentsmcp.InsightFilter{Principal: scope}, max)
	for _, h := range hits {
		add(h.Insight)
	}
	return out, err
}

// SuccessfulPatterns returns the plan patterns whose goal resembles the
// task family of text and that succeeded at least half the time.
func (m recallMemory) SuccessfulPatterns(ctx context.Context, text string, max int) ([]*agentsmcp.PlanPattern, error) {
	f := agentsmcp.PatternFilter{Principal: m.visibility.ReaderScope(ctx)}
	hits, _, err := m.r.SimilarPatterns(ctx, mcptools.NewQuery(agents.FamilyOf(text)), f, 0.5, max)
	if err != nil {
		return nil, err
	}
	out := make([]*agentsmcp.PlanPattern, len(hits))
	for i, h := range hits {
		out[i] = h.Pattern
	}
	return out, nil
}
