package auth

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"path"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/golang-jwt/jwt/v5"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/internal/redact"
	"github.com/agents-mcp/agents-mcp/internal/validate"
)

// DefaultScopesClaim is the claim read for scopes when [JWTConfig] names
// none: "scope", a space-separated string (RFC 8693, RFC 9068).
const DefaultScopesClaim = "scope"

// DefaultLeeway is the clock skew allowed on exp and nbf.
const DefaultLeeway = 30 * time.Second

// signingAlgs are the accepted JWS algorithms: asymmetric only, so that
// a public key from the JWKS can never be used as an HMAC secret, and never
// "none".
var signingAlgs = []string{"RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA"}

// JWTConfig configures bearer JWTs issued by an OAuth authorization server.
//
// It is enabled when any of JWKSURL, Issuer, Audience, Resource or
// AuthorizationServers is set, and then JWKSURL, Issuer, Audience and
// Resource are required (see [JWTConfig.Problems]): a token is accepted only
// when it is signed by a key of the JWKS with an asymmetric algorithm, has
// an exp in the future and no nbf in the future (give or take Leeway), and
// names Issuer as iss and Audience among aud.
//
// Resource is this server's MCP URL as clients know it (for example
// https://mcp.example.com/mcp); it is published in the RFC 9728 metadata,
// whose resource clients compare with the URL they connect to.
type JWTConfig struct {
	JWKSURL  string
	Issuer   string
	Audience string
	// ScopesClaim names the claim holding the scopes, as a space-separated
	// string or an array of strings; empty means [DefaultScopesClaim]. Only
	// the scopes of [agentsmcp.Scopes] are kept.
	ScopesClaim string
	// ToolsClaim, when set, names the claim holding the caller's tool
	// allowlist ([agentsmcp.Principal.Tools]): path.Match patterns on
	// exposed tool names, as a space-separated string or an array of
	// strings. Empty (the default) means tokens carry no allowlist and may
	// use every tool. When set it fails closed: a token without the claim,
	// with a claim of another type, with an invalid pattern, or whose claim
	// holds no pattern at all is rejected (401 invalid_token), so that every
	// accepted token is restricted. It must differ from the scopes claim.
	ToolsClaim string
	// CatalogModeClaim, when set, names the claim holding the caller's
	// catalog mode ([agentsmcp.Principal.CatalogMode]): "full" or
	// "discovery". A token without it keeps the server's default; a token
	// whose claim holds anything else is rejected (401 invalid_token).
	CatalogModeClaim string
	// VirtualServersClaim, when set, names the claim holding the virtual
	// servers the caller may use ([agentsmcp.Principal.VirtualServers]):
	// path.Match patterns on their names, as a space-separated string or
	// an array of strings. A token with the claim is limited to them (the
	// whole catalog and every other virtual server answer "not found", as
	// one that does not exist); a token without it is not limited; a
	// token whose claim is of another type, holds an invalid pattern or
	// none is rejected (401 invalid_token).
	VirtualServersClaim  string
	Resource             string
	AuthorizationServers []string // empty means [Issuer]

	// Tuning that the config file does not expose; zero means the default
	// ([DefaultLeeway], [DefaultJWKSRefreshInterval],
	// [DefaultJWKSMinRefreshInterval], [DefaultJWKSFetchTimeout]).
	Leeway             time.Duration
	RefreshInterval    time.Duration
	MinRefreshInterval time.Duration
	FetchTimeout       time.Duration
}

// Enabled reports whether JWT authentication is configured at all.
func (c *JWTConfig) Enabled() bool {
	return c != nil && (c.JWKSURL != "" || c.Issuer != "" || c.Audience != "" || c.Resource != "" || len(c.AuthorizationServers) > 0)
}

