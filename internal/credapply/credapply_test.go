package credapply_test

import (
	"strings"
	"testing"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/internal/credapply"
)

// A credential sent under a name of its own ("k", "X-Thing") is hidden by
// that name in URLs and in name: value pairs, and by its value anywhere.
func TestAppliedCredentialRedact(t *testing.T) {
	const key, token = "plain", "opaque-bearer"
	inQuery := &agentsmcp.AppliedCredential{Query: map[string][]string{"k": {key}}}
	inHeader := &agentsmcp.AppliedCredential{Header: map[string][]string{"X-Thing": {key}, "Authorization": {"Bearer " + token}}}
	for _, tt := range []struct {
		cred      *agentsmcp.AppliedCredential
		in, want  string
		forbidden string
	}{
		{inQuery, `Get "http://127.0.0.1:1/items?id=7&k=plain": EOF`, `Get "http://127.0.0.1:1/items?id=7&k=xxxxx": EOF`, key},
		{inQuery, `Get "http://127.0.0.1:1/items?id=7&K=other": EOF`, `Get "http://127.0.0.1:1/items?id=7&K=xxxxx": EOF`, "other"},
		{inQuery, `{"error":"bad key plain for k=plain"}`, `{"error":"bad key [redacted] for k=[redacted]"}`, key},
		{inHeader, "echo: x-thing: whatever; authorization=Bearer opaque-bearer", "echo: x-thing: [redacted]; authorization=[redacted] [redacted]", token},
		{inHeader, "token opaque-bearer refused", "token [redacted] refused", token},
		{nil, "GET https://u:pw@h/x?api_key=1", "GET https://u:xxxxx@h/x?api_key=xxxxx", "pw"},
	} {
		got := credapply.Redact(tt.cred, tt.in)
		if got != tt.want || strings.Contains(got, tt.forbidden) {
			t.Errorf("Redact(%q) = %q, want %q", tt.in, got, tt.want)
		}
		if again := credapply.Redact(tt.cred, got); again != got {
			t.Errorf("Redact twice: %q then %q", got, again)
		}
	}
}
