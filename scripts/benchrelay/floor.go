package main

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"time"
)

// The floor target: a relay that does no MCP work at all. A process of its own
// (this program with -serve-floor) that passes every HTTP request to the
// upstream and its response back byte for byte with net/http's
// httputil.ReverseProxy, flushing each write at once as an MCP relay must
// for event streams. It reads no JSON-RPC, so it has no tool catalog, no
// validation, no sessions of its own, no audit: what it costs is only the
// second loopback hop and net/http on both of its sides. Its ratios to
// direct in the same round are what a Go relay over net/http costs before
// it does anything of its own, and the gap between it and agents-mcp is
// what agents-mcp's own work costs.

// serveFloor serves the floor relay of upstream on addr until the process
// is killed.
func serveFloor(addr, upstream string) error {
	target, err := url.Parse(upstream)
	if err != nil {
		return err
	}
	proxy := &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			r.SetURL(target)
			r.Out.Host = target.Host
		},
		FlushInterval: -1, // event streams: every write at once
		Transport: &http.Transport{
			// As many idle connections to the upstream as clients, so
			// that 32 clients do not redial.
			MaxIdleConnsPerHost: 256,
			IdleConnTimeout:     time.Minute,
		},
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	return (&http.Server{Handler: proxy}).Serve(l)
}

// startFloor runs the floor relay of upstream (its base URL, without a
// path) as a process of its own.
func startFloor(upstream string) (*target, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	addr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	p, err := start(self, []string{"-serve-floor", addr, "-floor-upstream", upstream}, nil)
	if err != nil {
		return nil, err
	}
	p.url = "http://" + addr + "/mcp"
	if err := p.waitTool("streamable", "echo"); err != nil {
		p.stop()
		return nil, fmt.Errorf("floor relay: %w", err)
	}
	return &target{name: "floor", tool: "echo", proc: p,
		endpoints: map[string]string{"streamable": "http://" + addr + "/mcp", "sse": "http://" + addr + "/sse"}}, nil
}
