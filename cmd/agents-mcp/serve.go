package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"slices"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agents-mcp/agents-mcp/api"
	"github.com/agents-mcp/agents-mcp/api/admin"
	"github.com/agents-mcp/agents-mcp/api/console"
	"github.com/agents-mcp/agents-mcp/api/registry"
	"github.com/agents-mcp/agents-mcp/api/telemetry"
	"github.com/agents-mcp/agents-mcp/cmd/agents-mcp/internal/config"
	"github.com/agents-mcp/agents-mcp/credentials"
	"github.com/agents-mcp/agents-mcp/router"
)

func serveCommand(ctx context.Context, args []string, getenv func(string) string, stderr io.Writer) error {
	cfg, err := config.Load(args, getenv)
	if err != nil {
		return err
	}
	logger := newLogger(cfg, stderr)
	cfg.LogSettings(ctx, logger)
	if err := cfg.CheckExposure(); err != nil {
		return err
	}
	sec, err := newSecurity(cfg, logger)
	if err != nil {
		return err
	}
	if err := sec.authn.RefreshJWKS(ctx); err != nil {
		logger.Warn("the JWT issuer's keys could not be fetched at start-up; JWT requests fail until they can", "error", err)
	}
	shutdownTracing, err := telemetry.SetupTracing(ctx, telemetry.TracingConfig{ServiceName: "agents-mcp", Version: version, Logger: logger})
	if err != nil {
		return err
	}
	defer flushTraces(shutdownTracing, logger)
	a, err := assemble(ctx, cfg, sec, logger, cfg.Addr)
	if err != nil {
		return err
	}
	defer a.stop()

	httpOpts := router.HTTPOptions{
		Stateless:      cfg.Stateless,
		MaxBodyBytes:   cfg.MaxBodyBytes,
		AllowedHosts:   cfg.AllowedHosts,
		AllowedOrigins: publicOrigins(cfg),
		Logger:         logger,
		TaskHub:        a.taskHub,
		// Zero in the config is "never" / "no pings"; negative is that for
		// the handler.
		SessionTimeout: cmp.Or(cfg.SessionIdleTimeout, -1),
		KeepAlive:      cmp.Or(cfg.SessionKeepAlive, -1),
	}
	// Always: without credentials every request gets the anonymous
	// principal, so that the router sees one caller model.
	httpOpts.Authenticate = sec.mcpHTTP
	httpOpts.ChargeBatch = sec.chargeBatch()
	// A listen stream's task ids cost what a batch's messages do.
	httpOpts.ChargeListen = sec.chargeBatch()
	httpOpts.MaxListenTaskIDsPerPrincipal = cfg.QuotaListenTaskIDs
	if cfg.QuotaListenTaskIDs == 0 {
		httpOpts.MaxListenTaskIDsPerPrincipal = -1 // no bound, as configured
	}
	if !sec.authn.Configured() && !cfg.IsLoopbackAddr() {
		logger.Warn("serving without authentication on a non-loopback address (--insecure)", "addr", cfg.Addr)
	}
	if err := shareSessions(ctx, cfg, a, &httpOpts, logger); err != nil {
		return err
	}
	mcpHTTP := a.router.HTTPHandler(httpOpts)
	a.mcpHTTP.Store(mcpHTTP)
	mux := http.NewServeMux()
	// "/mcp/" and the like: the virtual servers' endpoints.
	for _, p := range []string{"/mcp", "/sse", "/messages", "/mcp/", "/sse/", "/messages/", router.RESTBridgePath} {
		mux.Handle(p, mcpHTTP)
	}
	// The MCP Registry API's read routes and the Server Cards of the
	// virtual servers, behind the MCP endpoints' credentials.
	publish := sec.mcpHTTP(registry.New(registry.Options{
		Servers: a.router, PublicURL: cfg.PublicURL,
		Tools: func(name string) []*mcp.Tool {
			tools, _, _ := a.router.VirtualServerTools(name)
			return tools
		},
	}))
	mux.Handle("GET "+registry.ServersPath, publish)
	mux.Handle("GET "+registry.ServersPath+"/", publish)
	mux.Handle("GET "+registry.ServerCardsPath, publish)
	sec.authn.RegisterMetadata(mux)
	mux.Handle("GET /metrics", sec.metricsHTTP(a.metrics.Handler()))
	// The admin API checks the scope of each route itself.
	mux.Handle(admin.Prefix+"/", sec.adminHTTP(a.adminAPI(logger)))
	// The console's static files need no credential: the person signs in
	// on its first page, and every figure comes from the API above.
	// (It answers other methods itself: a method in the pattern would
	// conflict with the API's pattern above.)
	mux.Handle(console.Prefix, console.Handler())
	mux.Handle("/admin", http.RedirectHandler(console.Prefix, http.StatusFound))
	if a.credentials != nil {
		// No agents-mcp credential: a person's browser has none. The
		// link's one-time token, then a nonce bound to the browser that
		// confirmed on its page, and the flow's state are the proof
		// (ADR 0012 D2).
		mux.Handle("GET "+credentials.StartPath, a.credentials)
		mux.Handle("POST "+credentials.StartPath, a.credentials)
		mux.Handle("GET "+credentials.CallbackPath, a.credentials)
		// Authorization servers fetch agents-mcp's Client ID Metadata
		// Document here, without a credential: it holds nothing secret.
		mux.Handle("GET "+credentials.ClientMetadataPath, a.credentials.ClientMetadataHandler())
	}
	health := &api.Health{
		Draining: a.router.Draining,
		Checks: map[string]api.ReadinessCheck{
			"router": func(context.Context) (any, error) {
				return map[string]any{"tools": len(a.router.Tools()), "problems": a.router.Problems()}, nil
			},
			"upstreams":    a.upstreamsCheck,
			"http_tools":   a.httpToolsCheck,
			"database":     a.memory.storeCheck,
			"vector_index": a.memory.indexCheck,
		},
		Detailed: sec.readinessDetailed,
	}
	mux.Handle("GET /healthz", health.LiveHandler())
	mux.Handle("GET /readyz", sec.readyHTTP(health.ReadyHandler()))

	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", cfg.Addr, err)
	}
	// With port 0 the bound port is known only now; the configured host
	// (a name, say) stays refused too.
	a.egress.SetSelf(cfg.Addr, ln.Addr().String())
	// Every route, the admin API and health included, is behind the
	// DNS-rebinding and cross-site check that /mcp has (the router's own
	// check of /mcp then finds nothing more to refuse).
	protect := router.RebindingProtection{
		AllowedHosts: cfg.AllowedHosts, AllowedOrigins: publicOrigins(cfg),
		NoCredentials: !sec.authn.Configured(),
	}
	srv := api.NewServer(telemetry.HTTPMiddleware(telemetry.RequestIDMiddleware(protect.Wrap(mux))), api.ServerOptions{
		ErrorLog: slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
	})
	serveErr := make(chan error, 1)
	go func() { serveErr <- srv.Serve(ln) }()
	logger.Info("serving", "addr", ln.Addr().String(), "mcp", "http://"+ln.Addr().String()+"/mcp", "sse", "http://"+ln.Addr().String()+"/sse", "rest", "http://"+ln.Addr().String()+router.RESTBridgePath, "version", version)

	select {
	case err := <-serveErr:
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	return shutdown(srv, serveErr, a.router, mcpHTTP, cfg.ShutdownTimeout, logger)
}

