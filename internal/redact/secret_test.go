package redact_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/agents-mcp/agents-mcp/internal/redact"
)

func TestRedactSecrets(t *testing.T) {
	in := `{"query":"weather in Paris","api_key":"k-123","nested":{"Password":"hunter2","n":3,"note":"use password=hunter2 here"},"list":["sk-abcdefghijklmnopqrstuvwx"],"keyword":"x","max_tokens":12,"flag":true}`
	got := string(redact.Secrets(json.RawMessage(in)))
	for _, secret := range []string{"k-123", "hunter2", "sk-abcdefghijklmnopqrstuvwx"} {
		if strings.Contains(got, secret) {
			t.Errorf("Secrets kept %q: %s", secret, got)
		}
	}
	for _, kept := range []string{`"query":"weather in Paris"`, `"n":3`, `"flag":true`, `use password=[redacted] here`} {
		if !strings.Contains(got, kept) {
			t.Errorf("Secrets lost %q: %s", kept, got)
		}
	}
	if !json.Valid([]byte(got)) {
		t.Errorf("not JSON: %s", got)
	}
	plain := `{"query": "weather"}`
	if got := string(redact.Secrets(json.RawMessage(plain))); got != plain {
		t.Errorf("unchanged input was rewritten: %s", got)
	}
}

func TestIsSecretName(t *testing.T) {
	for name, want := range map[string]bool{
		"api_key": true, "X-Api-Key": true, "accessToken": true, "db_password": true, "clientSecret": true,
		"monkey": true, "query": false, "author": false, "city": false,
	} {
		if got := redact.IsSecretName(name); got != want {
			t.Errorf("IsSecretName(%q) = %v, want %v", name, got, want)
		}
	}
}

func TestRedactTextTwiceIsRedactTextOnce(t *testing.T) {
	for _, s := range []string{"the deploy password=hunter2 rotates", "token: abc123def, then secret=[x"} {
		once := redact.Text(s, 1000)
		if twice := redact.Text(once, 1000); twice != once {
			t.Errorf("Text(%q): once %q, twice %q", s, once, twice)
		}
	}
}
