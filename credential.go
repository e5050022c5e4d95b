package agentsmcp

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"time"
)

// Credential kinds: how a credential authorizes a request to an
// integration (an HTTP tool source or an upstream MCP server).
const (
	// CredentialAPIKey sends Secret.Value in the header Settings.Header
	// (X-Api-Key when both Header and Query are empty) or in the query
	// parameter Settings.Query.
	CredentialAPIKey = "api_key"
	// CredentialBearer sends "Authorization: Bearer <Secret.Value>".
	CredentialBearer = "bearer"
	// CredentialBasic sends HTTP basic authentication with
	// Settings.Username and Secret.Value as the password.
	CredentialBasic = "basic"
	// CredentialClientCredentials gets its access token from
	// Settings.TokenURL with the OAuth 2.0 client-credentials grant
	// (Settings.ClientID, Secret.ClientSecret), and caches it in Secret.
	CredentialClientCredentials = "oauth_client_credentials"
	// CredentialAuthorizationCode gets its tokens through the OAuth 2.1
	// authorization-code grant with PKCE, which a person completes in a
	// browser, and refreshes them with Secret.RefreshToken. A shared one
	// (no Principal) holds only the client; each principal that
	// authorizes gets its own credential, with its tokens, beside it.
	CredentialAuthorizationCode = "oauth_authorization_code"
)

// CredentialKinds lists every credential kind.
var CredentialKinds = []string{CredentialAPIKey, CredentialBearer, CredentialBasic,
	CredentialClientCredentials, CredentialAuthorizationCode}

// Credential is a secret that agents-mcp presents to an integration on
// behalf of its callers, kept in the store with its secret part sealed.
//
// Invariants: Integration is 1–[MaxUpstreamNameBytes] bytes; Kind is one of
// [CredentialKinds]; Principal is empty (shared: every caller uses it) or
// the ID of the one principal it serves, at most [MaxPrincipalIDBytes]; at
// most one credential exists per (Integration, Principal). A caller's own
// credential takes precedence over the shared one.
//
// Secret is the clear secret part. It lives in memory only: a store keeps
// Sealed, never Secret, and refuses a credential that still carries it
// (memory/secrets seals it on the way in and opens it on the way out). Views
// shown to people ([Credential.Redacted]) carry neither.
type Credential struct {
	ID          string
	Integration string
	Principal   string
	Kind        string
	Settings    CredentialSettings
	Secret      *CredentialSecret `json:"-"`
	// Sealed is the sealed form of Secret, opaque to the store.
	Sealed string `json:"-"`
	// ExpiresAt is when the cached access token expires (zero: none or
	// unknown). It is not secret, so listings show it.
	ExpiresAt time.Time
	CreatedBy string
	CreatedAt time.Time
	UpdatedAt time.Time
}

// CredentialSettings are the parts of a credential that are not secret.
type CredentialSettings struct {
	Header   string `json:"header,omitempty"`   // api_key: the header that carries it
	Query    string `json:"query,omitempty"`    // api_key: the query parameter that carries it, instead
	Username string `json:"username,omitempty"` // basic
	// OAuth: the client and the authorization server's endpoints.
	ClientID string   `json:"client_id,omitempty"`
	AuthURL  string   `json:"auth_url,omitempty"`
	TokenURL string   `json:"token_url,omitempty"`
	Scopes   []string `json:"scopes,omitempty"`
	// Resource is the RFC 8707 resource indicator sent with OAuth requests
	// (the upstream MCP server's URL), so that tokens are bound to it.
	Resource string `json:"resource,omitempty"`
	// Issuer is the authorization server that issued the tokens: tokens
	// of MCP upstreams are keyed by it.
	Issuer string `json:"issuer,omitempty"`
	// Registration says how agents-mcp became the OAuth client of the
	// issuer: empty when an administrator gave the client (pre-registered),
	// RegistrationClientIDMetadata or RegistrationDynamic when
	// POST /credentials/register did.
	Registration string `json:"registration,omitempty"`
}

// How agents-mcp registered as an OAuth client (CredentialSettings.Registration).
const (
	// RegistrationClientIDMetadata: the client_id is the URL of the Client
	// ID Metadata Document agents-mcp serves; there is no client secret.
	RegistrationClientIDMetadata = "client_id_metadata_document"
	// RegistrationDynamic: RFC 7591 dynamic client registration.
	RegistrationDynamic = "dynamic"
)

// CredentialSecret is the secret part of a credential.
type CredentialSecret struct {
	Value        string    `json:"value,omitempty"` // api key, bearer token, basic password
	ClientSecret string    `json:"client_secret,omitempty"`
	AccessToken  string    `json:"access_token,omitempty"`
	RefreshToken string    `json:"refresh_token,omitempty"`
	Expiry       time.Time `json:"expiry,omitzero"`
}

// MaxCredentialSettingsBytes bounds a credential's settings once encoded.
const MaxCredentialSettingsBytes = 16 << 10

// CredentialFilter selects credentials to list. Empty fields match all.
type CredentialFilter struct {
	Integration string
	// Principal, when not nil, selects the credentials of that principal
	// ("" selects the shared ones).
	Principal *string
}

