package credentials_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/credentials"
	"github.com/agents-mcp/agents-mcp/internal/oauthtest"
	"github.com/agents-mcp/agents-mcp/memory/secrets"
)

// The phishing attack (MCP 2025-11-25, elicitation, "Phishing"): alice
// gets an authorization link and has another person, bob, complete it,
// so that bob's account at the integration would serve alice's calls.
// These tests run it against a real authorization server, each person with
// a browser (a cookie jar) of their own.

// linkEnv is agents-mcp's credential manager with the pages a browser
// visits served on loopback, a real authorization server, an API that
// accepts only its tokens, and the shared client of integration "crm".
type linkEnv struct {
	as     *oauthtest.AS
	api    *protectedAPI
	store  *secrets.Credentials
	m      *credentials.Manager
	agents *httptest.Server
}

func newLinkEnv(t *testing.T, opts credentials.Options) *linkEnv {
	t.Helper()
	e := &linkEnv{as: oauthtest.StartMockAS(t), store: openStore(t)}
	e.api = newProtectedAPI(t, e.as)
	e.agents = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { e.m.ServeHTTP(w, r) }))
	t.Cleanup(e.agents.Close)
	opts.Store, opts.BaseURL = e.store, e.agents.URL
	e.m = credentials.New(opts)
	client := &agentsmcp.Credential{Integration: "crm", Kind: agentsmcp.CredentialAuthorizationCode,
		Settings: agentsmcp.CredentialSettings{ClientID: "agents-mcp", AuthURL: e.as.Issuer + "/authorize",
			TokenURL: e.as.Issuer + "/token", Scopes: []string{"openid"}, Resource: e.api.URL}}
	if err := e.store.CreateCredential(t.Context(), client); err != nil {
		t.Fatal(err)
	}
	return e
}

// link is the authorization link that principal's call of crm answers.
func (e *linkEnv) link(t *testing.T, principal string) string {
	t.Helper()
	_, err := call(t, e.m, e.api, "crm", principal)
	var ar *agentsmcp.AuthorizationRequired
	if !errors.As(err, &ar) || ar.AuthorizeURL == "" {
		t.Fatalf("%s's call: %v, want an authorization link", principal, err)
	}
	return ar.AuthorizeURL
}

// authorized reports whether principal's call of crm goes through: the
// store holds tokens for it.
func (e *linkEnv) authorized(t *testing.T, principal string) bool {
	t.Helper()
	status, err := call(t, e.m, e.api, "crm", principal)
	var ar *agentsmcp.AuthorizationRequired
	switch {
	case errors.As(err, &ar):
		return false
	case err != nil || status != http.StatusOK:
		t.Fatalf("%s's call: %d, %v", principal, status, err)
	}
	return true
}

// nothingStored fails t unless the store holds no tokens at all for crm:
// neither a credential of a principal nor a token in the shared client.
func (e *linkEnv) nothingStored(t *testing.T) {
	t.Helper()
	all, err := e.store.FindCredentials(t.Context(), agentsmcp.CredentialFilter{Integration: "crm"})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range all {
		if c.Principal != "" {
			t.Errorf("crm has a credential of %q; want the shared client only", c.Principal)
		}
	}
	if shared, err := e.store.FindCredential(t.Context(), "crm", ""); err != nil || (shared.Secret != nil && shared.Secret.AccessToken != "") {
		t.Errorf("the shared client holds a token: %v", err)
	}
}

// Alice opens her link, then hands the authorization server's address to
// bob, who completes it signed in as himself: the callback refuses his
// browser, stores nothing, and alice's next call still gets a link. Handed
// back to alice, bob's callback address completes nothing either.
func TestAuthorizationLinkCompletedInAnotherBrowser(t *testing.T) {
	e := newLinkEnv(t, credentials.Options{})
	link := e.link(t, "jwt:alice")
	alice, bob := oauthtest.NewBrowser(), oauthtest.NewBrowser()

	asURL := alice.Start(t, link, e.agents.URL)
	page := bob.Get(t, asURL)
	if page.Status != http.StatusForbidden || !strings.Contains(page.Body, "not started in this browser") ||
		!strings.Contains(page.Body, "nothing was stored") {
		t.Errorf("bob's browser at the callback: %d %s", page.Status, page.Body)
	}
	e.nothingStored(t)
	if e.authorized(t, "jwt:alice") {
		t.Fatal("alice's call carries the tokens of bob's session")
	}
	next := e.link(t, "jwt:alice")
	if next == link {
		t.Error("alice's next call gave the same link again")
	}

	// Bob's callback address, handed back to alice: the flow is spent.
	if back := alice.Get(t, page.URL); back.Status != http.StatusBadRequest || strings.Contains(back.Body, "Authorized") {
		t.Errorf("bob's callback in alice's browser: %d %s", back.Status, back.Body)
	}
	e.nothingStored(t)

	// A browser that holds a nonce of its own (bob started a link of
	// his) is refused alike.
	bob.Start(t, e.link(t, "jwt:bob"), e.agents.URL)
	if page := bob.Get(t, alice.Start(t, next, e.agents.URL)); page.Status != http.StatusForbidden {
		t.Errorf("alice's flow in bob's browser with a nonce of its own: %d %s", page.Status, page.Body)
	}
	if e.authorized(t, "jwt:alice") || e.authorized(t, "jwt:bob") {
		t.Error("a flow completed in the other browser")
	}

	// Alice completes her own link in her own browser.
	if page := alice.Authorize(t, e.link(t, "jwt:alice"), e.agents.URL); page.Status != http.StatusOK || !strings.Contains(page.Body, "Authorized") {
		t.Fatalf("alice in her own browser: %d %s", page.Status, page.Body)
	}
	if !e.authorized(t, "jwt:alice") || e.authorized(t, "jwt:bob") {
		t.Error("after alice authorized: alice must be, bob must not")
	}
}

