// Package egress decides which network destinations the server's outbound
// HTTP may reach: the upstream MCP servers today, and any other URL taken from
// configuration or from the network (HTTP tools) later.
//
// A [Policy] refuses, by default, the destinations an attacker who controls a
// URL wants most and an operator never means:
//
//   - cloud metadata services and link-local addresses ([DefaultDeniedNets],
//     [DefaultDeniedHosts]): 169.254.0.0/16, fe80::/10, the IPv6 metadata
//     addresses of AWS, GCP and Oracle, Alibaba's 100.100.100.200, and the
//     names metadata.google.internal, metadata and their kin;
//   - the server itself ([Policy.SetSelf]): its listen port on loopback, on
//     the unspecified address and on every address of a local interface, so
//     that it never becomes its own upstream.
//
// Private ranges (10/8, 172.16/12, 192.168/16) and loopback stay reachable:
// Kubernetes services live there, and so do tests. [Config] adjusts the
// defaults: Allow lifts the default refusals for the hosts and networks it
// lists, Deny adds refusals; Deny wins over Allow, and nothing lifts the
// refusal of the server itself.
//
// The policy is applied three times, so that DNS cannot get around it:
// [Policy.CheckURL] when a URL is accepted (names, literal addresses and the
// addresses the name resolves to now), [Policy.RoundTripper] on every request
// (redirects and URLs learned at run time included; names and literal
// addresses only), and [Policy.DialContext] on every connection, which
// resolves the name itself and connects only to the addresses it checked, so
// that a name which resolves elsewhere later (DNS rebinding) is still caught.
// Through an HTTP proxy the proxy resolves names: only the first two apply.
// That is why a host is read as what it reaches before it is checked: a
// host that ends in a number is an IPv4 address to URL parsers, resolvers
// and proxies ("2852039166", "0xa9fea9fe" and "169.254.43518" are all
// 169.254.169.254; see [ParseURLHost]), so it is checked as that address
// and refused unless written in dotted decimal, and a name outside ASCII is
// checked as the IDNA mapping net/http sends.
package egress

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"golang.org/x/net/idna"
)

// DefaultDeniedNets are the networks refused unless [Config.Allow] lists
// them: where cloud metadata services answer, with the instance's
// credentials, to anyone who asks from the machine.
var DefaultDeniedNets = []netip.Prefix{
	netip.MustParsePrefix("169.254.0.0/16"),         // IPv4 link-local: AWS, GCP, Azure, Oracle, DigitalOcean… (169.254.169.254), ECS (169.254.170.2)
	netip.MustParsePrefix("fe80::/10"),              // IPv6 link-local
	netip.MustParsePrefix("fd00:ec2::254/128"),      // AWS IMDS over IPv6
	netip.MustParsePrefix("fd20:ce::254/128"),       // GCP metadata over IPv6
	netip.MustParsePrefix("fd00:c1::a9fe:a9fe/128"), // Oracle Cloud IMDS over IPv6
	netip.MustParsePrefix("100.100.100.200/32"),     // Alibaba Cloud metadata
}

// DefaultDeniedHosts are the host names refused unless [Config.Allow] lists
// them: the names of cloud metadata services, refused before they are
// resolved.
var DefaultDeniedHosts = []string{
	"metadata",
	"metadata.google.internal",
	"metadata.goog",
	"instance-data",
	"instance-data.ec2.internal",
	"metadata.tencentyun.com",
}

// nat64 is the well-known NAT64 prefix: 64:ff9b::a9fe:a9fe reaches
// 169.254.169.254 through a NAT64 gateway.
var nat64 = netip.MustParsePrefix("64:ff9b::/96")

// Config adjusts a [Policy]. Each entry is a host name ("api.example.com"),
// a host name with a leading "*." for all its subdomains ("*.internal"), an
// IP address or a CIDR ("10.0.0.0/8", "fd00::/8").
type Config struct {
	// Allow lifts the default refusals for what it lists, e.g.
	// "169.254.170.2" to reach the ECS task metadata on purpose. A
	// refused address is lifted by its address or CIDR, or by a host
	// named exactly; a "*.domain" entry lifts name refusals only.
	Allow []string
	// Deny adds refusals; it wins over Allow.
	Deny []string
}