// Problems lists every invalid field of an enabled c (none when disabled).
// Field names are those of the config file ("jwks_url", "issuer", …).
func (c *JWTConfig) Problems() []Problem {
	if !c.Enabled() {
		return nil
	}
	var out []Problem
	bad := func(field, format string, args ...any) {
		out = append(out, Problem{Field: field, Message: fmt.Sprintf(format, args...)})
	}
	checkURL := func(field, v string) {
		if v == "" {
			bad(field, "required when JWT authentication is configured")
		} else if err := validate.HTTPURL(v); err != nil {
			bad(field, "%q %v", redact.URL(v), err)
		}
	}
	checkURL("jwks_url", c.JWKSURL)
	if strings.TrimSpace(c.Issuer) == "" {
		bad("issuer", "required when JWT authentication is configured")
	}
	if strings.TrimSpace(c.Audience) == "" {
		// Without it, a token minted for any other service of the same
		// issuer would be accepted here.
		bad("audience", "required when JWT authentication is configured")
	}
	if c.ScopesClaim != "" && strings.TrimSpace(c.ScopesClaim) != c.ScopesClaim {
		bad("scopes_claim", "%q must not have surrounding spaces", c.ScopesClaim)
	}
	if c.ToolsClaim != "" {
		if strings.TrimSpace(c.ToolsClaim) != c.ToolsClaim {
			bad("tools_claim", "%q must not have surrounding spaces", c.ToolsClaim)
		} else if c.ToolsClaim == c.scopesClaim() {
			bad("tools_claim", "%q is already the scopes claim; name a different claim", c.ToolsClaim)
		}
	}
	if c.CatalogModeClaim != "" {
		if strings.TrimSpace(c.CatalogModeClaim) != c.CatalogModeClaim {
			bad("catalog_mode_claim", "%q must not have surrounding spaces", c.CatalogModeClaim)
		} else if c.CatalogModeClaim == c.scopesClaim() || c.CatalogModeClaim == c.ToolsClaim {
			bad("catalog_mode_claim", "%q is already the scopes or tools claim; name a different claim", c.CatalogModeClaim)
		}
	}
	if c.VirtualServersClaim != "" {
		if strings.TrimSpace(c.VirtualServersClaim) != c.VirtualServersClaim {
			bad("virtual_servers_claim", "%q must not have surrounding spaces", c.VirtualServersClaim)
		} else if slices.Contains([]string{c.scopesClaim(), c.ToolsClaim, c.CatalogModeClaim}, c.VirtualServersClaim) {
			bad("virtual_servers_claim", "%q is already the scopes, tools or catalog mode claim; name a different claim", c.VirtualServersClaim)
		}
	}
	checkURL("resource", c.Resource)
	for i, s := range c.AuthorizationServers {
		checkURL(fmt.Sprintf("authorization_servers[%d]", i), s)
	}
	for _, d := range []struct {
		name string
		v    time.Duration
	}{{"leeway", c.Leeway}, {"refresh_interval", c.RefreshInterval}, {"min_refresh_interval", c.MinRefreshInterval}, {"fetch_timeout", c.FetchTimeout}} {
		if d.v < 0 {
			bad(d.name, "must not be negative, got %s", d.v)
		}
	}
	return out
}

// ResourceMetadataURL returns the URL of the RFC 9728 metadata that
// [Authenticator.RegisterMetadata] serves: the origin of Resource followed
// by /.well-known/oauth-protected-resource. It is "" when Resource is not
// a valid URL.
func (c *JWTConfig) ResourceMetadataURL() string {
	u, err := url.Parse(c.Resource)
	if err != nil || u.Scheme == "" || u.Host == "" {
		return ""
	}
	return (&url.URL{Scheme: u.Scheme, Host: u.Host, Path: metadataPath}).String()
}

// scopesClaim is the claim read for scopes: ScopesClaim or
// [DefaultScopesClaim].
func (c *JWTConfig) scopesClaim() string {
	if c.ScopesClaim == "" {
		return DefaultScopesClaim
	}
	return c.ScopesClaim
}

func (c *JWTConfig) authorizationServers() []string {
	if len(c.AuthorizationServers) > 0 {
		return slices.Clone(c.AuthorizationServers)
	}
	return []string{c.Issuer}
}

// jwtVerifier checks bearer JWTs against one issuer's JWKS.
type jwtVerifier struct {
	scopesClaim string
	toolsClaim  string // "": no allowlist from tokens
	modeClaim   string // "": no catalog mode from tokens
	vsClaim     string // "": no virtual servers from tokens
	parser      *jwt.Parser
	keys        *jwks
}

func newJWTVerifier(cfg *JWTConfig, client *http.Client, logger *slog.Logger) *jwtVerifier {
	return &jwtVerifier{
		scopesClaim: cfg.scopesClaim(),
		toolsClaim:  cfg.ToolsClaim,
		modeClaim:   cfg.CatalogModeClaim,
		vsClaim:     cfg.VirtualServersClaim,
		parser: jwt.NewParser(
			jwt.WithValidMethods(signingAlgs),
			jwt.WithIssuer(cfg.Issuer),
			jwt.WithAudience(cfg.Audience),
			jwt.WithExpirationRequired(),
			jwt.WithLeeway(orDefault(cfg.Leeway, DefaultLeeway)),
		),
		keys: newJWKS(cfg.JWKSURL, client, cfg, logger),
	}
}

