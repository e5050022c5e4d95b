package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"

	"github.com/agents-mcp/agents-mcp/cmd/agents-mcp/internal/config"
	"github.com/agents-mcp/agents-mcp/router"
	"github.com/agents-mcp/agents-mcp/router/conformance"
)

// app is the assembled server, shared by every transport.
type app struct {
	router *router.Router
	local  *router.LocalTools
	stop   context.CancelFunc // ends the app's background goroutines
}

func newLogger(cfg *config.Config, w io.Writer) *slog.Logger {
	return slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{Level: cfg.SlogLevel()}))
}

// assemble builds the router with its local tools. Background goroutines
// started here end when app.stop is called.
func assemble(ctx context.Context, cfg *config.Config, logger *slog.Logger) (*app, error) {
	if err := os.MkdirAll(cfg.DataDir, 0o750); err != nil {
		return nil, fmt.Errorf("data dir: %w", err)
	}
	r := router.New(router.Options{
		Version:      version,
		Logger:       logger,
		Instructions: "agents-mcp routes tool calls to local and remote MCP tools. Use search_tools to find a tool by what it does; tools/validate checks arguments without calling a tool.",
		KeepAlive:    keepAlive,
	})
	local := router.NewLocalTools()
	bg, stop := context.WithCancel(context.Background())
	a := &app{router: r, local: local, stop: stop}
	if err := router.AddSearchTools(local, r); err != nil {
		stop()
		return nil, err
	}
	if cfg.ConformanceFixtures {
		if err := conformance.Register(bg, r, local); err != nil {
			stop()
			return nil, err
		}
		logger.Warn("conformance fixtures are enabled; do not use this in production")
	}
	if err := r.AddProvider(ctx, local); err != nil {
		stop()
		return nil, err
	}
	if len(cfg.Upstreams) > 0 {
		logger.Warn("upstreams are configured but the remote pool is not implemented yet; they are ignored", "count", len(cfg.Upstreams))
	}
	return a, nil
}
