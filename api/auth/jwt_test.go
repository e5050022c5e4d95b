package auth

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/golang-jwt/jwt/v5"
	sdkauth "github.com/modelcontextprotocol/go-sdk/auth"

	agentsmcp "github.com/agents-mcp/agents-mcp"
)

func newJWTAuthenticator(t *testing.T, cfg JWTConfig, keys ...Key) *Authenticator {
	t.Helper()
	a, err := New(Config{Keys: keys, JWT: cfg})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func TestJWTChecks(t *testing.T) {
	rs := newRSASigner(t, "rsa-1")
	ec := newECSigner(t, "ec-1")
	is := newTestIssuer(t, rs, ec)
	a := newJWTAuthenticator(t, is.jwtConfig())
	stranger := newECSigner(t, "ec-1") // same kid, key the issuer never published

	change := func(f func(jwt.MapClaims)) jwt.MapClaims {
		c := claims("alice", "mcp admin:read")
		f(c)
		return c
	}
	tests := []struct {
		name       string
		token      string
		wantID     string
		wantScopes []string
		wantStatus int // 0: accepted
		wantReason string
	}{
		{name: "RS256", token: rs.sign(t, claims("alice", "mcp admin:read")), wantID: "jwt:alice", wantScopes: []string{"mcp", "admin:read"}},
		{name: "ES256", token: ec.sign(t, claims("bob", "mcp")), wantID: "jwt:bob", wantScopes: []string{"mcp"}},
		{name: "unknown scopes dropped", token: rs.sign(t, claims("carol", "openid mcp profile mcp")), wantID: "jwt:carol", wantScopes: []string{"mcp"}},
		{name: "scope array", token: rs.sign(t, change(func(c jwt.MapClaims) { c["scope"] = []string{"admin:write", "email"} })), wantID: "jwt:alice", wantScopes: []string{"admin:write"}},
		{name: "aud array", token: rs.sign(t, change(func(c jwt.MapClaims) { c["aud"] = []string{"other", testAudience} })), wantID: "jwt:alice", wantScopes: []string{"mcp", "admin:read"}},
		{name: "expired within leeway", token: rs.sign(t, change(func(c jwt.MapClaims) { c["exp"] = time.Now().Add(-5 * time.Second).Unix() })), wantID: "jwt:alice", wantScopes: []string{"mcp", "admin:read"}},

		{name: "expired", token: rs.sign(t, change(func(c jwt.MapClaims) { c["exp"] = time.Now().Add(-time.Hour).Unix() })), wantStatus: 401, wantReason: "token expired"},
		{name: "no exp", token: rs.sign(t, change(func(c jwt.MapClaims) { delete(c, "exp") })), wantStatus: 401, wantReason: "token has no exp claim"},
		{name: "not yet valid", token: rs.sign(t, change(func(c jwt.MapClaims) { c["nbf"] = time.Now().Add(time.Hour).Unix() })), wantStatus: 401, wantReason: "token not valid yet"},
		{name: "wrong issuer", token: rs.sign(t, change(func(c jwt.MapClaims) { c["iss"] = "https://evil.example/" })), wantStatus: 401, wantReason: "token issuer not accepted"},
		{name: "no issuer", token: rs.sign(t, change(func(c jwt.MapClaims) { delete(c, "iss") })), wantStatus: 401, wantReason: "token has no iss claim"},
		{name: "wrong audience", token: rs.sign(t, change(func(c jwt.MapClaims) { c["aud"] = "another-service" })), wantStatus: 401, wantReason: "token audience not accepted"},
		{name: "no aud", token: rs.sign(t, change(func(c jwt.MapClaims) { delete(c, "aud") })), wantStatus: 401, wantReason: "token has no aud claim"},
		{name: "no sub", token: rs.sign(t, change(func(c jwt.MapClaims) { delete(c, "sub") })), wantStatus: 401, wantReason: "token has no sub claim"},
		{name: "sub with a newline", token: rs.sign(t, claims("alice\n{\"level\":\"INFO\",\"msg\":\"forged\"}", "mcp")), wantStatus: 401, wantReason: "token's sub claim holds the control or format character U+000A"},
		{name: "sub with a NUL", token: rs.sign(t, claims("alice\x00admin", "mcp")), wantStatus: 401, wantReason: "token's sub claim holds the control or format character U+0000"},
		{name: "sub with a bidi override", token: rs.sign(t, claims("alice\u202egnp.exe", "mcp")), wantStatus: 401, wantReason: "token's sub claim holds the control or format character U+202E"},
		{name: "sub too long", token: rs.sign(t, claims(strings.Repeat("a", MaxSubjectBytes+1), "mcp")), wantStatus: 401, wantReason: "token's sub claim is longer than 252 bytes"},
		{name: "sub with a line separator", token: rs.sign(t, claims("alice\u2028bob", "mcp")), wantStatus: 401, wantReason: "token's sub claim holds the control or format character U+2028"},
		{name: "sub of the longest accepted length", token: rs.sign(t, claims(strings.Repeat("a", MaxSubjectBytes), "mcp")), wantID: "jwt:" + strings.Repeat("a", MaxSubjectBytes), wantScopes: []string{"mcp"}},
		{name: "sub of another script", token: rs.sign(t, claims("Zoë 山田", "mcp")), wantID: "jwt:Zoë 山田", wantScopes: []string{"mcp"}},
		{name: "signed by a stranger", token: stranger.sign(t, claims("mallory", "mcp")), wantStatus: 401, wantReason: "invalid token signature"},
		{name: "tampered payload", token: tamper(rs.sign(t, claims("alice", "mcp"))), wantStatus: 401, wantReason: "invalid token signature"},
		{name: "alg none", token: unsignedToken(t, claims("mallory", "mcp admin:write")), wantStatus: 401, wantReason: "token signing algorithm not accepted"},
		{name: "HS256 with the public key as secret", token: hmacWithPublicKey(t, rs, claims("mallory", "mcp")), wantStatus: 401, wantReason: "token signing algorithm not accepted"},
		{name: "unknown kid", token: (&signer{kid: "nope", method: rs.method, key: rs.key}).sign(t, claims("alice", "mcp")), wantStatus: 401, wantReason: "token signed by an unknown key"},
		{name: "garbage with two dots", token: "a.b.c", wantStatus: 401, wantReason: "malformed token"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, exp, err := a.Verify(t.Context(), tt.token)
			if tt.wantStatus == 0 {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				if p.ID != tt.wantID || !slices.Equal(p.Scopes, tt.wantScopes) {
					t.Errorf("principal %q %q, want %q %q", p.ID, p.Scopes, tt.wantID, tt.wantScopes)
				}
				if exp.IsZero() {
					t.Error("no expiry for a JWT")
				}
				return
			}
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("err = %v (principal %v), want *Error", err, p)
			}
			if e.Status != tt.wantStatus || e.Reason != tt.wantReason {
				t.Errorf("refused with %d %q, want %d %q", e.Status, e.Reason, tt.wantStatus, tt.wantReason)
			}
			if !errors.Is(err, sdkauth.ErrInvalidToken) || agentsmcp.ErrorCode(err) != agentsmcp.EUNAUTHORIZED {
				t.Errorf("err %v: not ErrInvalidToken / EUNAUTHORIZED", err)
			}
			if strings.Contains(e.Hint, tt.token) || strings.Contains(err.Error(), tt.token) {
				t.Errorf("the token leaks into hint %q or error %q", e.Hint, err)
			}
		})
	}
}

