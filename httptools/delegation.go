package httptools

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/internal/delegation"
)

// The values of [Source.Delegation] (ADR 0012 D7b).
const (
	// DelegationForward sends the caller's own bearer token to the API,
	// as it came to agents-mcp: for an API that trusts the same issuer and
	// accepts tokens whose audience is agents-mcp.
	DelegationForward = "forward"
	// DelegationExchange exchanges the caller's token (RFC 8693) at
	// [Exchange.TokenEndpoint] for one meant for the API, and sends that.
	DelegationExchange = "exchange"
)

// tokenTypeAccessToken is RFC 8693's type of the caller's token and of the
// token asked for.
const tokenTypeAccessToken = "urn:ietf:params:oauth:token-type:access_token"

// Exchange configures the RFC 8693 token exchange of a source with
// delegation "exchange". agents-mcp authenticates to the token endpoint as
// the client ClientID with ClientSecret (sent as client_secret_post, the
// way go-sdk's oauthex.ExchangeToken sends it).
type Exchange struct {
	// TokenEndpoint is the authorization server's token endpoint, an
	// absolute http(s) URL; it passes the egress policy like any request.
	TokenEndpoint string `yaml:"token_endpoint" json:"token_endpoint"`
	ClientID      string `yaml:"client_id" json:"client_id"`
	// ClientSecret is a secret: give it as ${VAR}; it is never logged nor
	// shown ([Source.Redacted]).
	ClientSecret string `yaml:"client_secret" json:"client_secret,omitempty"`
	// Audience names the API the token is for (RFC 8693 audience).
	Audience string `yaml:"audience" json:"audience"`
	// Resource is the API's URI (RFC 8707); empty means Audience.
	Resource string   `yaml:"resource" json:"resource,omitempty"`
	Scopes   []string `yaml:"scopes" json:"scopes,omitempty"`
}

// delegationProblems lists what is wrong with the delegation settings of s.
func (s Source) delegationProblems() []Problem {
	var out []Problem
	add := func(field, format string, args ...any) {
		out = append(out, Problem{Field: field, Message: fmt.Sprintf(format, args...)})
	}
	switch s.Delegation {
	case "":
		if s.Exchange != nil {
			add("exchange", "applies only with delegation: exchange")
		}
		return out
	case DelegationForward:
		if s.Exchange != nil {
			add("exchange", "applies only with delegation: exchange, not forward")
		}
	case DelegationExchange:
		if s.Exchange == nil {
			add("exchange", "is required with delegation: exchange (token_endpoint, client_id, client_secret, audience)")
			break
		}
		e := s.Exchange
		if u, err := url.Parse(e.TokenEndpoint); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			add("exchange.token_endpoint", "must be an absolute http or https URL")
		}
		if strings.TrimSpace(e.ClientID) == "" {
			add("exchange.client_id", "is required")
		}
		if e.ClientSecret == "" {
			add("exchange.client_secret", "is required (give it as ${VAR})")
		}
		if strings.TrimSpace(e.Audience) == "" {
			add("exchange.audience", "is required: the API the exchanged token is for")
		}
	default:
		add("delegation", "must be %q or %q", DelegationForward, DelegationExchange)
	}
	for k := range s.Headers {
		if strings.EqualFold(k, "Authorization") {
			add("headers."+k, "cannot be set with delegation: the Authorization header carries the caller's token")
		}
	}
	return out
}

// Margins of the exchanged tokens' cache: a token is used only while more
// than refreshMargin of its life remains, so that it does not expire on
// its way to the API; maxCachedTokens bounds the memory of one source.
const (
	refreshMargin   = 30 * time.Second
	maxCachedTokens = 4096
)

// delegator gives the Authorization of a delegating source's requests: the
// caller's own token, or one exchanged for it.
//
// Exchanged tokens are cached in memory, per principal, in this process
// only: another replica exchanges again, which costs one request to the
// authorization server, and nothing of the caller's is ever stored.
type delegator struct {
	source string
	mode   string
	ex     Exchange
	opts   Options // for the egress-checked client of the token endpoint

	mu    sync.Mutex
	cache map[string]exchanged // by principal ID
}

type exchanged struct {
	token string
	until time.Time // when it stops being used
}

func newDelegator(src Source, opts Options) *delegator {
	d := &delegator{source: src.Name, mode: src.Delegation, opts: opts, cache: map[string]exchanged{}}
	if src.Exchange != nil {
		d.ex = *src.Exchange
		if d.ex.Resource == "" {
			d.ex.Resource = d.ex.Audience
		}
	}
	return d
}

