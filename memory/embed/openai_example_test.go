package embed_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"time"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/memory/embed"
)

// An OpenAI embedder; the same code serves any OpenAI-compatible server
// (vLLM, LM Studio, Ollama's /v1) by changing BaseURL and Model.
func ExampleNewOpenAI() {
	e, err := embed.NewOpenAI(embed.Config{
		BaseURL:    "https://api.openai.com/v1", // the API root, /v1 included
		Model:      "text-embedding-3-small",
		APIKey:     os.Getenv("OPENAI_API_KEY"),
		Dimensions: 512, // text-embedding-3 models can shorten their vectors
		BatchSize:  64,
		Timeout:    20 * time.Second, // per request; ctx bounds the whole call
		MaxRetries: 4,                // on 408, 429, 5xx and network errors
	})
	if err != nil {
		log.Fatal(err)
	}
	var embedder agentsmcp.Embedder = e
	fmt.Println(embedder.ID()) // stored beside every vector

	vs, err := embedder.Embed(context.Background(), []string{"list the files in a directory"})
	if err != nil {
		// EUNAVAILABLE after the retries: try again later; EINVALID or
		// EUNAUTHORIZED: fix the configuration.
		log.Fatal(agentsmcp.ErrorCode(err), ": ", agentsmcp.ErrorMessage(err))
	}
	fmt.Println(len(vs[0]))
}
