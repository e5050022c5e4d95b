package vectors_test

import (
	"testing"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/memory/vectors"
	"github.com/agents-mcp/agents-mcp/memory/vectortest"
)

// The shared behaviour of a vector index, which memory/pinecone passes too
// on the wire of a Pinecone test server.
func TestFlatBehaviour(t *testing.T) {
	vectortest.Run(t, func(*testing.T) agentsmcp.VectorIndex { return vectors.NewFlat(vectortest.Dims) })
}

// HNSW finds filtered candidates through posting lists of key=value
// pairs; a filter value "" (the key absent) has no list and is checked
// node by node, so it matches what it matches in Flat and Pinecone.
func TestHNSWBehaviour(t *testing.T) {
	vectortest.Run(t, func(*testing.T) agentsmcp.VectorIndex {
		return vectors.NewHNSW(vectortest.Dims, vectors.HNSWOptions{})
	})
}