func TestJWTHintIsUnverifiedSubject(t *testing.T) {
	rs := newRSASigner(t, "rsa-1")
	is := newTestIssuer(t, rs)
	a := newJWTAuthenticator(t, is.jwtConfig())
	c := claims("mallory\x00\"x", "mcp")
	c["iss"] = "https://evil.example/"
	_, _, err := a.Verify(t.Context(), rs.sign(t, c))
	var e *Error
	if !errors.As(err, &e) || e.Hint != `jwt:mallory??x` {
		t.Fatalf("err %v, hint %q; want jwt:mallory??x", err, e.Hint)
	}
}

func TestJWTCustomScopesClaim(t *testing.T) {
	rs := newRSASigner(t, "rsa-1")
	is := newTestIssuer(t, rs)
	cfg := is.jwtConfig()
	cfg.ScopesClaim = "scp"
	a := newJWTAuthenticator(t, cfg)
	c := claims("svc", "admin:write") // "scope" is ignored now
	c["scp"] = []any{"mcp", "admin:read"}
	p, _, err := a.Verify(t.Context(), rs.sign(t, c))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(p.Scopes, []string{"mcp", "admin:read"}) {
		t.Errorf("scopes %q, want [mcp admin:read] from scp", p.Scopes)
	}
}

// ToolsClaim turns a claim into the principal's tool allowlist, and fails
// closed: a token without a usable allowlist is refused.
func TestJWTToolsClaim(t *testing.T) {
	rs := newRSASigner(t, "rsa-1")
	is := newTestIssuer(t, rs)
	cfg := is.jwtConfig()
	cfg.ToolsClaim = "agents_mcp_tools"
	a := newJWTAuthenticator(t, cfg)

	with := func(v any) jwt.MapClaims {
		c := claims("svc", "mcp")
		c["agents_mcp_tools"] = v
		return c
	}
	tests := []struct {
		name       string
		claims     jwt.MapClaims
		wantTools  []string
		wantReason string // "": accepted
	}{
		{name: "string", claims: with("everything__*  search_tools "), wantTools: []string{"everything__*", "search_tools"}},
		{name: "array", claims: with([]any{"everything__echo", "", " ", "github__*"}), wantTools: []string{"everything__echo", "github__*"}},
		{name: "duplicates dropped", claims: with([]string{"a__*", "a__*"}), wantTools: []string{"a__*"}},

		{name: "missing", claims: claims("svc", "mcp"), wantReason: "token has no agents_mcp_tools claim (required: it holds the tool allowlist)"},
		{name: "null", claims: with(nil), wantReason: "token has no agents_mcp_tools claim (required: it holds the tool allowlist)"},
		{name: "empty string", claims: with("  "), wantReason: "token's agents_mcp_tools claim holds no tool pattern"},
		{name: "empty array", claims: with([]any{}), wantReason: "token's agents_mcp_tools claim holds no tool pattern"},
		{name: "array of empty strings", claims: with([]any{"", ""}), wantReason: "token's agents_mcp_tools claim holds no tool pattern"},
		{name: "bad pattern in string", claims: with("ok__* x__["), wantReason: `token's agents_mcp_tools claim holds an invalid tool pattern "x__["`},
		{name: "bad pattern in array", claims: with([]any{"ok__*", `x\`}), wantReason: `token's agents_mcp_tools claim holds an invalid tool pattern "x?"`},
		{name: "number", claims: with(42), wantReason: "token's agents_mcp_tools claim must be a string or an array of strings"},
		{name: "object", claims: with(map[string]any{"allow": "x"}), wantReason: "token's agents_mcp_tools claim must be a string or an array of strings"},
		{name: "array with a number", claims: with([]any{"ok__*", 7}), wantReason: "token's agents_mcp_tools claim must be a string or an array of strings"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, _, err := a.Verify(t.Context(), rs.sign(t, tt.claims))
			if tt.wantReason == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				if !slices.Equal(p.Tools, tt.wantTools) || !slices.Equal(p.Scopes, []string{"mcp"}) {
					t.Errorf("tools %q scopes %q, want tools %q scopes [mcp]", p.Tools, p.Scopes, tt.wantTools)
				}
				return
			}
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("err = %v (principal %+v), want *Error", err, p)
			}
			if e.Status != http.StatusUnauthorized || e.Reason != tt.wantReason || e.Hint != "jwt:svc" {
				t.Errorf("refused with %d %q hint %q, want 401 %q hint jwt:svc", e.Status, e.Reason, e.Hint, tt.wantReason)
			}
			if !errors.Is(err, sdkauth.ErrInvalidToken) {
				t.Errorf("err %v is not ErrInvalidToken", err)
			}
		})
	}

	// The allowlist reaches the principal the handlers see, and a refusal
	// is an invalid_token challenge naming the reason.
	var seen *agentsmcp.Principal
	h := a.Middleware(agentsmcp.ScopeMCP)(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen = agentsmcp.PrincipalFrom(r.Context())
	}))
	if rec, _ := do(t, h, http.MethodPost, bearer(rs.sign(t, with("everything__*")))); rec.Code != http.StatusOK {
		t.Fatalf("status %d (%s)", rec.Code, rec.Body)
	}
	if seen == nil || !seen.MayUseTool("everything__echo") || seen.MayUseTool("github__create_issue") {
		t.Errorf("principal %+v: allowlist not applied", seen)
	}
	rec, body := do(t, h, http.MethodPost, bearer(rs.sign(t, claims("svc", "mcp"))))
	challenge := rec.Header().Get("WWW-Authenticate")
	if rec.Code != http.StatusUnauthorized || !strings.Contains(challenge, `error="invalid_token"`) ||
		!strings.Contains(challenge, "agents_mcp_tools claim") || body.Error.Code != "unauthenticated" {
		t.Errorf("token without the claim: %d, challenge %q, body %+v", rec.Code, challenge, body)
	}
}

