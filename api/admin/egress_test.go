package admin_test

import (
	"context"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/agents-mcp/agents-mcp/api/admin"
	"github.com/agents-mcp/agents-mcp/egress"
	"github.com/agents-mcp/agents-mcp/remote"
	"github.com/agents-mcp/agents-mcp/router"
)

// refuseAll fails the test on any request or name lookup: the URLs of this
// test must be refused before anything is sent, and a refusal that does not
// happen must not send a packet either.
type refuseAll struct{ t *testing.T }

func (f refuseAll) RoundTrip(r *http.Request) (*http.Response, error) {
	f.t.Errorf("a refused upstream was contacted: %s %s", r.Method, r.URL.Redacted())
	return nil, http.ErrUseLastResponse
}

func (f refuseAll) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	f.t.Errorf("%s was looked up", host)
	return nil, &net.DNSError{Err: "no lookups in this test", Name: host}
}

// POST /upstreams refuses SSRF targets with 400 and a message saying why,
// before any connection attempt.
func TestAddUpstreamRefusesEgressTargets(t *testing.T) {
	const ownAddr = "127.0.0.1:18080"
	policy := egress.Default().WithResolver(refuseAll{t})
	policy.SetSelf(ownAddr)
	pool := remote.NewPool(remote.Options{Registry: router.New(router.Options{Version: "test"}), Egress: policy, HTTPTransport: refuseAll{t}})
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = pool.Close(ctx)
	})
	e := newEnv(t, envOptions{edit: func(o *admin.Options) { o.Upstreams = pool }})
	path := admin.Prefix + "/upstreams"
	for _, c := range []struct {
		body map[string]any
		says string
	}{
		{map[string]any{"name": "meta", "transport": "streamable", "url": "http://169.254.169.254/latest/meta-data/"}, "cloud metadata"},
		{map[string]any{"name": "meta", "transport": "sse", "url": "http://[fe80::1]/sse"}, "link-local"},
		{map[string]any{"name": "meta", "transport": "streamable", "url": "http://[fd00:ec2::254]/latest/meta-data/"}, "cloud metadata"},
		{map[string]any{"name": "meta", "transport": "streamable", "url": "http://100.100.100.200/latest/meta-data/"}, "cloud metadata"},
		{map[string]any{"name": "meta", "transport": "streamable", "url": "http://metadata.google.internal/computeMetadata/v1/"}, "cloud metadata service"},
		{map[string]any{"name": "self", "transport": "streamable", "url": "http://" + ownAddr + "/mcp"}, "own listen address"},
		{map[string]any{"name": "self", "transport": "sse", "url": "http://localhost:18080/sse"}, "own listen address"},
		{map[string]any{"name": "crlf", "transport": "streamable", "url": "http://127.0.0.1:1/mcp",
			"headers": map[string]string{"X-Api-Key": "sekrit\r\nX-Injected: yes"}}, "control character"},
	} {
		eb := e.expectError(http.StatusBadRequest, admin.CodeInvalid, request{method: "POST", path: path, as: writeOnly, body: c.body})
		if !strings.Contains(eb.Message, c.says) {
			t.Errorf("%v: message %q does not say %q", c.body, eb.Message, c.says)
		}
		if strings.Contains(eb.Message, "sekrit") {
			t.Errorf("the message quotes a header value: %q", eb.Message)
		}
	}
	if st := pool.Statuses(); len(st) > 0 {
		t.Errorf("refused upstreams were added: %+v", st)
	}
}
