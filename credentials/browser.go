package credentials

import (
	"crypto/rand"
	"crypto/subtle"
	"html/template"
	"net/http"
	"net/url"
	"strings"
	"time"

	agentsmcp "github.com/agents-mcp/agents-mcp"
)

// This file holds what a person's browser sees of an authorization: the
// link's confirmation page, the cookie that binds a flow to the browser
// that confirmed it, and the pages of the callback (callback.go).
//
// Why a page and a cookie: the link goes to whoever the caller hands it
// to, and the tokens go to the principal that asked (MCP 2025-11-25,
// elicitation, "Phishing"). Were the link the authorization server's URL,
// anyone who opened it would authorize the account they are signed in to
// for that principal. Instead the authorization server's URL, with a fresh
// OAuth state, is only ever given to the browser that confirmed on
// agents-mcp's page, and the callback completes only in a browser that
// holds the nonce whose hash the flow keeps.

// flowParam is the query parameter (and form field) of the link's token.
// Its name avoids the words that redaction takes for secrets ("token",
// "key"): the link must survive in texts shown to the person.
const flowParam = "flow"

// confirmParam is the form field that proves the confirmation was
// submitted from agents-mcp's own page in this browser (see confirmToken).
const confirmParam = "confirm"

// nonceCookie is the name of the cookie holding the browser's nonce. With
// an https public URL it has the __Host- prefix, which browsers accept
// only Secure, for the whole host, and without Domain, so that no other
// host of the site can plant one (cookie tossing); over plain http (the
// loopback default) it is scoped to the /oauth/ paths instead.
func (m *Manager) nonceCookie() (name, path string, secure bool) {
	if strings.HasPrefix(m.opts.BaseURL, "https://") {
		return "__Host-agents-mcp-oauth", "/", true
	}
	p := "/"
	if u, err := url.Parse(m.opts.BaseURL); err == nil {
		p = strings.TrimRight(u.Path, "/") + "/"
	}
	return "agents-mcp-oauth", p + "oauth/", false
}

// nonceLen is the length of a nonce made by rand.Text.
var nonceLen = len(rand.Text())

// browserNonce returns the nonce of r's browser, or "".
func (m *Manager) browserNonce(r *http.Request) string {
	name, _, _ := m.nonceCookie()
	c, err := r.Cookie(name)
	if err != nil || len(c.Value) != nonceLen {
		return ""
	}
	return c.Value
}

// setNonce gives the browser its nonce for ttl. A browser keeps one nonce
// for all its flows, so that two links opened side by side both complete.
func (m *Manager) setNonce(w http.ResponseWriter, nonce string, ttl time.Duration) {
	name, path, secure := m.nonceCookie()
	http.SetCookie(w, &http.Cookie{Name: name, Value: nonce, Path: path, MaxAge: int(ttl.Seconds()) + 1,
		HttpOnly: true, Secure: secure, SameSite: http.SameSiteLaxMode})
}

// binding is what a flow keeps of the nonce of the browser it is bound to.
func binding(nonce string) string { return hashB64("agents-mcp oauth binding\x00" + nonce) }

// confirmToken is the value of the confirmation form's hidden field: a
// cross-site form cannot compute it (it needs the nonce, which only the
// browser's cookie holds), and a cross-site POST carries no SameSite=Lax
// cookie at all. So the confirmation cannot be submitted for a person by
// another site.
func confirmToken(nonce, flow string) string {
	return hashB64("agents-mcp oauth confirm\x00" + nonce + "\x00" + flow)
}

// sameBinding compares in constant time.
func sameBinding(a, b string) bool { return subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1 }

// describePrincipal names principal on the pages.
func (m *Manager) describePrincipal(principal string) string {
	switch principal {
	case "":
		return "agents-mcp itself (a shared authorization: the server's own connection, for every caller)"
	case agentsmcp.AnonymousPrincipal:
		return "anonymous (this server has no sign-in: whoever can reach it acts as this user)"
	}
	if m.opts.PrincipalName != nil {
		if name := m.opts.PrincipalName(principal); name != "" {
			return name + " (" + principal + ")"
		}
	}
	return principal
}

// page is an HTML page of the flow: a title, paragraphs, and on the
// link's page the confirmation.
type page struct {
	Title      string
	Paragraphs []string
	Confirm    *confirmation
}

// confirmation is the part of the link's page that names who receives
// what, and the form that goes on.
type confirmation struct {
	Integration, Host, Principal, Expires string
	Action, Flow, Token                   string
}