// Without ToolsClaim, tokens carry no allowlist, whatever claims they have.
func TestJWTNoToolsClaim(t *testing.T) {
	rs := newRSASigner(t, "rsa-1")
	is := newTestIssuer(t, rs)
	a := newJWTAuthenticator(t, is.jwtConfig())
	c := claims("svc", "mcp")
	c["tools"] = "only__this"
	p, _, err := a.Verify(t.Context(), rs.sign(t, c))
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Tools) != 0 || !p.MayUseTool("anything__else") {
		t.Errorf("tools %q without ToolsClaim, want none", p.Tools)
	}
}

// A token without kid is checked against every key that fits its
// algorithm, as issuers with a single key often omit it.
func TestJWTWithoutKid(t *testing.T) {
	rs := newRSASigner(t, "rsa-1")
	ec1, ec2 := newECSigner(t, "ec-1"), newECSigner(t, "ec-2")
	is := newTestIssuer(t, rs, ec1, ec2)
	a := newJWTAuthenticator(t, is.jwtConfig())
	anon := &signer{method: ec2.method, key: ec2.key}
	p, _, err := a.Verify(t.Context(), anon.sign(t, claims("dave", "mcp")))
	if err != nil || p.ID != "jwt:dave" {
		t.Fatalf("no kid: %v, %v", p, err)
	}
	stranger := &signer{method: jwt.SigningMethodES256, key: newECSigner(t, "").key}
	if _, _, err := a.Verify(t.Context(), stranger.sign(t, claims("dave", "mcp"))); err == nil {
		t.Error("token without kid from an unpublished key accepted")
	}
}

