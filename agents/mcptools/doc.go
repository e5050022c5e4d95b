// Package mcptools is the MCP face of the agents' engine (package agents),
// as memory/mcptools is the memory's.
//
// [Tools] registers generate_thoughts, generate_plan, execute_task,
// run_task, get_task, list_tasks, resume_task and cancel_task on a
// localtools.Provider, which cmd adds to the router. A call's client
// waits for its task as a [SessionCaller] (progress, elicitation); a
// client of MCP 2026-07-28 is asked through input_required results under
// a requestState that [RequestStates] seals, and its model through
// sampling rounds. [MCPTasks] serves the engine's tasks as MCP tasks (the
// Tasks extension), and [Discovery] the prompts that lead a user to the
// right tools.
//
// It holds no engine logic: cmd builds the engine (agents.Thinker,
// agents.Planner, agents.Executor) and hands it here; what a paused task
// asks, in the engine's own words, comes from the engine. It depends on
// the root package, the engine, the plan language (agents/planlang) and
// localtools, never on the router, remote, api, memory or cmd.
package mcptools
