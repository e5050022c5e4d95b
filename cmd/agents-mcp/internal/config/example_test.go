package config_test

import (
	"fmt"
	"log"

	"github.com/agents-mcp/agents-mcp/cmd/agents-mcp/internal/config"
)

func ExampleLoad() {
	env := map[string]string{
		"AGENTS_MCP_DATA_DIR": "/var/lib/agents-mcp",
		"AGENTS_MCP_API_KEYS": "key-one, key-two",
		"MONGODB_URI":         "mongodb://agent:s3cret@db.internal:27017/agents",
		"OPENAI_API_KEY":      "sk-not-printed",
	}
	cfg, err := config.Load([]string{"--addr", "0.0.0.0:9090"}, func(k string) string { return env[k] })
	if err != nil {
		log.Fatal(err)
	}
	for _, s := range cfg.Describe() {
		switch s.Name {
		case "addr", "data_dir", "mongodb.uri", "llm", "llm.api_key", "api_keys", "max_body_bytes":
			fmt.Printf("%s=%s (%s)\n", s.Name, s.Value, s.Source)
		}
	}
	fmt.Println("loopback only:", cfg.IsLoopbackAddr())
	// Output:
	// addr=0.0.0.0:9090 (flag:--addr)
	// data_dir=/var/lib/agents-mcp (env:AGENTS_MCP_DATA_DIR)
	// mongodb.uri=mongodb://agent:xxxxx@db.internal:27017/agents (env:MONGODB_URI)
	// llm=auto (default)
	// llm.api_key=[redacted] (env:OPENAI_API_KEY)
	// api_keys=[redacted] (2 keys) (env:AGENTS_MCP_API_KEYS)
	// max_body_bytes=4194304 (default)
	// loopback only: false
}
