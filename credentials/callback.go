package credentials

import (
	"net/http"
	"time"

	agentsmcp "github.com/agents-mcp/agents-mcp"
)

// serveCallback serves GET CallbackPath: the browser that a person sent to
// the authorization server comes back with ?state=…&code=… (or ?error=…).
// The flow of the state is taken whatever follows, so that it cannot be
// completed later; it completes only when this browser holds the nonce the
// flow is bound to (set when the person confirmed on the link's page), else
// the page says that it must be completed in the browser that started it
// and nothing is stored. So an authorization server's URL handed to
// another person, or a callback URL handed back, completes nothing.
func (m *Manager) serveCallback(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	state, code, oauthErr := q.Get("state"), q.Get("code"), q.Get("error")
	if state == "" {
		if oauthErr != "" {
			writePage(w, http.StatusBadRequest, page{Title: "Authorization refused", Paragraphs: []string{
				"The authorization server answered: " + oauthErrorCode(oauthErr) + ". Start again from the link of the tool."}})
			return
		}
		writePage(w, http.StatusBadRequest, page{Title: "Authorization incomplete", Paragraphs: []string{"The request has no state or no code."}})
		return
	}
	st, err := m.opts.Store.TakeOAuthState(r.Context(), stateKey(state), time.Now())
	switch {
	case agentsmcp.ErrorCode(err) == agentsmcp.ENOTFOUND:
		writePage(w, http.StatusBadRequest, page{Title: "Authorization expired", Paragraphs: []string{textUnknownLink}})
		return
	case err != nil:
		m.opts.Logger.ErrorContext(r.Context(), "oauth callback", "err", err)
		writePage(w, http.StatusServiceUnavailable, page{Title: "Authorization unavailable", Paragraphs: []string{agentsmcp.ErrorMessage(err)}})
		return
	}
	nonce := m.browserNonce(r)
	if st.Binding == "" || nonce == "" || !sameBinding(binding(nonce), st.Binding) {
		// Another browser than the one that confirmed: the attack of a
		// forwarded link (or a flow started before the binding existed).
		m.opts.Logger.WarnContext(r.Context(), "oauth callback refused: the browser did not start the flow",
			"principal", st.Principal, "credential", st.CredentialID)
		writePage(w, http.StatusForbidden, page{Title: "Authorization refused: another browser", Paragraphs: []string{textNoNonce}})
		return
	}
	if oauthErr != "" {
		writePage(w, http.StatusBadRequest, page{Title: "Authorization refused", Paragraphs: []string{
			"The authorization server answered: " + oauthErrorCode(oauthErr) + ". Start again from the link of the tool."}})
		return
	}
	if code == "" {
		writePage(w, http.StatusBadRequest, page{Title: "Authorization incomplete", Paragraphs: []string{"The request has no state or no code."}})
		return
	}
	c, err := m.complete(r.Context(), st, code)
	switch agentsmcp.ErrorCode(err) {
	case "":
		m.opts.Logger.InfoContext(r.Context(), "oauth authorization completed", "integration", c.Integration, "principal", st.Principal)
		writePage(w, http.StatusOK, page{Title: "Authorized", Paragraphs: []string{
			"agents-mcp may now call " + c.Integration + " with your account, for " + m.describePrincipal(st.Principal) +
				". You can close this window and retry."}})
	case agentsmcp.ENOTFOUND:
		writePage(w, http.StatusBadRequest, page{Title: "Authorization expired", Paragraphs: []string{
			"The integration of this authorization is no longer configured."}})
	case agentsmcp.EUNAUTHORIZED:
		writePage(w, http.StatusBadGateway, page{Title: "Authorization failed", Paragraphs: []string{agentsmcp.ErrorMessage(err)}})
	default:
		m.opts.Logger.ErrorContext(r.Context(), "oauth callback", "err", err)
		writePage(w, http.StatusBadGateway, page{Title: "Authorization failed", Paragraphs: []string{agentsmcp.ErrorMessage(err)}})
	}
}

// oauthErrorCode is e when it looks like an OAuth error code (RFC 6749
// section 4.1.2.1: letters and underscores), else a neutral text: the page
// does not repeat arbitrary text from a URL anyone can craft.
func oauthErrorCode(e string) string {
	if len(e) > 64 {
		return "an error"
	}
	for _, r := range e {
		if r != '_' && (r < 'a' || r > 'z') {
			return "an error"
		}
	}
	return e
}
