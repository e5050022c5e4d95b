package credentials

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"

	agentsmcp "github.com/agents-mcp/agents-mcp"
)

// Store is the credential store with its sealing layer
// (memory/secrets.Credentials): Find* return the clear Secret, and
// UpdateSecret seals a new one.
type Store interface {
	agentsmcp.CredentialService
	UpdateSecret(ctx context.Context, id string, sec *agentsmcp.CredentialSecret) error
}

// The paths a person's browser visits, under the public URL (see
// [Manager.ServeHTTP]).
const (
	// StartPath is the authorization link agents-mcp gives out: it names
	// the principal who will receive the account, binds the flow to the
	// browser that confirms, and sends that browser to the authorization
	// server.
	StartPath = "/oauth/start"
	// CallbackPath is where authorization servers send the browser back.
	CallbackPath = "/oauth/callback"
)

// Defaults of [Options].
const (
	DefaultStateTTL = 10 * time.Minute
	// expiryMargin is how long before its expiry a token is renewed, so
	// that it does not expire on its way to the integration.
	expiryMargin = 30 * time.Second
)

// Options configure a [Manager].
type Options struct {
	Store Store
	// HTTP is the client for token endpoints; it should apply the egress
	// policy. nil: http.DefaultClient.
	HTTP *http.Client
	// BaseURL is agents-mcp's public URL, as browsers reach it: the
	// redirect URI is BaseURL + CallbackPath.
	BaseURL string
	// StateTTL bounds how long an authorization link may wait to be
	// opened, and then how long the person has to sign in.
	StateTTL time.Duration
	// PrincipalName returns the display name of a principal ID (the name
	// of an API key in the configuration), or "": the page of a link names
	// the principal who will receive the account. nil: IDs only.
	PrincipalName func(id string) string
	Logger        *slog.Logger
}

// Manager resolves credentials and runs the OAuth flows. It is safe for
// concurrent use; it starts no goroutine.
type Manager struct {
	opts Options
	// renew serializes the token renewals of one credential in this
	// process, so that concurrent calls do not all refresh (a refresh
	// token may be single use).
	mu    sync.Mutex
	renew map[string]*sync.Mutex
	// registering serializes RegisterIntegration in this process, so that
	// two requests for one integration cannot both register a client at
	// the server (the loser's would be orphaned there). Registrations are
	// rare administrator actions; one lock for all of them is enough.
	registering sync.Mutex
}

