package auth

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	agentsmcp "github.com/agents-mcp/agents-mcp"
)

func sha256Hex(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

func TestCheckKeys(t *testing.T) {
	ok := func(k Key) Key {
		if k.Scopes == nil {
			k.Scopes = []string{"mcp"}
		}
		return k
	}
	tests := []struct {
		name string
		keys []Key
		want []string // problems, in order
	}{
		{"valid", []Key{ok(Key{Name: "ci-bot", Secret: "s3cret", Tools: []string{"everything__*", "search_tools"}, RateLimit: 5, Burst: 10}),
			ok(Key{Name: "ops", SHA256: strings.ToUpper(sha256Hex("other")), Scopes: []string{"admin:read", "admin:write"}}),
			ok(Key{Secret: "unnamed"})}, nil},
		{"no key", []Key{ok(Key{Name: "a"})}, []string{"keys[0].key: required: the key or its SHA-256 (key_sha256)"}},
		{"blank key", []Key{ok(Key{Secret: "   "})}, []string{"keys[0].key: must not be blank"}},
		{"space in key", []Key{ok(Key{Secret: "two words"})}, []string{"keys[0].key: must not contain spaces or control characters"}},
		{"both", []Key{ok(Key{Secret: "k", SHA256: sha256Hex("k")})}, []string{"keys[0].key: set either the key or its SHA-256, not both"}},
		{"bad hash", []Key{ok(Key{SHA256: "abc"})}, []string{"keys[0].key_sha256: must be 64 hex digits"}},
		{"no scopes", []Key{{Secret: "k", Scopes: []string{}}}, []string{"keys[0].scopes: required: one or more of mcp, admin:read, admin:write"}},
		{"bad scope", []Key{ok(Key{Secret: "k", Scopes: []string{"mcp", "admin"}})}, []string{`keys[0].scopes[1]: "admin" is not one of mcp, admin:read, admin:write`}},
		{"bad pattern", []Key{ok(Key{Secret: "k", Tools: []string{"ok_*", "bad[", ""}})},
			[]string{`keys[0].tools[1]: "bad[" is not a valid pattern (path.Match syntax)`, "keys[0].tools[2]: empty pattern"}},
		{"negative limits", []Key{ok(Key{Secret: "k", RateLimit: -1, Burst: -2})},
			[]string{"keys[0].rate_limit: must not be negative, got -1", "keys[0].burst: must not be negative, got -2"}},
		{"bad name", []Key{ok(Key{Name: "has space", Secret: "k"})}, []string{`keys[0].name: "has space" must match`}},
		{"duplicate name", []Key{ok(Key{Name: "a", Secret: "k1"}), ok(Key{Name: "a", Secret: "k2"})}, []string{`keys[1].name: "a" is already used by keys[0]`}},
		{"duplicate key", []Key{ok(Key{Name: "a", Secret: "k1"}), ok(Key{Name: "b", Secret: "k1"})}, []string{"keys[1].key: the same key as keys[0]"}},
		{"duplicate key by hash", []Key{ok(Key{Secret: "k1"}), ok(Key{SHA256: sha256Hex("k1")})}, []string{"keys[1].key: the same key as keys[0]"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := CheckKeys(tt.keys, nil)
			if len(got) != len(tt.want) {
				t.Fatalf("problems %v, want %q", got, tt.want)
			}
			for i, w := range tt.want {
				if !strings.HasPrefix(got[i].Error(), w) {
					t.Errorf("problem %d = %q, want prefix %q", i, got[i], w)
				}
			}
			for _, p := range got {
				for _, k := range tt.keys {
					if len(k.Secret) > 3 && strings.Contains(p.Error(), k.Secret) {
						t.Errorf("problem %q shows the secret", p)
					}
				}
			}
			_, err := New(Config{Keys: tt.keys})
			if (err == nil) != (len(tt.want) == 0) {
				t.Errorf("New: err = %v, want an error iff there are problems", err)
			}
		})
	}
	label := func(i int) string { return fmt.Sprintf("auth.api_keys[%d]", i+1) }
	got := CheckKeys([]Key{ok(Key{Secret: "x"}), ok(Key{Secret: "x"})}, label)
	if len(got) != 1 || got[0].Error() != "auth.api_keys[2].key: the same key as auth.api_keys[1]" {
		t.Errorf("labelled problems: %v", got)
	}
}

func TestKeyPrincipal(t *testing.T) {
	keys := []Key{
		{Name: "ci-bot", Secret: "ci-secret-value", Scopes: []string{"mcp"}, Tools: []string{"everything__*"}, RateLimit: 5, Burst: 7},
		{Name: "ops", SHA256: sha256Hex("ops-secret-value"), Scopes: []string{"admin:read"}},
	}
	a, err := New(Config{Keys: keys})
	if err != nil {
		t.Fatal(err)
	}
	if !a.Configured() || a.Metadata() != nil {
		t.Fatalf("Configured %v, JWT metadata %+v; want keys only", a.Configured(), a.Metadata())
	}
	p, exp, err := a.Verify(t.Context(), "ci-secret-value")
	if err != nil {
		t.Fatal(err)
	}
	want := &agentsmcp.Principal{ID: "key:" + sha256Hex("ci-secret-value")[:12], Name: "ci-bot", Scopes: []string{"mcp"}, Tools: []string{"everything__*"}, RateLimit: 5, Burst: 7}
	if p.ID != want.ID || p.Name != want.Name || !slices.Equal(p.Scopes, want.Scopes) || !slices.Equal(p.Tools, want.Tools) || p.RateLimit != 5 || p.Burst != 7 || !exp.IsZero() {
		t.Errorf("principal %+v exp %v, want %+v and no expiry", p, exp, want)
	}
	if !p.MayUseTool("everything__echo") || p.MayUseTool("run_task") {
		t.Error("allowlist not applied")
	}
	// Changing what one caller got must not change what the key grants.
	p.Scopes[0] = "admin:write"
	if again, _, _ := a.Verify(t.Context(), "ci-secret-value"); again.Scopes[0] != "mcp" {
		t.Errorf("a caller changed the key's scopes: %q", again.Scopes)
	}

	ops, _, err := a.Verify(t.Context(), "ops-secret-value")
	if err != nil || ops.ID != "key:"+sha256Hex("ops-secret-value")[:12] || ops.Name != "ops" {
		t.Errorf("key given by hash: %+v, %v", ops, err)
	}
	if keys[1].ID() != ops.ID {
		t.Errorf("Key.ID %q, principal %q", keys[1].ID(), ops.ID)
	}

	for _, bad := range []string{"", "ci-secret-valu", "ci-secret-value ", sha256Hex("ops-secret-value")} {
		_, _, err := a.Verify(t.Context(), bad)
		var e *Error
		if !errors.As(err, &e) || e.Status != 401 {
			t.Errorf("Verify(%q) = %v, want a 401 *Error", bad, err)
			continue
		}
		if bad != "" && e.Hint != "key:"+sha256Hex(bad)[:12] {
			t.Errorf("hint %q, want the hash prefix of what was presented", e.Hint)
		}
		if bad == "" && e.Hint != "none" {
			t.Errorf("hint for no token %q, want none", e.Hint)
		}
	}
}

func TestKeyStringHidesSecret(t *testing.T) {
	k := Key{Name: "ci-bot", Secret: "super-secret-key", Scopes: []string{"mcp"}, Tools: []string{"a__*"}, RateLimit: 2.5}
	for _, s := range []string{k.String(), fmt.Sprintf("%v", k), fmt.Sprintf("%+v", k), fmt.Sprintf("%#v", k), fmt.Sprint([]Key{k})} {
		if strings.Contains(s, "super-secret-key") || strings.Contains(s, sha256Hex("super-secret-key")) {
			t.Errorf("%q shows the secret or its full hash", s)
		}
	}
	want := "name=ci-bot id=key:" + sha256Hex("super-secret-key")[:12] + " scopes=mcp tools=a__* rate_limit=2.5"
	if k.String() != want {
		t.Errorf("String() = %q, want %q", k.String(), want)
	}
}

// Without credentials configured, everything is the anonymous principal
// with every scope.
func TestUnconfiguredIsAnonymous(t *testing.T) {
	a, err := New(Config{})
	if err != nil {
		t.Fatal(err)
	}
	if a.Configured() {
		t.Fatal("Configured with nothing configured")
	}
	for _, tok := range []string{"", "whatever"} {
		p, _, err := a.Verify(t.Context(), tok)
		if err != nil || p.ID != agentsmcp.AnonymousPrincipal || !slices.Equal(p.Scopes, agentsmcp.Scopes) || len(p.Tools) != 0 {
			t.Errorf("Verify(%q) = %+v, %v; want anonymous with every scope", tok, p, err)
		}
	}
}