// looksLikeJWT tells a compact JWS (three base64url parts) from an API key.
func looksLikeJWT(token string) bool {
	return strings.Count(token, ".") == 2
}

// verify returns the principal of a valid token and its expiry, or an
// [*Error] whose reason names the failed check.
func (v *jwtVerifier) verify(ctx context.Context, token string) (*agentsmcp.Principal, time.Time, error) {
	claims := jwt.MapClaims{}
	_, err := v.parser.ParseWithClaims(token, claims, func(t *jwt.Token) (any, error) {
		kid, _ := t.Header["kid"].(string)
		return v.keys.keyFor(ctx, kid, t.Method.Alg())
	})
	if err != nil {
		e := &Error{Status: http.StatusUnauthorized, Hint: v.hint(token), Reason: jwtReason(err), presented: true}
		if errors.Is(err, errJWKSUnavailable) {
			e.Status = http.StatusServiceUnavailable
		}
		return nil, time.Time{}, e
	}
	sub, _ := claims.GetSubject()
	if sub == "" {
		return nil, time.Time{}, &Error{Status: http.StatusUnauthorized, Hint: "jwt:", Reason: "token has no sub claim", presented: true}
	}
	if reason := checkSubject(sub); reason != "" {
		return nil, time.Time{}, &Error{Status: http.StatusUnauthorized, Hint: "jwt:" + sanitizeHint(sub), Reason: reason, presented: true}
	}
	var tools []string
	if v.toolsClaim != "" {
		var reason string
		if tools, reason = toolsOf(v.toolsClaim, claims); reason != "" {
			return nil, time.Time{}, &Error{Status: http.StatusUnauthorized, Hint: "jwt:" + sanitizeHint(sub), Reason: reason, presented: true}
		}
	}
	var mode agentsmcp.CatalogMode
	if v.modeClaim != "" {
		if raw, ok := claims[v.modeClaim]; ok && raw != nil {
			s, isString := raw.(string)
			m, err := agentsmcp.ParseCatalogMode(s)
			if !isString || err != nil {
				return nil, time.Time{}, &Error{Status: http.StatusUnauthorized, Hint: "jwt:" + sanitizeHint(sub),
					Reason: fmt.Sprintf("the %s claim must be %q or %q", v.modeClaim, agentsmcp.CatalogFull, agentsmcp.CatalogDiscovery), presented: true}
			}
			mode = m
		}
	}
	var servers []string
	if v.vsClaim != "" {
		var reason string
		if servers, reason = virtualServersOf(v.vsClaim, claims); reason != "" {
			return nil, time.Time{}, &Error{Status: http.StatusUnauthorized, Hint: "jwt:" + sanitizeHint(sub), Reason: reason, presented: true}
		}
	}
	exp, _ := claims.GetExpirationTime() // present: the parser requires it
	return &agentsmcp.Principal{
		ID:             "jwt:" + sub,
		Scopes:         scopesOf(claims[v.scopesClaim]),
		Tools:          tools,
		CatalogMode:    mode,
		VirtualServers: servers,
	}, exp.Time, nil
}

// toolsOf reads the tool allowlist from the claim named name: a
// space-separated string or an array of strings, each a path.Match pattern.
// Empty patterns are skipped. It fails closed: a missing claim, a claim of
// another type, an invalid pattern or no pattern at all is a reason to
// refuse the token, safe to show the caller.
func toolsOf(name string, claims jwt.MapClaims) ([]string, string) {
	raw, ok := claims[name]
	if !ok || raw == nil {
		return nil, fmt.Sprintf("token has no %s claim (required: it holds the tool allowlist)", name)
	}
	return patternsOf(name, raw, "tool")
}

// patternsOf reads claim name's value raw, a space-separated string or an
// array of strings, as path.Match patterns on names of what ("tool",
// "virtual server"), without repeats. It fails closed: another type, an
// invalid pattern or no pattern at all is a reason to refuse the token,
// safe to show the caller.
func patternsOf(name string, raw any, what string) ([]string, string) {
	var all []string
	switch v := raw.(type) {
	case string:
		all = strings.Fields(v)
	case []any:
		for _, s := range v {
			s, ok := s.(string)
			if !ok {
				return nil, fmt.Sprintf("token's %s claim must be a string or an array of strings", name)
			}
			if s = strings.TrimSpace(s); s != "" {
				all = append(all, s)
			}
		}
	default:
		return nil, fmt.Sprintf("token's %s claim must be a string or an array of strings", name)
	}
	var out []string
	for _, p := range all {
		if _, err := path.Match(p, ""); errors.Is(err, path.ErrBadPattern) {
			return nil, fmt.Sprintf("token's %s claim holds an invalid %s pattern %q", name, what, sanitizeHint(p))
		}
		if !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Sprintf("token's %s claim holds no %s pattern", name, what)
	}
	return out, ""
}

