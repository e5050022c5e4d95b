package agentsmcp_test

import (
	"encoding/json"
	"fmt"

	agentsmcp "github.com/agents-mcp/agents-mcp"
)

func ExampleRedactArguments() {
	args := json.RawMessage(`{
		"url": "https://deploy:hunter2@git.example.com/repo.git",
		"headers": {"Authorization": "Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4In0.c2ln"},
		"note": "use key sk-proj-Ab3dEfGhIjKlMnOpQrSt for the call",
		"max_tokens": 512,
		"paths": ["/srv/data/report.csv"]
	}`)
	fmt.Println(string(agentsmcp.RedactArguments(args)))
	fmt.Println(string(agentsmcp.RedactArguments(json.RawMessage(`{"password": "hunter2"`))))
	// Output:
	// {"url":"https://deploy:xxxxx@git.example.com/repo.git","headers":{"Authorization":"[redacted]"},"note":"use key [redacted] for the call","max_tokens":512,"paths":["/srv/data/report.csv"]}
	// "[not valid JSON: 22 bytes]"
}
