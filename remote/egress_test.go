package remote

import (
	"bytes"
	"context"
	"net"
	"net/http"
	"net/http/httputil"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/egress"
	"github.com/agents-mcp/agents-mcp/internal/netnstest"
	"github.com/agents-mcp/agents-mcp/internal/testutil"
	"github.com/agents-mcp/agents-mcp/internal/validate"
)

// headerRecorder is an HTTP server that records the requests it gets and
// answers them with next (404 when nil): the "steal" server of the
// credential tests, on a port of its own.
type headerRecorder struct {
	*httpUpstream
	mu   sync.Mutex
	seen []http.Header
}

func newHeaderRecorder(t *testing.T, next http.Handler) *headerRecorder {
	hr := &headerRecorder{}
	hr.httpUpstream = serveHTTP(t, func() http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			hr.mu.Lock()
			hr.seen = append(hr.seen, r.Header.Clone())
			hr.mu.Unlock()
			if next == nil {
				http.NotFound(w, r)
				return
			}
			next.ServeHTTP(w, r)
		})
	})
	return hr
}

func (hr *headerRecorder) requests() int {
	hr.mu.Lock()
	defer hr.mu.Unlock()
	return len(hr.seen)
}

// sawSecret reports whether a request carried secret in any header.
func (hr *headerRecorder) sawSecret(secret string) bool {
	hr.mu.Lock()
	defer hr.mu.Unlock()
	for _, h := range hr.seen {
		for _, vs := range h {
			for _, v := range vs {
				if strings.Contains(v, secret) {
					return true
				}
			}
		}
	}
	return false
}

// waitFirstAttempt waits until the upstream's first connect attempt ended
// (it is no longer connecting).
func (e *env) waitFirstAttempt(name string) Status {
	e.t.Helper()
	var st Status
	testutil.Eventually(e.t, 10*time.Second, name+" is past its first connect attempt", func() bool {
		st = e.status(name)
		return st.State != StateConnecting
	})
	return st
}

// An upstream that redirects to another origin (here another port on
// loopback) must not hand it the configured credentials: the pool refuses
// redirects to another origin.
func TestCredentialsAreNotSentOnCrossOriginRedirects(t *testing.T) {
	t.Parallel()
	const secret = "sekrit-api-key-307"
	forEachHTTPTransport(t, func(t *testing.T, transport string, _ func(*mcp.Server) *httpUpstream) {
		steal := newHeaderRecorder(t, nil)
		redirector := serveHTTP(t, func() http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				http.Redirect(w, r, steal.URL(), http.StatusTemporaryRedirect)
			})
		})
		e := newEnv(t, fastOptions())
		cfg := httpConfig("redir", transport, redirector.URL())
		cfg.Headers = map[string]string{"X-Api-Key": secret, "Authorization": "Bearer " + secret}
		if err := e.pool.AddFromConfig(testCtx(t, 10*time.Second), cfg); err != nil {
			t.Fatal(err)
		}
		st := e.waitFirstAttempt("redir")
		time.Sleep(300 * time.Millisecond) // a few reconnect attempts too
		if steal.sawSecret(secret) {
			t.Fatalf("the server redirected to received the configured credentials")
		}
		if n := steal.requests(); n != 0 {
			t.Errorf("the server redirected to got %d requests; redirects to another origin are refused", n)
		}
		if st.State == StateReady || !strings.Contains(st.LastError+st.Reason, "another origin") {
			t.Errorf("status %s (%s, %s), want down, saying the redirect to another origin was refused", st.State, st.Reason, st.LastError)
		}
	})
}

// A redirect within the configured origin is followed, with the
// credentials.
func TestSameOriginRedirectsKeepCredentials(t *testing.T) {
	t.Parallel()
	const secret = "sekrit-same-origin"
	fx := newFixture("up")
	inner := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return fx.server }, nil)
	hs := serveHTTP(t, func() http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			switch {
			case r.URL.Path == "/old":
				http.Redirect(w, r, "/mcp", http.StatusPermanentRedirect)
			case r.Header.Get("X-Api-Key") != secret:
				http.Error(w, "unauthorized", http.StatusUnauthorized)
			default:
				inner.ServeHTTP(w, r)
			}
		})
	})
	e := newEnv(t, fastOptions())
	cfg := streamableConfig("moved", strings.TrimSuffix(hs.URL(), "/mcp")+"/old")
	cfg.Headers = map[string]string{"X-Api-Key": secret}
	e.add(cfg)
	mustText(t, e.caller(nil, ""), "moved__echo", `{"text":"x"}`)
}

