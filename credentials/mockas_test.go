package credentials_test

import (
	"context"
	"crypto/rand"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/agents-mcp/agents-mcp/internal/oauthtest"
	"github.com/agents-mcp/agents-mcp/memory/secrets"
	"github.com/agents-mcp/agents-mcp/memory/sqlite"
)

// protectedAPI is a small HTTP API that accepts only tokens signed by the
// authorization server (checked against its JWKS), and records the tokens
// it accepted.
type protectedAPI struct {
	*httptest.Server
	mu       sync.Mutex
	accepted []string
}

func newProtectedAPI(t *testing.T, as *oauthtest.AS) *protectedAPI {
	t.Helper()
	api := &protectedAPI{}
	api.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if !ok || !as.Valid(tok) {
			w.Header().Set("WWW-Authenticate", `Bearer error="invalid_token"`)
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		api.mu.Lock()
		api.accepted = append(api.accepted, tok)
		api.mu.Unlock()
		_, _ = w.Write([]byte(`{"ok":true}`))
	}))
	t.Cleanup(api.Close)
	return api
}

// openStore opens a fresh SQLite store behind the sealing layer, as cmd
// wires it.
func openStore(t *testing.T) *secrets.Credentials {
	t.Helper()
	db, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "agents-mcp.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	key := make([]byte, secrets.KeySize)
	_, _ = rand.Read(key)
	sealer, err := secrets.New(key)
	if err != nil {
		t.Fatal(err)
	}
	return &secrets.Credentials{CredentialService: db, Sealer: sealer}
}
