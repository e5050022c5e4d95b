package agentsmcp

import (
	"strings"
	"testing"
)

func TestServerMessage(t *testing.T) {
	tests := []struct {
		body string
		want string
	}{
		{`{"error":{"message":"Invalid 'input': empty string.","type":"invalid_request_error"}}`, "Invalid 'input': empty string."},
		{`{"error":"model \"x\" not found, try pulling it first"}`, `model "x" not found, try pulling it first`},
		{`{"message":"too many"}`, "too many"},
		{`{"detail":"Not Found"}`, "Not Found"},
		{`{"object":"error","message":"vllm says no"}`, "vllm says no"},
		{"plain\n  text  body", "plain text body"},
		{"", ""},
		{`{"error":{}}`, `{"error":{}}`},
		{strings.Repeat("x", 1000), strings.Repeat("x", MaxQuotedMessageBytes) + "…"},
	}
	for _, tt := range tests {
		if got := ServerMessage([]byte(tt.body)); got != tt.want {
			t.Errorf("ServerMessage(%.40q) = %q, want %q", tt.body, got, tt.want)
		}
	}
	if got := QuoteMessage(strings.Repeat("é", 300)); strings.ContainsRune(got, '\uFFFD') || len(got) > MaxQuotedMessageBytes+len("…") {
		t.Errorf("trim cut a rune or is too long: %d bytes", len(got))
	}
}

func TestQuoteMessage(t *testing.T) {
	long := strings.Repeat("é", 400) // 800 bytes
	got := QuoteMessage(long)
	if len(got) > MaxQuotedMessageBytes+len("…") || !strings.HasSuffix(got, "…") {
		t.Errorf("trimmed to %d bytes", len(got))
	}
	if strings.ContainsRune(got, '\uFFFD') {
		t.Error("cut inside a rune")
	}
	if got := QuoteMessage("  a\n\tb  "); got != "a b" {
		t.Errorf("whitespace: %q", got)
	}
}
