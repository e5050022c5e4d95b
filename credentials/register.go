package credentials

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/oauthex"

	agentsmcp "github.com/agents-mcp/agents-mcp"
)

// ClientMetadataPath is where agents-mcp serves its Client ID Metadata
// Document: its URL under the public URL is its client_id with
// authorization servers that accept such documents.
const ClientMetadataPath = "/oauth/client-metadata.json"

// clientName is how agents-mcp names itself to authorization servers.
const clientName = "agents-mcp"

// ClientMetadata is agents-mcp's Client ID Metadata Document
// (draft-ietf-oauth-client-id-metadata-document; MCP authorization
// 2025-11-25): a public client, so no secret and token endpoint auth none.
type ClientMetadata struct {
	ClientID                string   `json:"client_id"`
	ClientName              string   `json:"client_name"`
	RedirectURIs            []string `json:"redirect_uris"`
	GrantTypes              []string `json:"grant_types"`
	ResponseTypes           []string `json:"response_types"`
	TokenEndpointAuthMethod string   `json:"token_endpoint_auth_method"`
}

// ClientMetadataURL is the URL of agents-mcp's Client ID Metadata
// Document, which is also the client_id it stands for.
func (m *Manager) ClientMetadataURL() string { return m.opts.BaseURL + ClientMetadataPath }

// ClientMetadata returns agents-mcp's Client ID Metadata Document.
func (m *Manager) ClientMetadata() ClientMetadata {
	return ClientMetadata{ClientID: m.ClientMetadataURL(), ClientName: clientName,
		RedirectURIs: []string{m.RedirectURL()}, GrantTypes: []string{"authorization_code", "refresh_token"},
		ResponseTypes: []string{"code"}, TokenEndpointAuthMethod: "none"}
}

// ClientMetadataHandler serves [Manager.ClientMetadata] at
// ClientMetadataPath. It needs no credential: authorization servers fetch
// it, and it holds nothing secret.
func (m *Manager) ClientMetadataHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		// Authorization servers cache it (the draft lets them follow
		// HTTP caching); an hour bounds how long a changed public URL
		// takes to reach them.
		w.Header().Set("Cache-Control", "public, max-age=3600")
		_ = json.NewEncoder(w).Encode(m.ClientMetadata())
	})
}

// clientMetadataUsable says why agents-mcp cannot stand for a Client ID
// Metadata Document, or "" when it can: the client_id must be an https URL
// with a path, which authorization servers fetch. With an http public URL
// (the loopback default) it cannot, whatever the server.
func (m *Manager) clientMetadataUsable() string {
	u, err := url.Parse(m.ClientMetadataURL())
	if err != nil || u.Scheme != "https" || u.Host == "" {
		return "a Client ID Metadata Document needs an https public_url (the client_id is its URL, and the MCP " +
			"authorization spec requires https), and public_url is " + m.opts.BaseURL
	}
	return ""
}

// ChooseRegistration returns how [Manager.Register] registers with d's
// authorization server: method when given ("client_id_metadata_document"
// or "dynamic"), else the first that works of a Client ID Metadata
// Document (the server accepts them and agents-mcp has an https public
// URL) and dynamic registration (the server offers it). A pre-registered
// client, the first choice of the MCP spec, is one an administrator adds
// with POST /credentials; the caller checks that there is none. EINVALID
// for an unknown method or one that cannot work, ENOTIMPLEMENTED when none
// can: the error says to register by hand.
func (m *Manager) ChooseRegistration(integration string, d *Discovery, method string) (string, error) {
	cimd := m.clientMetadataUsable()
	if cimd == "" && !d.ClientIDMetadata {
		cimd = "the authorization server " + d.Issuer + " does not accept Client ID Metadata Documents"
	}
	dcr := ""
	if d.RegistrationURL == "" {
		dcr = "the authorization server " + d.Issuer + " offers no dynamic client registration"
	}
	switch method {
	case agentsmcp.RegistrationClientIDMetadata:
		if cimd != "" {
			return "", agentsmcp.Errorf(agentsmcp.EINVALID, "%s: %s", integration, cimd)
		}
		return method, nil
	case agentsmcp.RegistrationDynamic:
		if dcr != "" {
			return "", agentsmcp.Errorf(agentsmcp.EINVALID, "%s: %s", integration, dcr)
		}
		return method, nil
	case "":
	default:
		return "", agentsmcp.Errorf(agentsmcp.EINVALID, "%s: registration method %q is not %q or %q", integration, method,
			agentsmcp.RegistrationClientIDMetadata, agentsmcp.RegistrationDynamic)
	}
	switch {
	case cimd == "":
		return agentsmcp.RegistrationClientIDMetadata, nil
	case dcr == "":
		return agentsmcp.RegistrationDynamic, nil
	}
	return "", agentsmcp.Errorf(agentsmcp.ENOTIMPLEMENTED, "%s: %s, and %s; register agents-mcp there (redirect URI %s) "+
		"and add the client with POST /admin/v1/credentials", integration, dcr, cimd, m.RedirectURL())
}

