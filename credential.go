package agentsmcp

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"time"
)

const (
	// CredentialAPIKey sends Secret.Value in header Settings.Header (default
	// X-Api-Key) or query parameter Settings.Query.
	CredentialAPIKey = "api_key"
	// CredentialBearer sends "Authorization: Bearer <Secret.Value>".
	CredentialBearer = "bearer"
	// CredentialBasic sends Settings.Username and Secret.Value as basic auth.
	CredentialBasic = "basic"
	// CredentialClientCredentials gets a token from Settings.TokenURL with the
	// OAuth client-credentials grant and caches it in Secret.
	CredentialClientCredentials = "oauth_client_credentials"
	// CredentialAuthorizationCode gets tokens through a person's OAuth
	// authorization-code grant (PKCE); a shared one holds only the client, and
	// each principal that authorizes gets its own credential beside it.
	CredentialAuthorizationCode = "oauth_authorization_code"
)

// Credential is a secret agents-mcp presents to an integration for its
// callers. At most one exists per (Integration, Principal); Principal "" is
// shared, and a caller's own wins over it. Secret lives in memory only:
// stores keep Sealed and refuse a credential that carries Secret.
// Invariants: checked by internal/validate.Credential.
type Credential struct {
	ID          string
	Integration string
	Principal   string
	Kind        string
	Settings    CredentialSettings
	Secret      *CredentialSecret `json:"-"`
	// Sealed is the sealed form of Secret, opaque to the store.
	Sealed string `json:"-"`
	// ExpiresAt is when the cached access token expires (zero: unknown).
	ExpiresAt time.Time
	CreatedBy string
	CreatedAt time.Time
	UpdatedAt time.Time
}

// CredentialSettings are a credential's non-secret parts.
type CredentialSettings struct {
	Header   string `json:"header,omitempty"`   // api_key: the header that carries it
	Query    string `json:"query,omitempty"`    // api_key: the query parameter that carries it, instead
	Username string `json:"username,omitempty"` // basic
	// OAuth: the client and the authorization server's endpoints.
	ClientID string   `json:"client_id,omitempty"`
	AuthURL  string   `json:"auth_url,omitempty"`
	TokenURL string   `json:"token_url,omitempty"`
	Scopes   []string `json:"scopes,omitempty"`
	// Resource is the RFC 8707 resource indicator sent with OAuth requests.
	Resource string `json:"resource,omitempty"`
	// Issuer issued the tokens; tokens of MCP upstreams are keyed by it.
	Issuer string `json:"issuer,omitempty"`
	// Registration is how agents-mcp became the issuer's client: "" when an
	// administrator gave it, else a Registration* value.
	Registration string `json:"registration,omitempty"`
}

// How agents-mcp registered as an OAuth client (CredentialSettings.Registration).
const (
	// RegistrationClientIDMetadata: the client_id is the URL of the metadata
	// document agents-mcp serves; no client secret.
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
	// Principal, when not nil, selects that principal's ("": the shared ones).
	Principal *string
}

// OAuthState is an authorization-code flow under way (ADR 0012 D2): a link
// (Key: hash of its one-time token), then a flow bound to a browser (Key:
// hash of the OAuth state, Binding: hash of its cookie nonce). Verifier
// lives in memory only; stores keep Sealed.
type OAuthState struct {
	Key          string
	CredentialID string // the credential that holds the client
	Principal    string // the principal the tokens will serve
	// Binding is empty for a link no browser has taken yet.
	Binding   string
	Verifier  string `json:"-"`
	Sealed    string `json:"-"`
	ExpiresAt time.Time
}

// CredentialService stores credentials and flows under way. It refuses a
// clear secret (Secret, Verifier): memory/secrets seals them.
type CredentialService interface {
	// CreateCredential validates c, assigns ID, CreatedAt and UpdatedAt,
	// and stores it. EINVALID for a broken invariant or a clear secret,
	// ECONFLICT when a credential of that (Integration, Principal) exists.
	CreateCredential(ctx context.Context, c *Credential) error
	// FindCredential returns the credential of (integration, principal). ENOTFOUND.
	FindCredential(ctx context.Context, integration, principal string) (*Credential, error)
	// FindCredentialByID returns one credential; ENOTFOUND.
	FindCredentialByID(ctx context.Context, id string) (*Credential, error)
	// FindCredentials lists credentials by integration, then principal.
	FindCredentials(ctx context.Context, f CredentialFilter) ([]*Credential, error)
	// UpdateCredentialSecret replaces the sealed secret and ExpiresAt. ENOTFOUND.
	UpdateCredentialSecret(ctx context.Context, id, sealed string, expiresAt time.Time) error
	// DeleteCredential removes one credential; ENOTFOUND.
	DeleteCredential(ctx context.Context, id string) error
	// CreateOAuthState stores s; ECONFLICT when its Key exists.
	CreateOAuthState(ctx context.Context, s *OAuthState) error
	// FindOAuthState returns the state of key. ENOTFOUND when none or expired.
	FindOAuthState(ctx context.Context, key string, now time.Time) (*OAuthState, error)
	// TakeOAuthState removes and returns the state of key, once. ENOTFOUND as
	// FindOAuthState.
	TakeOAuthState(ctx context.Context, key string, now time.Time) (*OAuthState, error)
}

// AppliedCredential is what a credential adds to a request.
type AppliedCredential struct {
	Header http.Header
	Query  url.Values
}

// CredentialSource resolves an outgoing request's credential.
type CredentialSource interface {
	// Credentials returns what to add to a request to integration for
	// principal (its own credential, else the shared one, tokens refreshed as
	// needed); (nil, nil) when there is none. An error wrapping an
	// [*AuthorizationRequired] means a person must act.
	Credentials(ctx context.Context, integration, principal string) (*AppliedCredential, error)
	// Refused reports a 401 or 403 to what Credentials returned: a cached
	// token is dropped, and the error returned is what the tool should answer.
	Refused(ctx context.Context, integration, principal string, status int) error
}

// AuthorizationRequired is the error of a call needing a missing or refused
// credential; it unwraps to an EUNAUTHORIZED [*Error].
type AuthorizationRequired struct {
	Integration string
	// AuthorizeURL is where a person authorizes; empty when an administrator
	// must add a credential.
	AuthorizeURL string
	Reason       string // why, for the person: "no credential", "the token was refused"
	// Delegated: the integration acts with the caller's own identity (ADR
	// 0012 D7b), so the caller must come with a delegable token.
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
