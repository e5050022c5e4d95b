package admin

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"time"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/internal/redact"
	"github.com/agents-mcp/agents-mcp/internal/validate"
	"github.com/agents-mcp/agents-mcp/internal/view"
)

// This file serves the credentials agents-mcp presents to integrations
// (ADR 0012). Secrets go in, never out: every answer is a
// [agentsmcp.Credential.Redacted] view, and the audit trail gets the body
// with the secret fields removed.

// Authorizer starts authorization-code flows: credentials.Manager
// implements it.
type Authorizer interface {
	// StartAuthorization returns the link to send a person to so that
	// principal's tokens for integration are obtained: agents-mcp's own
	// one-time link, whose page names principal and binds the flow to the
	// browser that confirms (ADR 0012 D2); ENOTFOUND when the integration
	// has no authorization-code client.
	StartAuthorization(ctx context.Context, integration, principal string) (string, error)
}

// CredentialInput is the body of POST /credentials. Secret fields (value,
// clientSecret, accessToken, refreshToken) are sealed at rest and never
// returned nor audited.
type CredentialInput struct {
	Integration string `json:"integration"`
	// Principal is the one principal the credential serves; empty shares
	// it with every caller.
	Principal string   `json:"principal,omitempty"`
	Kind      string   `json:"kind"`
	Header    string   `json:"header,omitempty"`
	Query     string   `json:"query,omitempty"`
	Username  string   `json:"username,omitempty"`
	ClientID  string   `json:"clientId,omitempty"`
	AuthURL   string   `json:"authUrl,omitempty"`
	TokenURL  string   `json:"tokenUrl,omitempty"`
	Scopes    []string `json:"scopes,omitempty"`
	Resource  string   `json:"resource,omitempty"`

	Value        string `json:"value,omitempty"`
	ClientSecret string `json:"clientSecret,omitempty"`
	AccessToken  string `json:"accessToken,omitempty"`
	RefreshToken string `json:"refreshToken,omitempty"`
}

// credentialSecretFields are the fields of CredentialInput that hold
// secrets, removed from the audited body.
var credentialSecretFields = []string{"value", "clientSecret", "accessToken", "refreshToken"}

// CredentialView is a credential as the API shows it: no secret, only
// whether one is held.
type CredentialView struct {
	ID          string                       `json:"id"`
	Integration string                       `json:"integration"`
	Principal   string                       `json:"principal"`
	Kind        string                       `json:"kind"`
	Settings    agentsmcp.CredentialSettings `json:"settings"`
	ExpiresAt   *time.Time                   `json:"expiresAt,omitempty"`
	CreatedBy   string                       `json:"createdBy,omitempty"`
	CreatedAt   time.Time                    `json:"createdAt"`
	UpdatedAt   time.Time                    `json:"updatedAt"`
}

func credentialView(c *agentsmcp.Credential) CredentialView {
	r := view.Credential(c)
	v := CredentialView{ID: r.ID, Integration: r.Integration, Principal: r.Principal, Kind: r.Kind, Settings: r.Settings,
		CreatedBy: r.CreatedBy, CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt}
	if !r.ExpiresAt.IsZero() {
		v.ExpiresAt = &r.ExpiresAt
	}
	return v
}

// scrubCredentialBody removes the secret fields of a POST /credentials
// body before it is redacted for the audit trail.
func scrubCredentialBody(body json.RawMessage) json.RawMessage {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(body, &m); err != nil {
		return body
	}
	for _, k := range credentialSecretFields {
		if _, ok := m[k]; ok {
			m[k] = json.RawMessage(`"` + redact.Marker + `"`)
		}
	}
	out, err := json.Marshal(m)
	if err != nil {
		return body
	}
	return out
}

// GET /credentials: every credential, without secrets, by integration
// then principal; filters integration and principal.
func (h *Handler) listCredentials(w http.ResponseWriter, r *http.Request) error {
	if h.opts.Credentials == nil {
		return unavailable("the credential store")
	}
	p, err := queryParams(r, "integration", "principal", "limit", "cursor")
	if err != nil {
		return err
	}
	pg, err := offsetPageOf(p)
	if err != nil {
		return err
	}
	f := agentsmcp.CredentialFilter{Integration: p.str("integration")}
	if p.has("principal") {
		principal := p.str("principal")
		f.Principal = &principal
	}
	ctx, cancel := h.requestContext(r)
	defer cancel()
	items, err := h.opts.Credentials.FindCredentials(ctx, f)
	if err != nil {
		return err
	}
	views := make([]CredentialView, len(items))
	for i, c := range items {
		views[i] = credentialView(c)
	}
	from, to, next := pg.cutOffset(len(views))
	writeJSON(w, http.StatusOK, newPage(views[from:to], next, ""))
	return nil
}

