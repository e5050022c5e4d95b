package egress

import (
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// MaxRedirects is how many redirects [SameOriginRedirects] follows.
const MaxRedirects = 3

// Origin is u's origin as scheme://host:port, lower case, with the
// scheme's default port made explicit, so that "http://A" and
// "http://a:80" are one origin.
func Origin(u *url.URL) string {
	host, port := hostPort(u)
	return strings.ToLower(u.Scheme) + "://" + strings.ToLower(host) + ":" + strconv.Itoa(int(port))
}

// SameOrigin reports whether a and b have the same scheme, host and port.
func SameOrigin(a, b *url.URL) bool { return Origin(a) == Origin(b) }

// SameOriginRedirects is an http.Client CheckRedirect for clients that
// carry credentials: it follows at most [MaxRedirects] redirects, and only
// within the origin of the first request. A redirect to another origin
// (another host, port or scheme) is refused with an error, so that no
// header the caller set, nor any the transport adds, ever reaches a host it
// was not meant for; net/http itself only drops Authorization and cookies,
// and keeps them for another port or a subdomain.
func SameOriginRedirects(req *http.Request, via []*http.Request) error {
	if len(via) >= MaxRedirects {
		return fmt.Errorf("stopped after %d redirects", MaxRedirects)
	}
	if len(via) > 0 && !SameOrigin(via[0].URL, req.URL) {
		return fmt.Errorf("refused a redirect from %s to another origin, %s", Origin(via[0].URL), Origin(req.URL))
	}
	return nil
}

// WithSameOriginRedirects returns c, or a copy of c (http.DefaultClient's
// settings when c is nil) whose CheckRedirect is [SameOriginRedirects] when
// c has none of its own.
func WithSameOriginRedirects(c *http.Client) *http.Client {
	if c == nil {
		return &http.Client{CheckRedirect: SameOriginRedirects}
	}
	if c.CheckRedirect != nil {
		return c
	}
	cp := *c
	cp.CheckRedirect = SameOriginRedirects
	return &cp
}
