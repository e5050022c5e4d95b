package main

import (
	"cmp"
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"time"

	"github.com/agents-mcp/agents-mcp/cmd/agents-mcp/internal/config"
)

// healthcheckCommand GETs an endpoint of the local server (/healthz by
// default) and reports the outcome by its error, hence by the exit status:
// 0 for 200, 1 otherwise. It exists for container health checks, because
// the image has no curl or wget. An unspecified listen host (0.0.0.0, ::,
// empty) is checked on loopback.
func healthcheckCommand(ctx context.Context, args []string, getenv func(string) string, stderr io.Writer) error {
	fs := flag.NewFlagSet("agents-mcp healthcheck", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", cmp.Or(strings.TrimSpace(getenv("AGENTS_MCP_ADDR")), config.DefaultAddr), "address the server listens on (host:port)")
	path := fs.String("path", "/healthz", "endpoint to check: /healthz (liveness) or /readyz (readiness)")
	timeout := fs.Duration("timeout", 3*time.Second, "time allowed for the answer")
	if err := fs.Parse(args); err != nil {
		return err
	}
	host, port, err := net.SplitHostPort(*addr)
	if err != nil {
		return fmt.Errorf("healthcheck: address %q: %w", *addr, err)
	}
	if ip, perr := netip.ParseAddr(host); host == "" || (perr == nil && ip.IsUnspecified()) {
		host = "127.0.0.1"
	}
	if !strings.HasPrefix(*path, "/") {
		return fmt.Errorf("healthcheck: path %q must start with /", *path)
	}
	url := "http://" + net.JoinHostPort(host, port) + *path
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return fmt.Errorf("healthcheck: %w", err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("healthcheck: %w", err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("healthcheck: %s answered %s", url, resp.Status)
	}
	return nil
}
