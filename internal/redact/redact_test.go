package redact

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"
)

// redacted runs Arguments on in and fails t unless the result is
// valid JSON within the size limit.
func redacted(t testing.TB, in string) string {
	t.Helper()
	out := Arguments(json.RawMessage(in))
	if len(out) > MaxArgumentsBytes {
		t.Fatalf("Arguments(%.80q): %d bytes, over the limit %d", in, len(out), MaxArgumentsBytes)
	}
	if len(out) > 0 && !json.Valid(out) {
		t.Fatalf("Arguments(%.80q) = %.200q: not valid JSON", in, out)
	}
	return string(out)
}

func TestRedactArgumentsSecretKeys(t *testing.T) {
	secretKeys := []string{
		"password", "Password", "PASSWORD", "passwd", "db_password", "userPassword", "passphrase",
		"secret", "client_secret", "clientSecret", "token", "access_token", "refreshToken", "id-token",
		"api_key", "apiKey", "API-KEY", "X-Api-Key", "apikey", "authorization", "Authorization",
		"Proxy-Authorization", "auth", "authToken", "basicAuth", "oauth", "credential", "credentials",
		"private_key", "privateKey", "access_key", "aws_secret_access_key", "session", "sessionId",
		"session_token", "cookie", "Set-Cookie", "bearer", "jwt", "pin", "otp", "signature", "pwd",
	}
	for _, k := range secretKeys {
		for _, v := range []string{`"s3cr3t-value"`, `12345678`, `{"nested":"s3cr3t-value"}`, `["s3cr3t-value"]`} {
			in := fmt.Sprintf(`{%q:%s,"kept":"visible"}`, k, v)
			got := redacted(t, in)
			want := fmt.Sprintf(`{%s:"[redacted]","kept":"visible"}`, quote(k))
			if got != want {
				t.Errorf("%s\n got %s\nwant %s", in, got, want)
			}
		}
	}
}

func TestRedactArgumentsOrdinaryKeys(t *testing.T) {
	tests := []struct{ in, want string }{
		// Keys that only look like secret names keep their values.
		{`{"author":"ada","authority":"x","tokenizer":"cl100k","keyword":"k","path":"/tmp/a"}`,
			`{"author":"ada","authority":"x","tokenizer":"cl100k","keyword":"k","path":"/tmp/a"}`},
		// Counting keys keep their numbers, never their strings.
		{`{"max_tokens":1000,"maxTokens":5,"token_count":3,"session_timeout":30,"sessionTTL":60,"tokens":7}`,
			`{"max_tokens":1000,"maxTokens":5,"token_count":3,"session_timeout":30,"sessionTTL":60,"tokens":7}`},
		{`{"max_tokens":"sk","tokens":["a"],"token":5}`, `{"max_tokens":"[redacted]","tokens":"[redacted]","token":"[redacted]"}`},
		// Booleans and null hold no secret.
		{`{"use_auth":true,"password":null,"token":false}`, `{"use_auth":true,"password":null,"token":false}`},
		// Shape is kept: types, nesting, order, numbers verbatim.
		{`{"a":[1,2.5e3,-0,true,null,{"b":"c"}],"d":{}}`, `{"a":[1,2.5e3,-0,true,null,{"b":"c"}],"d":{}}`},
		{` [ "x" , 1 ] `, `["x",1]`},
		{`"just a string"`, `"just a string"`},
		{`42`, `42`},
		{`null`, `null`},
		{`{"html":"<a href='x'>&</a>"}`, `{"html":"<a href='x'>&</a>"}`},
	}
	for _, tt := range tests {
		if got := redacted(t, tt.in); got != tt.want {
			t.Errorf("%s\n got %s\nwant %s", tt.in, got, tt.want)
		}
	}
}

