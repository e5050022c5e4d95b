package credentials

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/internal/redact"
)

// Discovery is how an upstream MCP server protected by OAuth wants to be
// authorized.
type Discovery struct {
	Resource         string // the protected resource (RFC 9728 resource)
	Issuer           string // its authorization server
	AuthURL          string
	TokenURL         string
	RegistrationURL  string   // RFC 7591 registration endpoint, when offered
	Scopes           []string // scopes the resource supports, when listed
	ClientIDMetadata bool     // the server accepts Client ID Metadata Documents
}

// Discover asks the MCP server at resourceURL, without a token, how to
// authorize: its 401 names its protected resource metadata (RFC 9728,
// WWW-Authenticate resource_metadata; else the well-known URL at its
// origin), which names the authorization server, whose metadata (RFC 8414,
// or OpenID discovery) gives the endpoints. client should apply the egress
// policy. ENOTFOUND when the server does not ask for OAuth.
func Discover(ctx context.Context, client *http.Client, resourceURL string) (*Discovery, error) {
	if client == nil {
		client = http.DefaultClient
	}
	body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"agents-mcp","version":"discovery"}}}`
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, resourceURL, bytes.NewReader([]byte(body)))
	if err != nil {
		return nil, agentsmcp.Errorf(agentsmcp.EINVALID, "discover %q: %v", redact.URL(resourceURL), err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", agentsmcp.Errorf(agentsmcp.EUNAVAILABLE, "discover %q: cannot reach it", redact.URL(resourceURL)), err)
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16))
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		return nil, agentsmcp.Errorf(agentsmcp.ENOTFOUND, "discover %q: it answered HTTP %d without a token, not 401: it does not ask for OAuth",
			redact.URL(resourceURL), resp.StatusCode)
	}
	metadataURL := ""
	if cs, err := oauthex.ParseWWWAuthenticate(resp.Header.Values("WWW-Authenticate")); err == nil {
		for _, c := range cs {
			if c.Scheme == "bearer" && c.Params["resource_metadata"] != "" {
				metadataURL = c.Params["resource_metadata"]
			}
		}
	}
	if metadataURL == "" {
		u, err := url.Parse(resourceURL)
		if err != nil {
			return nil, agentsmcp.Errorf(agentsmcp.EINVALID, "discover: %v", err)
		}
		metadataURL = u.Scheme + "://" + u.Host + "/.well-known/oauth-protected-resource"
	}
	prm, err := oauthex.GetProtectedResourceMetadata(ctx, metadataURL, resourceURL, client)
	if err != nil {
		return nil, agentsmcp.Errorf(agentsmcp.EUNAVAILABLE, "discover %q: protected resource metadata: %v", redact.URL(resourceURL), err)
	}
	if len(prm.AuthorizationServers) == 0 {
		return nil, agentsmcp.Errorf(agentsmcp.EUNAVAILABLE, "discover %q: its metadata names no authorization server", redact.URL(resourceURL))
	}
	issuer := prm.AuthorizationServers[0]
	asm, err := auth.GetAuthServerMetadata(ctx, issuer, client)
	if err != nil || asm == nil {
		return nil, agentsmcp.Errorf(agentsmcp.EUNAVAILABLE, "discover %q: authorization server metadata of %s: %v", redact.URL(resourceURL), issuer, err)
	}
	return &Discovery{Resource: prm.Resource, Issuer: asm.Issuer, AuthURL: asm.AuthorizationEndpoint, TokenURL: asm.TokenEndpoint,
		RegistrationURL: asm.RegistrationEndpoint, Scopes: prm.ScopesSupported,
		ClientIDMetadata: asm.ClientIDMetadataDocumentSupported}, nil
}
