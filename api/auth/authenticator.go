package auth

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"time"

	sdkauth "github.com/modelcontextprotocol/go-sdk/auth"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/internal/redact"
)

// Config configures an [Authenticator]. With no Keys and JWT not enabled,
// authentication is off and every caller is [Anonymous].
type Config struct {
	Keys []Key
	JWT  JWTConfig
	// HTTPClient fetches the JWKS; nil means a client of its own. Each fetch
	// is bounded by JWT.FetchTimeout either way.
	HTTPClient *http.Client
	// Logger receives JWKS fetch problems; nil discards them. Refused
	// requests are not logged here: see OnFailure.
	Logger *slog.Logger
	// OnFailure, if set, is called for every request the middleware refuses
	// (401, 403, 503), for the audit trail. principalHint is who the caller
	// claimed to be, never its secret: "key:<hash prefix of what was
	// presented>", "jwt:<unverified subject>", the principal ID for a
	// missing scope, or "none" when no credentials came. reason is the
	// message the caller was given.
	OnFailure func(r *http.Request, principalHint string, status int, reason string)
	// FailureRate and FailureBurst limit the refusals each client address
	// ([ClientAddress]) gets: past the burst, a refused request is answered
	// 429 with Retry-After instead of 401/403 (OnFailure still sees each
	// one, with status 429). Valid credentials are never limited by this.
	// Zero FailureRate means [DefaultFailureRate]; negative disables it.
	FailureRate  float64
	FailureBurst int
}

// The default limit of refused requests per client address: a client that
// keeps presenting a wrong or revoked key retries every few seconds at
// most, while a flood of guesses is slowed to one a second.
const (
	DefaultFailureRate  = 1.0
	DefaultFailureBurst = 20
)

// Authenticator verifies bearer credentials, API keys or JWTs, into an
// [agentsmcp.Principal]. It is safe for concurrent use and owns no
// goroutine: the JWKS is fetched on the requests that need it.
type Authenticator struct {
	keys        *keySet
	jwt         *jwtVerifier // nil when JWT is not enabled
	jwtCfg      JWTConfig
	metadataURL string
	leeway      time.Duration
	logger      *slog.Logger
	onFailure   func(r *http.Request, principalHint string, status int, reason string)
	failures    *Limiter // refusals per client address; nil: unlimited
}

// New checks cfg (see [CheckKeys] and [JWTConfig.Problems]) and returns its
// Authenticator. It fetches nothing: call [Authenticator.RefreshJWKS] to
// find out at startup whether the issuer can be reached.
func New(cfg Config) (*Authenticator, error) {
	var errs []error
	for _, p := range CheckKeys(cfg.Keys, nil) {
		errs = append(errs, p)
	}
	for _, p := range cfg.JWT.Problems() {
		p.Field = "jwt." + p.Field
		errs = append(errs, p)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("auth: %w", err)
	}
	logger := cfg.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	a := &Authenticator{
		keys:      newKeySet(cfg.Keys),
		logger:    logger,
		onFailure: cfg.OnFailure,
	}
	switch {
	case cfg.FailureRate == 0:
		a.failures = NewLimiter(DefaultFailureRate, cmp.Or(cfg.FailureBurst, DefaultFailureBurst))
	case cfg.FailureRate > 0:
		a.failures = NewLimiter(cfg.FailureRate, cfg.FailureBurst)
	}
	if cfg.JWT.Enabled() {
		client := cfg.HTTPClient
		if client == nil {
			client = &http.Client{Timeout: orDefault(cfg.JWT.FetchTimeout, DefaultJWKSFetchTimeout)}
		}
		a.jwtCfg = cfg.JWT
		a.jwtCfg.AuthorizationServers = slices.Clone(cfg.JWT.AuthorizationServers)
		a.jwt = newJWTVerifier(&a.jwtCfg, client, logger)
		a.metadataURL = a.jwtCfg.ResourceMetadataURL()
		a.leeway = orDefault(cfg.JWT.Leeway, DefaultLeeway)
	}
	return a, nil
}

// Configured reports whether any credential is configured. When it is not,
// every caller is [Anonymous] and the server must serve loopback only.
func (a *Authenticator) Configured() bool { return len(a.keys.hashes) > 0 || a.jwt != nil }

