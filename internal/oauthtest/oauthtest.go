// Package oauthtest serves the tests of the authorization-code flows of
// ADR 0012 with real parts: a real OAuth 2 authorization server on
// loopback, oauth2-mock-server (npm, pinned in scripts/e2e/package.json
// and installed by scripts/e2e/install.sh), and a [Browser] that follows an
// authorization link as a person's browser does: a cookie jar of its own,
// redirects followed, the confirmation form submitted.
//
// oauth2-mock-server grants every authorization request at once (it has no
// sign-in), so the tokens a browser obtains are told apart by when and
// where they are stored, not by the user they name; the e2e tests with
// oidc-provider sign in as distinct users.
//
// Only tests import it.
package oauthtest

import (
	"bufio"
	"encoding/json"
	"html"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	josejwt "github.com/go-jose/go-jose/v4/jwt"
)

// mockASBin is oauth2-mock-server's command, relative to the module root.
const mockASBin = "scripts/e2e/node_modules/oauth2-mock-server/dist/oauth2-mock-server.mjs"

// AS is a running oauth2-mock-server.
type AS struct {
	// Issuer is its URL (http://localhost:port); its endpoints are
	// Issuer + /authorize, /token and /jwks.
	Issuer string
	keys   jose.JSONWebKeySet
}

// StartMockAS runs oauth2-mock-server on loopback until the test ends (the
// process is killed and reaped at cleanup). The test is skipped when the
// npm packages are not installed.
func StartMockAS(t testing.TB) *AS {
	t.Helper()
	_, self, _, _ := runtime.Caller(0)
	bin := filepath.Join(filepath.Dir(self), "..", "..", mockASBin)
	if _, err := os.Stat(bin); err != nil {
		t.Skipf("oauth2-mock-server is not installed (run scripts/e2e/install.sh): %v", err)
	}
	cmd := exec.Command("node", bin, "-a", "127.0.0.1", "-p", "0")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatalf("start oauth2-mock-server: %v", err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	issuer := make(chan string, 1)
	go func() { // ends when the process's stdout closes, at cleanup
		re := regexp.MustCompile(`issuer is (http://localhost:\d+)`)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if m := re.FindStringSubmatch(sc.Text()); m != nil {
				issuer <- m[1]
			}
		}
	}()
	as := &AS{}
	select {
	case as.Issuer = <-issuer:
	case <-time.After(20 * time.Second):
		t.Fatal("oauth2-mock-server did not start")
	}
	resp, err := http.Get(as.Issuer + "/jwks")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(&as.keys); err != nil {
		t.Fatal(err)
	}
	return as
}

// Valid reports whether tok is a JWT that the server signed and that has
// not expired.
func (as *AS) Valid(tok string) bool {
	parsed, err := josejwt.ParseSigned(tok, []jose.SignatureAlgorithm{jose.RS256})
	if err != nil || len(parsed.Headers) == 0 {
		return false
	}
	found := as.keys.Key(parsed.Headers[0].KeyID)
	if len(found) == 0 {
		return false
	}
	var claims josejwt.Claims
	if err := parsed.Claims(found[0].Key, &claims); err != nil {
		return false
	}
	return claims.Validate(josejwt.Expected{Issuer: as.Issuer, Time: time.Now()}) == nil
}

// Browser is one person's web browser: a cookie jar of its own, shared by
// every page it opens. Two Browsers are two people.
type Browser struct {
	step   *http.Client // one request at a time, redirects not followed
	follow *http.Client // redirects followed
}

// NewBrowser returns a browser with an empty cookie jar.
func NewBrowser() *Browser {
	jar, _ := cookiejar.New(nil)
	return &Browser{
		step: &http.Client{Jar: jar, Timeout: 20 * time.Second,
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }},
		follow: &http.Client{Jar: jar, Timeout: 20 * time.Second},
	}
}

// Page is a response the browser shows.
type Page struct {
	Status int
	URL    string // after the redirects
	Header http.Header
	Body   string
}

// Get opens u, following redirects, and returns the page it ends at.
func (b *Browser) Get(t testing.TB, u string) *Page {
	t.Helper()
	resp, err := b.follow.Get(u)
	if err != nil {
		t.Fatalf("GET %s: %v", u, err)
	}
	return readPage(t, resp)
}

// Post submits a form to u as a browser does (with the Origin of u), and
// returns the answer without following a redirect.
func (b *Browser) Post(t testing.TB, u string, form url.Values) *Page {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, u, strings.NewReader(form.Encode()))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if p, err := url.Parse(u); err == nil {
		req.Header.Set("Origin", p.Scheme+"://"+p.Host)
	}
	resp, err := b.step.Do(req)
	if err != nil {
		t.Fatalf("POST %s: %v", u, err)
	}
	return readPage(t, resp)
}