// A legacy SSE upstream names the URL to POST to in its `endpoint` event;
// when that URL is on another origin, the POSTs go there without the
// configured credentials (and the GET of the stream keeps them).
func TestSSEEndpointOnAnotherOriginGetsNoCredentials(t *testing.T) {
	t.Parallel()
	const secret = "sekrit-sse-endpoint"
	fx := newFixture("up")
	var upstream *httpUpstream
	// The steal server passes everything on to the upstream, so that the
	// session works and its POSTs can be seen.
	steal := newHeaderRecorder(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		target, _ := url.Parse("http://" + upstream.addr)
		httputil.NewSingleHostReverseProxy(target).ServeHTTP(w, r)
	}))
	sse := mcp.NewSSEHandler(func(*http.Request) *mcp.Server { return fx.server }, nil)
	var streamAuth sync.Map
	upstream = serveHTTP(t, func() http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodGet {
				streamAuth.Store(r.Header.Get("Authorization"), true)
				// Name the steal server's origin in the endpoint event.
				w = &endpointRewriter{ResponseWriter: w, from: []byte("data: /mcp?"), to: []byte("data: http://" + steal.addr + "/mcp?")}
			}
			sse.ServeHTTP(w, r)
		})
	})
	e := newEnv(t, fastOptions())
	cfg := httpConfig("sse", TransportSSE, upstream.URL())
	cfg.Headers = map[string]string{"Authorization": "Bearer " + secret}
	e.add(cfg)
	mustText(t, e.caller(nil, ""), "sse__echo", `{"text":"x"}`)
	if steal.requests() == 0 {
		t.Fatal("the endpoint was not rewritten: no POST reached the other origin")
	}
	if steal.sawSecret(secret) {
		t.Error("the POSTs to the endpoint on another origin carried the configured credentials")
	}
	if _, ok := streamAuth.Load("Bearer " + secret); !ok {
		t.Error("the event stream's GET, on the configured origin, lacked the credentials")
	}
}

// endpointRewriter replaces from with to once in the response, as it is
// written: the legacy SSE handler's endpoint event.
type endpointRewriter struct {
	http.ResponseWriter
	from, to []byte
	done     bool
}

func (w *endpointRewriter) Write(p []byte) (int, error) {
	if !w.done && bytes.Contains(p, w.from) {
		w.done = true
		if _, err := w.ResponseWriter.Write(bytes.Replace(p, w.from, w.to, 1)); err != nil {
			return 0, err
		}
		return len(p), nil
	}
	return w.ResponseWriter.Write(p)
}

func (w *endpointRewriter) Flush() { w.ResponseWriter.(http.Flusher).Flush() }

// failingTransport fails the test on any request: the upstreams of
// refusal tests must never be contacted.
type failingTransport struct{ t *testing.T }

func (f failingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	f.t.Errorf("a refused upstream was contacted: %s %s", r.Method, r.URL.Redacted())
	return nil, http.ErrUseLastResponse
}

// noLookups fails the test on any name lookup.
type noLookups struct{ t *testing.T }

func (n noLookups) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	n.t.Errorf("%s was looked up", host)
	return nil, &net.DNSError{Err: "no lookups in this test", Name: host}
}

// Refused upstream URLs are EINVALID when added, before anything connects.
// The pool's transport fails the test on any request, so that a refusal
// that does not happen cannot send a packet anywhere either.
func TestAddRefusesURLsTheEgressPolicyRefuses(t *testing.T) {
	t.Parallel()
	policy := egress.Default().WithResolver(noLookups{t})
	policy.SetSelf("127.0.0.1:18080")
	opts := fastOptions()
	opts.Egress = policy
	opts.HTTPTransport = failingTransport{t}
	e := newEnv(t, opts)
	for _, tc := range []struct {
		url, why string
	}{
		{"http://169.254.169.254/latest/meta-data/", "link-local"},
		{"http://[fe80::1]/mcp", "link-local"},
		{"http://[fd00:ec2::254]/latest/meta-data/", "cloud metadata"},
		{"http://100.100.100.200/latest/meta-data/", "cloud metadata"},
		{"http://metadata.google.internal/computeMetadata/v1/", "cloud metadata service"},
		{"http://metadata/", "cloud metadata service"},
		{"http://127.0.0.1:18080/mcp", "own listen address"},
		{"http://localhost:18080/sse", "own listen address"},
	} {
		for _, transport := range []string{TransportStreamable, TransportSSE} {
			cfg := httpConfig("refused", transport, tc.url)
			err := e.pool.Add(testCtx(t, 5*time.Second), cfg)
			if agentsmcp.ErrorCode(err) != agentsmcp.EINVALID || !strings.Contains(err.Error(), tc.why) {
				t.Errorf("%s %s: %v, want EINVALID saying %q", transport, tc.url, err, tc.why)
			}
			if _, ok := e.pool.Status("refused"); ok {
				t.Fatalf("%s was added", tc.url)
			}
		}
	}
}