// RefreshJWKS fetches the issuer's key set now. It returns nil when JWT is
// not enabled. A failure is not fatal (fetches are retried on demand), but
// worth a warning at startup.
func (a *Authenticator) RefreshJWKS(ctx context.Context) error {
	if a.jwt == nil {
		return nil
	}
	if !a.jwt.keys.refresh(ctx, false) && !a.jwt.keys.loaded() {
		return fmt.Errorf("auth: fetching JWKS from %s failed", redact.URL(a.jwtCfg.JWKSURL))
	}
	return nil
}

// Anonymous returns the principal of every caller of a server without
// credentials configured: ID [agentsmcp.AnonymousPrincipal], every scope,
// every tool.
func Anonymous() *agentsmcp.Principal {
	return &agentsmcp.Principal{ID: agentsmcp.AnonymousPrincipal, Scopes: slices.Clone(agentsmcp.Scopes)}
}

// Verify returns the principal a bearer token stands for and when it
// expires (zero for API keys, which do not). API keys are tried first, then,
// for a token shaped like a JWT, the JWT checks. When no credentials are
// configured every token, even "", is [Anonymous].
//
// The error is an [*Error]: its Reason is safe to show the caller and its
// Hint safe to log.
func (a *Authenticator) Verify(ctx context.Context, token string) (*agentsmcp.Principal, time.Time, error) {
	p, exp, _, err := a.verify(ctx, token)
	return p, exp, err
}

// verify is [Authenticator.Verify], also saying whether the token is a
// verified JWT: the only kind a caller may delegate (ADR 0012 D7b).
func (a *Authenticator) verify(ctx context.Context, token string) (p *agentsmcp.Principal, exp time.Time, isJWT bool, err error) {
	if !a.Configured() {
		return Anonymous(), time.Time{}, false, nil
	}
	if token == "" {
		return nil, time.Time{}, false, &Error{Status: http.StatusUnauthorized, Hint: "none", Reason: "missing bearer token"}
	}
	p, h := a.keys.lookup(token)
	if p != nil {
		return p, time.Time{}, false, nil
	}
	if a.jwt != nil && looksLikeJWT(token) {
		p, exp, err := a.jwt.verify(ctx, token)
		return p, exp, err == nil, err
	}
	reason := "unknown API key"
	if a.jwt != nil {
		reason = "unknown API key or malformed token"
	}
	return nil, time.Time{}, false, &Error{Status: http.StatusUnauthorized, Hint: keyID(h), Reason: reason, presented: true}
}

// principalExtra is the TokenInfo.Extra key of the *agentsmcp.Principal.
const principalExtra = agentsmcp.TokenInfoPrincipal

// NewTokenInfo returns the go-sdk TokenInfo for p: UserID is p.ID (go-sdk
// binds MCP sessions to it, so one caller cannot take over another's
// session), Scopes are p's, Expiration is expires, and
// Extra[[agentsmcp.TokenInfoPrincipal]] is p itself, which the router
// reads back.
func NewTokenInfo(p *agentsmcp.Principal, expires time.Time) *sdkauth.TokenInfo {
	return &sdkauth.TokenInfo{
		UserID:     p.ID,
		Scopes:     slices.Clone(p.Scopes),
		Expiration: expires,
		Extra:      map[string]any{principalExtra: p},
	}
}

// Error is a refused credential or request.
//
// Status is the HTTP status: 401 for missing or bad credentials, 403 for a
// missing scope, 503 when the JWT issuer's keys cannot be fetched. Reason is
// safe to show to the caller, Hint (see [Config.OnFailure]) safe to log.
// It matches [sdkauth.ErrInvalidToken] with errors.Is when Status is 401,
// and unwraps to an [*agentsmcp.Error] with code EUNAUTHORIZED (or
// EUNAVAILABLE for 503), so [agentsmcp.ErrorCode] maps it.
type Error struct {
	Status int
	Hint   string
	Reason string
	// presented is whether a credential came at all; RFC 6750 wants no
	// error code in the challenge when none did.
	presented bool
}

func (e *Error) Error() string { return "auth: " + e.Reason }

// Is reports whether target is go-sdk's ErrInvalidToken and e a 401.
func (e *Error) Is(target error) bool {
	return target == sdkauth.ErrInvalidToken && e.Status == http.StatusUnauthorized
}

// Unwrap returns the application error of e.
func (e *Error) Unwrap() error {
	code := agentsmcp.EUNAUTHORIZED
	if e.Status == http.StatusServiceUnavailable {
		code = agentsmcp.EUNAVAILABLE
	}
	return &agentsmcp.Error{Code: code, Message: e.Reason}
}
