package main

import (
	"context"
	"fmt"
	"io"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/api/telemetry"
	"github.com/agents-mcp/agents-mcp/router"

	"github.com/agents-mcp/agents-mcp/cmd/agents-mcp/internal/config"
)

// stdioCommand serves one MCP session over stdin/stdout. Logs go to stderr:
// stdout belongs to the protocol.
func stdioCommand(ctx context.Context, args []string, getenv func(string) string, stderr io.Writer) error {
	cfg, err := config.Load(args, getenv)
	if err != nil {
		return err
	}
	cfg.UseStdioLogDefault()
	logger := newLogger(cfg, stderr)
	cfg.LogSettings(ctx, logger)
	sec, err := newSecurity(cfg, logger)
	if err != nil {
		return err
	}
	// Checked before anything starts: a refused credential does no work.
	if sec.stdio, err = sec.authn.AuthenticateStdio(ctx, cfg.StdioAPIKey); err != nil {
		return err
	}
	shutdownTracing, err := telemetry.SetupTracing(ctx, telemetry.TracingConfig{ServiceName: "agents-mcp", Version: version, Logger: logger, StdoutInUse: true})
	if err != nil {
		return err
	}
	defer flushTraces(shutdownTracing, logger)
	a, err := assemble(ctx, cfg, sec, logger, "")
	if err != nil {
		return err
	}
	defer a.stop()
	if cfg.StdioServer != "" {
		// Checked once the store's virtual servers are read: an unknown
		// name, or one the key may not use, serves nothing.
		if _, ok := a.router.VirtualServer(cfg.StdioServer); !ok || !sec.stdio.MayUseVirtualServer(cfg.StdioServer) {
			return fmt.Errorf("--server: virtual server %q not found", cfg.StdioServer)
		}
	} else if !sec.stdio.MayUseVirtualServer("") {
		return fmt.Errorf("this key may use only its virtual servers: name one with --server")
	}
	return a.router.Server().Run(agentsmcp.WithTransport(agentsmcp.WithPrincipal(ctx, sec.stdio), telemetry.TransportStdio), &router.StdioTransport{Grace: cfg.ShutdownTimeout})
}
