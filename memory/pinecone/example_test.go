package pinecone_test

import (
	"context"
	"fmt"
	"log"
	"os"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/memory/embed"
	"github.com/agents-mcp/agents-mcp/memory/pinecone"
)

// Open a Pinecone index for the vectors of an embedder and query it. With
// Index set, Open checks that the index has the embedder's dimension and
// the cosine metric, and finds the host itself.
func ExampleOpen() {
	ctx := context.Background()
	var embedder agentsmcp.Embedder = embed.Hash{}
	idx, err := pinecone.Open(ctx, pinecone.Config{
		APIKey:          os.Getenv("PINECONE_API_KEY"),
		Index:           "agents-mcp",
		NamespacePrefix: "prod-",
		Dimensions:      embedder.Dimensions(),
	})
	if err != nil {
		// EINVALID names the index's and the embedder's dimension on a
		// mismatch; the API key is never in the text.
		log.Fatal(err)
	}
	defer idx.Close()

	var index agentsmcp.VectorIndex = idx
	q, err := embedder.Embed(ctx, []string{"list the files in a directory"})
	if err != nil {
		log.Fatal(err)
	}
	matches, err := index.Query(ctx, "learnings", agentsmcp.VectorQuery{
		Values: q[0],
		TopK:   5,
		Filter: map[string]string{"kind": "best_practice"},
	})
	if err != nil {
		log.Fatal(err) // EUNAVAILABLE: try again later
	}
	for _, m := range matches {
		fmt.Printf("%s %.3f\n", m.ID, m.Score)
	}
}