// Problems describes each invalid entry, as "allow[0]: …".
func (c Config) Problems() []string {
	var out []string
	for _, l := range []struct {
		name    string
		entries []string
	}{{"allow", c.Allow}, {"deny", c.Deny}} {
		for i, e := range l.entries {
			if _, err := parseRule(e); err != nil {
				out = append(out, fmt.Sprintf("%s[%d]: %v", l.name, i, err))
			}
		}
	}
	return out
}

// rules are the parsed entries of one list.
type rules struct {
	hosts   []string // exact names, lower case, no trailing dot
	domains []string // "*.x" entries as ".x"
	nets    []netip.Prefix
}

func (r *rules) add(entry string) error {
	rule, err := parseRule(entry)
	if err != nil {
		return err
	}
	switch {
	case rule.net.IsValid():
		r.nets = append(r.nets, rule.net)
	case strings.HasPrefix(rule.host, "."):
		r.domains = append(r.domains, rule.host)
	default:
		r.hosts = append(r.hosts, rule.host)
	}
	return nil
}

func (r *rules) matchesHost(host string) bool {
	if slices.Contains(r.hosts, host) {
		return true
	}
	for _, d := range r.domains {
		if strings.HasSuffix(host, d) {
			return true
		}
	}
	return false
}

func (r *rules) matchesAddr(ip netip.Addr) bool {
	for _, n := range r.nets {
		if n.Contains(ip) {
			return true
		}
	}
	return false
}

type rule struct {
	host string // a name, or ".suffix" for "*.suffix"
	net  netip.Prefix
}

func parseRule(entry string) (rule, error) {
	e := strings.TrimSpace(entry)
	if e == "" {
		return rule{}, errors.New("empty entry")
	}
	if strings.Contains(e, "/") {
		p, err := netip.ParsePrefix(e)
		if err != nil {
			return rule{}, fmt.Errorf("%q is not a CIDR such as 10.0.0.0/8", entry)
		}
		return rule{net: p.Masked()}, nil
	}
	if ip, err := netip.ParseAddr(strings.Trim(e, "[]")); err == nil {
		ip = ip.Unmap().WithZone("")
		return rule{net: netip.PrefixFrom(ip, ip.BitLen())}, nil
	}
	name := normalizeHost(e)
	wildcard := strings.HasPrefix(name, "*.")
	if wildcard {
		name = name[1:]
	}
	if !validHostName(strings.TrimPrefix(name, ".")) {
		return rule{}, fmt.Errorf("%q is not a host name, *.domain, IP address or CIDR", entry)
	}
	return rule{host: name}, nil
}

func validHostName(s string) bool {
	if s == "" || len(s) > 253 {
		return false
	}
	for _, label := range strings.Split(s, ".") {
		if label == "" || len(label) > 63 {
			return false
		}
		for _, r := range label {
			if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
				return false
			}
		}
	}
	return true
}

// asciiHost is host as net/http dials it or names it to a proxy: a host
// with characters outside ASCII goes through the IDNA lookup mapping
// (golang.org/x/net/idna's Lookup profile, which net/http uses), an ASCII
// one is unchanged.
func asciiHost(host string) (string, error) {
	for i := 0; i < len(host); i++ {
		if host[i] >= utf8.RuneSelf {
			return idna.Lookup.ToASCII(host)
		}
	}
	return host, nil
}

// normalizeHost lowers a host name and drops the trailing dot of a fully
// qualified one, so that "Metadata.Google.Internal." matches.
func normalizeHost(h string) string {
	return strings.TrimSuffix(strings.ToLower(strings.TrimSpace(h)), ".")
}

// Resolver looks up the addresses of a host name; *net.Resolver is one.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// Policy is the egress policy. Its zero value is not usable: build one with
// [New]. A Policy is safe for concurrent use.
type Policy struct {
	allow, deny rules
	resolver    Resolver
	// localAddrs lists the addresses of the local interfaces, for the
	// refusal of the server itself.
	localAddrs func() ([]netip.Addr, error)

	mu   sync.RWMutex
	self []selfAddr
}