// New returns a Manager.
func New(opts Options) *Manager {
	if opts.HTTP == nil {
		opts.HTTP = http.DefaultClient
	}
	if opts.StateTTL <= 0 {
		opts.StateTTL = DefaultStateTTL
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	opts.BaseURL = strings.TrimRight(opts.BaseURL, "/")
	return &Manager{opts: opts, renew: map[string]*sync.Mutex{}}
}

var _ agentsmcp.CredentialSource = (*Manager)(nil)

// RedirectURL is the redirect URI registered with authorization servers.
func (m *Manager) RedirectURL() string { return m.opts.BaseURL + CallbackPath }

// find returns principal's own credential of integration, else the shared
// one; (nil, nil) when there is neither.
func (m *Manager) find(ctx context.Context, integration, principal string) (*agentsmcp.Credential, error) {
	if principal != "" {
		c, err := m.opts.Store.FindCredential(ctx, integration, principal)
		if err == nil {
			return c, nil
		} else if agentsmcp.ErrorCode(err) != agentsmcp.ENOTFOUND {
			return nil, err
		}
	}
	c, err := m.opts.Store.FindCredential(ctx, integration, "")
	if agentsmcp.ErrorCode(err) == agentsmcp.ENOTFOUND {
		return nil, nil
	}
	return c, err
}

// Credentials implements [agentsmcp.CredentialSource].
func (m *Manager) Credentials(ctx context.Context, integration, principal string) (*agentsmcp.AppliedCredential, error) {
	c, err := m.find(ctx, integration, principal)
	if err != nil || c == nil {
		return nil, err
	}
	if c.Kind == agentsmcp.CredentialAuthorizationCode && c.Principal != principal {
		// The shared credential holds the client (and maybe the server's
		// own tokens): a caller never acts with another's authorization.
		return nil, m.authorizationRequired(ctx, integration, c, principal, "no authorization yet")
	}
	if c.Secret == nil {
		// Sealed with another key: lost.
		return nil, m.authorizationRequired(ctx, c.Integration, c, principal, "its stored secret cannot be opened")
	}
	a := &agentsmcp.AppliedCredential{Header: http.Header{}}
	switch c.Kind {
	case agentsmcp.CredentialAPIKey:
		switch {
		case c.Settings.Query != "":
			a.Query = url.Values{c.Settings.Query: {c.Secret.Value}}
		case c.Settings.Header != "":
			a.Header.Set(c.Settings.Header, c.Secret.Value)
		default:
			a.Header.Set("X-Api-Key", c.Secret.Value)
		}
	case agentsmcp.CredentialBearer:
		a.Header.Set("Authorization", "Bearer "+c.Secret.Value)
	case agentsmcp.CredentialBasic:
		req := http.Request{Header: http.Header{}}
		req.SetBasicAuth(c.Settings.Username, c.Secret.Value)
		a.Header.Set("Authorization", req.Header.Get("Authorization"))
	case agentsmcp.CredentialClientCredentials, agentsmcp.CredentialAuthorizationCode:
		tok, err := m.token(ctx, c, principal)
		if err != nil {
			return nil, err
		}
		a.Header.Set("Authorization", "Bearer "+tok)
	default:
		return nil, fmt.Errorf("credential %s: unknown kind %q", c.ID, c.Kind)
	}
	return a, nil
}

// Refused implements [agentsmcp.CredentialSource]: the cached access token
// is dropped, so that the next call fetches or refreshes one, and a person
// is asked to act when that cannot help.
func (m *Manager) Refused(ctx context.Context, integration, principal string, status int) error {
	c, err := m.find(ctx, integration, principal)
	if err != nil {
		return err
	}
	reason := fmt.Sprintf("it answered HTTP %d to the credential", status)
	if c == nil {
		return m.authorizationRequired(ctx, integration, nil, principal, "no credential")
	}
	if c.Secret != nil && c.Secret.AccessToken != "" {
		sec := *c.Secret
		sec.AccessToken, sec.Expiry = "", time.Time{}
		if err := m.opts.Store.UpdateSecret(ctx, c.ID, &sec); err != nil {
			return err
		}
	}
	return m.authorizationRequired(ctx, c.Integration, c, principal, reason)
}

// authorizationRequired builds the error of a person who must act, with a
// fresh authorization link when the integration has an authorization-code
// client.
func (m *Manager) authorizationRequired(ctx context.Context, integration string, c *agentsmcp.Credential, principal, reason string) error {
	e := &agentsmcp.AuthorizationRequired{Integration: integration, Reason: reason}
	if c != nil && c.Kind == agentsmcp.CredentialAuthorizationCode {
		u, err := m.StartAuthorization(ctx, c.Integration, principal)
		if err != nil {
			m.opts.Logger.WarnContext(ctx, "cannot start an authorization", "integration", c.Integration, "err", err)
		} else {
			e.AuthorizeURL = u
		}
	}
	return e
}

// client returns the credential whose OAuth client serves integration: the
// shared one, else principal's own.
func (m *Manager) client(ctx context.Context, integration, principal string) (*agentsmcp.Credential, error) {
	for _, p := range []string{"", principal} {
		c, err := m.opts.Store.FindCredential(ctx, integration, p)
		if err == nil && c.Kind == agentsmcp.CredentialAuthorizationCode {
			return c, nil
		} else if err != nil && agentsmcp.ErrorCode(err) != agentsmcp.ENOTFOUND {
			return nil, err
		}
		if principal == "" {
			break
		}
	}
	return nil, agentsmcp.Errorf(agentsmcp.ENOTFOUND, "integration %q has no OAuth authorization-code client", integration)
}

func (m *Manager) config(c *agentsmcp.Credential) *oauth2.Config {
	cfg := &oauth2.Config{
		ClientID:    c.Settings.ClientID,
		Endpoint:    oauth2.Endpoint{AuthURL: c.Settings.AuthURL, TokenURL: c.Settings.TokenURL},
		RedirectURL: m.RedirectURL(),
		Scopes:      c.Settings.Scopes,
	}
	if c.Secret != nil {
		cfg.ClientSecret = c.Secret.ClientSecret
	}
	if cfg.ClientSecret == "" {
		// A public client (a Client ID Metadata Document, say) names
		// itself in the body: servers refuse an empty Basic password of
		// a client registered with token_endpoint_auth_method none, and
		// auto-detection would spend a request finding that out.
		cfg.Endpoint.AuthStyle = oauth2.AuthStyleInParams
	}
	return cfg
}

// StartAuthorization begins an authorization-code flow for principal on
// integration and returns the link to give that person:
// BaseURL + StartPath + "?flow=<token>". The token is random, good for one
// use within StateTTL, and stored only hashed, bound to principal, to the
// credential that holds the client and to a PKCE verifier (sealed).
//
// The link is not the authorization server's URL: a person who opens it
// sees which principal will receive the account and confirms, and only
// then is the browser that confirmed sent to the authorization server,
// with an OAuth state bound to a nonce in a cookie of that browser
// ([Manager.ServeHTTP]). So an authorization server's URL passed to
// another person completes nothing.
func (m *Manager) StartAuthorization(ctx context.Context, integration, principal string) (string, error) {
	c, err := m.client(ctx, integration, principal)
	if err != nil {
		return "", err
	}
	token := rand.Text()
	err = m.opts.Store.CreateOAuthState(ctx, &agentsmcp.OAuthState{Key: linkKey(token), CredentialID: c.ID,
		Principal: principal, Verifier: oauth2.GenerateVerifier(), ExpiresAt: time.Now().Add(m.opts.StateTTL)})
	if err != nil {
		return "", err
	}
	return m.opts.BaseURL + StartPath + "?" + url.Values{flowParam: {token}}.Encode(), nil
}

// authCodeURL is the authorization server's URL of the flow st, whose
// client is c, with the OAuth state parameter state.
func (m *Manager) authCodeURL(c *agentsmcp.Credential, st *agentsmcp.OAuthState, state string) string {
	opts := []oauth2.AuthCodeOption{oauth2.S256ChallengeOption(st.Verifier)}
	if c.Settings.Resource != "" {
		opts = append(opts, oauth2.SetAuthURLParam("resource", c.Settings.Resource))
	}
	return m.config(c).AuthCodeURL(state, opts...)
}

// The keys under which the store keeps the two stages of a flow: hashes
// (SHA-256) of the link's token and of the OAuth state parameter, so that
// a reader of the store can neither open a link nor complete a flow. The
// link's is domain-separated, so a token of one stage is never a key of
// the other.
func linkKey(token string) string  { return hashB64("agents-mcp oauth link\x00" + token) }
func stateKey(state string) string { return hashB64(state) }

func hashB64(s string) string {
	sum := sha256.Sum256([]byte(s))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

// complete finishes the flow st, taken by its callback, with the
// authorization code: it exchanges the code with the PKCE verifier and
// stores the tokens in the credential of the flow's principal (created
// beside the shared client when it has none). ENOTFOUND when the client's
// credential is gone.
func (m *Manager) complete(ctx context.Context, st *agentsmcp.OAuthState, code string) (*agentsmcp.Credential, error) {
	c, err := m.opts.Store.FindCredentialByID(ctx, st.CredentialID)
	if err != nil {
		return nil, err
	}
	opts := []oauth2.AuthCodeOption{oauth2.VerifierOption(st.Verifier)}
	if c.Settings.Resource != "" {
		opts = append(opts, oauth2.SetAuthURLParam("resource", c.Settings.Resource))
	}
	tok, err := m.config(c).Exchange(m.httpContext(ctx), code, opts...)
	if err != nil {
		return nil, tokenError(c.Integration, err)
	}
	sec := &agentsmcp.CredentialSecret{AccessToken: tok.AccessToken, RefreshToken: tok.RefreshToken, Expiry: tok.Expiry.UTC()}
	if c.Secret != nil {
		sec.ClientSecret = c.Secret.ClientSecret
	}
	if c.Principal == st.Principal {
		if err := m.opts.Store.UpdateSecret(ctx, c.ID, sec); err != nil {
			return nil, err
		}
		c.Secret, c.ExpiresAt = sec, sec.Expiry
		return c, nil
	}
	own, err := m.opts.Store.FindCredential(ctx, c.Integration, st.Principal)
	switch {
	case err == nil:
		if err := m.opts.Store.UpdateSecret(ctx, own.ID, sec); err != nil {
			return nil, err
		}
		own.Secret, own.ExpiresAt = sec, sec.Expiry
		return own, nil
	case agentsmcp.ErrorCode(err) != agentsmcp.ENOTFOUND:
		return nil, err
	}
	own = &agentsmcp.Credential{Integration: c.Integration, Principal: st.Principal, Kind: c.Kind,
		Settings: c.Settings, Secret: sec, ExpiresAt: sec.Expiry, CreatedBy: st.Principal}
	own.Settings.Scopes = append([]string(nil), c.Settings.Scopes...)
	if err := m.opts.Store.CreateCredential(ctx, own); err != nil {
		return nil, err
	}
	return own, nil
}

func (m *Manager) httpContext(ctx context.Context) context.Context {
	return context.WithValue(ctx, oauth2.HTTPClient, m.opts.HTTP)
}

func (m *Manager) lock(id string) func() {
	m.mu.Lock()
	l := m.renew[id]
	if l == nil {
		l = &sync.Mutex{}
		m.renew[id] = l
	}
	m.mu.Unlock()
	l.Lock()
	return l.Unlock
}

// token returns a valid access token of c: the cached one, else a new one
// (client credentials) or a refreshed one (authorization code).
func (m *Manager) token(ctx context.Context, c *agentsmcp.Credential, principal string) (string, error) {
	if fresh(c.Secret) {
		return c.Secret.AccessToken, nil
	}
	defer m.lock(c.ID)()
	// Another call may have renewed it while this one waited.
	if again, err := m.opts.Store.FindCredentialByID(ctx, c.ID); err == nil && again.Secret != nil {
		c = again
		if fresh(c.Secret) {
			return c.Secret.AccessToken, nil
		}
	}
	var tok *oauth2.Token
	var err error
	switch {
	case c.Kind == agentsmcp.CredentialClientCredentials:
		cc := clientcredentials.Config{ClientID: c.Settings.ClientID, ClientSecret: c.Secret.ClientSecret,
			TokenURL: c.Settings.TokenURL, Scopes: c.Settings.Scopes}
		if c.Settings.Resource != "" {
			cc.EndpointParams = url.Values{"resource": {c.Settings.Resource}}
		}
		tok, err = cc.Token(m.httpContext(ctx))
		if err != nil {
			return "", tokenError(c.Integration, err)
		}
	case c.Secret.RefreshToken != "":
		old := &oauth2.Token{RefreshToken: c.Secret.RefreshToken, Expiry: time.Unix(1, 0)}
		tok, err = m.config(c).TokenSource(m.httpContext(ctx), old).Token()
		if err != nil {
			var re *oauth2.RetrieveError
			if errors.As(err, &re) {
				return "", m.authorizationRequired(ctx, c.Integration, c, principal, "the refresh token was refused ("+re.ErrorCode+")")
			}
			return "", tokenError(c.Integration, err)
		}
	default:
		// A shared client without tokens, or a principal's whose tokens
		// expired without a refresh token: the person authorizes.
		return "", m.authorizationRequired(ctx, c.Integration, c, principal, "no authorization yet")
	}
	sec := *c.Secret
	sec.AccessToken, sec.Expiry = tok.AccessToken, tok.Expiry.UTC()
	if tok.RefreshToken != "" {
		sec.RefreshToken = tok.RefreshToken
	}
	if err := m.opts.Store.UpdateSecret(ctx, c.ID, &sec); err != nil {
		return "", err
	}
	return tok.AccessToken, nil
}

// fresh reports whether sec holds an access token that is not about to
// expire (a token without expiry is taken as valid).
func fresh(sec *agentsmcp.CredentialSecret) bool {
	return sec != nil && sec.AccessToken != "" && (sec.Expiry.IsZero() || time.Until(sec.Expiry) > expiryMargin)
}

// tokenError reports a failed token request without what it carried: the
// OAuth error code of the server, or that it could not be reached.
func tokenError(integration string, err error) error {
	var re *oauth2.RetrieveError
	if errors.As(err, &re) {
		code := re.ErrorCode
		if code == "" {
			code = fmt.Sprintf("HTTP %d", re.Response.StatusCode)
		}
		return agentsmcp.Errorf(agentsmcp.EUNAUTHORIZED, "%s: the authorization server refused the token request (%s)", integration, code)
	}
	return fmt.Errorf("%w: %w", agentsmcp.Errorf(agentsmcp.EUNAVAILABLE, "%s: the authorization server cannot be reached", integration), err)
}