// Alice hands bob the link itself, before opening it: his browser shows a
// page that names alice as the principal who would receive the account
// and asks to confirm; opening it stores nothing and leaves the link to
// alice, who can still complete it in her own browser.
func TestAuthorizationLinkForwardedBeforeOpening(t *testing.T) {
	e := newLinkEnv(t, credentials.Options{})
	link := e.link(t, "jwt:alice")
	bob := oauthtest.NewBrowser()
	page := bob.Get(t, link)
	if page.Status != http.StatusOK || !strings.HasPrefix(page.URL, e.agents.URL+"/") {
		t.Fatalf("bob opens alice's link: %d at %s: %s", page.Status, page.URL, page.Body)
	}
	_, fields, ok := page.Form()
	if !ok || fields.Get("flow") == "" {
		t.Errorf("the link's page asks nothing: %s", page.Body)
	}
	for _, want := range []string{"jwt:alice", "crm", "If someone sent you this link, close this page"} {
		if !strings.Contains(page.Body, want) {
			t.Errorf("the link's page does not say %q: %s", want, page.Body)
		}
	}
	e.nothingStored(t)

	if page := oauthtest.NewBrowser().Authorize(t, link, e.agents.URL); page.Status != http.StatusOK {
		t.Fatalf("alice completes her link after bob saw it: %d %s", page.Status, page.Body)
	}
	if !e.authorized(t, "jwt:alice") || e.authorized(t, "jwt:bob") {
		t.Error("after alice authorized: alice must be, bob must not")
	}
}

// A link is good for one confirmation: opened again, or its confirmation
// posted again, it is refused; a callback is good once.
func TestAuthorizationLinkSingleUse(t *testing.T) {
	e := newLinkEnv(t, credentials.Options{})
	link := e.link(t, "jwt:alice")
	alice := oauthtest.NewBrowser()
	first := alice.Get(t, link)
	action, fields, ok := first.Form()
	if !ok {
		t.Fatalf("the link's page: %d %s", first.Status, first.Body)
	}
	done := alice.Authorize(t, link, e.agents.URL) // a second page view, then the confirmation
	if done.Status != http.StatusOK {
		t.Fatalf("alice authorizes: %d %s", done.Status, done.Body)
	}
	if again := alice.Get(t, link); again.Status != http.StatusBadRequest || strings.Contains(again.Body, "<form") {
		t.Errorf("the used link opened again: %d %s", again.Status, again.Body)
	}
	if again := alice.Post(t, action, fields); again.Status != http.StatusBadRequest {
		t.Errorf("the confirmation posted again: %d %s", again.Status, again.Body)
	}
	if again := alice.Get(t, done.URL); again.Status != http.StatusBadRequest {
		t.Errorf("the callback again: %d %s", again.Status, again.Body)
	}
}

// A link not opened in time is refused, and so is a flow whose person
// took too long at the authorization server; nothing is stored.
func TestAuthorizationLinkExpires(t *testing.T) {
	e := newLinkEnv(t, credentials.Options{StateTTL: 2 * time.Second})
	alice := oauthtest.NewBrowser()

	stale := e.link(t, "jwt:alice")
	page := alice.Get(t, e.link(t, "jwt:alice"))
	action, fields, ok := page.Form()
	if !ok {
		t.Fatalf("the link's page: %d %s", page.Status, page.Body)
	}
	time.Sleep(2200 * time.Millisecond)
	if page := alice.Get(t, stale); page.Status != http.StatusBadRequest || !strings.Contains(page.Body, "expired") {
		t.Errorf("an expired link: %d %s", page.Status, page.Body)
	}
	if page := alice.Post(t, action, fields); page.Status != http.StatusBadRequest {
		t.Errorf("the confirmation of an expired link: %d %s", page.Status, page.Body)
	}

	asURL := alice.Start(t, e.link(t, "jwt:alice"), e.agents.URL)
	time.Sleep(2200 * time.Millisecond)
	if page := alice.Get(t, asURL); page.Status != http.StatusBadRequest {
		t.Errorf("a flow completed after it expired: %d %s", page.Status, page.Body)
	}
	e.nothingStored(t)
}