// selfAddr is one address the server listens on.
type selfAddr struct {
	host string // as configured: a name, an address, or "" for all
	port uint16
}

// New returns the policy of cfg over the default refusals, resolving names
// with net.DefaultResolver. An invalid entry is an error naming it.
func New(cfg Config) (*Policy, error) {
	if problems := cfg.Problems(); len(problems) > 0 {
		return nil, fmt.Errorf("egress: %s", strings.Join(problems, "; "))
	}
	p := &Policy{resolver: net.DefaultResolver, localAddrs: interfaceAddrs}
	for _, e := range cfg.Allow {
		_ = p.allow.add(e)
	}
	for _, e := range cfg.Deny {
		_ = p.deny.add(e)
	}
	return p, nil
}

// Default returns the policy with the default refusals only.
func Default() *Policy {
	p, _ := New(Config{})
	return p
}

// WithResolver returns a copy of p that resolves names with r (tests use
// this to make a name resolve to chosen addresses without DNS).
func (p *Policy) WithResolver(r Resolver) *Policy {
	p.mu.RLock()
	defer p.mu.RUnlock()
	return &Policy{allow: p.allow, deny: p.deny, resolver: r, localAddrs: p.localAddrs, self: slices.Clone(p.self)}
}

// SetSelf records the addresses the server listens on (host:port, as
// configured or as bound; an empty host or an unspecified address means
// every interface), replacing those recorded before. Addresses that do not
// parse are ignored; port 0 (not bound yet) is ignored.
func (p *Policy) SetSelf(addrs ...string) {
	var self []selfAddr
	for _, a := range addrs {
		host, portText, err := net.SplitHostPort(a)
		if err != nil {
			continue
		}
		port, err := strconv.ParseUint(portText, 10, 16)
		if err != nil || port == 0 {
			continue
		}
		self = append(self, selfAddr{host: normalizeHost(host), port: uint16(port)})
	}
	p.mu.Lock()
	p.self = self
	p.mu.Unlock()
}

// RefusedError is the error of a destination the policy refuses.
type RefusedError struct {
	Host   string // the host as the URL or dial named it
	Addr   string // the address it resolved to, when the refusal is about one
	Reason string
}

func (e *RefusedError) Error() string {
	dest := e.Host
	if e.Addr != "" && e.Addr != e.Host {
		dest += " (" + e.Addr + ")"
	}
	return "egress to " + dest + " refused: " + e.Reason
}

// IsRefused reports whether err is, or wraps, a [RefusedError].
func IsRefused(err error) bool {
	var r *RefusedError
	return errors.As(err, &r)
}

// CheckURL checks an absolute http(s) URL before it is accepted: its host
// name, its literal address, and every address the name resolves to now. A
// name that does not resolve is not refused (it may exist later); each
// connection is checked again when it is made. ctx bounds the lookup.
func (p *Policy) CheckURL(ctx context.Context, raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return errors.New("is not a valid URL")
	}
	if err := p.CheckTarget(u); err != nil {
		return err
	}
	host, port := hostPort(u)
	if _, err := netip.ParseAddr(host); err == nil {
		return nil // checked by CheckTarget
	}
	addrs, err := p.resolver.LookupNetIP(ctx, "ip", host)
	if err != nil {
		return nil
	}
	for _, ip := range addrs {
		if err := p.checkAddr(host, ip, port); err != nil {
			return err
		}
	}
	return nil
}

// CheckTarget checks a request's URL without resolving its name: the
// scheme (http or https), the host name, and the address when the host is a
// literal one.
func (p *Policy) CheckTarget(u *url.URL) error {
	if u.Scheme != "http" && u.Scheme != "https" {
		return &RefusedError{Host: u.Host, Reason: fmt.Sprintf("the scheme must be http or https, not %q", u.Scheme)}
	}
	host, port := hostPort(u)
	if host == "" {
		return &RefusedError{Reason: "the URL has no host"}
	}
	return p.checkHost(host, port)
}

