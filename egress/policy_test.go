package egress_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agents-mcp/agents-mcp/egress"
	"github.com/agents-mcp/agents-mcp/internal/netnstest"
)

// hostsResolver resolves names from a table instead of DNS: each name has a
// sequence of answers, the last one repeated, so that a name can change
// its address between two lookups (DNS rebinding). Names not in the table
// do not resolve. It records what it was asked.
type hostsResolver struct {
	mu      sync.Mutex
	answers map[string][]string // name -> successive answers, "a,b" for several addresses
	asked   []string
}

func (r *hostsResolver) LookupNetIP(_ context.Context, network, host string) ([]netip.Addr, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.asked = append(r.asked, host)
	seq, ok := r.answers[host]
	if !ok || len(seq) == 0 {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	answer := seq[0]
	if len(seq) > 1 {
		r.answers[host] = seq[1:]
	}
	var out []netip.Addr
	for _, a := range strings.Split(answer, ",") {
		ip := netip.MustParseAddr(a)
		if network == "ip4" && !ip.Is4() || network == "ip6" && !ip.Is6() {
			continue
		}
		out = append(out, ip)
	}
	return out, nil
}

func (r *hostsResolver) wasAsked(host string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Contains(r.asked, host)
}

func newPolicy(t *testing.T, cfg egress.Config, answers map[string][]string) (*egress.Policy, *hostsResolver) {
	t.Helper()
	p, err := egress.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	r := &hostsResolver{answers: answers}
	return p.WithResolver(r), r
}

// These tests check URLs only: nothing here dials.
func TestCheckURL(t *testing.T) {
	t.Parallel()
	p, resolver := newPolicy(t, egress.Config{}, map[string][]string{
		"metadata.google.internal": {"169.254.169.254"},
		"rebind.example":           {"169.254.169.254"},
		"v6meta.example":           {"fd00:ec2::254"},
		"mixed.example":            {"10.0.0.7,169.254.169.254"},
		"internal.example":         {"10.0.0.5"},
		"self.example":             {"127.0.0.1"},
		"myself.example":           {"192.0.2.10"}, // a "local interface" address below
	})
	p.SetSelf("127.0.0.1:8080", "myself.example:7070")
	ctx := context.Background()
	for _, tc := range []struct {
		url     string
		refused string // a part of the reason; "" for allowed
	}{
		// Cloud metadata and link-local, by address.
		{"http://169.254.169.254/latest/meta-data/iam/security-credentials/", "link-local or a cloud metadata"},
		{"http://169.254.170.2/v2/credentials", "link-local"},
		{"http://[fe80::1]/", "link-local"},
		{"http://[fe80::1%25eth0]:8080/", "link-local"},
		{"http://[fd00:ec2::254]/latest/meta-data", "cloud metadata"},
		{"http://[fd20:ce::254]/", "cloud metadata"},
		{"http://100.100.100.200/latest/meta-data", "cloud metadata"},
		{"http://[::ffff:169.254.169.254]/", "link-local"},
		{"http://[64:ff9b::a9fe:a9fe]/", "link-local"},
		// By name, before any lookup.
		{"http://metadata.google.internal/computeMetadata/v1/", "cloud metadata service"},
		{"http://METADATA.Google.Internal./", "cloud metadata service"},
		{"http://metadata/", "cloud metadata service"},
		{"https://metadata.goog/", "cloud metadata service"},
		// By the address a name resolves to.
		{"http://rebind.example/", "link-local"},
		{"http://v6meta.example/", "cloud metadata"},
		{"http://mixed.example/", "link-local"},
		// The server itself.
		{"http://127.0.0.1:8080/mcp", "own listen address"},
		{"http://127.0.0.2:8080/mcp", "own listen address"},
		{"http://localhost:8080/mcp", "own listen address"},
		{"http://[::1]:8080/mcp", "own listen address"},
		{"http://0.0.0.0:8080/mcp", "own listen address"},
		{"http://self.example:8080/mcp", "own listen address"},
		{"http://myself.example:7070/mcp", "own listen address"},
		// Not http(s).
		{"ftp://example.com/", "scheme"},
		{"file:///etc/passwd", "scheme"},
		// Allowed: private ranges, loopback on other ports, public names,
		// names that do not resolve (checked again at connect time).
		{"http://127.0.0.1:8081/mcp", ""},
		{"http://localhost:9000/mcp", ""},
		{"http://10.1.2.3/mcp", ""},
		{"http://172.16.0.1/mcp", ""},
		{"http://192.168.1.1/mcp", ""},
		{"http://internal.example/mcp", ""},
		{"https://nowhere.example/mcp", ""},
		{"http://169.254.169.254.nip.io.example/", ""}, // a name, resolving to nothing here
	} {
		err := p.CheckURL(ctx, tc.url)
		switch {
		case tc.refused == "" && err != nil:
			t.Errorf("%s: refused: %v", tc.url, err)
		case tc.refused != "" && err == nil:
			t.Errorf("%s: allowed, want refused (%s)", tc.url, tc.refused)
		case tc.refused != "" && !strings.Contains(err.Error(), tc.refused):
			t.Errorf("%s: %v, want a reason with %q", tc.url, err, tc.refused)
		case tc.refused != "" && !egress.IsRefused(err):
			t.Errorf("%s: %v is not a RefusedError", tc.url, err)
		}
	}
	if resolver.wasAsked("metadata.google.internal") {
		t.Error("metadata.google.internal was looked up: metadata names must be refused before any lookup")
	}
}

func TestLocalInterfaceAddressesOnTheListenPortAreSelf(t *testing.T) {
	t.Parallel()
	p, _ := newPolicy(t, egress.Config{}, nil)
	p.SetSelf(":8080")
	local := localNonLoopbackAddr(t)
	if err := p.CheckURL(context.Background(), "http://"+net.JoinHostPort(local.String(), "8080")+"/mcp"); err == nil || !strings.Contains(err.Error(), "own listen address") {
		t.Errorf("%s:8080 (a local interface's address, the listen port): %v, want refused as the server itself", local, err)
	}
	if err := p.CheckURL(context.Background(), "http://"+net.JoinHostPort(local.String(), "8081")+"/mcp"); err != nil {
		t.Errorf("%s:8081: %v, want allowed (another port)", local, err)
	}
}

// localNonLoopbackAddr is an address of a local interface, or a skip.
func localNonLoopbackAddr(t *testing.T) netip.Addr {
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok {
			if ip, ok := netip.AddrFromSlice(n.IP); ok && !ip.Unmap().IsLoopback() && !ip.IsLinkLocalUnicast() {
				return ip.Unmap()
			}
		}
	}
	t.Skip("no local interface address but loopback and link-local")
	return netip.Addr{}
}