var pageTemplate = template.Must(template.New("page").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>agents-mcp: {{.Title}}</title>
<style>body{font-family:system-ui,sans-serif;max-width:42rem;margin:2rem auto;padding:0 1rem;line-height:1.5}
dt{font-weight:600}dd{margin:0 0 .5rem 0}.warn{border-left:4px solid #b45309;padding-left:.75rem}
button{font-size:1rem;padding:.5rem 1rem}</style></head>
<body><h1>{{.Title}}</h1>
{{range .Paragraphs}}<p>{{.}}</p>
{{end}}{{with .Confirm}}<dl>
<dt>Service</dt><dd>{{.Integration}}</dd>
<dt>You sign in at</dt><dd>{{.Host}}</dd>
<dt>agents-mcp user who will act with your account</dt><dd><strong>{{.Principal}}</strong></dd>
<dt>This link expires</dt><dd>{{.Expires}}</dd>
</dl>
<p class="warn">Continue only if you are {{.Principal}} and asked for this yourself, from your own agent or client.
If someone sent you this link, close this page: whoever started it would use your account at {{.Integration}}.</p>
<form action="{{.Action}}" method="post"><input type="hidden" name="flow" value="{{.Flow}}"><input type="hidden" name="confirm" value="{{.Token}}">
<button type="submit">Continue to {{.Host}}</button></form>
{{end}}</body></html>
`))

// writePage answers p with status. The pages hold a one-time token (the
// link's) or follow one (the callback's code): never cached, never framed
// (a framed confirmation could be clicked by a person who cannot see it),
// never sent as a Referer, and no script.
func writePage(w http.ResponseWriter, status int, p page) {
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Frame-Options", "DENY")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'")
	w.WriteHeader(status)
	_ = pageTemplate.Execute(w, p)
}

// Texts of the pages shared by the link and the callback.
const (
	textUnknownLink = "This authorization link is unknown, already used or expired: a link is good for one use, " +
		"within minutes. Call the tool again to get a new link."
	textNoNonce = "This authorization was not started in this browser, so it was refused and nothing was stored. " +
		"Open the authorization link in the browser where you want to sign in, and complete it there; " +
		"a link or an address of the sign-in page that someone else sent you does not work. " +
		"(If cookies are blocked for this site, allow them and start again.)"
)

// ServeHTTP serves the pages a person's browser visits, with no agents-mcp
// credential (the browser has none): StartPath, the authorization link
// (GET: a page naming the integration, the authorization server and the
// principal who will receive the account, with a button to continue;
// POST: the confirmation, which takes the link once, binds a new flow to
// this browser and redirects it to the authorization server), and
// CallbackPath, where the authorization server sends the browser back. The
// pages never show a code or a token.
func (m *Manager) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case StartPath:
		switch r.Method {
		case http.MethodGet:
			m.serveLink(w, r)
		case http.MethodPost:
			m.serveConfirm(w, r)
		default:
			w.Header().Set("Allow", "GET, POST")
			w.WriteHeader(http.StatusMethodNotAllowed)
		}
	case CallbackPath:
		if r.Method != http.MethodGet {
			w.Header().Set("Allow", http.MethodGet)
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		}
		m.serveCallback(w, r)
	default:
		http.NotFound(w, r)
	}
}

// maxFlowLen bounds the token read from a link: longer is not one of ours.
const maxFlowLen = 64

// serveLink serves GET StartPath?flow=…: the confirmation page. It only
// reads the link, so a page shown twice (reloaded, or fetched by a link
// preview) leaves it usable; it gives the browser its nonce.
func (m *Manager) serveLink(w http.ResponseWriter, r *http.Request) {
	flow := r.URL.Query().Get(flowParam)
	if flow == "" || len(flow) > maxFlowLen {
		writePage(w, http.StatusBadRequest, page{Title: "Authorization link incomplete", Paragraphs: []string{textUnknownLink}})
		return
	}
	st, err := m.opts.Store.FindOAuthState(r.Context(), linkKey(flow), time.Now())
	c, ok := m.linkCredential(w, r, st, err, "oauth link")
	if !ok {
		return
	}
	nonce := m.browserNonce(r)
	if nonce == "" {
		nonce = rand.Text()
	}
	m.setNonce(w, nonce, time.Until(st.ExpiresAt)+m.opts.StateTTL)
	host := c.Settings.AuthURL
	if u, err := url.Parse(c.Settings.AuthURL); err == nil && u.Host != "" {
		host = u.Host
	}
	action := StartPath
	if u, err := url.Parse(m.opts.BaseURL); err == nil {
		action = strings.TrimRight(u.Path, "/") + StartPath
	}
	writePage(w, http.StatusOK, page{
		Title: "Connect " + c.Integration + " to agents-mcp",
		Paragraphs: []string{"You are about to sign in at " + host + " and let agents-mcp call " + c.Integration +
			" with your account there, for the agents-mcp user named below."},
		Confirm: &confirmation{Integration: c.Integration, Host: host, Principal: m.describePrincipal(st.Principal),
			Expires: st.ExpiresAt.UTC().Format("2006-01-02 15:04:05 UTC"), Action: action, Flow: flow,
			Token: confirmToken(nonce, flow)},
	})
}

// maxConfirmBytes bounds the confirmation's form: two short fields.
const maxConfirmBytes = 4 << 10

// serveConfirm serves POST StartPath: the person confirmed on the link's
// page. The form must come from that page in this browser (its token
// matches this browser's nonce); the link is taken, once, and a flow with
// a new OAuth state, bound to this browser's nonce, replaces it; the
// browser goes on to the authorization server.
func (m *Manager) serveConfirm(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, maxConfirmBytes)
	if err := r.ParseForm(); err != nil {
		writePage(w, http.StatusBadRequest, page{Title: "Authorization incomplete", Paragraphs: []string{"The confirmation could not be read."}})
		return
	}
	flow := r.PostForm.Get(flowParam)
	nonce := m.browserNonce(r)
	site := r.Header.Get("Sec-Fetch-Site")
	if flow == "" || len(flow) > maxFlowLen || nonce == "" || (site != "" && site != "same-origin" && site != "none") ||
		!sameBinding(r.PostForm.Get(confirmParam), confirmToken(nonce, flow)) {
		writePage(w, http.StatusForbidden, page{Title: "Authorization refused", Paragraphs: []string{
			"The confirmation did not come from the authorization link's page in this browser, so nothing was started. " +
				"Open the authorization link itself, check the page, and continue from there. " +
				"(If cookies are blocked for this site, allow them and open the link again.)"}})
		return
	}
	st, err := m.opts.Store.TakeOAuthState(r.Context(), linkKey(flow), time.Now())
	c, ok := m.linkCredential(w, r, st, err, "oauth confirmation")
	if !ok {
		return
	}
	state := rand.Text()
	flowState := &agentsmcp.OAuthState{Key: stateKey(state), CredentialID: st.CredentialID, Principal: st.Principal,
		Binding: binding(nonce), Verifier: st.Verifier, ExpiresAt: time.Now().Add(m.opts.StateTTL)}
	if err := m.opts.Store.CreateOAuthState(r.Context(), flowState); err != nil {
		m.opts.Logger.ErrorContext(r.Context(), "oauth confirmation", "err", err)
		writePage(w, http.StatusServiceUnavailable, page{Title: "Authorization unavailable", Paragraphs: []string{agentsmcp.ErrorMessage(err)}})
		return
	}
	m.setNonce(w, nonce, m.opts.StateTTL)
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Referrer-Policy", "no-referrer")
	http.Redirect(w, r, m.authCodeURL(c, flowState, state), http.StatusSeeOther)
}

// linkCredential is the credential an authorization link's state names,
// for serveLink and its confirmation alike; when there is none it has
// written the page that says why (400 for an unknown or used link, 503
// when the store fails) and answers false.
func (m *Manager) linkCredential(w http.ResponseWriter, r *http.Request, st *agentsmcp.OAuthState, err error, what string) (*agentsmcp.Credential, bool) {
	var c *agentsmcp.Credential
	if err == nil && st.Binding == "" {
		c, err = m.opts.Store.FindCredentialByID(r.Context(), st.CredentialID)
	}
	switch {
	case agentsmcp.ErrorCode(err) == agentsmcp.ENOTFOUND || (err == nil && c == nil):
		writePage(w, http.StatusBadRequest, page{Title: "Authorization link expired", Paragraphs: []string{textUnknownLink}})
		return nil, false
	case err != nil:
		m.opts.Logger.ErrorContext(r.Context(), what, "err", err)
		writePage(w, http.StatusServiceUnavailable, page{Title: "Authorization unavailable", Paragraphs: []string{agentsmcp.ErrorMessage(err)}})
		return nil, false
	}
	return c, true
}
