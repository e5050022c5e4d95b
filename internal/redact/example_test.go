package redact_test

import (
	"encoding/json"
	"fmt"

	"github.com/agents-mcp/agents-mcp/internal/redact"
)

func ExampleArguments() {
	args := json.RawMessage(`{
		"url": "https://deploy:hunter2@git.example.com/repo.git",
		"headers": {"Authorization": "Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4In0.c2ln"},
		"note": "use key sk-proj-Ab3dEfGhIjKlMnOpQrSt for the call",
		"max_tokens": 512,
		"paths": ["/srv/data/report.csv"]
	}`)
	fmt.Println(string(redact.Arguments(args)))
	fmt.Println(string(redact.Arguments(json.RawMessage(`{"password": "hunter2"`))))
	// Output:
	// {"url":"https://deploy:xxxxx@git.example.com/repo.git","headers":{"Authorization":"[redacted]"},"note":"use key [redacted] for the call","max_tokens":512,"paths":["/srv/data/report.csv"]}
	// "[not valid JSON: 22 bytes]"
}