func TestRedactArgumentsPatterns(t *testing.T) {
	tests := []struct {
		text   string
		secret string // must be gone
		kept   string // must stay
	}{
		{"curl -H 'Authorization: Bearer abc.DEF-123_x' https://api.example.com", "abc.DEF-123_x", "https://api.example.com"},
		{"authorization=Basic dXNlcjpwYXNzd29yZA==", "dXNlcjpwYXNzd29yZA", "authorization="},
		{"use bearer tok3n_value_here please", "tok3n_value_here", "please"},
		{"key sk-proj-Ab3dEfGhIjKlMnOpQrStUv and more", "Ab3dEfGhIjKlMnOpQrStUv", "and more"},
		{"anthropic sk-ant-api03-abcdefghijklmnop", "abcdefghijklmnop", "anthropic"},
		{"gh ghp_0123456789abcdefghijABCDEFGHIJklmnop", "0123456789abcdefghij", "gh "},
		{"fine-grained github_pat_11ABCDEFG0123456789_abcdefghijklmnop", "11ABCDEFG0123456789", "fine-grained"},
		{"gitlab glpat-abcdefghij0123456789", "abcdefghij0123456789", "gitlab"},
		{"aws AKIAIOSFODNN7EXAMPLE region", "AKIAIOSFODNN7EXAMPLE", "region"},
		{"slack xoxb-123456789012-abcdefghijkl", "123456789012-abcdefghijkl", "slack"},
		{"post to https://hooks.slack.com/services/T000/B000/XXXXXXXXXXXX now", "XXXXXXXXXXXX", "now"},
		{"stripe sk_live_abcdefghij0123 ok", "abcdefghij0123", "stripe"},
		{"google AIzaSyA-abcdefghijklmnopqrstuvwxyz01234 x", "abcdefghijklmnopqrstuvwxyz01234", "google"},
		{"jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.c2lnbmF0dXJlX3ZhbHVl end", "eyJzdWIiOiIxMjM0In0", "end"},
		{"-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAk3y\n-----END RSA PRIVATE KEY----- after", "MIIEowIBAAKCAQEAk3y", "after"},
		{"cut -----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQ", "MIIEvQIBADANBgkqhkiG9w0BAQ", "cut"},
		{"connect postgres://admin:hunter2@db.example.com:5432/app", "hunter2", "db.example.com:5432/app"},
		{"fetch https://APIKEY123@api.example.com/v1", "APIKEY123", "api.example.com/v1"},
		{"get https://api.example.com/v1?api_key=k3y-val&page=2", "k3y-val", "page=2"},
		{"set password=hunter2 and user=bob", "hunter2", "user=bob"},
		{`{"client_secret": "shh-it-is-secret"}`, "shh-it-is-secret", "client_secret"},
		{"run tool --token abc123def --verbose", "abc123def", "--verbose"},
		{"mysql --password=pa55word db", "pa55word", " db"},
		{"random k9Xq2LmP7vR4tY8wZ1aB3cD5eF6gH0jK token", "k9Xq2LmP7vR4tY8wZ1aB3cD5eF6gH0jK", "random"},
		{"hex 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08", "9f86d081884c7d659a2feaa0c55ad015", "hex"},
	}
	for _, tt := range tests {
		for _, in := range []string{
			string(quote(tt.text)),                          // a string value
			`{"note":` + string(quote(tt.text)) + `}`,       // an object member
			`[1,{"deep":[` + string(quote(tt.text)) + `]}]`, // nested
			`{` + string(quote(tt.text)) + `:1}`,            // a key
		} {
			got := redacted(t, in)
			if strings.Contains(got, tt.secret) {
				t.Errorf("%s\n got %s\nwhich keeps the secret %q", in, got, tt.secret)
			}
			if !strings.Contains(got, Marker) && !strings.Contains(got, "xxxxx") {
				t.Errorf("%s\n got %s\nwith no redaction marker", in, got)
			}
			if len(in) < redactMaxKey && !strings.Contains(got, tt.kept) {
				t.Errorf("%s\n got %s\nwhich lost the context %q", in, got, tt.kept)
			}
		}
	}
}

func TestRedactArgumentsKeepsOrdinaryText(t *testing.T) {
	for _, s := range []string{
		"list the files in /Users/JohnSmith/Projects2024/MyApp/src/main.go please",
		"./node_modules/@modelcontextprotocol/server-everything/dist/index.js",
		"src/components/DashboardWidgetContainer2024.tsx",
		"id 550e8400-e29b-41d4-a716-446655440000",
		"task tsk_01JD3ZQ8V6Y0M4N5P7R9S2T4W6",
		"https://example.com/search?q=mcp+servers&page=2",
		"The quick brown fox jumps over the lazy dog 1234567890 times.",
		"basic usage of bearer tokens is described in RFC 6750",
		"naïve café ☕ 日本語のテキスト",
		"SELECT name FROM users WHERE id = 42",
	} {
		want := string(quote(s))
		if got := redacted(t, want); got != want {
			t.Errorf("ordinary text changed:\n got %s\nwant %s", got, want)
		}
	}
}

