package agentsmcp_test

import (
	"encoding/json"
	"strings"
	"testing"

	agentsmcp "github.com/agents-mcp/agents-mcp"
)

func TestRedactSecrets(t *testing.T) {
	in := `{"query":"weather in Paris","api_key":"k-123","nested":{"Password":"hunter2","n":3,"note":"use password=hunter2 here"},"list":["sk-abcdefghijklmnopqrstuvwx"],"keyword":"x","max_tokens":12,"flag":true}`
	got := string(agentsmcp.RedactSecrets(json.RawMessage(in)))
	for _, secret := range []string{"k-123", "hunter2", "sk-abcdefghijklmnopqrstuvwx"} {
		if strings.Contains(got, secret) {
			t.Errorf("RedactSecrets kept %q: %s", secret, got)
		}
	}
	for _, kept := range []string{`"query":"weather in Paris"`, `"n":3`, `"flag":true`, `use password=[redacted] here`} {
		if !strings.Contains(got, kept) {
			t.Errorf("RedactSecrets lost %q: %s", kept, got)
		}
	}
	if !json.Valid([]byte(got)) {
		t.Errorf("not JSON: %s", got)
	}
	plain := `{"query": "weather"}`
	if got := string(agentsmcp.RedactSecrets(json.RawMessage(plain))); got != plain {
		t.Errorf("unchanged input was rewritten: %s", got)
	}
}

func TestIsSecretName(t *testing.T) {
	for name, want := range map[string]bool{
		"api_key": true, "X-Api-Key": true, "accessToken": true, "db_password": true, "clientSecret": true,
		"monkey": true, "query": false, "author": false, "city": false,
	} {
		if got := agentsmcp.IsSecretName(name); got != want {
			t.Errorf("IsSecretName(%q) = %v, want %v", name, got, want)
		}
	}
}

func TestRedactTextTwiceIsRedactTextOnce(t *testing.T) {
	for _, s := range []string{"the deploy password=hunter2 rotates", "token: abc123def, then secret=[x"} {
		once := agentsmcp.RedactText(s, 1000)
		if twice := agentsmcp.RedactText(once, 1000); twice != once {
			t.Errorf("RedactText(%q): once %q, twice %q", s, once, twice)
		}
	}
}
