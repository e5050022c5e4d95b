package auth

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"time"

	sdkauth "github.com/modelcontextprotocol/go-sdk/auth"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/internal/delegation"
)

// The "code" of the JSON error bodies this package writes.
const (
	CodeUnauthenticated = "unauthenticated" // 401
	CodeForbidden       = "forbidden"       // 403
	CodeRateLimited     = "rate_limited"    // 429
	CodeUnavailable     = "unavailable"     // 503
)

// realm names the protection space in every challenge.
const realm = "agents-mcp"

// Middleware returns [Authenticator.Authenticate] followed by
// [Authenticator.RequireScope](scope): the whole check for one kind of
// endpoint, e.g. Middleware(agentsmcp.ScopeMCP) for /mcp, /sse and
// /messages. The admin API uses Authenticate alone and checks the scope
// of each request itself.
func (a *Authenticator) Middleware(scope string) func(http.Handler) http.Handler {
	require := a.RequireScope(scope)
	return func(next http.Handler) http.Handler { return a.Authenticate(require(next)) }
}

// Authenticate wraps next so that it runs only for a request with valid
// credentials in "Authorization: Bearer <token>", and sees the principal
// both in its context ([agentsmcp.PrincipalFrom]) and as go-sdk's
// [sdkauth.TokenInfo] (made by [NewTokenInfo]; MCP handlers get it as
// req.Extra.TokenInfo). next sees the request's headers unchanged. A
// caller authenticated by a JWT also has its token there, as an
// [delegation.DelegatedToken] (see serveAs); an API key is never delegable.
//
// Without credentials configured every request goes through as
// [Anonymous], whatever it carries. Otherwise a request without a bearer
// token, or with one that [Authenticator.Verify] refuses, is answered 401
// (503 while the JWT issuer's keys cannot be fetched): see
// [Authenticator.Refuse]. Authenticate checks no scope.
func (a *Authenticator) Authenticate(next http.Handler) http.Handler {
	inner := sdkauth.RequireBearerToken(pendingTokenInfo, &sdkauth.RequireBearerTokenOptions{
		AllowMissingExpiration: true, // API keys do not expire; JWTs were checked already
		ClockSkew:              a.leeway,
	})(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.Header = r.Context().Value(pendingKey{}).(*pending).header
		next.ServeHTTP(w, r)
	}))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !a.Configured() {
			a.serveAs(w, r, Anonymous(), time.Time{}, nil, inner)
			return
		}
		token, err := bearerToken(r)
		if err != nil {
			a.Refuse(w, r, err, "")
			return
		}
		p, exp, isJWT, err := a.verify(r.Context(), token)
		if err != nil {
			a.Refuse(w, r, err, "")
			return
		}
		var delegated *delegation.DelegatedToken
		if isJWT {
			delegated = delegation.NewDelegatedToken(p.ID, token, exp)
		}
		a.serveAs(w, r, p, exp, delegated, inner)
	})
}

// pending carries the verified TokenInfo through go-sdk's
// RequireBearerToken, the only way to store a TokenInfo where go-sdk's
// transports look for it, and the request's own headers around it.
type pending struct {
	tokenInfo *sdkauth.TokenInfo
	header    http.Header
}

type pendingKey struct{}

func pendingTokenInfo(ctx context.Context, _ string, _ *http.Request) (*sdkauth.TokenInfo, error) {
	if p, ok := ctx.Value(pendingKey{}).(*pending); ok {
		return p.tokenInfo, nil
	}
	return nil, sdkauth.ErrInvalidToken
}

