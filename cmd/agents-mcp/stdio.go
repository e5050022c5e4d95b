package main

import (
	"context"
	"io"

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
	logger := newLogger(cfg, stderr)
	cfg.LogSettings(ctx, logger)
	a, err := assemble(ctx, cfg, logger)
	if err != nil {
		return err
	}
	defer a.stop()
	return a.router.Server().Run(ctx, &router.StdioTransport{Grace: cfg.ShutdownTimeout})
}