func TestAllowAndDenyLists(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	answers := func() map[string][]string {
		return map[string][]string{
			"metadata.google.internal": {"169.254.169.254"},
			"internal.example":         {"10.0.0.5"},
			"ecs.example":              {"169.254.170.2"},
			"rogue.corp.example":       {"169.254.169.254"},
			"api.corp.example":         {"10.0.0.9"},
		}
	}
	for _, tc := range []struct {
		name    string
		cfg     egress.Config
		allowed []string
		refused []string
	}{{
		name:    "allow one address of a refused range",
		cfg:     egress.Config{Allow: []string{"169.254.170.2"}},
		allowed: []string{"http://169.254.170.2/v2/credentials", "http://ecs.example/"},
		refused: []string{"http://169.254.169.254/", "http://[fe80::1]/"},
	}, {
		name:    "allow a metadata name",
		cfg:     egress.Config{Allow: []string{"metadata.google.internal"}},
		allowed: []string{"http://metadata.google.internal/computeMetadata/v1/"},
		refused: []string{"http://metadata/", "http://169.254.169.254/"},
	}, {
		name:    "a domain pattern does not lift the refusal of the addresses its names resolve to",
		cfg:     egress.Config{Allow: []string{"*.corp.example"}},
		allowed: []string{"http://api.corp.example/"},
		refused: []string{"http://rogue.corp.example/latest/meta-data"},
	}, {
		name:    "allow a CIDR",
		cfg:     egress.Config{Allow: []string{"fe80::/10"}},
		allowed: []string{"http://[fe80::1]/"},
		refused: []string{"http://169.254.169.254/"},
	}, {
		name:    "deny a private CIDR, by address and by resolution",
		cfg:     egress.Config{Deny: []string{"10.0.0.0/8"}},
		allowed: []string{"http://192.168.1.1/"},
		refused: []string{"http://10.1.2.3/", "http://internal.example/", "http://[::ffff:10.1.2.3]/"},
	}, {
		name:    "deny a domain and its subdomains",
		cfg:     egress.Config{Deny: []string{"*.corp.example", "exact.example"}},
		allowed: []string{"http://corp.example/", "http://other.example/", "http://sub.exact.example/"},
		refused: []string{"http://a.corp.example/", "http://a.b.CORP.example./", "http://exact.example/"},
	}, {
		name:    "deny wins over allow",
		cfg:     egress.Config{Allow: []string{"10.0.0.0/8", "169.254.0.0/16"}, Deny: []string{"10.0.0.5", "169.254.169.254"}},
		allowed: []string{"http://10.0.0.6/", "http://169.254.170.2/"},
		refused: []string{"http://10.0.0.5/", "http://internal.example/", "http://169.254.169.254/"},
	}, {
		name:    "allow never lifts the refusal of the server itself",
		cfg:     egress.Config{Allow: []string{"127.0.0.0/8", "localhost"}},
		allowed: []string{"http://127.0.0.1:8081/"},
		refused: []string{"http://127.0.0.1:8080/", "http://localhost:8080/"},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			p, _ := newPolicy(t, tc.cfg, answers())
			p.SetSelf("127.0.0.1:8080")
			for _, u := range tc.allowed {
				if err := p.CheckURL(ctx, u); err != nil {
					t.Errorf("%s: %v, want allowed", u, err)
				}
			}
			for _, u := range tc.refused {
				if err := p.CheckURL(ctx, u); !egress.IsRefused(err) {
					t.Errorf("%s: %v, want refused", u, err)
				}
			}
		})
	}
}