// serveAs serves r as p. A JWT caller's token (delegated, nil for any
// other caller) goes into the request's context and its TokenInfo, where
// the router finds it for the tool calls of this request only: HTTP tool
// sources that opted in to delegation act with it (ADR 0012 D7b). It is
// never logged: [delegation.DelegatedToken] prints as redacted.
func (a *Authenticator) serveAs(w http.ResponseWriter, r *http.Request, p *agentsmcp.Principal, exp time.Time, delegated *delegation.DelegatedToken, inner http.Handler) {
	ctx := agentsmcp.WithPrincipal(r.Context(), p)
	ti := NewTokenInfo(p, exp)
	if delegated != nil {
		ctx = delegation.WithDelegatedToken(ctx, delegated)
		ti.Extra[delegation.TokenInfoDelegatedToken] = delegated
	}
	ctx = context.WithValue(ctx, pendingKey{}, &pending{tokenInfo: ti, header: r.Header})
	r = r.WithContext(ctx)
	// RequireBearerToken reads only this header; inner puts the real
	// ones back, so the token itself never travels further than needed.
	r.Header = http.Header{"Authorization": {"Bearer verified"}}
	inner.ServeHTTP(w, r)
}

// bearerToken extracts the token of "Authorization: Bearer <token>" (the
// scheme is case-insensitive, RFC 7235).
func bearerToken(r *http.Request) (string, error) {
	values := r.Header.Values("Authorization")
	switch {
	case len(values) == 0:
		return "", &Error{Status: http.StatusUnauthorized, Hint: "none", Reason: "missing bearer token"}
	case len(values) > 1:
		return "", &Error{Status: http.StatusUnauthorized, Hint: "none", Reason: "more than one Authorization header", presented: true}
	}
	scheme, token, _ := strings.Cut(strings.TrimSpace(values[0]), " ")
	if !strings.EqualFold(scheme, "Bearer") {
		return "", &Error{Status: http.StatusUnauthorized, Hint: "none", Reason: "Authorization header must be \"Bearer <token>\""}
	}
	token = strings.TrimSpace(token)
	if token == "" || strings.ContainsAny(token, " \t") {
		return "", &Error{Status: http.StatusUnauthorized, Hint: "none", Reason: "malformed bearer token", presented: true}
	}
	return token, nil
}

// RequireScope returns middleware that lets through only requests whose
// principal (from [Authenticator.Authenticate], which must run first) has
// scope; others get 403 with error="insufficient_scope". A request with no
// principal at all gets 401.
func (a *Authenticator) RequireScope(scope string) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if a.checkScope(w, r, scope) {
				next.ServeHTTP(w, r)
			}
		})
	}
}

// RequireAnyScope is [Authenticator.RequireScope] for an endpoint that
// several scopes open: a principal with any one of scopes goes through. A
// refusal names them all in its message, and the first in the challenge's
// scope, the one a client should ask for.
func (a *Authenticator) RequireAnyScope(scopes ...string) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if a.checkScope(w, r, scopes...) {
				next.ServeHTTP(w, r)
			}
		})
	}
}

// AuthenticateIfPresented is [Authenticator.Authenticate] for an endpoint
// that also answers callers without a credential, with less: a request
// with no Authorization header goes to next with no principal in its
// context (next decides what it may see), and one with a credential is
// authenticated as by Authenticate, so that a bad credential is still
// refused (401), never treated as none. Without credentials configured
// every request is [Anonymous], as for Authenticate.
func (a *Authenticator) AuthenticateIfPresented(next http.Handler) http.Handler {
	authenticated := a.Authenticate(next)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if a.Configured() && len(r.Header.Values("Authorization")) == 0 {
			next.ServeHTTP(w, r)
			return
		}
		authenticated.ServeHTTP(w, r)
	})
}

func (a *Authenticator) checkScope(w http.ResponseWriter, r *http.Request, scopes ...string) bool {
	p := agentsmcp.PrincipalFrom(r.Context())
	if p == nil {
		a.Refuse(w, r, &Error{Status: http.StatusUnauthorized, Hint: "none", Reason: "not authenticated"}, "")
		return false
	}
	for _, s := range scopes {
		if p.HasScope(s) {
			return true
		}
	}
	a.Refuse(w, r, &Error{Status: http.StatusForbidden, Hint: p.ID, Reason: "requires scope " + strings.Join(scopes, " or "), presented: true}, scopes[0])
	return false
}

