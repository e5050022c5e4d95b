package api

import (
	"context"
	"net/http"
	"slices"

	sdkauth "github.com/modelcontextprotocol/go-sdk/auth"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/api/auth"
)

// AllScopes are the scopes of a key from AGENTS_MCP_API_KEYS.
//
// Deprecated: use [agentsmcp.Scopes].
var AllScopes = slices.Clone(agentsmcp.Scopes)

// allScopeAuthenticator builds the authenticator of keys that each have
// every scope; a key list the config package would refuse (duplicates,
// blanks) fails closed: nil, and the callers refuse every request.
func allScopeAuthenticator(keys []string) *auth.Authenticator {
	ks := make([]auth.Key, len(keys))
	for i, k := range keys {
		ks[i] = auth.Key{Secret: k, Scopes: slices.Clone(agentsmcp.Scopes)}
	}
	a, err := auth.New(auth.Config{Keys: ks})
	if err != nil {
		return nil
	}
	return a
}

// APIKeyVerifier returns a bearer-token verifier for the given inbound API
// keys, each with every scope, for use with go-sdk's auth.RequireBearerToken.
// The verified principal is "key:<first 12 hex digits of the hash>".
//
// Deprecated: use [auth.Authenticator.TokenVerifier], which also knows
// scoped keys and JWTs.
func APIKeyVerifier(keys []string) sdkauth.TokenVerifier {
	a := allScopeAuthenticator(keys)
	if a == nil || !a.Configured() {
		return func(_ context.Context, _ string, _ *http.Request) (*sdkauth.TokenInfo, error) {
			return nil, sdkauth.ErrInvalidToken
		}
	}
	return a.TokenVerifier()
}

// RequireAPIKey wraps next so that it demands "Authorization: Bearer <key>"
// with one of keys and the given scope.
//
// Deprecated: use [auth.Authenticator.Middleware].
func RequireAPIKey(keys []string, scope string, next http.Handler) http.Handler {
	a := allScopeAuthenticator(keys)
	if a == nil || !a.Configured() {
		return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			http.Error(w, "no valid API key is configured", http.StatusUnauthorized)
		})
	}
	return a.Middleware(scope)(next)
}