func TestRedactArgumentsBounds(t *testing.T) {
	t.Run("long string", func(t *testing.T) {
		long := strings.Repeat("é", 1000) // 2 bytes each: the cut must not split one
		got := redacted(t, string(quote(long)))
		var s string
		if err := json.Unmarshal([]byte(got), &s); err != nil {
			t.Fatal(err)
		}
		if !strings.HasSuffix(s, markEllipsis) || len(s) > redactMaxString+len(markEllipsis) || !utf8.ValidString(s) {
			t.Errorf("long string became %d bytes %q…; want at most %d bytes, valid UTF-8, ending in %q", len(s), s[:20], redactMaxString, markEllipsis)
		}
	})
	t.Run("secret at the scan window", func(t *testing.T) {
		secret := "sk-" + strings.Repeat("Ab3", 20)
		for pad := redactScanWindow - 40; pad < redactScanWindow+5; pad++ {
			in := string(quote(strings.Repeat("a ", pad/2) + strings.Repeat("a", pad%2) + " " + secret + " tail"))
			if got := redacted(t, in); strings.Contains(got, "Ab3Ab3") {
				t.Fatalf("pad %d: output keeps a part of the secret: %s", pad, got)
			}
		}
	})
	t.Run("long key", func(t *testing.T) {
		got := redacted(t, `{"`+strings.Repeat("k", 500)+`":1}`)
		if want := `{"` + strings.Repeat("k", redactMaxKey) + `…":1}`; got != want {
			t.Errorf("got %s, want %s", got, want)
		}
	})
	t.Run("many items", func(t *testing.T) {
		items := make([]string, 120)
		members := make([]string, 120)
		for i := range items {
			items[i] = fmt.Sprint(i)
			members[i] = fmt.Sprintf(`"k%d":%d`, i, i)
		}
		if got := redacted(t, "["+strings.Join(items, ",")+"]"); !strings.HasSuffix(got, `,49,"[+70 more]"]`) {
			t.Errorf("array: got …%s", got[max(0, len(got)-40):])
		}
		if got := redacted(t, "{"+strings.Join(members, ",")+"}"); !strings.HasSuffix(got, `"k49":49,"…":"[+70 more]"}`) {
			t.Errorf("object: got …%s", got[max(0, len(got)-40):])
		}
	})
	t.Run("deep nesting", func(t *testing.T) {
		in := strings.Repeat(`{"a":[`, 40) + `"x"` + strings.Repeat(`]}`, 40)
		got := redacted(t, in)
		if !strings.Contains(got, `"[too deep]"`) || strings.Count(got, "{") > redactMaxDepth {
			t.Errorf("got %s", got)
		}
	})
	t.Run("huge document", func(t *testing.T) {
		var b strings.Builder
		b.WriteString(`{"rows":[`)
		for i := range 20000 {
			if i > 0 {
				b.WriteString(",")
			}
			fmt.Fprintf(&b, `{"id":%d,"name":"row %d","tags":["a","b"],"blob":%q}`, i, i, strings.Repeat("z", 300))
		}
		b.WriteString(`],"password":"late-secret"}`)
		got := redacted(t, b.String())
		if !strings.Contains(got, "[+") && !strings.Contains(got, markTruncated) {
			t.Errorf("huge document was not cut: %d bytes", len(got))
		}
		if strings.Contains(got, "late-secret") {
			t.Error("the late secret leaked")
		}
	})
	t.Run("wide document fills the limit", func(t *testing.T) {
		var b strings.Builder
		b.WriteString(`{`)
		for i := range redactMaxItems {
			if i > 0 {
				b.WriteString(",")
			}
			fmt.Fprintf(&b, `"k%d":[%q,%q,%q]`, i, strings.Repeat("x", 200), strings.Repeat("y", 200), strings.Repeat("w", 200))
		}
		b.WriteString(`}`)
		got := redacted(t, b.String())
		if !strings.Contains(got, markTruncated) {
			t.Errorf("expected a truncated marker in %d bytes", len(got))
		}
		if len(got) < MaxArgumentsBytes-redactReserve-300 { // one item of about 260 bytes may not fit
			t.Errorf("only %d bytes used of %d", len(got), MaxArgumentsBytes)
		}
	})
}