// jwtReason turns a parser error into a message safe and useful to show to
// the caller: which check failed, not the token.
func jwtReason(err error) string {
	switch {
	case errors.Is(err, errJWKSUnavailable):
		return "the issuer's signing keys cannot be fetched; try again later"
	case errors.Is(err, errUnknownKey):
		return "token signed by an unknown key"
	case errors.Is(err, jwt.ErrTokenMalformed):
		return "malformed token"
	case errors.Is(err, jwt.ErrTokenSignatureInvalid):
		if strings.Contains(err.Error(), "signing method") {
			return "token signing algorithm not accepted"
		}
		return "invalid token signature"
	case errors.Is(err, jwt.ErrTokenRequiredClaimMissing):
		// golang-jwt names the claim only in its message.
		for _, claim := range []string{"exp", "iss", "aud", "nbf", "sub"} {
			if strings.Contains(err.Error(), claim+" claim is required") {
				return "token has no " + claim + " claim"
			}
		}
		return "token lacks a required claim"
	case errors.Is(err, jwt.ErrTokenExpired):
		return "token expired"
	case errors.Is(err, jwt.ErrTokenNotValidYet), errors.Is(err, jwt.ErrTokenUsedBeforeIssued):
		return "token not valid yet"
	case errors.Is(err, jwt.ErrTokenInvalidIssuer):
		return "token issuer not accepted"
	case errors.Is(err, jwt.ErrTokenInvalidAudience):
		return "token audience not accepted"
	}
	return "invalid token"
}

// hint names who a refused token claims to be, from its unverified sub,
// made safe for logs: printable and short.
func (v *jwtVerifier) hint(token string) string {
	claims := jwt.MapClaims{}
	if _, _, err := v.parser.ParseUnverified(token, claims); err != nil {
		return "jwt:"
	}
	sub, _ := claims.GetSubject()
	return "jwt:" + sanitizeHint(sub)
}

func sanitizeHint(s string) string {
	const maxHint = 64
	s = strings.Map(func(r rune) rune {
		if !unicode.IsPrint(r) || r == '"' || r == '\\' {
			return '?'
		}
		return r
	}, s)
	if len(s) > maxHint {
		s = s[:maxHint] + "…"
	}
	return strings.ToValidUTF8(s, "?")
}

// MaxSubjectBytes bounds the sub claim of an accepted JWT, so that the
// principal "jwt:<sub>" is a valid principal ID (what tasks and memories
// record) and fits the audit trail's fields whole.
const MaxSubjectBytes = agentsmcp.MaxPrincipalIDBytes - len("jwt:")

// checkSubject says why sub cannot name a principal, or "". The principal
// ID is what tasks, memories and sessions are owned by, what the audit
// trail and logs name, and what admins filter on: it must be shown
// exactly as it is stored. So a subject with control or format characters
// (newlines and line separators that forge log lines, bidirectional
// overrides that disguise it), invalid UTF-8, or over MaxSubjectBytes is
// refused rather than rewritten, since a rewritten one could equal another
// user's subject.
func checkSubject(sub string) string {
	if len(sub) > MaxSubjectBytes {
		return fmt.Sprintf("token's sub claim is longer than %d bytes", MaxSubjectBytes)
	}
	if !utf8.ValidString(sub) {
		return "token's sub claim is not valid UTF-8"
	}
	for _, r := range sub {
		if unicode.IsControl(r) || unicode.In(r, unicode.Cf, unicode.Zl, unicode.Zp) || r == utf8.RuneError {
			return fmt.Sprintf("token's sub claim holds the control or format character %U", r)
		}
	}
	return ""
}

// scopesOf reads a scopes claim: a space-separated string or an array of
// strings. Scopes agents-mcp does not know are dropped.
func scopesOf(claim any) []string {
	var all []string
	switch v := claim.(type) {
	case string:
		all = strings.Fields(v)
	case []any:
		for _, s := range v {
			if s, ok := s.(string); ok {
				all = append(all, s)
			}
		}
	}
	var out []string
	for _, s := range all {
		if slices.Contains(agentsmcp.Scopes, s) && !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}
