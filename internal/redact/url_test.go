package redact

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

func TestRedactMessage(t *testing.T) {
	tests := []struct {
		name, in string
		secrets  []string
		want     string
	}{
		{"key echoed", "bad request from sk-abc123", []string{"sk-abc123"}, "bad request from [redacted]"},
		{"every occurrence", "sk-abc123 and sk-abc123", []string{"sk-abc123"}, "[redacted] and [redacted]"},
		{"password", "auth as u with pass p@ss failed", []string{"p@ss"}, "auth as u with pass [redacted] failed"},
		{"query-escaped", "escaped p%40ss here", []string{"p@ss"}, "escaped [redacted] here"},
		{"secret under an ordinary query name", "GET https://h/x?k=sk-abc123 failed", []string{"sk-abc123"}, "GET https://h/x?k=[redacted] failed"},
		{"path-escaped", "path a%20b here", []string{"a b"}, "path [redacted] here"},
		{"escaped password in a URL", "dial mongodb://u:p%40ss@h:1/x failed", []string{"p@ss"}, "dial mongodb://u:xxxxx@h:1/x failed"},
		{"unknown password in a URL", "dial mongodb://u:pw@h:1,h2:2/x failed", nil, "dial mongodb://u:xxxxx@h:1,h2:2/x failed"},
		{"key as URL user", `Post "https://KEY@api.example/v1": EOF`, nil, `Post "https://xxxxx@api.example/v1": EOF`},
		{"query token", `Post "https://api.example/v1?api_key=abc&v=2": EOF`, nil, `Post "https://api.example/v1?api_key=xxxxx&v=2": EOF`},
		{"empty secret ignored", "nothing secret", []string{""}, "nothing secret"},
		{"ordinary URL kept", "GET https://api.example/v1/models: 404", []string{"sk-x"}, "GET https://api.example/v1/models: 404"},
	}
	for _, tt := range tests {
		if got := Message(tt.in, tt.secrets...); got != tt.want {
			t.Errorf("%s: Message(%q) = %q, want %q", tt.name, tt.in, got, tt.want)
		}
	}
}

// URL redaction knew a few parameter names only: an appid, auth, code or
// sid value was shown. Values that look generated
// are hidden whatever their name; ordinary parameters stay.
func TestRedactURLParameters(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"https://api.example/w?appid=abc123&q=paris", "https://api.example/w?appid=xxxxx&q=paris"},
		{"https://api.example/w?auth=abc123&page=2", "https://api.example/w?auth=xxxxx&page=2"},
		{"https://app.example/cb?code=SplxlOBe&state=af0i", "https://app.example/cb?code=xxxxx&state=af0i"},
		{"https://api.example/x?sid=s-42&lang=en", "https://api.example/x?sid=xxxxx&lang=en"},
		{"https://api.example/x?session=abc&X-Amz-Signature=f00", "https://api.example/x?session=xxxxx&X-Amz-Signature=xxxxx"},
		{"https://api.example/x?k=k9Xq2LmP7vR4tY8wZ1aB3cD5eF6gH0jK&n=1", "https://api.example/x?k=xxxxx&n=1"},
		{"https://api.example/search?q=mcp+servers&page=2&author=ann", "https://api.example/search?q=mcp+servers&page=2&author=ann"},
		{"mongodb://u:p@h/db?authSource=admin&authMechanism=SCRAM-SHA-256", "mongodb://u:xxxxx@h/db?authSource=admin&authMechanism=SCRAM-SHA-256"},
	} {
		if got := URL(tt.in); got != tt.want {
			t.Errorf("URL(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
