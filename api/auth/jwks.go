package auth

import (
	"context"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rsa"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"sync"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/golang-jwt/jwt/v5"
)

// Defaults of the JWKS cache.
const (
	// DefaultJWKSRefreshInterval is how long a fetched key set is trusted
	// before it is fetched again. Rotation mostly shows up earlier, as an
	// unknown kid.
	DefaultJWKSRefreshInterval = time.Hour
	// DefaultJWKSMinRefreshInterval spaces fetches: tokens with made-up
	// kids must not turn into a flood of requests to the issuer.
	DefaultJWKSMinRefreshInterval = 30 * time.Second
	// DefaultJWKSFetchTimeout bounds one fetch.
	DefaultJWKSFetchTimeout = 10 * time.Second
	// maxJWKSBytes bounds a key set document; real ones are a few KiB.
	maxJWKSBytes = 1 << 20
)

// errUnknownKey is a token signed by a key the issuer does not (or no
// longer) publish.
var errUnknownKey = errors.New("unknown signing key")

// errJWKSUnavailable is a key set that could not be fetched at all: the
// server, not the token, is at fault.
var errJWKSUnavailable = errors.New("signing keys unavailable")

// jwks caches an issuer's JSON Web Key Set. It fetches lazily, on the
// request that needs it, so it owns no goroutine: a set older than
// refreshEvery is fetched again, and a kid not in the set triggers a fetch,
// both at most once per minInterval. While a fetch fails the last good set
// stays in use.
type jwks struct {
	url          string
	client       *http.Client
	timeout      time.Duration
	refreshEvery time.Duration
	minInterval  time.Duration
	logger       *slog.Logger
	now          func() time.Time

	fetching chan struct{} // holds a token while one fetch runs

	mu        sync.RWMutex
	keys      []jose.JSONWebKey
	fetched   time.Time // of the set in keys; zero before the first success
	attempted time.Time // of the last fetch, successful or not
}

func newJWKS(url string, client *http.Client, cfg *JWTConfig, logger *slog.Logger) *jwks {
	if client == nil {
		client = http.DefaultClient
	}
	j := &jwks{
		url:          url,
		client:       client,
		timeout:      orDefault(cfg.FetchTimeout, DefaultJWKSFetchTimeout),
		refreshEvery: orDefault(cfg.RefreshInterval, DefaultJWKSRefreshInterval),
		minInterval:  orDefault(cfg.MinRefreshInterval, DefaultJWKSMinRefreshInterval),
		logger:       logger,
		now:          time.Now,
		fetching:     make(chan struct{}, 1),
	}
	return j
}

func orDefault(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}

// keyFor returns the verification key for a token with the given kid and
// alg: one key when kid is set, else every key that could have signed it
// (as a jwt.VerificationKeySet), since some issuers omit kid with a
// single key.
func (j *jwks) keyFor(ctx context.Context, kid, alg string) (any, error) {
	j.mu.RLock()
	stale := j.fetched.IsZero() || j.now().Sub(j.fetched) >= j.refreshEvery
	j.mu.RUnlock()
	if stale {
		// With a set in hand, a request does not queue behind another's
		// fetch of a merely old set: it uses what there is.
		j.refresh(ctx, j.loaded())
	}
	if k, err := j.find(kid, alg); err == nil || !errors.Is(err, errUnknownKey) {
		return k, err
	}
	// An unknown kid is most often a key the issuer rotated in since the
	// last fetch.
	if j.refresh(ctx, false) {
		return j.find(kid, alg)
	}
	return nil, errUnknownKey
}

// loaded reports whether a key set was ever fetched.
func (j *jwks) loaded() bool {
	j.mu.RLock()
	defer j.mu.RUnlock()
	return !j.fetched.IsZero()
}

func (j *jwks) find(kid, alg string) (any, error) {
	j.mu.RLock()
	defer j.mu.RUnlock()
	if j.fetched.IsZero() {
		return nil, errJWKSUnavailable
	}
	var set jwt.VerificationKeySet
	for i := range j.keys {
		k := &j.keys[i]
		if (k.Use != "" && k.Use != "sig") || (k.Algorithm != "" && k.Algorithm != alg) || !keyFitsAlg(k.Key, alg) {
			continue
		}
		if kid != "" && k.KeyID == kid {
			return k.Key, nil
		}
		if kid == "" {
			set.Keys = append(set.Keys, k.Key)
		}
	}
	if len(set.Keys) == 0 {
		return nil, errUnknownKey
	}
	return set, nil
}

// keyFitsAlg keeps a token from being checked against a key of another
// family, which could only fail.
func keyFitsAlg(key any, alg string) bool {
	if alg == "" {
		return false
	}
	switch key.(type) {
	case *rsa.PublicKey:
		return alg[0] == 'R' || alg[0] == 'P'
	case *ecdsa.PublicKey:
		return alg[0] == 'E' && alg != "EdDSA"
	case ed25519.PublicKey:
		return alg == "EdDSA"
	}
	return false
}

// refresh fetches the set unless another fetch ran within minInterval. It
// reports whether the set was replaced, either by this call or by one that
// ran while this one waited. With ifIdle it does not wait: when a fetch is
// already running it returns false at once.
func (j *jwks) refresh(ctx context.Context, ifIdle bool) bool {
	j.mu.RLock()
	before := j.fetched
	j.mu.RUnlock()
	if ifIdle {
		select {
		case j.fetching <- struct{}{}:
		default:
			return false
		}
	} else {
		select {
		case j.fetching <- struct{}{}:
		case <-ctx.Done():
			return false
		}
	}
	defer func() { <-j.fetching }()
	j.mu.RLock()
	fetched, attempted := j.fetched, j.attempted
	j.mu.RUnlock()
	if !fetched.Equal(before) {
		return true // someone else fetched while we waited
	}
	if !attempted.IsZero() && j.now().Sub(attempted) < j.minInterval {
		return false
	}

	// Detached from the caller's cancellation: other requests wait for this
	// fetch, and one client hanging up must not spoil it for them. The
	// timeout still bounds it.
	fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), j.timeout)
	defer cancel()
	keys, err := j.fetch(fctx)
	now := j.now()
	j.mu.Lock()
	defer j.mu.Unlock()
	j.attempted = now
	if err != nil {
		j.logger.Warn("fetching JWKS failed; keeping the last good key set", "url", j.url, "error", err, "keys", len(j.keys))
		return false
	}
	j.keys, j.fetched = keys, now
	return true
}

func (j *jwks) fetch(ctx context.Context) ([]jose.JSONWebKey, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, j.url, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/jwk-set+json, application/json")
	resp, err := j.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxJWKSBytes))
		return nil, fmt.Errorf("status %s", resp.Status)
	}
	var doc struct {
		Keys []json.RawMessage `json:"keys"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, maxJWKSBytes)).Decode(&doc); err != nil {
		return nil, fmt.Errorf("decoding key set: %w", err)
	}
	// Keys are decoded one by one so that one key of a type we do not know
	// does not hide the others.
	keys := make([]jose.JSONWebKey, 0, len(doc.Keys))
	for i, raw := range doc.Keys {
		var k jose.JSONWebKey
		if err := k.UnmarshalJSON(raw); err != nil {
			j.logger.Debug("skipping JWKS key", "url", j.url, "index", i, "error", err)
			continue
		}
		if !k.IsPublic() {
			if _, symmetric := k.Key.([]byte); symmetric {
				continue // a shared secret has no business in a public key set
			}
			k = k.Public()
		}
		if k.Valid() {
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		return nil, errors.New("key set holds no usable signing key")
	}
	return keys, nil
}
