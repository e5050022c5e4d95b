// Package memory holds, in its subpackages, the implementations of the
// root package's storage and vector-memory interfaces; this package itself
// has no code. sqlite is the embedded store and mongo the production one,
// both held to one behavioural suite (storetest). vectors is the embedded
// vector index and pinecone the hosted one, embed the embedders, and
// vectorsync the outbox worker that keeps an index in step with its store.
// secrets seals the secrets of tasks and plans at rest, auditlog writes the
// audit trail, and mcptools serves memory over MCP.
package memory
