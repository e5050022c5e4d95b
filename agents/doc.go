// Package agents will hold the orchestration logic: the thought agent, the
// planner and the executor. It depends only on the root package's interfaces.
package agents