// Register makes agents-mcp a client of d's authorization server, by
// method (see [Manager.ChooseRegistration]; empty chooses), and returns
// the credential that holds the client: shared, of kind
// oauth_authorization_code, for integration. It is not stored. With a
// Client ID Metadata Document nothing is sent: the client_id is the
// document's URL, which the server fetches when a person authorizes.
func (m *Manager) Register(ctx context.Context, integration string, d *Discovery, method string) (*agentsmcp.Credential, error) {
	method, err := m.ChooseRegistration(integration, d, method)
	if err != nil {
		return nil, err
	}
	c := &agentsmcp.Credential{Integration: integration, Kind: agentsmcp.CredentialAuthorizationCode,
		Settings: agentsmcp.CredentialSettings{AuthURL: d.AuthURL, TokenURL: d.TokenURL,
			Scopes: d.Scopes, Resource: d.Resource, Issuer: d.Issuer, Registration: method},
		Secret: &agentsmcp.CredentialSecret{}}
	if method == agentsmcp.RegistrationClientIDMetadata {
		c.Settings.ClientID = m.ClientMetadataURL()
		return c, nil
	}
	doc := m.ClientMetadata()
	reg, err := oauthex.RegisterClient(ctx, d.RegistrationURL, &oauthex.ClientRegistrationMetadata{
		RedirectURIs: doc.RedirectURIs, ClientName: doc.ClientName, GrantTypes: doc.GrantTypes,
		// No scope: servers check it against their own scopes (OpenID
		// ones, say), not the resource's, and refuse the registration;
		// the scopes are asked for at each authorization instead.
		ResponseTypes: doc.ResponseTypes,
	}, m.opts.HTTP)
	if err != nil {
		return nil, registrationError(integration, d.Issuer, err)
	}
	c.Settings.ClientID = reg.ClientID
	c.Secret.ClientSecret = reg.ClientSecret
	return c, nil
}

// registrationError reports a failed registration by the server's OAuth
// error and its description (printable, cut short): go-sdk's other errors
// quote the answer's body, which may hold the client secret it issued. A
// refusal holds none: nothing secret was sent.
func registrationError(integration, issuer string, err error) error {
	var re *oauthex.ClientRegistrationError
	if errors.As(err, &re) {
		msg := oauthErrorCode(re.ErrorCode)
		if desc := printable(re.ErrorDescription, 200); desc != "" {
			msg += ": " + desc
		}
		return agentsmcp.Errorf(agentsmcp.EUNAVAILABLE, "%s: the authorization server %s refused the dynamic client registration (%s)",
			integration, issuer, msg)
	}
	return agentsmcp.Errorf(agentsmcp.EUNAVAILABLE, "%s: dynamic client registration at %s failed: "+
		"the server cannot be reached or its answer is not a registration", integration, issuer)
}

// Discover is [Discover] with the manager's HTTP client, under the egress
// policy.
func (m *Manager) Discover(ctx context.Context, resourceURL string) (*Discovery, error) {
	return Discover(ctx, m.opts.HTTP, resourceURL)
}

// RegisterIntegration discovers how the server at resourceURL is
// authorized ([Discover]), registers agents-mcp there ([Manager.Register])
// and stores the client as integration's shared credential, so that
// [Manager.StartAuthorization] works. A shared credential already there
// wins (ECONFLICT): an administrator's pre-registered client comes first,
// as the MCP spec orders, and a second registration would orphan the first.
// Concurrent registrations are serialized in this process; across replicas
// the store's one shared credential per integration makes the later create
// fail with ECONFLICT, and the client it registered at the server is then
// left unused there.
func (m *Manager) RegisterIntegration(ctx context.Context, integration, resourceURL, method string) (*agentsmcp.Credential, error) {
	m.registering.Lock()
	defer m.registering.Unlock()
	if old, err := m.opts.Store.FindCredential(ctx, integration, ""); err == nil {
		return nil, agentsmcp.Errorf(agentsmcp.ECONFLICT, "%s already has a shared %s credential (%s), which is used as it is; "+
			"delete it first to register again", integration, old.Kind, old.ID)
	} else if agentsmcp.ErrorCode(err) != agentsmcp.ENOTFOUND {
		return nil, err
	}
	d, err := m.Discover(ctx, resourceURL)
	if err != nil {
		return nil, err
	}
	c, err := m.Register(ctx, integration, d, method)
	if err != nil {
		return nil, err
	}
	c.CreatedBy = agentsmcp.PrincipalIDFrom(ctx)
	if err := m.opts.Store.CreateCredential(ctx, c); err != nil {
		return nil, err
	}
	m.opts.Logger.InfoContext(ctx, "registered as an OAuth client", "integration", integration, "issuer", d.Issuer,
		"registration", c.Settings.Registration)
	return c, nil
}

// printable is s without control or non-ASCII characters, cut to n bytes.
func printable(s string, n int) string {
	s = strings.Map(func(r rune) rune {
		if r < 0x20 || r > 0x7e {
			return -1
		}
		return r
	}, s)
	if len(s) > n {
		s = s[:n] + "…"
	}
	return s
}