func TestRedactArgumentsNotJSON(t *testing.T) {
	for _, in := range []string{
		`{"password":"hunter2"`, `{"a":1,}`, `[1 2]`, `{"a" 1}`, `1 2`, `{} {}`, `nope`, `"unterminated`,
		`{"a":1}]`, "{\"password\":\"hunter2\", 'x'}", `{1:2}`, `[}`,
	} {
		got := redacted(t, in)
		want := fmt.Sprintf(`"[not valid JSON: %d bytes]"`, len(in))
		if got != want {
			t.Errorf("%s: got %s, want %s", in, got, want)
		}
	}
	for _, in := range []string{"", "   ", "\n\t"} {
		if got := Arguments(json.RawMessage(in)); got != nil {
			t.Errorf("%q: got %s, want nil", in, got)
		}
	}
}

// TestRedactArgumentsIdempotent: redacting what was already redacted
// changes nothing, so callers need not track whether they did.
func TestRedactArgumentsIdempotent(t *testing.T) {
	for _, in := range []string{
		`{"password":"x","note":"Bearer abc and https://u:p@h/x?token=1","n":[1,2,3]}`,
		string(quote(strings.Repeat("word ", 200))),
		`"[not valid JSON: 3 bytes]"`,
	} {
		once := redacted(t, in)
		if twice := redacted(t, once); twice != once {
			t.Errorf("not idempotent:\n once %s\ntwice %s", once, twice)
		}
	}
}

// FuzzRedactArguments checks, on any input, that the output is valid JSON
// within the limit, and that secrets planted beside the fuzzed value — under
// a secret key, and as known token formats in text — never come out.
func FuzzRedactArguments(f *testing.F) {
	for _, seed := range []string{
		`{}`, `[]`, `"x"`, `1`, `null`, `{"a":{"b":[1,"two",{"c":null}]}}`, `{"password":"p"}`,
		`["https://user:pw@host/x?token=t", "Bearer x"]`, `{"a":`, `[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]`,
		`"\u00e9\ud800"`, string(quote(strings.Repeat("a", 2000))), `{"k":1e999999}`,
	} {
		f.Add([]byte(seed), "ordinary text")
	}
	const sentinel = "Zq7PLANTED"
	planted := []string{
		"sk-" + sentinel + "abcdefghijklmnop",
		"ghp_" + sentinel + "abcdefghijklmnopqrst",
		"xoxb-" + sentinel + "-0123456789",
		"eyJhbGciOiJIUzI1NiJ9.eyJ" + sentinel + "In0.c2lnbmF0dXJl",
		"https://user:" + sentinel + "@host.example/x",
		"Bearer " + sentinel,
		"password=" + sentinel,
	}
	f.Fuzz(func(t *testing.T, raw []byte, text string) {
		redacted(t, string(raw))
		if strings.Contains(string(raw), sentinel) || strings.Contains(text, sentinel) {
			return // the fuzzer wrote the sentinel itself: it is not a secret
		}
		for _, secret := range planted {
			// Separated by spaces: a secret glued to other text is another
			// token, which only the shape test may catch.
			doc := fmt.Sprintf(`{"v":%s,"password":%s,"t":%s,%s:1}`, raw,
				quote(text+secret), quote(text+" "+secret+" "+text), quote(secret))
			out := redacted(t, doc)
			if strings.Contains(out, sentinel) {
				t.Fatalf("planted %q leaked:\n in %s\nout %s", secret, doc, out)
			}
		}
	})
}

func TestRedactText(t *testing.T) {
	msg := "upstream said: 401 for https://bob:hunter2@api.example.com/v1?api_key=k3y (Bearer abc123) \xff"
	got := Text(msg, 0)
	for _, secret := range []string{"hunter2", "k3y", "abc123"} {
		if strings.Contains(got, secret) {
			t.Errorf("Text kept %q: %s", secret, got)
		}
	}
	if !strings.HasPrefix(got, "upstream said: 401 for https://bob:") || !utf8.ValidString(got) {
		t.Errorf("Text = %q", got)
	}
	for _, limit := range []int{1, 10, 300, 2048} {
		got := Text(strings.Repeat("é", 3000), limit)
		if len(got) > limit && !(limit < len(markEllipsis)+1 && len(got) <= len(markEllipsis)+1) {
			t.Errorf("limit %d: %d bytes", limit, len(got))
		}
		if !utf8.ValidString(got) || !strings.HasSuffix(got, markEllipsis) {
			t.Errorf("limit %d: %q is not valid UTF-8 marked as cut", limit, got)
		}
	}
	if got := Text("short", 10); got != "short" {
		t.Errorf("short text changed to %q", got)
	}
}