func readPage(t testing.TB, resp *http.Response) *Page {
	t.Helper()
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		t.Fatal(err)
	}
	return &Page{Status: resp.StatusCode, URL: resp.Request.URL.String(), Header: resp.Header, Body: string(body)}
}

var (
	formRE  = regexp.MustCompile(`(?s)<form[^>]*action="([^"]*)"[^>]*method="post"[^>]*>(.*?)</form>`)
	inputRE = regexp.MustCompile(`<input[^>]*name="([^"]+)"(?:[^>]*value="([^"]*)")?[^>]*>`)
)

// Form returns the action (resolved against the page's URL) and the fields
// of the page's first POST form; ok is false when it has none.
func (p *Page) Form() (action string, fields url.Values, ok bool) {
	m := formRE.FindStringSubmatch(p.Body)
	if m == nil {
		return "", nil, false
	}
	base, err := url.Parse(p.URL)
	if err != nil {
		return "", nil, false
	}
	ref, err := url.Parse(html.UnescapeString(m[1]))
	if err != nil {
		return "", nil, false
	}
	fields = url.Values{}
	for _, in := range inputRE.FindAllStringSubmatch(m[2], -1) {
		fields.Set(in[1], html.UnescapeString(in[2]))
	}
	return base.ResolveReference(ref).String(), fields, true
}

// Start follows an authorization link as the person who asked for it
// does: it opens the link and, on agents-mcp's pages (those under
// agentsOrigin), follows their redirects and confirms on the page that
// asks, until the browser is sent elsewhere. It returns that URL: the
// authorization server's, the address a person could copy and send on.
// A link that does not lead to agents-mcp at all is returned as it is.
func (b *Browser) Start(t testing.TB, link, agentsOrigin string) string {
	t.Helper()
	u := link
	for range 10 {
		if !strings.HasPrefix(u, agentsOrigin+"/") {
			return u
		}
		resp, err := b.step.Get(u)
		if err != nil {
			t.Fatalf("GET %s: %v", u, err)
		}
		p := readPage(t, resp)
		switch action, fields, ok := p.Form(); {
		case p.Status >= 300 && p.Status < 400:
			u = resolve(t, u, p.Header.Get("Location"))
		case p.Status == http.StatusOK && ok:
			answer := b.Post(t, action, fields)
			if answer.Status < 300 || answer.Status >= 400 {
				t.Fatalf("confirming at %s: %d %s", action, answer.Status, answer.Body)
			}
			u = resolve(t, action, answer.Header.Get("Location"))
		default:
			t.Fatalf("the link's page %s: %d %s", u, p.Status, p.Body)
		}
	}
	t.Fatalf("the link %s did not leave %s", link, agentsOrigin)
	return ""
}

// Authorize follows an authorization link to its end, as the person who
// asked for it: [Browser.Start], then the authorization server's URL with
// every redirect (oauth2-mock-server grants at once and sends the browser
// back to agents-mcp's callback). It returns the last page.
func (b *Browser) Authorize(t testing.TB, link, agentsOrigin string) *Page {
	t.Helper()
	return b.Get(t, b.Start(t, link, agentsOrigin))
}

func resolve(t testing.TB, base, ref string) string {
	t.Helper()
	b, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	r, err := url.Parse(ref)
	if err != nil || ref == "" {
		t.Fatalf("redirect from %s to %q", base, ref)
	}
	return b.ResolveReference(r).String()
}

// StartInProcess does what [Browser.Start] does for a person who opens
// link and confirms, with agents-mcp's pages served by h in the test's
// process (the link's host need not be reachable): it returns the
// authorization server's URL the confirmation redirects to.
func StartInProcess(t testing.TB, h http.Handler, link string) string {
	t.Helper()
	u, err := url.Parse(link)
	if err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, u.RequestURI(), nil))
	p := &Page{Status: rec.Code, URL: link, Header: rec.Header(), Body: rec.Body.String()}
	action, fields, ok := p.Form()
	if p.Status != http.StatusOK || !ok {
		t.Fatalf("the link's page %s: %d %s", link, p.Status, p.Body)
	}
	a, err := url.Parse(action)
	if err != nil {
		t.Fatal(err)
	}
	req := httptest.NewRequest(http.MethodPost, a.RequestURI(), strings.NewReader(fields.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	for _, c := range rec.Result().Cookies() {
		req.AddCookie(c)
	}
	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusSeeOther {
		t.Fatalf("confirming %s: %d %s", link, rec.Code, rec.Body)
	}
	return rec.Header().Get("Location")
}
