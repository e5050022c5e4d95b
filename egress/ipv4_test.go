package egress_test

import (
	"bufio"
	"context"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agents-mcp/agents-mcp/egress"
	"github.com/agents-mcp/agents-mcp/internal/netnstest"
)

// The cases of the WHATWG URL Standard's host parser (and its web platform
// tests) for hosts that end in a number.
func TestParseURLHost(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		host    string
		want    string // "" with numeric: an error
		numeric bool
	}{
		{"2852039166", "169.254.169.254", true},
		{"0xa9fea9fe", "169.254.169.254", true},
		{"0XA9FEA9FE", "169.254.169.254", true},
		{"169.254.43518", "169.254.169.254", true},
		{"169.16689662", "169.254.169.254", true},
		{"0251.0376.0251.0376", "169.254.169.254", true},
		{"0xa9.0xfe.0xa9.0xfe", "169.254.169.254", true},
		{"0251.254.0xa9.254", "169.254.169.254", true},
		{"169.254.169.254.", "169.254.169.254", true},
		{"127.1", "127.0.0.1", true},
		{"0x7f.1", "127.0.0.1", true},
		{"0", "0.0.0.0", true},
		{"0x", "0.0.0.0", true},
		{"0x.0x.0x.0x", "0.0.0.0", true},
		{"4294967295", "255.255.255.255", true},
		{"1.2.3.4", "1.2.3.4", true},
		{"010.0.0.1", "8.0.0.1", true},
		{"100.100.100.0200", "100.100.100.128", true},
		// Numeric, but no address.
		{"4294967296", "", true},
		{"0x100000000", "", true},
		{"1.2.3.256", "", true},
		{"256.1.1.1", "", true},
		{"1.2.3.4.5", "", true},
		{"08", "", true},
		{"0x1g", "", false}, // not a number: a name (that no resolver knows)
		{"example.123", "", true},
		{"foo.0x10", "", true},
		{"1..2", "", true},
		{"99999999999999999999999", "", true},
		{"0xffffffffffffffffffff", "", true},
		// Names.
		{"example.com", "", false},
		{"1.2.3.4.example", "", false},
		{"169.254.169.254.nip.io", "", false},
		{"123abc", "", false},
		{"localhost", "", false},
		{".", "", false},
	} {
		addr, numeric, err := egress.ParseURLHost(tc.host)
		switch {
		case numeric != tc.numeric:
			t.Errorf("%q: numeric=%v, want %v", tc.host, numeric, tc.numeric)
		case tc.want != "" && (err != nil || addr.String() != tc.want):
			t.Errorf("%q: %v, %v; want %s", tc.host, addr, err, tc.want)
		case tc.want == "" && tc.numeric && err == nil:
			t.Errorf("%q: %v, want an error", tc.host, addr)
		case !tc.numeric && (err != nil || addr.IsValid()):
			t.Errorf("%q is a name: got %v, %v", tc.host, addr, err)
		}
	}
}

// numericSpellings are URLs whose host a URL parser, inet_aton or a forward
// proxy reads as 169.254.169.254 (or another address), but that are not
// written as one.
var numericSpellings = []string{
	"http://2852039166/latest/meta-data/",
	"http://0xa9fea9fe/latest/meta-data/",
	"http://169.254.43518/latest/meta-data/",
	"http://0251.0376.0251.0376/latest/meta-data/",
	"http://0xA9.0xFE.0xA9.0xFE/",
	"http://169.254.169.254./latest/meta-data/",
	"https://2852039166:8443/",
	"http://１６９．２５４．１６９．２５４/",  // full-width digits and dots: net/http maps them to 169.254.169.254
	"http://1684301000/",       // 100.100.100.200, Alibaba Cloud's metadata service
	"http://100.100.100.0200/", // 100.100.100.128 to WHATWG, 100.100.100.200 (Alibaba metadata) to a decimal reader
	"http://127.1:9000/",       // an allowed address, but not in dotted decimal
	"http://010.0.0.1/",
	"http://1.2.3.256/", // ends in a number, no address
	"http://example.123/",
}

