// Package validate checks the invariants that the root package's types
// document: a [agentsmcp.Thought], [agentsmcp.Plan] (its steps' DAG
// included) or [agentsmcp.Task] and a task change, the memory's learnings,
// insights and pattern uses, audit entries and filters, credentials, tool
// calls, outbox requests and the upstream definitions and configs.
//
// Each function returns nil or an [agentsmcp.Error] with code EINVALID
// whose message names the first invariant broken (UpstreamConfig joins
// every problem of a config, as UpstreamConfigProblems lists them). The
// stores call it before every write, the agents before they hand a thought
// or plan to a store, and the config loader and the admin API on every
// upstream they are given, so that every face refuses the same input with
// the same words.
//
// It is a leaf: it imports the root and internal/redact only, so that any
// package may call it.
package validate