// checkHost checks a host name or literal address and its port. The host
// is read as what it reaches, not as written: a name in other scripts as
// the IDNA mapping that net/http applies before it dials or asks a proxy
// (full-width "ｍｅｔａｄａｔａ" is "metadata"), and a host that ends in
// a number as the IPv4 address URL parsers, resolvers and proxies make of
// it ([ParseURLHost]). Such an address must be written in dotted decimal:
// "2852039166", "0xa9fea9fe", "169.254.43518", "127.1" or "010.0.0.1" are
// refused whatever address they spell, because parsers disagree on some
// of them ("0200" is 128 to inet_aton and 200 to others), and a proxy,
// which resolves the name itself, connects where its own parser says.
func (p *Policy) checkHost(host string, port uint16) error {
	if ip, err := netip.ParseAddr(host); err == nil {
		return p.checkAddr(host, ip, port)
	}
	mapped, err := asciiHost(host)
	if err != nil {
		return &RefusedError{Host: host, Reason: "the host is not a valid host name"}
	}
	if ip, numeric, err := ParseURLHost(mapped); numeric {
		if err != nil {
			return &RefusedError{Host: host, Reason: "the host ends in a number but is not an IPv4 address; write an address in dotted decimal (a.b.c.d)"}
		}
		if err := p.checkAddr(host, ip, port); err != nil {
			return err
		}
		if host != ip.String() {
			return &RefusedError{Host: host, Addr: ip.String(), Reason: "the IPv4 address is not written in dotted decimal, and resolvers and proxies do not all read such a spelling alike; write it as " + ip.String()}
		}
		return nil
	}
	name := normalizeHost(mapped)
	if p.deny.matchesHost(name) {
		return &RefusedError{Host: host, Reason: "the host is in the egress deny list"}
	}
	if slices.Contains(DefaultDeniedHosts, name) && !p.allow.matchesHost(name) {
		return &RefusedError{Host: host, Reason: "it names a cloud metadata service (list it in egress.allow to reach it on purpose)"}
	}
	if p.isSelfName(name, port) {
		return &RefusedError{Host: host, Reason: "it is this server's own listen address"}
	}
	return nil
}

// checkAddr checks one address that host resolved to (or is).
func (p *Policy) checkAddr(host string, ip netip.Addr, port uint16) error {
	ip = ip.WithZone("").Unmap()
	addrs := []netip.Addr{ip}
	if nat64.Contains(ip) {
		b := ip.As16()
		addrs = append(addrs, netip.AddrFrom4([4]byte(b[12:16])))
	}
	// A host named exactly in the allow list may resolve to a refused
	// address (metadata.google.internal is 169.254.169.254); a domain
	// pattern may not: one DNS record under *.corp.example would
	// otherwise reach the metadata service. Addresses are allowed by
	// address or CIDR.
	name := normalizeHost(host)
	hostAllowed := name != "" && slices.Contains(p.allow.hosts, name)
	for _, a := range addrs {
		refused := func(reason string) error {
			return &RefusedError{Host: host, Addr: a.String(), Reason: reason}
		}
		if p.deny.matchesAddr(a) {
			return refused("the address is in the egress deny list")
		}
		if p.isSelfAddr(a, port) {
			return refused("it is this server's own listen address")
		}
		if hostAllowed || p.allow.matchesAddr(a) {
			continue
		}
		for _, n := range DefaultDeniedNets {
			if n.Contains(a) {
				return refused("the address is link-local or a cloud metadata service (list it in egress.allow to reach it on purpose)")
			}
		}
	}
	return nil
}

func (p *Policy) isSelfName(name string, port uint16) bool {
	p.mu.RLock()
	defer p.mu.RUnlock()
	for _, s := range p.self {
		if s.port == port && (name == "localhost" || s.host != "" && name == s.host) {
			return true
		}
	}
	return false
}

