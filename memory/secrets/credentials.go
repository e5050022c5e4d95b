package secrets

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	agentsmcp "github.com/agents-mcp/agents-mcp"
)

// SealString returns plain sealed whole, as the string a store keeps.
// Unlike [Sealer.Seal] it does not look for what may be secret: all of it
// is. A Sealer without a key cannot keep it: EUNAVAILABLE.
func (s *Sealer) SealString(plain string) (string, error) {
	if !s.Encrypts() {
		return "", agentsmcp.Errorf(agentsmcp.EUNAVAILABLE, "no secrets key is configured (tasks.secrets_key), so secrets cannot be stored")
	}
	sealed, err := s.seal(quote(plain))
	if err != nil {
		return "", err
	}
	var out string
	_ = json.Unmarshal(sealed, &out) // seal returns a JSON string
	return out, nil
}

// OpenString returns what SealString sealed. A value that cannot be opened
// (no key, another key, altered bytes) is EUNAVAILABLE: the secret is
// lost and must be given again.
func (s *Sealer) OpenString(sealed string) (string, error) {
	plain, ok := s.open(strings.TrimPrefix(sealed, sealedPrefix))
	var out string
	if !ok || !strings.HasPrefix(sealed, sealedPrefix) || json.Unmarshal(plain, &out) != nil {
		return "", agentsmcp.Errorf(agentsmcp.EUNAVAILABLE, "a stored secret cannot be opened with the configured secrets key; give it again")
	}
	return out, nil
}

// Credentials is a CredentialService that keeps the secret part of
// credentials, and the PKCE verifiers of the flows under way, sealed in
// the CredentialService it wraps. On the way in Secret (Verifier) is
// sealed into Sealed and cleared; on the way out Sealed is opened into
// Secret (Verifier). A credential whose secret cannot be opened comes
// back with a nil Secret: callers treat it as missing.
type Credentials struct {
	agentsmcp.CredentialService
	Sealer *Sealer
}

var _ agentsmcp.CredentialService = (*Credentials)(nil)

func (w *Credentials) sealSecret(sec *agentsmcp.CredentialSecret) (string, error) {
	if sec == nil {
		sec = &agentsmcp.CredentialSecret{}
	}
	b, err := json.Marshal(sec)
	if err != nil {
		return "", fmt.Errorf("credential secret: %w", err)
	}
	return w.Sealer.SealString(string(b))
}

func (w *Credentials) opened(c *agentsmcp.Credential) *agentsmcp.Credential {
	if c == nil {
		return nil
	}
	plain, err := w.Sealer.OpenString(c.Sealed)
	c.Sealed = ""
	if err != nil {
		return c
	}
	var sec agentsmcp.CredentialSecret
	if json.Unmarshal([]byte(plain), &sec) == nil {
		c.Secret = &sec
	}
	return c
}

// CreateCredential implements [agentsmcp.CredentialService]; c keeps its
// clear Secret.
func (w *Credentials) CreateCredential(ctx context.Context, c *agentsmcp.Credential) error {
	if c == nil {
		return w.CredentialService.CreateCredential(ctx, c)
	}
	sealed, err := w.sealSecret(c.Secret)
	if err != nil {
		return err
	}
	s := *c
	s.Secret, s.Sealed = nil, sealed
	if err := w.CredentialService.CreateCredential(ctx, &s); err != nil {
		return err
	}
	c.ID, c.CreatedAt, c.UpdatedAt, c.ExpiresAt = s.ID, s.CreatedAt, s.UpdatedAt, s.ExpiresAt
	return nil
}

// UpdateSecret seals sec and stores it as the secret of credential id,
// with sec's Expiry as its ExpiresAt.
func (w *Credentials) UpdateSecret(ctx context.Context, id string, sec *agentsmcp.CredentialSecret) error {
	sealed, err := w.sealSecret(sec)
	if err != nil {
		return err
	}
	var expiry time.Time
	if sec != nil {
		expiry = sec.Expiry
	}
	return w.CredentialService.UpdateCredentialSecret(ctx, id, sealed, expiry)
}

// FindCredential implements [agentsmcp.CredentialService].
func (w *Credentials) FindCredential(ctx context.Context, integration, principal string) (*agentsmcp.Credential, error) {
	c, err := w.CredentialService.FindCredential(ctx, integration, principal)
	return w.opened(c), err
}

// FindCredentialByID implements [agentsmcp.CredentialService].
func (w *Credentials) FindCredentialByID(ctx context.Context, id string) (*agentsmcp.Credential, error) {
	c, err := w.CredentialService.FindCredentialByID(ctx, id)
	return w.opened(c), err
}

// FindCredentials implements [agentsmcp.CredentialService]: listings never
// need the secrets, so they are dropped, not opened.
func (w *Credentials) FindCredentials(ctx context.Context, f agentsmcp.CredentialFilter) ([]*agentsmcp.Credential, error) {
	items, err := w.CredentialService.FindCredentials(ctx, f)
	for _, c := range items {
		c.Sealed = ""
	}
	return items, err
}

// CreateOAuthState implements [agentsmcp.CredentialService]; s keeps its
// clear Verifier.
func (w *Credentials) CreateOAuthState(ctx context.Context, s *agentsmcp.OAuthState) error {
	if s == nil {
		return w.CredentialService.CreateOAuthState(ctx, s)
	}
	sealed, err := w.Sealer.SealString(s.Verifier)
	if err != nil {
		return err
	}
	c := *s
	c.Verifier, c.Sealed = "", sealed
	return w.CredentialService.CreateOAuthState(ctx, &c)
}

// FindOAuthState implements [agentsmcp.CredentialService].
func (w *Credentials) FindOAuthState(ctx context.Context, key string, now time.Time) (*agentsmcp.OAuthState, error) {
	s, err := w.CredentialService.FindOAuthState(ctx, key, now)
	if err != nil {
		return nil, err
	}
	return w.openState(s)
}

// TakeOAuthState implements [agentsmcp.CredentialService].
func (w *Credentials) TakeOAuthState(ctx context.Context, key string, now time.Time) (*agentsmcp.OAuthState, error) {
	s, err := w.CredentialService.TakeOAuthState(ctx, key, now)
	if err != nil {
		return nil, err
	}
	return w.openState(s)
}

// openState opens the verifier of s.
func (w *Credentials) openState(s *agentsmcp.OAuthState) (*agentsmcp.OAuthState, error) {
	v, err := w.Sealer.OpenString(s.Sealed)
	if err != nil {
		return nil, err
	}
	s.Verifier, s.Sealed = v, ""
	return s, nil
}