func BenchmarkRedactArguments(b *testing.B) {
	small := json.RawMessage(`{"path":"/srv/data/report.csv","pattern":"*.go","max_results":50,"api_key":"k"}`)
	var big strings.Builder
	big.WriteString(`[`)
	for i := range 20000 {
		if i > 0 {
			big.WriteString(",")
		}
		fmt.Fprintf(&big, `{"id":%d,"text":%q}`, i, strings.Repeat("lorem ipsum ", 10))
	}
	big.WriteString(`]`)
	huge := json.RawMessage(big.String())
	b.Run("small", func(b *testing.B) {
		for b.Loop() {
			Arguments(small)
		}
	})
	b.Run(fmt.Sprintf("%dKiB", len(huge)>>10), func(b *testing.B) {
		for b.Loop() {
			Arguments(huge)
		}
	})
	oneString := json.RawMessage(quote(strings.Repeat("x", 1<<20)))
	b.Run("1MiB string", func(b *testing.B) {
		for b.Loop() {
			Arguments(oneString)
		}
	})
}

// A secret given in words, not as name=value, is found too: a request
// "Delete post 5 password hunter2" kept its password in the task family,
// the plan's goal and the thought.
func TestRedactTextProseSecrets(t *testing.T) {
	for _, tt := range []struct{ in, secret, want string }{
		{"Delete post 5 password=hunter2", "hunter2", "Delete post 5 password=[redacted]"},
		{"Delete post 5 password: hunter2", "hunter2", "Delete post 5 password: [redacted]"},
		{"Delete post 5 password hunter2", "hunter2", "Delete post 5 password [redacted]"},
		{"Delete post 5 password swordfish please", "swordfish", "Delete post 5 password [redacted] please"},
		{"Delete post 5, my password is hunter2.", "hunter2", "Delete post 5, my password is [redacted]."},
		{"Delete post 5. My Password Is Hunter2", "Hunter2", "Delete post 5. My Password Is [redacted]"},
		{"the password for bob is s3cr3t!", "s3cr3t", "the password for bob is [redacted]!"},
		{"change the password to tr0ub4dor", "tr0ub4dor", "change the password to [redacted]"},
		{`log in with passphrase "correct horse battery"`, "horse", `log in with passphrase [redacted]`},
		{"use api key abc123xyz for the call", "abc123xyz", "use api key [redacted] for the call"},
		{"use the API key: abcdefgh", "abcdefgh", "use the API key: [redacted]"},
		{"token=tok3nvalue", "tok3nvalue", "token=[redacted]"},
		{"the token is abcdefgh", "abcdefgh", "the token is [redacted]"},
		{"access token XyZ_42 expires", "XyZ_42", "access token [redacted] expires"},
		{"pin is 4321", "4321", "pin is [redacted]"},
		{"with credentials admin:hunter2", "hunter2", "with credentials [redacted]"},
	} {
		got := Text(tt.in, 1000)
		if strings.Contains(got, tt.secret) || got != tt.want {
			t.Errorf("Text(%q) = %q, want %q", tt.in, got, tt.want)
		}
		if again := Text(got, 1000); again != got {
			t.Errorf("Text twice: %q then %q", got, again)
		}
		if !HasSecret(tt.in) {
			t.Errorf("HasSecret(%q) = false", tt.in)
		}
	}
	for _, s := range []string{
		"reset the password for bob",
		"my password is wrong",
		"the password manager is down",
		"the token expired",
		"count the tokens in the answer",
		"raise the token limit to 4000",
		"use a bearer token for auth",
		"pin the message to the channel",
		"pin 3 messages",
		"top secret plans",
		"the api key is missing",
		"passwords for all users must rotate",
		"Delete post 5",
		"send the key to the vault",
		"delete post <num> password <secret>",
		"bad token for https://example.com/x",
	} {
		if got := Text(s, 1000); got != s {
			t.Errorf("prose changed: Text(%q) = %q", s, got)
		}
	}
}
