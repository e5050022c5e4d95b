package openai_test

import (
	"context"
	"fmt"
	"log"
	"time"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/agents/openai"
	"github.com/agents-mcp/agents-mcp/agents/openai/openaitest"
)

// A completion in JSON mode. The fake server stands in for OpenAI here;
// for Ollama, BaseURL would be "http://127.0.0.1:11434/v1" and Model a
// local model such as "llama3.2".
func ExampleClient_Complete() {
	fs := openaitest.NewFakeServer(nil)
	defer fs.Close()
	fs.Enqueue(openaitest.Text(`{"steps":["list files"]}`, 42, 9))

	llm, err := openai.New(openai.Config{
		BaseURL:    fs.URL,
		APIKey:     "sk-example", // os.Getenv("OPENAI_API_KEY") in real use
		Model:      "gpt-4o-mini",
		Timeout:    30 * time.Second, // per attempt; ctx bounds the whole call
		MaxRetries: 3,                // on 408, 409, 429, 5xx and connection failures
	})
	if err != nil {
		log.Fatal(err)
	}
	res, err := llm.Complete(context.Background(), &agentsmcp.LLMRequest{
		System:   "Answer with a JSON object.",
		Messages: []agentsmcp.LLMMessage{{Role: agentsmcp.LLMRoleUser, Content: "Plan: tidy the repository."}},
		JSON:     true,
		Purpose:  "plan",
	})
	if err != nil {
		// EUNAVAILABLE: try again later; EINVALID or EUNAUTHORIZED: fix the
		// request or the configuration.
		log.Fatal(agentsmcp.ErrorCode(err), ": ", agentsmcp.ErrorMessage(err))
	}
	fmt.Println(res.Text)
	fmt.Println(res.Backend, res.Model, res.Usage.InputTokens, res.Usage.OutputTokens)
	fmt.Println(fs.Requests()[0].ResponseFormat)
	// Output:
	// {"steps":["list files"]}
	// openai gpt-4o-mini 42 9
	// json_object
}
