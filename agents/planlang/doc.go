// Package planlang is the language of a plan's step arguments and inputs:
// the references a step's arguments make to the output of an earlier step
// ({{steps.<id>.output<path>}}) or to a task input ({{inputs.<name><path>}}),
// found ([FindRefs]), validated around ([ArgumentsForValidation]) and
// resolved on bytes ([ResolveRefs]); and the plan's inputs schema, which
// the values a task is given must satisfy ([CheckInputs], [MergeInputs]).
//
// It knows plans only as the root package defines them ([agentsmcp.Plan])
// and nothing of the engine that makes and runs them (package agents) or of
// the MCP face that publishes them (agents/mcptools), so that both, and
// anything else that reads a plan, share one definition of the language.
package planlang