// token returns the bearer token to send for the caller in ctx, or an
// [*agentsmcp.AuthorizationRequired] (Delegated) when the caller has no
// delegable token in ctx: it authenticated with an API key, over stdio or
// not at all, or the call runs outside its request (a step of a stored
// task that no request of its creator is waiting for).
func (d *delegator) token(ctx context.Context) (string, error) {
	dt := delegation.DelegatedTokenFrom(ctx)
	if dt == nil {
		return "", &agentsmcp.AuthorizationRequired{Integration: d.source, Delegated: true,
			Reason: "no delegable token of the caller: it did not authenticate with a JWT, or the call runs outside its request"}
	}
	if d.mode == DelegationForward {
		return dt.Value(), nil
	}
	now := time.Now()
	d.mu.Lock()
	c, ok := d.cache[dt.Principal()]
	d.mu.Unlock()
	if ok && now.Before(c.until) {
		return c.token, nil
	}
	tok, err := oauthex.ExchangeToken(ctx, d.ex.TokenEndpoint, &oauthex.TokenExchangeRequest{
		RequestedTokenType: tokenTypeAccessToken,
		Audience:           d.ex.Audience,
		Resource:           d.ex.Resource,
		Scope:              d.ex.Scopes,
		SubjectToken:       dt.Value(),
		SubjectTokenType:   tokenTypeAccessToken,
	}, &oauthex.ClientCredentials{ClientID: d.ex.ClientID, ClientSecretAuth: &oauthex.ClientSecretAuth{ClientSecret: d.ex.ClientSecret}},
		d.opts.client())
	if err != nil {
		return "", d.exchangeError(err)
	}
	// Kept until shortly before the exchanged token expires, and never
	// past the caller's own token: the delegation lasts as long as the
	// caller's authentication does.
	until := tok.Expiry
	if exp := dt.Expires(); !exp.IsZero() && (until.IsZero() || exp.Before(until)) {
		until = exp
	}
	if !until.IsZero() {
		d.remember(dt.Principal(), exchanged{token: tok.AccessToken, until: until.Add(-refreshMargin)}, now)
	}
	return tok.AccessToken, nil
}

func (d *delegator) remember(principal string, e exchanged, now time.Time) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if len(d.cache) >= maxCachedTokens {
		for k, c := range d.cache {
			if !now.Before(c.until) {
				delete(d.cache, k)
			}
		}
		for k := range d.cache {
			if len(d.cache) < maxCachedTokens {
				break
			}
			delete(d.cache, k) // any one: it is only exchanged again
		}
	}
	d.cache[principal] = e
}

// exchangeError is the answer to a failed exchange. Only the OAuth error
// code of the authorization server is quoted, never its body nor the
// request, which hold the caller's token and the client secret. A refused
// subject token (invalid_request, invalid_grant) asks the caller for a
// usable identity;
// anything else (a wrong client secret, an unreachable server) is the
// operator's problem, a tool error.
func (d *delegator) exchangeError(err error) error {
	var re *oauth2.RetrieveError
	if errors.As(err, &re) {
		code := re.ErrorCode
		if code == "" {
			code = fmt.Sprintf("HTTP %d", re.Response.StatusCode)
		}
		// RFC 8693 answers invalid_request to a subject token it will not
		// exchange (invalid, or refused by policy); some servers say
		// invalid_grant. The request is otherwise always the same.
		if code == "invalid_request" || code == "invalid_grant" {
			return &agentsmcp.AuthorizationRequired{Integration: d.source, Delegated: true,
				Reason: "the authorization server refused to exchange the caller's token (" + code + ")"}
		}
		return fmt.Errorf("http_tools %s: the token exchange was refused: %s", d.source, code)
	}
	var uerr *url.Error
	if errors.As(err, &uerr) {
		return fmt.Errorf("http_tools %s: the token exchange failed: %s", d.source, transportError(uerr, nil))
	}
	return fmt.Errorf("http_tools %s: the token exchange failed", d.source)
}

// refused is called when the API answered 401 to a request that carried
// the caller's identity: an exchanged token is dropped (the next call
// exchanges again), and the caller is asked for a usable identity.
func (d *delegator) refused(ctx context.Context) *agentsmcp.AuthorizationRequired {
	reason := "the API refused the caller's token (HTTP 401)"
	if d.mode == DelegationExchange {
		d.mu.Lock()
		delete(d.cache, agentsmcp.PrincipalIDFrom(ctx))
		d.mu.Unlock()
		reason = "the API refused the token exchanged for the caller's (HTTP 401); the next call exchanges again"
	}
	return &agentsmcp.AuthorizationRequired{Integration: d.source, Delegated: true, Reason: reason}
}
