package auth

import (
	"net/http"
	"net/url"
	"slices"
	"strings"

	sdkauth "github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"

	agentsmcp "github.com/agents-mcp/agents-mcp"
)

// metadataPath is where RFC 9728 puts protected resource metadata.
const metadataPath = "/.well-known/oauth-protected-resource"

// Metadata returns the RFC 9728 protected resource metadata of a server
// that accepts JWTs, or nil when JWT is not enabled: the configured
// resource and authorization servers, every scope of [agentsmcp.Scopes],
// and the header as the only way to send a token.
func (a *Authenticator) Metadata() *oauthex.ProtectedResourceMetadata {
	if a.jwt == nil {
		return nil
	}
	return &oauthex.ProtectedResourceMetadata{
		Resource:               a.jwtCfg.Resource,
		AuthorizationServers:   a.jwtCfg.authorizationServers(),
		ScopesSupported:        slices.Clone(agentsmcp.Scopes),
		BearerMethodsSupported: []string{"header"},
		ResourceName:           "agents-mcp",
	}
}

// RegisterMetadata mounts the metadata on mux when JWT is enabled, and
// does nothing otherwise. It serves GET (with CORS, as the metadata is
// public) at /.well-known/oauth-protected-resource and, when the resource
// has a path such as /mcp, also at /.well-known/oauth-protected-resource/mcp,
// where RFC 9728 clients look first. The routes need no credentials.
func (a *Authenticator) RegisterMetadata(mux *http.ServeMux) {
	md := a.Metadata()
	if md == nil {
		return
	}
	h := sdkauth.ProtectedResourceMetadataHandler(md)
	mux.Handle(metadataPath, h)
	if u, err := url.Parse(md.Resource); err == nil {
		// Patterns with braces or spaces mean something else to ServeMux
		// (or make it panic); such a resource gets the root route only.
		if p := strings.TrimSuffix(u.EscapedPath(), "/"); p != "" && !strings.ContainsAny(p, "{} \t") {
			mux.Handle(metadataPath+p, h)
		}
	}
}
