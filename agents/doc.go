// Package agents turns one request into a run over every tool the router
// serves, and learns from each run.
//
// The [Thinker] analyses a request into sub-goals and recommended tools
// (generate_thoughts); the [Planner] composes a checked DAG [agentsmcp.Plan]
// (generate_plan); the [Executor] runs it with bounded parallelism, retries,
// timeouts, leases and crash resume (execute_task, run_task and the task
// tools); the [Learner] records what each finished task taught, which the
// thinker and planner read on the next request. [Tools] registers all of
// them as local MCP tools.
//
// The language of a plan's step arguments and inputs (the
// {{steps.<id>.output}} and {{inputs.<name>}} references, the inputs
// schema) is package agents/planlang, which the engine uses to check,
// resolve and resume plans.
//
// The model is an [agentsmcp.LLM]: the calling client's through MCP
// sampling ([SamplingLLM]), an OpenAI-compatible endpoint (agents/openai),
// or none, in which case the builtin planner plans from memory and tool
// search alone. The package depends on the root package's interfaces; it
// registers its tools with localtools, which cmd adds to the router, and
// reads the calling client's session from go-sdk's request.
package agents
