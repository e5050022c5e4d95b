// Package redact removes credentials and other secrets from what
// agents-mcp shows, logs or keeps: tool arguments in the audit trail
// ([Arguments]), free texts ([Text]), URLs and connection strings ([URL],
// [ConnectionString]), messages quoted from other servers ([Message],
// [Named], [ServerMessage]) and the secret values of the agents' data
// ([Secrets], [EditSecrets]).
//
// It is best effort against accidents, layered so that one miss is caught
// by the next (key names, known formats, values that look generated), and
// idempotent: redacting a result again changes nothing. Its markers
// ([Marker], "xxxxx" for a password in a URL) never derive from the secret.
//
// The package is a leaf of the standard library only: it imports nothing
// of the module, not even the root package, whose views
// (agentsmcp.Task.Redacted, agentsmcp.UpstreamConfig.String) use it.
package redact