// Refuse answers a refused request the way every endpoint does: the
// status of err (an [*Error]; anything else is a 401), an RFC 6750
// WWW-Authenticate challenge (with resource_metadata when JWT is enabled,
// error="invalid_token" when a credential was presented,
// error="insufficient_scope" and scope for a 403), and the JSON body
// {"error":{"code":"unauthenticated"|"forbidden"|"unavailable","message":…}}.
// It then calls [Config.OnFailure]. scope names the missing scope of a 403.
// The admin API may use it for checks it makes per route.
//
// Past the refusals allowed to the client's address (Config.FailureRate),
// the answer is 429 rate_limited with Retry-After instead.
func (a *Authenticator) Refuse(w http.ResponseWriter, r *http.Request, err error, scope string) {
	var e *Error
	if !errors.As(err, &e) {
		e = &Error{Status: http.StatusUnauthorized, Hint: "none", Reason: "not authenticated"}
	}
	if a.failures != nil {
		if ok, retry := a.failures.Allow(&agentsmcp.Principal{ID: ClientAddress(r)}); !ok {
			secs := RetryAfterSeconds(retry)
			reason := "too many failed authentications from this address: retry in " + strconv.Itoa(secs) + "s"
			w.Header().Set("Retry-After", strconv.Itoa(secs))
			// The challenge still says how to authenticate: a client
			// behind a shared address may be starting OAuth discovery.
			w.Header().Set("WWW-Authenticate", a.challenge(&Error{Status: http.StatusUnauthorized}, ""))
			writeJSONError(w, http.StatusTooManyRequests, CodeRateLimited, reason)
			if a.onFailure != nil {
				a.onFailure(r, e.Hint, http.StatusTooManyRequests, reason)
			}
			return
		}
	}
	code := CodeUnauthenticated
	switch e.Status {
	case http.StatusForbidden:
		code = CodeForbidden
	case http.StatusServiceUnavailable:
		code = CodeUnavailable
	}
	if e.Status == http.StatusUnauthorized || e.Status == http.StatusForbidden {
		w.Header().Set("WWW-Authenticate", a.challenge(e, scope))
	}
	writeJSONError(w, e.Status, code, e.Reason)
	if a.onFailure != nil {
		a.onFailure(r, e.Hint, e.Status, e.Reason)
	}
}

// ClientAddress names the client of r for limits and the audit trail: its
// IP address, or for IPv6 its /64 network, which one client usually holds
// whole. Behind a reverse proxy it is the proxy's address: the limits of
// all clients are then shared, which only ever turns their 401s into 429s.
func ClientAddress(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	addr, err := netip.ParseAddr(host)
	if err != nil {
		return host
	}
	addr = addr.Unmap()
	if addr.Is6() {
		if p, err := addr.Prefix(64); err == nil {
			return p.String()
		}
	}
	return addr.String()
}

// challenge builds the WWW-Authenticate value for e.
func (a *Authenticator) challenge(e *Error, scope string) string {
	params := []string{"realm=" + quote(realm)}
	if a.metadataURL != "" {
		params = append(params, "resource_metadata="+quote(a.metadataURL))
	}
	switch {
	case e.Status == http.StatusForbidden:
		params = append(params, `error="insufficient_scope"`, "scope="+quote(scope))
	case e.presented:
		params = append(params, `error="invalid_token"`)
	}
	if e.presented {
		params = append(params, "error_description="+quote(e.Reason))
	}
	return "Bearer " + strings.Join(params, ", ")
}

// quote makes an RFC 7230 quoted-string.
func quote(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"`
}

// writeJSONError writes the error body shared by the admin API and these
// middlewares: {"error":{"code":…,"message":…}}.
func writeJSONError(w http.ResponseWriter, status int, code, message string) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]string{"code": code, "message": message}})
}