// Rotation: a token with a kid the cached set lacks makes the
// authenticator fetch the set again, at most once per MinRefreshInterval.
func TestJWTKeyRotation(t *testing.T) {
	old := newRSASigner(t, "2026-01")
	next := newECSigner(t, "2026-02")
	is := newTestIssuer(t, old)
	cfg := is.jwtConfig()
	cfg.MinRefreshInterval = time.Hour
	a := newJWTAuthenticator(t, cfg)

	if _, _, err := a.Verify(t.Context(), old.sign(t, claims("alice", "mcp"))); err != nil {
		t.Fatal(err)
	}
	if n := is.fetches.Load(); n != 1 {
		t.Fatalf("%d fetches for the first token, want 1", n)
	}
	// The issuer rotates; the first token with the new kid refreshes.
	is.publish(old, next)
	// Pretend the last fetch is older than MinRefreshInterval.
	a.jwt.keys.mu.Lock()
	a.jwt.keys.attempted = time.Now().Add(-2 * time.Hour)
	a.jwt.keys.mu.Unlock()
	if _, _, err := a.Verify(t.Context(), next.sign(t, claims("alice", "mcp"))); err != nil {
		t.Fatalf("token of the rotated-in key: %v", err)
	}
	if n := is.fetches.Load(); n != 2 {
		t.Fatalf("%d fetches after rotation, want 2", n)
	}
	// Made-up kids do not make the authenticator hammer the issuer.
	for i := range 5 {
		bogus := &signer{kid: "bogus-" + string(rune('a'+i)), method: next.method, key: next.key}
		if _, _, err := a.Verify(t.Context(), bogus.sign(t, claims("mallory", "mcp"))); err == nil {
			t.Fatal("unknown kid accepted")
		}
	}
	if n := is.fetches.Load(); n != 2 {
		t.Errorf("%d fetches after 5 unknown kids, want still 2", n)
	}
	// The old key, retired by the issuer, stops working after the next fetch.
	is.publish(next)
	a.jwt.keys.mu.Lock()
	a.jwt.keys.attempted = time.Now().Add(-2 * time.Hour)
	a.jwt.keys.fetched = time.Now().Add(-2 * time.Hour) // stale: older than RefreshInterval
	a.jwt.keys.mu.Unlock()
	if _, _, err := a.Verify(t.Context(), old.sign(t, claims("alice", "mcp"))); err == nil {
		t.Error("token of a retired key accepted after the set was refreshed")
	}
}

