// Package seal makes tokens that a server hands to a client and later
// trusts when the client brings them back: a JSON payload with an expiry,
// base64url-encoded and authenticated with HMAC-SHA-256 under a key that
// every replica shares. The payload is readable by the client, so it must
// not hold secrets; it is only protected against change and forgery.
//
// Each use names a label (for example "agents requestState v1"), mixed
// into the MAC, so that a token sealed for one use is never accepted by
// another even under the same key.
package seal

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// KeySize is the size of a [Sealer] key: an HMAC-SHA-256 key.
const KeySize = 32

// Errors returned by [Sealer.Open]. An expired token wraps [ErrExpired] in
// an [*ExpiredError] that says when.
var (
	// ErrForged is a token that was not sealed under this key and label,
	// or was changed after.
	ErrForged = errors.New("it was not issued by this server, or was changed")
	// ErrMalformed is a token whose MAC holds but whose payload does not
	// decode into the value given to Open.
	ErrMalformed = errors.New("it is malformed")
	// ErrExpired is a token past its expiry.
	ErrExpired = errors.New("it has expired")
)

// ExpiredError is the error of an authentic token past its expiry.
type ExpiredError struct{ At time.Time }

func (e *ExpiredError) Error() string {
	return fmt.Sprintf("it expired at %s", e.At.UTC().Format(time.RFC3339))
}

// Unwrap makes errors.Is(err, ErrExpired) hold.
func (e *ExpiredError) Unwrap() error { return ErrExpired }

// Sealer seals and opens tokens under Key. The zero Now means time.Now.
// A Sealer is safe for concurrent use once set up.
type Sealer struct {
	Key []byte
	Now func() time.Time
}

// envelope is what a token holds: the caller's value and the expiry, in
// Unix seconds.
type envelope struct {
	Expires int64           `json:"exp"`
	Value   json.RawMessage `json:"v"`
}

func (s *Sealer) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

// Seal returns v, encoded as JSON, as a token for label that Open accepts
// until ttl has passed.
func (s *Sealer) Seal(label string, v any, ttl time.Duration) (string, error) {
	if len(s.Key) == 0 {
		return "", errors.New("seal: no key")
	}
	value, err := json.Marshal(v)
	if err != nil {
		return "", fmt.Errorf("seal: encode: %w", err)
	}
	payload, err := json.Marshal(envelope{Expires: s.now().Add(ttl).Unix(), Value: value})
	if err != nil {
		return "", fmt.Errorf("seal: encode: %w", err)
	}
	body := base64.RawURLEncoding.EncodeToString(payload)
	return body + "." + base64.RawURLEncoding.EncodeToString(s.mac(label, body)), nil
}

// Open verifies token as sealed for label under this key, decodes its
// value into v and returns when it expires. It fails with [ErrForged],
// [ErrMalformed] or an [*ExpiredError]. The expiry is checked last, so on
// an [*ExpiredError] the token is known to be authentic and v is filled:
// the caller can say what expired.
func (s *Sealer) Open(label, token string, v any) (time.Time, error) {
	body, mac, ok := strings.Cut(token, ".")
	got, err := base64.RawURLEncoding.DecodeString(mac)
	if !ok || err != nil || len(s.Key) == 0 || !hmac.Equal(got, s.mac(label, body)) {
		return time.Time{}, ErrForged
	}
	payload, err := base64.RawURLEncoding.DecodeString(body)
	var env envelope
	if err != nil || json.Unmarshal(payload, &env) != nil || len(env.Value) == 0 {
		return time.Time{}, ErrMalformed
	}
	expires := time.Unix(env.Expires, 0)
	if err := json.Unmarshal(env.Value, v); err != nil {
		return expires, ErrMalformed
	}
	if !s.now().Before(expires) {
		return expires, &ExpiredError{At: expires}
	}
	return expires, nil
}

// mac is the HMAC of body under the key, with label (and a NUL, so that
// no label is a prefix of another's input) first.
func (s *Sealer) mac(label, body string) []byte {
	m := hmac.New(sha256.New, s.Key)
	m.Write([]byte(label))
	m.Write([]byte{0})
	m.Write([]byte(body))
	return m.Sum(nil)
}

// Digest returns a short, stable, non-reversible digest of s (16 bytes of
// SHA-256, base64url): what a token records of a principal or a call, so
// that the token can be checked against it without showing it.
func Digest(parts ...string) string {
	h := sha256.New()
	for _, p := range parts {
		h.Write([]byte(p))
		h.Write([]byte{0})
	}
	return base64.RawURLEncoding.EncodeToString(h.Sum(nil)[:16])
}
