package api

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"fmt"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/auth"
)

// AllScopes are the scopes of a key from AGENTS_MCP_API_KEYS.
var AllScopes = []string{"mcp", "admin:read", "admin:write"}

// APIKeyVerifier returns a bearer-token verifier for the given inbound API
// keys, for use with go-sdk's auth.RequireBearerToken. Keys are kept only as
// SHA-256 hashes and compared in constant time. The verified principal is
// "key:<first 12 hex digits of the hash>", never the key itself; the SDK uses
// it to stop one key from taking over another key's MCP session.
func APIKeyVerifier(keys []string) auth.TokenVerifier {
	hashes := make([][sha256.Size]byte, 0, len(keys))
	for _, k := range keys {
		hashes = append(hashes, sha256.Sum256([]byte(k)))
	}
	return func(_ context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
		got := sha256.Sum256([]byte(token))
		match := 0
		for i := range hashes {
			// No early exit: the time taken must not tell which key matched.
			match |= subtle.ConstantTimeCompare(got[:], hashes[i][:])
		}
		if match == 0 {
			return nil, fmt.Errorf("%w: unknown API key", auth.ErrInvalidToken)
		}
		return &auth.TokenInfo{Scopes: AllScopes, UserID: "key:" + hex.EncodeToString(got[:6])}, nil
	}
}

// RequireAPIKey wraps next so that it demands "Authorization: Bearer <key>"
// with one of keys and the given scope; failures get 401 (403 for a missing
// scope) with a WWW-Authenticate header.
func RequireAPIKey(keys []string, scope string, next http.Handler) http.Handler {
	return auth.RequireBearerToken(APIKeyVerifier(keys), &auth.RequireBearerTokenOptions{
		Scopes:                 []string{scope},
		AllowMissingExpiration: true, // API keys do not expire; revoke by removing them
	})(next)
}