func TestConfigProblems(t *testing.T) {
	t.Parallel()
	cfg := egress.Config{
		Allow: []string{"10.0.0.0/8", "fd00::/8", "169.254.170.2", "[fe80::1]", "api.example.com", "*.svc.cluster.local", "10.0.0.0/33"},
		Deny:  []string{"", "bad host!", "http://x.example/", "*"},
	}
	got := cfg.Problems()
	want := []string{"allow[6]", "deny[0]", "deny[1]", "deny[2]", "deny[3]"}
	if len(got) != len(want) {
		t.Fatalf("problems %q, want one for each of %v", got, want)
	}
	for i, w := range want {
		if !strings.HasPrefix(got[i], w+": ") {
			t.Errorf("problem %d = %q, want it about %s", i, got[i], w)
		}
	}
	if _, err := egress.New(cfg); err == nil {
		t.Error("New accepted invalid entries")
	}
}

func TestSameOriginRedirects(t *testing.T) {
	t.Parallel()
	req := func(u string) *http.Request {
		r, err := http.NewRequest(http.MethodGet, u, nil)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	first := req("http://up.example:8000/mcp")
	for _, tc := range []struct {
		to string
		ok bool
	}{
		{"http://up.example:8000/other", true},
		{"http://UP.example:8000/other", true},
		{"http://up.example:8001/mcp", false},
		{"https://up.example:8000/mcp", false},
		{"http://evil.up.example:8000/mcp", false},
		{"http://169.254.169.254/", false},
	} {
		err := egress.SameOriginRedirects(req(tc.to), []*http.Request{first})
		if (err == nil) != tc.ok {
			t.Errorf("redirect to %s: %v, want ok=%v", tc.to, err, tc.ok)
		}
	}
	if !egress.SameOrigin(mustURL(t, "http://a.example/x"), mustURL(t, "http://A.example:80/y")) {
		t.Error("the default port is not made explicit")
	}
	var via []*http.Request
	for range egress.MaxRedirects {
		via = append(via, first)
	}
	if err := egress.SameOriginRedirects(req("http://up.example:8000/mcp"), via); err == nil {
		t.Errorf("redirect %d followed", egress.MaxRedirects+1)
	}
}

func mustURL(t *testing.T, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// TestDialTimeCheck connects through Policy.DialContext: a name that
// resolved to loopback when its URL was checked and to the metadata address
// when connecting (DNS rebinding) is refused at connect time. It runs in a
// network namespace with only loopback: were the check missing, the dial
// to 169.254.169.254 would fail there instead of leaving the machine.
func TestDialTimeCheck(t *testing.T) {
	if !netnstest.Isolate(t) {
		return
	}
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		fmt.Fprint(w, "hello")
	}))
	defer srv.Close()
	port := mustURL(t, srv.URL).Port()
	p, resolver := newPolicy(t, egress.Config{}, map[string][]string{
		"rebind.example": {"127.0.0.1", "169.254.169.254"},
		"good.example":   {"127.0.0.1"},
		"meta6.example":  {"fd00:ec2::254"},
		"both.example":   {"169.254.169.254,127.0.0.1"},
	})
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{
		DialContext: p.DialContext(&net.Dialer{Timeout: 2 * time.Second}),
	}}
	get := func(u string) (string, error) {
		res, err := client.Get(u)
		if err != nil {
			return "", err
		}
		defer res.Body.Close()
		b, err := io.ReadAll(res.Body)
		return string(b), err
	}
	ctx := context.Background()

	// The name is checked and connected to through the same resolver.
	if body, err := get("http://good.example:" + port + "/"); err != nil || body != "hello" {
		t.Fatalf("good.example (resolving to loopback): %q, %v", body, err)
	}

	rebind := "http://rebind.example:" + port + "/"
	if err := p.CheckURL(ctx, rebind); err != nil {
		t.Fatalf("the first answer (127.0.0.1) must pass the URL check: %v", err)
	}
	before := hits.Load()
	_, err := get(rebind)
	if !egress.IsRefused(err) || !strings.Contains(err.Error(), "169.254.169.254") {
		t.Errorf("rebind.example now resolving to 169.254.169.254: %v, want an egress refusal", err)
	}
	for _, u := range []string{"http://meta6.example/", "http://169.254.169.254/latest/meta-data", "http://[fe80::1]/"} {
		if _, err := get(u); !egress.IsRefused(err) {
			t.Errorf("%s: %v, want an egress refusal at connect time", u, err)
		}
	}
	// A name with a refused and an allowed address connects only to the
	// allowed one.
	if body, err := get("http://both.example:" + port + "/"); err != nil || body != "hello" {
		t.Errorf("both.example: %q, %v; want the loopback answer", body, err)
	}
	if hits.Load() != before+1 {
		t.Errorf("the server saw %d requests after the refusals, want 1 (both.example)", hits.Load()-before)
	}
	if !resolver.wasAsked("rebind.example") {
		t.Error("the dial did not resolve through the policy's resolver")
	}

	// The request-level check refuses before any dial, redirects included.
	plain := &http.Client{Timeout: 5 * time.Second, Transport: p.RoundTripper(http.DefaultTransport)}
	redirector := httptest.NewServer(http.RedirectHandler("http://169.254.169.254/latest/meta-data", http.StatusTemporaryRedirect))
	defer redirector.Close()
	if _, err := plain.Get(redirector.URL); !egress.IsRefused(err) {
		t.Errorf("redirect to 169.254.169.254 through RoundTripper: %v, want an egress refusal", err)
	}
	if _, err := plain.Get("http://metadata.google.internal/"); !egress.IsRefused(err) {
		t.Errorf("metadata.google.internal through RoundTripper: %v, want an egress refusal", err)
	}
	var refused *egress.RefusedError
	if _, err := plain.Get("http://[fe80::1]/"); !errors.As(err, &refused) {
		t.Errorf("[fe80::1] through RoundTripper: %v, want a RefusedError", err)
	}
}
