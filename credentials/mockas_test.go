package credentials_test

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	josejwt "github.com/go-jose/go-jose/v4/jwt"

	"github.com/agents-mcp/agents-mcp/memory/secrets"
	"github.com/agents-mcp/agents-mcp/memory/sqlite"
)

// mockASBin is oauth2-mock-server (npm, pinned in scripts/e2e/package.json),
// installed by `npm ci` in scripts/e2e.
const mockASBin = "../scripts/e2e/node_modules/oauth2-mock-server/dist/oauth2-mock-server.mjs"

// startMockAS runs a real OAuth 2 authorization server, oauth2-mock-server,
// on loopback, and returns its issuer URL. The process is the test's: it
// is killed and reaped at cleanup.
func startMockAS(t *testing.T) string {
	t.Helper()
	if _, err := os.Stat(mockASBin); err != nil {
		t.Skipf("oauth2-mock-server is not installed (run npm ci in scripts/e2e): %v", err)
	}
	cmd := exec.Command("node", mockASBin, "-a", "127.0.0.1", "-p", "0")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatalf("start oauth2-mock-server: %v", err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	issuer := make(chan string, 1)
	go func() { // ends when the process's stdout closes, at cleanup
		re := regexp.MustCompile(`issuer is (http://localhost:\d+)`)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if m := re.FindStringSubmatch(sc.Text()); m != nil {
				issuer <- m[1]
			}
		}
	}()
	select {
	case u := <-issuer:
		return u
	case <-time.After(20 * time.Second):
		t.Fatal("oauth2-mock-server did not start")
		return ""
	}
}

// protectedAPI is a small HTTP API that accepts only tokens signed by the
// issuer (checked against its JWKS), and records the tokens it accepted.
type protectedAPI struct {
	*httptest.Server
	mu       sync.Mutex
	accepted []string
}

func newProtectedAPI(t *testing.T, issuer string) *protectedAPI {
	t.Helper()
	resp, err := http.Get(issuer + "/jwks")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var keys jose.JSONWebKeySet
	if err := json.NewDecoder(resp.Body).Decode(&keys); err != nil {
		t.Fatal(err)
	}
	api := &protectedAPI{}
	api.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if !ok || !validToken(tok, issuer, &keys) {
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

func validToken(tok, issuer string, keys *jose.JSONWebKeySet) bool {
	parsed, err := josejwt.ParseSigned(tok, []jose.SignatureAlgorithm{jose.RS256})
	if err != nil || len(parsed.Headers) == 0 {
		return false
	}
	found := keys.Key(parsed.Headers[0].KeyID)
	if len(found) == 0 {
		return false
	}
	var claims josejwt.Claims
	if err := parsed.Claims(found[0].Key, &claims); err != nil {
		return false
	}
	return claims.Validate(josejwt.Expected{Issuer: issuer, Time: time.Now()}) == nil
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