// publicOrigins is the configured allowed origins plus the public URL's
// own, which is agents-mcp's as browsers reach it: its pages post back to
// it (the confirmation of an authorization link), also through a proxy
// that rewrites Host, so that the request's own origin is not it.
func publicOrigins(cfg *config.Config) []string {
	origins := slices.Clone(cfg.AllowedOrigins)
	if u, err := url.Parse(cfg.PublicURL); err == nil && cfg.PublicURL != "" && u.Host != "" {
		origins = append(origins, u.Scheme+"://"+u.Host)
	}
	return origins
}

// flushTraces exports the spans still buffered, within a few seconds.
func flushTraces(shutdown func(context.Context) error, logger *slog.Logger) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := shutdown(ctx); err != nil {
		logger.Warn("flushing traces", "error", err)
	}
}

// lingerWait bounds how long shutdown waits, once the MCP requests and
// sessions are done, for the other HTTP requests (health, metrics) to end.
const lingerWait = time.Second

// sessionCloseWait bounds how long shutdown waits for the MCP sessions to
// end once their requests are done (see router.Router.CloseSessions).
const sessionCloseWait = 2 * time.Second

// shutdown stops accepting connections, lets in-flight MCP requests finish
// within timeout, then closes the long-lived streams (legacy SSE, streamable
// GET) that would otherwise keep the server open.
func shutdown(srv *http.Server, serveErr <-chan error, r *router.Router, mcpHTTP *router.HTTPHandler, timeout time.Duration, logger *slog.Logger) error {
	logger.Info("shutting down", "grace", timeout.String())
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	shutdownDone := make(chan error, 1)
	go func() { shutdownDone <- srv.Shutdown(ctx) }()

	if left := r.Drain(ctx); left > 0 {
		logger.Warn("shutdown deadline reached with requests still running", "requests", left)
	}
	if cut := mcpHTTP.Shutdown(ctx); cut > 0 {
		logger.Warn("shutdown deadline reached before every answer was delivered", "requests", cut)
	}
	closeCtx, cancelClose := context.WithTimeout(ctx, sessionCloseWait)
	if open := r.CloseSessions(closeCtx); open > 0 {
		// Nothing of ours runs in them any more (Drain returned): cut their
		// streams rather than wait out the whole grace period.
		logger.Warn("closing the connections of sessions that did not end", "sessions", open)
		_ = srv.Close()
	}
	cancelClose()

	var err error
	select {
	case err = <-shutdownDone:
	case <-time.After(lingerWait):
		// Nothing of ours runs any more; what keeps Shutdown waiting is
		// connections that never sent a request (net/http counts those
		// as busy for 5 s; browsers and Node's fetch open spare ones).
		_ = srv.Close()
		err = <-shutdownDone
	}
	if errors.Is(err, context.DeadlineExceeded) {
		logger.Warn("closing remaining connections")
		err = srv.Close()
	}
	if serr := <-serveErr; serr != nil && !errors.Is(serr, http.ErrServerClosed) {
		return serr
	}
	logger.Info("stopped")
	return err
}
