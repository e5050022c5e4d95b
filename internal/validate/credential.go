package validate

import (
	"encoding/json"
	"net/url"
	"slices"
	"unicode/utf8"

	agentsmcp "github.com/agents-mcp/agents-mcp"
)

// StoredCredential is what a store checks before it creates c: c is
// given, valid, and its secret sealed (Sealed set, Secret nil), since
// stores keep secrets only sealed; EINVALID otherwise.
func StoredCredential(c *agentsmcp.Credential) error {
	if c == nil {
		return agentsmcp.Errorf(agentsmcp.EINVALID, "credential is required")
	}
	if err := Credential(c); err != nil {
		return err
	}
	if c.Secret != nil || c.Sealed == "" {
		return agentsmcp.Errorf(agentsmcp.EINVALID, "credential %q: its secret must be sealed before it is stored", c.Integration)
	}
	return nil
}

// Credential checks c's invariants, except the one about Secret and Sealed,
// which is the store's; EINVALID names the first one broken.
func Credential(c *agentsmcp.Credential) error {
	switch {
	case c.Integration == "":
		return agentsmcp.Errorf(agentsmcp.EINVALID, "credential: integration is required")
	case len(c.Integration) > agentsmcp.MaxUpstreamNameBytes || !utf8.ValidString(c.Integration):
		return agentsmcp.Errorf(agentsmcp.EINVALID, "credential: integration is longer than %d bytes", agentsmcp.MaxUpstreamNameBytes)
	case len(c.Principal) > agentsmcp.MaxPrincipalIDBytes || !utf8.ValidString(c.Principal):
		return agentsmcp.Errorf(agentsmcp.EINVALID, "credential %q: principal is longer than %d bytes", c.Integration, agentsmcp.MaxPrincipalIDBytes)
	case !slices.Contains(credentialKinds, c.Kind):
		return agentsmcp.Errorf(agentsmcp.EINVALID, "credential %q: kind %q is not one of %v", c.Integration, c.Kind, credentialKinds)
	}
	s := c.Settings
	switch c.Kind {
	case agentsmcp.CredentialAPIKey:
		if s.Header != "" && s.Query != "" {
			return agentsmcp.Errorf(agentsmcp.EINVALID, "credential %q: an api_key goes in a header or a query parameter, not both", c.Integration)
		}
	case agentsmcp.CredentialBasic:
		if s.Username == "" {
			return agentsmcp.Errorf(agentsmcp.EINVALID, "credential %q: basic needs a username", c.Integration)
		}
	case agentsmcp.CredentialClientCredentials, agentsmcp.CredentialAuthorizationCode:
		if s.ClientID == "" || s.TokenURL == "" {
			return agentsmcp.Errorf(agentsmcp.EINVALID, "credential %q: %s needs client_id and token_url", c.Integration, c.Kind)
		}
		if c.Kind == agentsmcp.CredentialAuthorizationCode && s.AuthURL == "" {
			return agentsmcp.Errorf(agentsmcp.EINVALID, "credential %q: %s needs auth_url", c.Integration, c.Kind)
		}
		for _, u := range []string{s.AuthURL, s.TokenURL} {
			if u == "" {
				continue
			}
			if p, err := url.Parse(u); err != nil || (p.Scheme != "https" && p.Scheme != "http") || p.Host == "" {
				return agentsmcp.Errorf(agentsmcp.EINVALID, "credential %q: %q is not an http(s) URL", c.Integration, u)
			}
		}
	}
	if b, _ := json.Marshal(s); len(b) > agentsmcp.MaxCredentialSettingsBytes {
		return agentsmcp.Errorf(agentsmcp.EINVALID, "credential %q: settings are larger than %d bytes", c.Integration, agentsmcp.MaxCredentialSettingsBytes)
	}
	return nil
}

// credentialKinds lists every credential kind.
var credentialKinds = []string{agentsmcp.CredentialAPIKey, agentsmcp.CredentialBearer, agentsmcp.CredentialBasic,
	agentsmcp.CredentialClientCredentials, agentsmcp.CredentialAuthorizationCode}