// isSelfAddr reports whether ip:port reaches this server: its port on a
// loopback, unspecified or local interface address, or on the address it
// was told to listen on.
func (p *Policy) isSelfAddr(ip netip.Addr, port uint16) bool {
	p.mu.RLock()
	var ports []selfAddr
	for _, s := range p.self {
		if s.port == port {
			ports = append(ports, s)
		}
	}
	p.mu.RUnlock()
	if len(ports) == 0 {
		return false
	}
	if ip.IsLoopback() || ip.IsUnspecified() {
		return true
	}
	for _, s := range ports {
		if a, err := netip.ParseAddr(s.host); err == nil && a.Unmap() == ip {
			return true
		}
	}
	local, _ := p.localAddrs()
	return slices.Contains(local, ip)
}

func interfaceAddrs() ([]netip.Addr, error) {
	as, err := net.InterfaceAddrs()
	if err != nil {
		return nil, err
	}
	out := make([]netip.Addr, 0, len(as))
	for _, a := range as {
		if n, ok := a.(*net.IPNet); ok {
			if ip, ok := netip.AddrFromSlice(n.IP); ok {
				out = append(out, ip.Unmap())
			}
		}
	}
	return out, nil
}

// hostPort is the URL's host (without brackets) and port, the scheme's
// default port when it names none.
func hostPort(u *url.URL) (string, uint16) {
	host := u.Hostname()
	if n, err := strconv.ParseUint(u.Port(), 10, 16); err == nil {
		return host, uint16(n)
	}
	if u.Scheme == "https" {
		return host, 443
	}
	return host, 80
}

// DialContext wraps d's DialContext: it checks the host, resolves it with
// the policy's resolver, and connects only to the addresses that pass, so
// that the address connected to is the address checked. Use it as an
// http.Transport's DialContext.
func (p *Policy) DialContext(d *net.Dialer) func(ctx context.Context, network, address string) (net.Conn, error) {
	return func(ctx context.Context, network, address string) (net.Conn, error) {
		host, portText, err := net.SplitHostPort(address)
		if err != nil {
			return nil, err
		}
		port64, err := strconv.ParseUint(portText, 10, 16)
		if err != nil {
			return nil, fmt.Errorf("dial %s: invalid port", address)
		}
		port := uint16(port64)
		if err := p.checkHost(host, port); err != nil {
			return nil, err
		}
		var addrs []netip.Addr
		if ip, err := netip.ParseAddr(host); err == nil {
			addrs = []netip.Addr{ip}
		} else {
			lookup := "ip"
			switch network {
			case "tcp4":
				lookup = "ip4"
			case "tcp6":
				lookup = "ip6"
			}
			if addrs, err = p.resolver.LookupNetIP(ctx, lookup, host); err != nil {
				return nil, err
			}
		}
		var firstErr error
		for _, ip := range addrs {
			if err := p.checkAddr(host, ip, port); err != nil {
				firstErr = cmpErr(firstErr, err)
				continue
			}
			conn, err := d.DialContext(ctx, network, netip.AddrPortFrom(ip, port).String())
			if err == nil {
				return conn, nil
			}
			firstErr = cmpErr(firstErr, err)
			if ctx.Err() != nil {
				break
			}
		}
		if firstErr == nil {
			firstErr = fmt.Errorf("dial %s: no addresses", address)
		}
		return nil, firstErr
	}
}

func cmpErr(first, next error) error {
	if first != nil {
		return first
	}
	return next
}

// RoundTripper wraps base so that every request, redirects included, is
// checked with [Policy.CheckTarget] before it is sent.
func (p *Policy) RoundTripper(base http.RoundTripper) http.RoundTripper {
	return &checkingTransport{policy: p, base: base}
}

type checkingTransport struct {
	policy *Policy
	base   http.RoundTripper
}

func (t *checkingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if err := t.policy.CheckTarget(req.URL); err != nil {
		if req.Body != nil {
			_ = req.Body.Close()
		}
		return nil, err
	}
	return t.base.RoundTrip(req)
}

// CloseIdleConnections passes the call on, so that http.Client's reaches
// the pooled transport.
func (t *checkingTransport) CloseIdleConnections() {
	if c, ok := t.base.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}
