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
// pairs, so a filter value "" matches nothing rather than the vectors that
// lack the key, as it does in Flat and Pinecone.
func TestHNSWBehaviour(t *testing.T) {
	vectortest.Run(t, func(*testing.T) agentsmcp.VectorIndex {
		return vectors.NewHNSW(vectortest.Dims, vectors.HNSWOptions{})
	}, "EmptyFilterValue")
}
