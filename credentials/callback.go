package credentials

import (
	"html/template"
	"net/http"
	"time"

	agentsmcp "github.com/agents-mcp/agents-mcp"
)

var callbackPage = template.Must(template.New("callback").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>agents-mcp: {{.Title}}</title></head>
<body><h1>{{.Title}}</h1><p>{{.Text}}</p></body></html>
`))

// ServeHTTP serves CallbackPath: the browser that a person sent to the
// authorization server comes back with ?state=…&code=… (or ?error=…). It
// needs no agents-mcp credential: the state, single use and bound to the
// principal that started the flow, is the proof. The page never shows the
// code or a token.
func (m *Manager) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	if r.Method != http.MethodGet {
		w.Header().Set("Allow", http.MethodGet)
		w.WriteHeader(http.StatusMethodNotAllowed)
		return
	}
	q := r.URL.Query()
	page := func(status int, title, text string) {
		w.WriteHeader(status)
		_ = callbackPage.Execute(w, struct{ Title, Text string }{title, text})
	}
	state, code := q.Get("state"), q.Get("code")
	if e := q.Get("error"); e != "" {
		// Consume the state, so that the flow cannot be completed later.
		if state != "" {
			_, _ = m.opts.Store.TakeOAuthState(r.Context(), stateKey(state), time.Now())
		}
		page(http.StatusBadRequest, "Authorization refused", "The authorization server answered: "+oauthErrorCode(e)+". Start again from the link of the tool.")
		return
	}
	if state == "" || code == "" {
		page(http.StatusBadRequest, "Authorization incomplete", "The request has no state or no code.")
		return
	}
	c, err := m.Complete(r.Context(), state, code)
	switch agentsmcp.ErrorCode(err) {
	case "":
		page(http.StatusOK, "Authorized", "agents-mcp may now call "+c.Integration+" for you. You can close this window and retry.")
	case agentsmcp.ENOTFOUND:
		page(http.StatusBadRequest, "Authorization expired", "This authorization link is unknown, used or expired. Start again from the link of the tool.")
	case agentsmcp.EUNAUTHORIZED:
		page(http.StatusBadGateway, "Authorization failed", agentsmcp.ErrorMessage(err))
	default:
		m.opts.Logger.ErrorContext(r.Context(), "oauth callback", "err", err)
		page(http.StatusBadGateway, "Authorization failed", agentsmcp.ErrorMessage(err))
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
