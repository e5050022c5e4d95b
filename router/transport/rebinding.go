package transport

import (
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/agents-mcp/agents-mcp/router/internal/rpcerror"
)

// RebindingProtection rejects requests that a web page could have sent
// through DNS rebinding or cross-site, with HTTP 403:
//
//   - Host: when the connection arrived on a loopback address, the Host
//     header must name a loopback host (localhost, 127.0.0.0/8, ::1) or one of
//     AllowedHosts. On other addresses the Host is not checked unless
//     AllowedHosts is set, because the public name is not known here and
//     a server that has credentials needs them from a rebound page too;
//     with NoCredentials (--insecure), such a Host must be an IP address
//     or one of AllowedHosts. A Host that is the IP address the connection
//     arrived on always passes: rebinding needs a DNS name, and probes
//     (Kubernetes, load balancers) name the pod's IP.
//   - Origin: when present, it must be the request's own origin (same host
//     and port), a loopback origin on a loopback connection, or one of
//     AllowedOrigins. Requests without Origin (non-browser clients) pass.
//
// "*" in either list disables that check.
type RebindingProtection struct {
	AllowedHosts   []string // host names, with or without port
	AllowedOrigins []string // full origins: scheme://host[:port]
	// NoCredentials says that the server serves everyone as the anonymous
	// principal: a page that rebinds a name to any of its addresses would
	// act with every scope, so host names are refused on every connection.
	NoCredentials bool
}

// Wrap returns next behind the protection.
func (p RebindingProtection) Wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		localIP := ""
		if la, ok := req.Context().Value(http.LocalAddrContextKey).(net.Addr); ok && la != nil {
			localIP = hostOnly(la.String())
		}
		loopbackConn := isLoopbackHost(localIP)
		if !p.hostAllowed(req.Host, localIP, loopbackConn) {
			rpcerror.Write(w, http.StatusForbidden, jsonrpc.ID{}, jsonrpc.CodeInvalidRequest, "Forbidden: Host header "+quoteLimited(req.Host)+" is not allowed")
			return
		}
		if origin := req.Header.Get("Origin"); origin != "" && !p.originAllowed(origin, req.Host, loopbackConn) {
			rpcerror.Write(w, http.StatusForbidden, jsonrpc.ID{}, jsonrpc.CodeInvalidRequest, "Forbidden: Origin "+quoteLimited(origin)+" is not allowed")
			return
		}
		next.ServeHTTP(w, req)
	})
}

func (p RebindingProtection) hostAllowed(host, localIP string, loopbackConn bool) bool {
	if slices.Contains(p.AllowedHosts, "*") {
		return true
	}
	name := hostOnly(host)
	if ip := net.ParseIP(name); ip != nil && ip.Equal(net.ParseIP(localIP)) {
		return true
	}
	for _, h := range p.AllowedHosts {
		if strings.EqualFold(h, host) || strings.EqualFold(h, name) {
			return true
		}
	}
	if loopbackConn {
		return isLoopbackHost(name)
	}
	if p.NoCredentials {
		return net.ParseIP(name) != nil
	}
	return len(p.AllowedHosts) == 0
}

func (p RebindingProtection) originAllowed(origin, host string, loopbackConn bool) bool {
	if slices.Contains(p.AllowedOrigins, "*") {
		return true
	}
	for _, o := range p.AllowedOrigins {
		if strings.EqualFold(strings.TrimSuffix(o, "/"), strings.TrimSuffix(origin, "/")) {
			return true
		}
	}
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" {
		return false // includes the opaque origin "null"
	}
	if strings.EqualFold(u.Host, host) {
		return true
	}
	return loopbackConn && isLoopbackHost(u.Hostname())
}

func hostOnly(hostport string) string {
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		return h
	}
	return strings.Trim(hostport, "[]")
}

func isLoopbackHost(h string) bool {
	if strings.EqualFold(h, "localhost") {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

// quoteLimited quotes an attacker-controlled header for an error message
// without echoing an unbounded amount of it.
func quoteLimited(s string) string {
	if len(s) > 100 {
		s = s[:100] + "…"
	}
	return `"` + strings.ReplaceAll(s, `"`, `\"`) + `"`
}