// Header values with CR, LF or other control characters are refused when
// configured, and the value (a secret) is not quoted.
func TestHeaderValuesWithControlCharactersAreRefused(t *testing.T) {
	t.Parallel()
	opts := fastOptions()
	opts.HTTPTransport = failingTransport{t}
	e := newEnv(t, opts)
	for _, v := range []string{"sekrit\r\nX-Injected: 1", "sekrit\nX-Injected: 1", "sekrit\r", "sek\x00rit", "sek\x7frit"} {
		cfg := streamableConfig("crlf", "http://127.0.0.1:1/mcp")
		cfg.Headers = map[string]string{"X-Api-Key": v}
		err := e.pool.Add(testCtx(t, 5*time.Second), cfg)
		if agentsmcp.ErrorCode(err) != agentsmcp.EINVALID || !strings.Contains(err.Error(), "control character") {
			t.Errorf("header value %q: %v, want EINVALID about a control character", v, err)
		}
		if err != nil && strings.Contains(err.Error(), "sek") {
			t.Errorf("the error quotes the header value: %v", err)
		}
	}
	cfg := streamableConfig("tab", "http://127.0.0.1:1/mcp").WithDefaults()
	cfg.Headers = map[string]string{"X-Api-Key": "a\tb"}
	if problems := validate.UpstreamConfigProblems(&cfg); len(problems) > 0 {
		t.Errorf("a tab in a header value is valid (RFC 9110), got %v", problems)
	}
}

// SharedUpstreams refuses before storing: no replica ever sees the
// definition.
func TestSharedAddRefusesBeforeStoring(t *testing.T) {
	t.Parallel()
	store := newStore(t)
	r := newReplica(t, store)
	err := r.shared.Add(testCtx(t, 5*time.Second), httpConfig("meta", TransportStreamable, "http://169.254.169.254/latest/meta-data/"))
	if agentsmcp.ErrorCode(err) != agentsmcp.EINVALID {
		t.Fatalf("add: %v, want EINVALID", err)
	}
	if names := storedNames(t, store); len(names) > 0 {
		t.Errorf("stored %v", names)
	}
}

// hostsResolver resolves names from a table, each name's answers in turn
// (the last one repeated): a name can resolve to one address when its URL
// is checked and to another when the pool connects (DNS rebinding).
type hostsResolver struct {
	mu      sync.Mutex
	answers map[string][]string
}

func (r *hostsResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	seq := r.answers[host]
	if len(seq) == 0 {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	answer := seq[0]
	if len(seq) > 1 {
		r.answers[host] = seq[1:]
	}
	return []netip.Addr{netip.MustParseAddr(answer)}, nil
}

// The pool's transport checks each connection: a name that resolved to
// loopback when the upstream was added and to the metadata address when the
// pool connects is refused at connect time. Run in a network namespace
// with only loopback, so that a missing check cannot leave the machine.
func TestPoolConnectionsAreCheckedAtConnectTime(t *testing.T) {
	if !netnstest.Isolate(t) {
		return
	}
	fx := newFixture("up")
	inner := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return fx.server }, nil)
	hs := serveHTTP(t, func() http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			// go-sdk's DNS-rebinding protection refuses the test names
			// on a loopback listener.
			r.Host = "127.0.0.1"
			inner.ServeHTTP(w, r)
		})
	})
	_, port, _ := net.SplitHostPort(hs.addr)
	resolver := &hostsResolver{answers: map[string][]string{
		"good.test":    {"127.0.0.1"},
		"rebind.test":  {"127.0.0.1", "169.254.169.254"},
		"rebind6.test": {"127.0.0.1", "fe80::1"},
	}}
	opts := fastOptions()
	opts.Egress = egress.Default().WithResolver(resolver)
	e := newEnv(t, opts)

	// The transport connects to the address the policy resolved.
	if err := e.pool.AddFromConfig(testCtx(t, 10*time.Second), streamableConfig("good", "http://good.test:"+port+"/mcp")); err != nil {
		t.Fatal(err)
	}
	if st := e.waitFirstAttempt("good"); st.State != StateReady {
		t.Fatalf("good.test (resolving to loopback): %s (%s, %s)", st.State, st.Reason, st.LastError)
	}
	mustText(t, e.caller(nil, ""), "good__echo", `{"text":"x"}`)

	for _, name := range []string{"rebind", "rebind6"} {
		if err := e.pool.AddFromConfig(testCtx(t, 10*time.Second), streamableConfig(name, "http://"+name+".test:"+port+"/mcp")); err != nil {
			t.Fatalf("%s: the first answer is loopback, so the URL check passes: %v", name, err)
		}
		st := e.waitFirstAttempt(name)
		if st.State == StateReady || !strings.Contains(st.LastError+st.Reason, "egress") {
			t.Errorf("%s: status %s (%s, %s), want down with an egress refusal", name, st.State, st.Reason, st.LastError)
		}
	}
}
