package auth

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/golang-jwt/jwt/v5"
)

// testIssuer is a real OAuth issuer as far as this package can tell: real
// key pairs, and their public halves served as a JWKS over HTTP.
type testIssuer struct {
	t       *testing.T
	srv     *httptest.Server
	fetches atomic.Int32

	mu        sync.Mutex
	published []jose.JSONWebKey
	down      bool
}

// signer is one private key of the issuer.
type signer struct {
	kid    string
	method jwt.SigningMethod
	key    crypto.Signer
}

var (
	rsaKeyOnce sync.Once
	rsaKey     *rsa.PrivateKey
)

// testRSAKey is generated once: 2048-bit generation is slow enough to
// matter on a shared 2-CPU machine.
func testRSAKey(t *testing.T) *rsa.PrivateKey {
	rsaKeyOnce.Do(func() {
		k, err := rsa.GenerateKey(rand.Reader, 2048)
		if err != nil {
			t.Fatal(err)
		}
		rsaKey = k
	})
	return rsaKey
}

func newRSASigner(t *testing.T, kid string) *signer {
	return &signer{kid: kid, method: jwt.SigningMethodRS256, key: testRSAKey(t)}
}

func newECSigner(t *testing.T, kid string) *signer {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return &signer{kid: kid, method: jwt.SigningMethodES256, key: k}
}

func newTestIssuer(t *testing.T, signers ...*signer) *testIssuer {
	is := &testIssuer{t: t}
	is.publish(signers...)
	is.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		is.fetches.Add(1)
		is.mu.Lock()
		down, keys := is.down, is.published
		is.mu.Unlock()
		if down {
			http.Error(w, "down", http.StatusServiceUnavailable)
			return
		}
		w.Header().Set("Content-Type", "application/jwk-set+json")
		_ = json.NewEncoder(w).Encode(jose.JSONWebKeySet{Keys: keys})
	}))
	t.Cleanup(is.srv.Close)
	return is
}

// publish replaces the published keys by the public halves of signers.
func (is *testIssuer) publish(signers ...*signer) {
	keys := make([]jose.JSONWebKey, len(signers))
	for i, s := range signers {
		keys[i] = jose.JSONWebKey{Key: s.key.Public(), KeyID: s.kid, Algorithm: s.method.Alg(), Use: "sig"}
	}
	is.mu.Lock()
	is.published = keys
	is.mu.Unlock()
}

func (is *testIssuer) setDown(down bool) {
	is.mu.Lock()
	is.down = down
	is.mu.Unlock()
}

func (is *testIssuer) jwksURL() string { return is.srv.URL + "/.well-known/jwks.json" }

const (
	testIssuerName = "https://issuer.example/"
	testAudience   = "agents-mcp"
	testResource   = "https://mcp.example.com/mcp"
)

// jwtConfig is a complete JWT configuration against is.
func (is *testIssuer) jwtConfig() JWTConfig {
	return JWTConfig{
		JWKSURL:  is.jwksURL(),
		Issuer:   testIssuerName,
		Audience: testAudience,
		Resource: testResource,
	}
}

// claims returns valid claims for sub, to be changed by a test.
func claims(sub string, scopes string) jwt.MapClaims {
	now := time.Now()
	return jwt.MapClaims{
		"iss":   testIssuerName,
		"aud":   testAudience,
		"sub":   sub,
		"iat":   now.Unix(),
		"exp":   now.Add(time.Hour).Unix(),
		"scope": scopes,
	}
}

// sign makes a compact JWS of c with s (kid set unless s.kid is empty).
func (s *signer) sign(t *testing.T, c jwt.MapClaims) string {
	t.Helper()
	tok := jwt.NewWithClaims(s.method, c)
	if s.kid != "" {
		tok.Header["kid"] = s.kid
	}
	out, err := tok.SignedString(s.key)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// jwtPublicBytes is the PEM of s's public key, what an attacker would use
// as an HMAC secret.
func jwtPublicBytes(s *signer) ([]byte, error) {
	der, err := x509.MarshalPKIXPublicKey(s.key.Public())
	if err != nil {
		return nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}), nil
}

// newHangingServer answers nothing until release is closed or the client
// gives up.
func newHangingServer(t *testing.T, release <-chan struct{}) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}