// While the issuer is down, the last good key set stays in use; before
// any set was ever fetched, tokens get 503, not 401.
func TestJWTIssuerDown(t *testing.T) {
	rs := newRSASigner(t, "rsa-1")
	is := newTestIssuer(t, rs)
	is.setDown(true)
	cfg := is.jwtConfig()
	cfg.MinRefreshInterval = time.Millisecond
	a := newJWTAuthenticator(t, cfg)
	if err := a.RefreshJWKS(t.Context()); err == nil {
		t.Error("RefreshJWKS with the issuer down: no error")
	}
	_, _, err := a.Verify(t.Context(), rs.sign(t, claims("alice", "mcp")))
	var e *Error
	if !errors.As(err, &e) || e.Status != http.StatusServiceUnavailable || agentsmcp.ErrorCode(err) != agentsmcp.EUNAVAILABLE {
		t.Fatalf("issuer down, nothing cached: err %v, want a 503 *Error", err)
	}
	if errors.Is(err, sdkauth.ErrInvalidToken) {
		t.Error("a 503 must not read as an invalid token")
	}

	is.setDown(false)
	time.Sleep(2 * time.Millisecond)
	if err := a.RefreshJWKS(t.Context()); err != nil {
		t.Fatal(err)
	}
	is.setDown(true)
	a.jwt.keys.mu.Lock()
	a.jwt.keys.fetched = time.Now().Add(-2 * DefaultJWKSRefreshInterval) // stale
	a.jwt.keys.attempted = time.Time{}
	a.jwt.keys.mu.Unlock()
	before := is.fetches.Load()
	if _, _, err := a.Verify(t.Context(), rs.sign(t, claims("alice", "mcp"))); err != nil {
		t.Fatalf("issuer down with a cached set: %v", err)
	}
	if is.fetches.Load() == before {
		t.Error("a stale set was not fetched again")
	}
}

// A JWKS fetch is bounded by FetchTimeout even when the issuer hangs.
func TestJWKSFetchTimeout(t *testing.T) {
	release := make(chan struct{})
	srv := newHangingServer(t, release)
	a := newJWTAuthenticator(t, JWTConfig{
		JWKSURL: srv.URL, Issuer: testIssuerName, Audience: testAudience, Resource: testResource,
		FetchTimeout: 50 * time.Millisecond,
	})
	start := time.Now()
	err := a.RefreshJWKS(context.Background())
	close(release)
	if err == nil {
		t.Fatal("hanging issuer: no error")
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("fetch took %v despite a 50ms timeout", d)
	}
}

func TestJWTConfigProblems(t *testing.T) {
	tests := []struct {
		name string
		cfg  JWTConfig
		want []string
	}{
		{"disabled", JWTConfig{ScopesClaim: "scope"}, nil},
		{"complete", JWTConfig{JWKSURL: "https://i/jwks", Issuer: "https://i/", Audience: "a", Resource: "https://m/mcp"}, nil},
		{"only issuer", JWTConfig{Issuer: "https://i/"}, []string{"jwks_url: required", "audience: required", "resource: required"}},
		{"bad urls", JWTConfig{JWKSURL: "ftp://i/jwks", Issuer: "i", Audience: "a", Resource: "/mcp", AuthorizationServers: []string{"https://ok/", "nope"}},
			[]string{`jwks_url: "ftp://i/jwks" must be an absolute http or https URL`, `resource: "/mcp"`, `authorization_servers[1]: "nope"`}},
		{"negative tuning", JWTConfig{JWKSURL: "https://i/jwks", Issuer: "i", Audience: "a", Resource: "https://m/mcp", Leeway: -1}, []string{"leeway: must not be negative"}},
		{"tools claim", JWTConfig{JWKSURL: "https://i/jwks", Issuer: "i", Audience: "a", Resource: "https://m/mcp", ToolsClaim: "tools"}, nil},
		{"tools claim with spaces", JWTConfig{JWKSURL: "https://i/jwks", Issuer: "i", Audience: "a", Resource: "https://m/mcp", ToolsClaim: " tools"},
			[]string{`tools_claim: " tools" must not have surrounding spaces`}},
		{"tools claim is the scopes claim", JWTConfig{JWKSURL: "https://i/jwks", Issuer: "i", Audience: "a", Resource: "https://m/mcp", ScopesClaim: "scp", ToolsClaim: "scp"},
			[]string{`tools_claim: "scp" is already the scopes claim`}},
		{"tools claim is the default scopes claim", JWTConfig{JWKSURL: "https://i/jwks", Issuer: "i", Audience: "a", Resource: "https://m/mcp", ToolsClaim: "scope"},
			[]string{`tools_claim: "scope" is already the scopes claim`}},
		{"tools claim may be the default scopes claim when another is used", JWTConfig{JWKSURL: "https://i/jwks", Issuer: "i", Audience: "a", Resource: "https://m/mcp", ScopesClaim: "scp", ToolsClaim: "scope"}, nil},
		{"tools claim alone does not enable JWT", JWTConfig{ToolsClaim: " x"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, p := range tt.cfg.Problems() {
				got = append(got, p.Error())
			}
			if len(got) != len(tt.want) {
				t.Fatalf("problems %q, want %d like %q", got, len(tt.want), tt.want)
			}
			for i, w := range tt.want {
				if !strings.HasPrefix(got[i], w) {
					t.Errorf("problem %d = %q, want prefix %q", i, got[i], w)
				}
			}
		})
	}
	if _, err := New(Config{JWT: JWTConfig{Issuer: "https://i/"}}); err == nil || !strings.Contains(err.Error(), "jwt.jwks_url: required") {
		t.Errorf("New with an incomplete JWT config: %v", err)
	}
	bad := JWTConfig{JWKSURL: "https://i/jwks", Issuer: "https://i/", Audience: "a", Resource: "https://m/mcp", ToolsClaim: "scope"}
	if _, err := New(Config{JWT: bad}); err == nil || !strings.Contains(err.Error(), "jwt.tools_claim:") {
		t.Errorf("New with tools_claim = the scopes claim: %v", err)
	}
}