// The confirmation cannot be posted for a person by another site: a form
// without the browser's cookie, with a token of another browser, or sent
// cross-site is refused and leaves the link usable.
func TestAuthorizationConfirmationForged(t *testing.T) {
	e := newLinkEnv(t, credentials.Options{})
	link := e.link(t, "jwt:alice")
	alice, bob := oauthtest.NewBrowser(), oauthtest.NewBrowser()
	page := alice.Get(t, link)
	action, fields, ok := page.Form()
	if !ok {
		t.Fatalf("the link's page: %d %s", page.Status, page.Body)
	}
	// Bob's browser (no nonce, or one of its own) posts alice's form, as
	// an auto-submitting form on alice's site would make it.
	if got := bob.Post(t, action, fields); got.Status != http.StatusForbidden {
		t.Errorf("a confirmation from a browser without the cookie: %d %s", got.Status, got.Body)
	}
	bob.Get(t, link)
	if got := bob.Post(t, action, fields); got.Status != http.StatusForbidden {
		t.Errorf("a confirmation with another browser's token: %d %s", got.Status, got.Body)
	}
	forged := url.Values{"flow": {fields.Get("flow")}}
	if got := alice.Post(t, action, forged); got.Status != http.StatusForbidden {
		t.Errorf("a confirmation without its token: %d %s", got.Status, got.Body)
	}
	req, _ := http.NewRequest(http.MethodPost, action, strings.NewReader(fields.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Sec-Fetch-Site", "cross-site")
	rec := httptest.NewRecorder()
	for _, c := range page.Header.Values("Set-Cookie") {
		req.Header.Add("Cookie", strings.SplitN(c, ";", 2)[0])
	}
	e.m.ServeHTTP(rec, req)
	if rec.Code != http.StatusForbidden {
		t.Errorf("a cross-site confirmation: %d %s", rec.Code, rec.Body)
	}
	e.nothingStored(t)
	if got := alice.Authorize(t, link, e.agents.URL); got.Status != http.StatusOK {
		t.Errorf("alice's link after the forgeries: %d %s", got.Status, got.Body)
	}
}

// The link's page names the principal by its configured name, is never
// framed, cached or sent as a Referer, and gives the browser a nonce
// cookie that scripts cannot read and other sites' requests do not carry:
// scoped to /oauth/ over http, __Host- and Secure over https.
func TestAuthorizationLinkPage(t *testing.T) {
	for _, base := range []string{"http://127.0.0.1:8080", "https://agents.example.test"} {
		store := openStore(t)
		m := credentials.New(credentials.Options{Store: store, BaseURL: base,
			PrincipalName: func(id string) string { return map[string]string{"key:0123456789ab": "alice"}[id] }})
		if err := store.CreateCredential(t.Context(), &agentsmcp.Credential{Integration: "crm", Kind: agentsmcp.CredentialAuthorizationCode,
			Settings: agentsmcp.CredentialSettings{ClientID: "c", AuthURL: "https://login.crm.example/authorize", TokenURL: "https://login.crm.example/token"}}); err != nil {
			t.Fatal(err)
		}
		for principal, want := range map[string]string{
			"key:0123456789ab":           "alice (key:0123456789ab)",
			"jwt:bob":                    "jwt:bob",
			agentsmcp.AnonymousPrincipal: "anonymous (this server has no sign-in",
			"":                           "agents-mcp itself",
		} {
			link, err := m.StartAuthorization(t.Context(), "crm", principal)
			if err != nil || !strings.HasPrefix(link, base+credentials.StartPath+"?flow=") {
				t.Fatalf("link %q, %v", link, err)
			}
			u, _ := url.Parse(link)
			rec := httptest.NewRecorder()
			m.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, u.RequestURI(), nil))
			body := rec.Body.String()
			if rec.Code != http.StatusOK || !strings.Contains(body, "<strong>"+want) || !strings.Contains(body, "login.crm.example") {
				t.Errorf("%s: the page of %q: %d %s", base, principal, rec.Code, body)
			}
			h := rec.Header()
			if h.Get("X-Frame-Options") != "DENY" || !strings.Contains(h.Get("Content-Security-Policy"), "frame-ancestors 'none'") ||
				h.Get("Cache-Control") != "no-store" || h.Get("Referrer-Policy") != "no-referrer" {
				t.Errorf("%s: headers %v", base, h)
			}
			cookies := rec.Result().Cookies()
			if len(cookies) != 1 {
				t.Fatalf("%s: cookies %v", base, cookies)
			}
			c := cookies[0]
			secure := strings.HasPrefix(base, "https:")
			if !c.HttpOnly || c.SameSite != http.SameSiteLaxMode || c.Secure != secure || c.MaxAge <= 0 ||
				(secure && (c.Name != "__Host-agents-mcp-oauth" || c.Path != "/" || c.Domain != "")) ||
				(!secure && c.Path != "/oauth/") {
				t.Errorf("%s: cookie %+v", base, c)
			}
		}
	}
}