// POST /credentials: 201 with the stored credential, without its secret.
func (h *Handler) createCredential(w http.ResponseWriter, r *http.Request) error {
	if h.opts.Credentials == nil {
		return unavailable("the credential store")
	}
	if _, err := queryParams(r); err != nil {
		return err
	}
	var in CredentialInput
	if err := decodeBody(r, &in); err != nil {
		return err
	}
	c := &agentsmcp.Credential{Integration: in.Integration, Principal: in.Principal, Kind: in.Kind,
		Settings: agentsmcp.CredentialSettings{Header: in.Header, Query: in.Query, Username: in.Username,
			ClientID: in.ClientID, AuthURL: in.AuthURL, TokenURL: in.TokenURL, Scopes: slices.Clone(in.Scopes), Resource: in.Resource},
		Secret: &agentsmcp.CredentialSecret{Value: in.Value, ClientSecret: in.ClientSecret,
			AccessToken: in.AccessToken, RefreshToken: in.RefreshToken},
		CreatedBy: agentsmcp.PrincipalIDFrom(r.Context())}
	if err := validate.Credential(c); err != nil {
		return err
	}
	switch c.Kind {
	case agentsmcp.CredentialAPIKey, agentsmcp.CredentialBearer, agentsmcp.CredentialBasic:
		if in.Value == "" {
			return invalidf("a %s credential needs value", c.Kind)
		}
	case agentsmcp.CredentialClientCredentials:
		if in.ClientSecret == "" {
			return invalidf("a %s credential needs clientSecret", c.Kind)
		}
	}
	ctx, cancel := h.requestContext(r)
	defer cancel()
	if err := h.opts.Credentials.CreateCredential(ctx, c); err != nil {
		return err
	}
	h.opts.Logger.Info("credential created through the admin API", "integration", c.Integration, "kind", c.Kind,
		"principal", agentsmcp.PrincipalIDFrom(r.Context()))
	w.Header().Set("Location", Prefix+"/credentials/"+c.ID)
	writeJSON(w, http.StatusCreated, credentialView(c))
	return nil
}

// DELETE /credentials/{id}
func (h *Handler) deleteCredential(w http.ResponseWriter, r *http.Request) error {
	if h.opts.Credentials == nil {
		return unavailable("the credential store")
	}
	if _, err := queryParams(r); err != nil {
		return err
	}
	if err := noBody(r); err != nil {
		return err
	}
	id, err := pathID(r, "cred", "credential")
	if err != nil {
		return err
	}
	ctx, cancel := h.requestContext(r)
	defer cancel()
	if err := h.opts.Credentials.DeleteCredential(ctx, id); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// AuthorizationInput is the body of POST /credentials/authorize.
type AuthorizationInput struct {
	Integration string `json:"integration"`
	// Principal whose tokens the flow obtains; empty: the caller's.
	Principal string `json:"principal,omitempty"`
	// Shared obtains the server's own tokens, kept in the shared
	// credential: what the pool's session of an OAuth upstream carries.
	Shared bool `json:"shared,omitempty"`
}

// AuthorizationStarted is the answer of POST /credentials/authorize.
type AuthorizationStarted struct {
	// AuthorizationURL is the link to give the person: agents-mcp's
	// <public_url>/oauth/start?flow=…, good for one use until ExpiresAt.
	AuthorizationURL string    `json:"authorizationUrl"`
	Principal        string    `json:"principal"`
	ExpiresAt        time.Time `json:"expiresAt"`
}

// POST /credentials/authorize: the authorization URL of a new flow.
func (h *Handler) startAuthorization(w http.ResponseWriter, r *http.Request) error {
	if h.opts.Authorizer == nil {
		return unavailable("OAuth authorization")
	}
	if _, err := queryParams(r); err != nil {
		return err
	}
	var in AuthorizationInput
	if err := decodeBody(r, &in); err != nil {
		return err
	}
	if in.Integration == "" {
		return invalidf("integration is required")
	}
	switch {
	case in.Shared && in.Principal != "":
		return invalidf("principal and shared exclude each other")
	case in.Principal == "" && !in.Shared:
		in.Principal = agentsmcp.PrincipalIDFrom(r.Context())
	}
	ctx, cancel := h.requestContext(r)
	defer cancel()
	u, err := h.opts.Authorizer.StartAuthorization(ctx, in.Integration, in.Principal)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, AuthorizationStarted{AuthorizationURL: u, Principal: in.Principal,
		ExpiresAt: time.Now().Add(h.opts.AuthorizationTTL).UTC().Truncate(time.Second)})
	return nil
}