// tamper changes the payload of a compact JWS without re-signing it.
func tamper(token string) string {
	parts := strings.Split(token, ".")
	c := claims("root", "mcp admin:read admin:write")
	payload, _ := jwt.NewWithClaims(jwt.SigningMethodNone, c).SigningString()
	parts[1] = strings.Split(payload, ".")[1]
	return strings.Join(parts, ".")
}

func unsignedToken(t *testing.T, c jwt.MapClaims) string {
	s, err := jwt.NewWithClaims(jwt.SigningMethodNone, c).SignedString(jwt.UnsafeAllowNoneSignatureType)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// hmacWithPublicKey is the classic algorithm-confusion attack: an HMAC
// keyed with the issuer's public key, which anyone can fetch.
func hmacWithPublicKey(t *testing.T, s *signer, c jwt.MapClaims) string {
	pub, err := jwtPublicBytes(s)
	if err != nil {
		t.Fatal(err)
	}
	tok := jwt.NewWithClaims(jwt.SigningMethodHS256, c)
	tok.Header["kid"] = s.kid
	out, err := tok.SignedString(pub)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// Concurrent first requests share one fetch of the key set.
func TestJWKSConcurrentFirstFetch(t *testing.T) {
	rs := newRSASigner(t, "rsa-1")
	is := newTestIssuer(t, rs)
	a := newJWTAuthenticator(t, is.jwtConfig())
	token := rs.sign(t, claims("alice", "mcp"))
	errs := make(chan error, 16)
	for range 16 {
		go func() {
			_, _, err := a.Verify(context.Background(), token)
			errs <- err
		}()
	}
	for range 16 {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	if n := is.fetches.Load(); n != 1 {
		t.Errorf("%d fetches for 16 concurrent first requests, want 1", n)
	}
}

// FuzzCheckSubject: whatever a token's sub holds, it is either refused or
// printable as it is (valid UTF-8, no control or format character, within
// MaxSubjectBytes); and the hint of a refused token is always printable.
func FuzzCheckSubject(f *testing.F) {
	for _, seed := range []string{"alice", "", "a\nb", "a\x00", "\u202e", "Zoë", "\xff\xfe", "a\u200bb", strings.Repeat("x", 300), "\ufffd"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, sub string) {
		hint := sanitizeHint(sub)
		if !utf8.ValidString(hint) || strings.IndexFunc(hint, func(r rune) bool { return !unicode.IsPrint(r) && r != '…' }) >= 0 {
			t.Fatalf("hint %q of sub %q is not printable", hint, sub)
		}
		if checkSubject(sub) != "" {
			return
		}
		if len(sub) > MaxSubjectBytes || !utf8.ValidString(sub) {
			t.Fatalf("accepted sub %q: too long or not UTF-8", sub)
		}
		if id := "jwt:" + sub; len(id) > agentsmcp.MaxPrincipalIDBytes {
			t.Fatalf("accepted sub %q makes the principal ID %q, over %d bytes", sub, id, agentsmcp.MaxPrincipalIDBytes)
		}
		for _, r := range sub {
			if unicode.IsControl(r) || unicode.In(r, unicode.Cf, unicode.Zl, unicode.Zp) || r == utf8.RuneError {
				t.Fatalf("accepted sub %q with %U", sub, r)
			}
		}
	})
}
