// Package agents turns one request into a run over every tool the router
// serves, and learns from each run.
//
// The [Thinker] analyses a request into sub-goals and recommended tools
// (generate_thoughts); the [Planner] composes a checked DAG [agentsmcp.Plan]
// (generate_plan); the [Executor] runs it with bounded parallelism, retries,
// timeouts, leases and crash resume (execute_task, run_task and the task
// tools); the [Learner] records what each finished task taught, which the
// thinker and planner read on the next request.
//
// Its MCP face is package agents/mcptools: the tools that publish the
// engine through localtools, the questions of a paused task as
// input_required results and as MCP tasks, the client's model asked
// through sampling rounds, and the discovery prompts. The engine offers
// that face its Executor's methods and the questions a paused task asks
// (mcpface.go); it never imports it.
//
// The language of a plan's step arguments and inputs (the
// {{steps.<id>.output}} and {{inputs.<name>}} references, the inputs
// schema) is package agents/planlang, which the engine uses to check,
// resolve and resume plans.
//
// The model is an [agentsmcp.LLM]: the calling client's through MCP
// sampling ([SamplingLLM]), an OpenAI-compatible endpoint (agents/openai),
// or none, in which case the builtin planner plans from memory and tool
// search alone. The package depends on the root package's interfaces, and
// reads the calling client's session from go-sdk's request (a [Caller],
// the session a [SamplingLLM] asks).
package agents