// Registrar finds how an integration is authorized and registers
// agents-mcp as its OAuth client (ADR 0012 D6): [ManagerRegistrar], to
// which cmd gives the lookup of an upstream's URL by name.
type Registrar interface {
	// DiscoverOAuth asks the server at url (empty: the URL of the upstream
	// named integration) how it is authorized. ENOTFOUND when it does not
	// ask for OAuth; EINVALID when url is empty and integration is no
	// upstream with a URL.
	DiscoverOAuth(ctx context.Context, integration, url string) (*OAuthDiscovery, error)
	// RegisterOAuth registers agents-mcp with the server's authorization
	// server by method (empty: the best that works) and stores the client
	// as integration's shared oauth_authorization_code credential.
	// ECONFLICT when integration already has a shared credential.
	RegisterOAuth(ctx context.Context, integration, url, method string) (*agentsmcp.Credential, error)
}

// OAuthDiscoveryInput is the body of POST /credentials/discover and,
// with Method, of POST /credentials/register.
type OAuthDiscoveryInput struct {
	Integration string `json:"integration"`
	// URL of the protected server; empty: the upstream's own URL. An HTTP
	// tool source has none to take, so it is required for one.
	URL string `json:"url,omitempty"`
	// Method (register only): "client_id_metadata_document", "dynamic",
	// or empty for the first of them that works.
	Method string `json:"method,omitempty"`
}

// OAuthDiscovery is what POST /credentials/discover found: RFC 9728
// protected resource metadata and RFC 8414 authorization server metadata,
// and how POST /credentials/register would register.
type OAuthDiscovery struct {
	Integration           string   `json:"integration"`
	URL                   string   `json:"url"` // redacted
	Resource              string   `json:"resource"`
	Issuer                string   `json:"issuer"`
	AuthorizationEndpoint string   `json:"authorizationEndpoint"`
	TokenEndpoint         string   `json:"tokenEndpoint"`
	RegistrationEndpoint  string   `json:"registrationEndpoint,omitempty"`
	ScopesSupported       []string `json:"scopesSupported,omitempty"`
	// ClientIDMetadataDocumentSupported: the server accepts a Client ID
	// Metadata Document's URL as client_id.
	ClientIDMetadataDocumentSupported bool `json:"clientIdMetadataDocumentSupported"`
	// Registration is the method register would use, empty when none
	// works; RegistrationNote says why, or what to do instead.
	Registration     string `json:"registration,omitempty"`
	RegistrationNote string `json:"registrationNote,omitempty"`
	// Registered is the id of integration's shared credential when there
	// is one: register then refuses, and that client is used as it is.
	Registered string `json:"registered,omitempty"`
}

// scrubOAuthDiscoveryBody redacts the url of a discover or register body
// for the audit trail: a URL may carry a key in its query.
func scrubOAuthDiscoveryBody(body json.RawMessage) json.RawMessage {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(body, &m); err != nil {
		return body
	}
	var u string
	if err := json.Unmarshal(m["url"], &u); err == nil && u != "" {
		m["url"], _ = json.Marshal(redact.URL(u))
	}
	out, err := json.Marshal(m)
	if err != nil {
		return body
	}
	return out
}

func (h *Handler) oauthDiscoveryInput(r *http.Request, register bool) (OAuthDiscoveryInput, error) {
	var in OAuthDiscoveryInput
	if h.opts.Registrar == nil {
		return in, unavailable("OAuth registration")
	}
	if _, err := queryParams(r); err != nil {
		return in, err
	}
	if err := decodeBody(r, &in); err != nil {
		return in, err
	}
	switch {
	case in.Integration == "":
		return in, invalidf("integration is required")
	case in.Method != "" && !register:
		return in, invalidf("method is a field of POST /credentials/register")
	case in.URL != "":
		if err := validate.HTTPURL(in.URL); err != nil {
			return in, invalidf("url %q %v", redact.URL(in.URL), err)
		}
	}
	return in, nil
}

// POST /credentials/discover: how the integration's server is authorized.
// It reaches out (under the egress policy) but changes nothing.
func (h *Handler) discoverOAuth(w http.ResponseWriter, r *http.Request) error {
	in, err := h.oauthDiscoveryInput(r, false)
	if err != nil {
		return err
	}
	ctx, cancel := h.requestContext(r)
	defer cancel()
	d, err := h.opts.Registrar.DiscoverOAuth(ctx, in.Integration, in.URL)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, d)
	return nil
}

// POST /credentials/register: 201 with the shared credential that holds
// the client, without its secret.
func (h *Handler) registerOAuth(w http.ResponseWriter, r *http.Request) error {
	in, err := h.oauthDiscoveryInput(r, true)
	if err != nil {
		return err
	}
	ctx, cancel := h.requestContext(r)
	defer cancel()
	c, err := h.opts.Registrar.RegisterOAuth(ctx, in.Integration, in.URL, in.Method)
	if err != nil {
		return err
	}
	w.Header().Set("Location", Prefix+"/credentials/"+c.ID)
	writeJSON(w, http.StatusCreated, credentialView(c))
	return nil
}