func TestNumericHostSpellingsAreRefused(t *testing.T) {
	t.Parallel()
	p, resolver := newPolicy(t, egress.Config{}, nil)
	ctx := context.Background()
	for _, u := range numericSpellings {
		err := p.CheckURL(ctx, u)
		if !egress.IsRefused(err) {
			t.Errorf("%s: %v, want refused", u, err)
		}
	}
	// The refusal says where a metadata spelling leads.
	err := p.CheckURL(ctx, "http://0xa9fea9fe/")
	if err == nil || !strings.Contains(err.Error(), "169.254.169.254") || !strings.Contains(err.Error(), "link-local or a cloud metadata") {
		t.Errorf("0xa9fea9fe: %v, want the metadata refusal naming 169.254.169.254", err)
	}
	err = p.CheckURL(ctx, "http://127.1:9000/")
	if err == nil || !strings.Contains(err.Error(), "write it as 127.0.0.1") {
		t.Errorf("127.1: %v, want a refusal that gives the dotted-decimal spelling", err)
	}
	// Full-width letters are mapped too: "ｍｅｔａｄａｔａ" is "metadata".
	if err := p.CheckURL(ctx, "http://ｍｅｔａｄａｔａ/computeMetadata/v1/"); err == nil || !strings.Contains(err.Error(), "cloud metadata service") {
		t.Errorf("full-width metadata: %v, want refused as a metadata name", err)
	}
	// Dotted decimal, and names that merely contain digits, still pass.
	for _, u := range []string{"http://127.0.0.1:9000/", "http://10.1.2.3/", "http://169.254.169.254.nip.io.example/", "http://api2.example/", "http://123abc.example/", "http://bücher.example/"} {
		if err := p.CheckURL(ctx, u); err != nil {
			t.Errorf("%s: %v, want allowed", u, err)
		}
	}
	for _, u := range numericSpellings {
		h := mustURL(t, u).Hostname()
		if resolver.wasAsked(h) {
			t.Errorf("%s was looked up: a numeric host must be refused before any lookup", h)
		}
	}
}

// proxyRecorder is a forward proxy on loopback that forwards nothing: it
// records the target of each request (the absolute URL of a plain-HTTP
// request, the authority of a CONNECT) and answers 502.
type proxyRecorder struct {
	ln      net.Listener
	mu      sync.Mutex
	targets []string
	wg      sync.WaitGroup
}

func newProxyRecorder(t *testing.T) *proxyRecorder {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	pr := &proxyRecorder{ln: ln}
	pr.wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			pr.wg.Go(func() { pr.serve(c) })
		}
	})
	t.Cleanup(func() {
		_ = ln.Close()
		pr.wg.Wait()
	})
	return pr
}

func (pr *proxyRecorder) serve(c net.Conn) {
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	req, err := http.ReadRequest(bufio.NewReader(c))
	if err != nil {
		return
	}
	target := req.RequestURI
	if req.Method == http.MethodConnect {
		target = "CONNECT " + req.Host
	}
	pr.mu.Lock()
	pr.targets = append(pr.targets, target)
	pr.mu.Unlock()
	_, _ = c.Write([]byte("HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"))
}

func (pr *proxyRecorder) seen() []string {
	pr.mu.Lock()
	defer pr.mu.Unlock()
	return append([]string(nil), pr.targets...)
}

// TestNumericHostsNeverReachAProxy sends requests through the policy's
// RoundTripper over a transport whose proxy is a loopback recorder, as
// HTTP_PROXY makes it: the proxy resolves names itself, so the request-time
// check is all that stands between a numeric spelling and the metadata
// service. No spelling may reach the proxy; a dotted-decimal private address
// does (which shows that the recorder sees what is sent). It runs in a
// network namespace with only loopback.
func TestNumericHostsNeverReachAProxy(t *testing.T) {
	if !netnstest.Isolate(t) {
		return
	}
	pr := newProxyRecorder(t)
	proxyURL := &url.URL{Scheme: "http", Host: pr.ln.Addr().String()}
	p, _ := newPolicy(t, egress.Config{}, nil)
	client := &http.Client{Timeout: 5 * time.Second, Transport: p.RoundTripper(&http.Transport{
		Proxy:       http.ProxyURL(proxyURL),
		DialContext: p.DialContext(&net.Dialer{Timeout: 2 * time.Second}),
	})}
	for _, u := range numericSpellings {
		res, err := client.Get(u)
		if err == nil {
			res.Body.Close()
		}
		if !egress.IsRefused(err) {
			t.Errorf("%s: %v, want an egress refusal before the proxy", u, err)
		}
	}
	if got := pr.seen(); len(got) != 0 {
		t.Errorf("the proxy was asked for %q", got)
	}
	res, err := client.Get("http://10.1.2.3/x")
	if err != nil {
		t.Fatalf("http://10.1.2.3/x through the proxy: %v", err)
	}
	res.Body.Close()
	if got := pr.seen(); len(got) != 1 || got[0] != "http://10.1.2.3/x" {
		t.Errorf("the proxy saw %q, want the one dotted-decimal request", got)
	}
}
