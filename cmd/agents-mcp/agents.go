package main

import (
	"crypto/rand"
	"fmt"
	"log/slog"
	"path/filepath"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/agents"
	agenttools "github.com/agents-mcp/agents-mcp/agents/mcptools"
	"github.com/agents-mcp/agents-mcp/agents/openai"
	"github.com/agents-mcp/agents-mcp/cmd/agents-mcp/internal/config"
	"github.com/agents-mcp/agents-mcp/memory/mcptools"
	"github.com/agents-mcp/agents-mcp/memory/recall"
	"github.com/agents-mcp/agents-mcp/router"
	"github.com/agents-mcp/agents-mcp/router/toolsearch"
)

// addAgents registers the thought agent, planner and executor tools and the
// discovery prompts, and returns the executor, whose resume loop the caller starts once the
// upstreams are added.
func (a *app) addAgents(cfg *config.Config, m *memory, searcher *recall.Searcher, ranker toolsearch.Ranker, performance agentsmcp.ToolPerformanceService, logger *slog.Logger) (*agents.Executor, error) {
	catalog := toolsearch.NewCatalog(a.router, ranker, a.upstreamHealth)
	agentMemory := &recall.AgentMemory{Searcher: searcher, Visibility: cfg.MemoryVisibility, Family: agents.FamilyOf, FamilyTag: agents.FamilyTag}
	gatherer := &agents.Gatherer{Catalog: catalog, Memory: agentMemory, Performance: m.store,
		Families:    &agents.Families{Embedder: searcher.Embedder, MinSimilarity: familySimilarity(cfg.Embedder)},
		ServerTools: serverToolNames}
	learner := &agents.Learner{Learnings: m.store, Patterns: m.store, Insights: m.insights, Catalog: catalog, Written: m.syncer.Notify, Logger: logger}
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
		OnChange: func(t *agentsmcp.Task) { a.taskHub.Notify(t.ID) },
	})
	states, err := openRequestStates(cfg, logger)
	if err != nil {
		return nil, err
	}
	a.states = states // the pool seals upstreams' requestState with it too
	tools := &agenttools.Tools{
		Thinker:  &agents.Thinker{Gatherer: gatherer, Thoughts: m.thoughts},
		Planner:  &agents.Planner{Gatherer: gatherer, Validator: a.router, Plans: m.plans, Tasks: m.tasks},
		Executor: executor, Thoughts: m.thoughts, Plans: m.plans, Tasks: m.tasks,
		LLM: chooser, RequestStates: states, Logger: logger,
	}
	if err := tools.Register(a.local); err != nil {
		return nil, err
	}
	// The discovery prompts read the same catalog and memory as the
	// agents, and tool performance as the memory tools do (read-through,
	// so that the calls just made count).
	discovery := &agenttools.Discovery{Catalog: catalog, Memory: agentMemory, Performance: performance}
	discovery.Register(a.router.Server())
	a.router.AddPromptCompletion(agenttools.PromptHelpWithAPI, agenttools.PromptArgAPI, discovery.CompleteSource)
	// MCP Tasks (ADR 0010): run_task and execute_task become tasks for
	// 2026-07-28 requests that declare the extension.
	a.router.AddTaskBackend(&agenttools.MCPTasks{Executor: executor, Plans: m.plans, Retention: cfg.TaskRetention, InputWait: cfg.TaskInputWait})
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

// RequestStateKeyFile is the file under the data dir that holds the
// generated key of the requestState of input_required answers, when
// tasks.request_state_key is not set.
const RequestStateKeyFile = "request-state.key"

// openRequestStates returns what signs the requestState of the
// input_required answers of run_task and execute_task: the configured
// key; else, with the embedded store, the key in the data dir (generated
// on first start, mode 0600), so that a retry still verifies after a
// restart; else (MongoDB, several replicas, no shared key) a key of this
// process, with a warning: a retry must then come back to this process
// before it restarts.
func openRequestStates(cfg *config.Config, logger *slog.Logger) (*agenttools.RequestStates, error) {
	rs := &agenttools.RequestStates{Key: cfg.RequestStateKeyBytes(), TTL: cfg.RequestStateTTL}
	switch {
	case rs.Key != nil:
	case cfg.MongoURI != "":
		logger.Warn("tasks.request_state_key (AGENTS_MCP_REQUEST_STATE_KEY) is not set: the answers of 2026-07-28 clients to a task's questions, " +
			"and the handles of upstream tasks, are accepted only by this process until it restarts (resume_task still answers the task anywhere); set the same key on every replica")
		rs.Key = make([]byte, agenttools.RequestStateKeySize)
		if _, err := rand.Read(rs.Key); err != nil {
			return nil, fmt.Errorf("generate the request state key: %w", err)
		}
	default:
		key, err := keyFile(filepath.Join(cfg.DataDir, RequestStateKeyFile), "request state key", agenttools.RequestStateKeySize,
			"requestStates issued with the old key are then refused")
		if err != nil {
			return nil, err
		}
		rs.Key = key
	}
	return rs, nil
}

// familySimilarity is the similarity above which a request joins a past
// family, for the configured embedder ("" is the default, semantic): each
// offline embedder has its own, tuned on agents/testdata/families.json;
// zero (the hash embedder's default) for the others.
func familySimilarity(embedder string) float64 {
	if embedder == "semantic" || embedder == "" {
		return agents.SemanticFamilySimilarity
	}
	return 0
}

// serverToolNames are the server's own tools besides the agents' (the
// memory tools, search_tools and the discovery meta-tools): the agents plan
// on them only for a goal that names what they hold
// (agents.Gatherer.ServerTools).
var serverToolNames = []string{mcptools.QueryMemoryName, mcptools.StoreInsightName, mcptools.GetSimilarTasksName,
	mcptools.GetSuccessfulPlansName, mcptools.GetToolPerformanceName, toolsearch.ToolName,
	toolsearch.FindToolName, router.CallToolName}
