package admin

import (
	"context"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/credentials"
	"github.com/agents-mcp/agents-mcp/internal/redact"
)

// ManagerRegistrar is the [Registrar] of a credentials.Manager: cmd and
// the tests serve the routes with it. Endpoint, when set, gives the URL
// of an upstream by name, used when a request gives no url.
type ManagerRegistrar struct {
	Manager  *credentials.Manager
	Store    agentsmcp.CredentialService
	Endpoint func(integration string) (string, bool)
}

var _ Registrar = ManagerRegistrar{}

func (o ManagerRegistrar) resourceURL(integration, u string) (string, error) {
	if u != "" {
		return u, nil
	}
	if o.Endpoint != nil {
		if ep, ok := o.Endpoint(integration); ok {
			return ep, nil
		}
	}
	return "", agentsmcp.Errorf(agentsmcp.EINVALID, "%q is not an upstream MCP server with a URL: give url, the protected resource to discover", integration)
}

// DiscoverOAuth implements [Registrar].
func (o ManagerRegistrar) DiscoverOAuth(ctx context.Context, integration, u string) (*OAuthDiscovery, error) {
	u, err := o.resourceURL(integration, u)
	if err != nil {
		return nil, err
	}
	d, err := o.Manager.Discover(ctx, u)
	if err != nil {
		return nil, err
	}
	out := &OAuthDiscovery{Integration: integration, URL: redact.URL(u), Resource: d.Resource, Issuer: d.Issuer,
		AuthorizationEndpoint: d.AuthURL, TokenEndpoint: d.TokenURL, RegistrationEndpoint: d.RegistrationURL,
		ScopesSupported: d.Scopes, ClientIDMetadataDocumentSupported: d.ClientIDMetadata}
	if method, err := o.Manager.ChooseRegistration(integration, d, ""); err != nil {
		out.RegistrationNote = err.Error()
	} else {
		out.Registration = method
	}
	if c, err := o.Store.FindCredential(ctx, integration, ""); err == nil {
		out.Registered = c.ID
		out.RegistrationNote = "the shared credential " + c.ID + " is used as it is; delete it to register again"
	} else if agentsmcp.ErrorCode(err) != agentsmcp.ENOTFOUND {
		return nil, err
	}
	return out, nil
}

// RegisterOAuth implements [Registrar].
func (o ManagerRegistrar) RegisterOAuth(ctx context.Context, integration, u, method string) (*agentsmcp.Credential, error) {
	u, err := o.resourceURL(integration, u)
	if err != nil {
		return nil, err
	}
	return o.Manager.RegisterIntegration(ctx, integration, u, method)
}
