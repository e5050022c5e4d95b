// Package mcpwire holds what the router, the upstream pool and the agents
// share of the MCP wire, which is no part of the domain:
//
//   - [RawToolResult] and [QuietCaller]: how a provider hands the router's
//     tools/call fast path an upstream's answer as the JSON it already has,
//     and tells whether a call may be answered outside go-sdk's sessions;
//   - bridged calls ([IsBridgedCall], [OpenQuestion], [AnswerBridged],
//     [BridgedOutcome]): the stored form of a 2026-07-28 caller's call to a
//     2025 upstream that asks in the middle of it (ADR 0010 D4), written by
//     remote and read by the agents' task face;
//   - [AuthorizationRequiredResult], [OfferAuthorization] and
//     [AuthorizationRequiredFrom]: a missing credential
//     (agentsmcp.AuthorizationRequired) as a tool result and back;
//   - [Revision], whose methods say what a revision allows (sessionless,
//     batches, priming): the one place where revisions are compared.
//
// It imports the root package only, so that each of its users may import it.
package mcpwire