// OAuthState is an authorization-code flow under way, in one of two
// stages (ADR 0012 D2):
//
//   - a link: created when a person is asked to authorize, its key the
//     hash of the one-time token of the link agents-mcp gives out
//     (<public_url>/oauth/start?flow=…). Binding is empty: no browser has
//     taken it yet. The browser that opens the link and confirms takes it
//     (once), and it becomes
//   - a flow bound to that browser: its key the hash of the OAuth state
//     parameter sent to the authorization server, Binding the hash of a
//     random nonce that only that browser holds (in a cookie). The callback
//     takes it (once) and completes it only for the browser whose cookie
//     matches Binding.
//
// Keys are hashes, never the tokens themselves, so that a reader of the
// store cannot start or complete a flow; Binding is a hash too, so that it
// cannot forge the cookie. Verifier (the PKCE code verifier) lives in
// memory only; a store keeps Sealed.
type OAuthState struct {
	Key          string
	CredentialID string // the credential that holds the client
	Principal    string // the principal the tokens will serve
	// Binding is the hash of the nonce of the browser the flow is bound
	// to; empty for a link no browser has taken yet.
	Binding   string
	Verifier  string `json:"-"`
	Sealed    string `json:"-"`
	ExpiresAt time.Time
}

// CredentialService stores credentials and the authorization flows under
// way. Implementations keep Sealed and refuse a Credential or an
// OAuthState whose clear secret (Secret, Verifier) is still set: sealing is
// the job of the wrapper in memory/secrets, which holds the key.
type CredentialService interface {
	// CreateCredential validates c, assigns ID, CreatedAt and UpdatedAt,
	// and stores it. EINVALID for a broken invariant or a clear secret,
	// ECONFLICT when a credential of that (Integration, Principal) exists.
	CreateCredential(ctx context.Context, c *Credential) error
	// FindCredential returns the credential of exactly (integration,
	// principal); ENOTFOUND when there is none.
	FindCredential(ctx context.Context, integration, principal string) (*Credential, error)
	// FindCredentialByID returns one credential; ENOTFOUND.
	FindCredentialByID(ctx context.Context, id string) (*Credential, error)
	// FindCredentials lists credentials by integration, then principal.
	FindCredentials(ctx context.Context, f CredentialFilter) ([]*Credential, error)
	// UpdateCredentialSecret replaces the sealed secret and ExpiresAt of
	// credential id (a refreshed token); ENOTFOUND.
	UpdateCredentialSecret(ctx context.Context, id, sealed string, expiresAt time.Time) error
	// DeleteCredential removes one credential; ENOTFOUND.
	DeleteCredential(ctx context.Context, id string) error
	// CreateOAuthState stores s; ECONFLICT when its Key exists.
	CreateOAuthState(ctx context.Context, s *OAuthState) error
	// FindOAuthState returns the state of key without removing it:
	// ENOTFOUND when there is none, or when it expired before now.
	FindOAuthState(ctx context.Context, key string, now time.Time) (*OAuthState, error)
	// TakeOAuthState removes the state of key and returns it, once:
	// ENOTFOUND when there is none, or when it expired before now.
	TakeOAuthState(ctx context.Context, key string, now time.Time) (*OAuthState, error)
}

// AppliedCredential is what a credential adds to a request.
type AppliedCredential struct {
	Header http.Header
	Query  url.Values
}

// CredentialSource resolves the credential an outgoing request to an
// integration carries for a principal. HTTP tool sources call it before
// each request.
type CredentialSource interface {
	// Credentials returns what to add to a request to integration made on
	// behalf of principal: the principal's own credential, else the shared
	// one, with OAuth tokens fetched or refreshed as needed. It returns
	// (nil, nil) when the integration has no credential at all. An error
	// that wraps an [*AuthorizationRequired] means a person must act (a
	// missing per-user authorization, a refused refresh); other errors are
	// failures.
	Credentials(ctx context.Context, integration, principal string) (*AppliedCredential, error)
	// Refused reports that integration answered 401 or 403 to a request
	// carrying what Credentials returned: a cached token is dropped, and
	// the returned error (an [*AuthorizationRequired] when a person must
	// act) is what the tool should answer.
	Refused(ctx context.Context, integration, principal string, status int) error
}

// AuthorizationRequired is the error of a call that needs a credential
// that is missing or was refused: a tool answers it as an actionable
// result, naming the integration and how to authorize, and the agents
// treat it as needing input, not as a failure of the tool. It unwraps to
// an [*Error] with code EUNAUTHORIZED, so transports that map codes keep
// working.
type AuthorizationRequired struct {
	Integration string
	// AuthorizeURL is where a person authorizes: the authorization link
	// served by agents-mcp (which starts the OAuth flow), or empty when
	// an administrator must add a credential through the admin API.
	AuthorizeURL string
	Reason       string // why, for the person: "no credential", "the token was refused"
	// Delegated is set when the integration acts with the caller's own
	// identity (ADR 0012 D7b): no credential can be added for it, the
	// caller must come with a delegable token (a JWT of the configured
	// issuer) instead.
	Delegated bool
}

func (e *AuthorizationRequired) Error() string { return e.Message() }

// Unwrap returns the EUNAUTHORIZED [*Error] of e.
func (e *AuthorizationRequired) Unwrap() error {
	return &Error{Code: EUNAUTHORIZED, Message: e.Message()}
}

// Message is the text shown to the person: the integration, why, and what
// to do.
func (e *AuthorizationRequired) Message() string {
	if e.Delegated {
		return fmt.Sprintf("Not authorized for %s (%s). It acts with the identity of its caller: call it from a client "+
			"that authenticates to agents-mcp with a token (JWT) of its authorization server, not an API key, then retry.",
			e.Integration, e.Reason)
	}
	if e.AuthorizeURL != "" {
		return fmt.Sprintf("Not authorized for %s (%s). Authorize at %s, then retry.", e.Integration, e.Reason, e.AuthorizeURL)
	}
	return fmt.Sprintf("Not authorized for %s (%s). An administrator must add a credential for it (POST /admin/v1/credentials), then retry.",
		e.Integration, e.Reason)
}
