package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"sync"
	"sync/atomic"
	"time"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/agents"
	agenttools "github.com/agents-mcp/agents-mcp/agents/mcptools"
	"github.com/agents-mcp/agents-mcp/api/admin"
	"github.com/agents-mcp/agents-mcp/api/telemetry"
	"github.com/agents-mcp/agents-mcp/cmd/agents-mcp/internal/config"
	"github.com/agents-mcp/agents-mcp/credentials"
	"github.com/agents-mcp/agents-mcp/egress"
	"github.com/agents-mcp/agents-mcp/httptools"
	"github.com/agents-mcp/agents-mcp/localtools"
	"github.com/agents-mcp/agents-mcp/memory/auditlog"
	"github.com/agents-mcp/agents-mcp/memory/mcptools"
	"github.com/agents-mcp/agents-mcp/memory/quota"
	"github.com/agents-mcp/agents-mcp/memory/recall"
	"github.com/agents-mcp/agents-mcp/memory/secrets"
	"github.com/agents-mcp/agents-mcp/memory/vectorsync"
	"github.com/agents-mcp/agents-mcp/remote"
	"github.com/agents-mcp/agents-mcp/router"
	"github.com/agents-mcp/agents-mcp/router/conformance"
	"github.com/agents-mcp/agents-mcp/router/toolsearch"
)

// app is the assembled server, shared by every transport.
type app struct {
	router *router.Router
	// mcpHTTP is the router's HTTP face once serve has built it (nil
	// under stdio), for the fast-path counter of /metrics.
	mcpHTTP atomic.Pointer[router.HTTPHandler]
	local   *localtools.Provider
	memory  *memory
	pool    *remote.Pool
	// egress is the policy of the pool's outbound HTTP; serve tells it
	// the address it listens on.
	egress *egress.Policy
	// upstreams are the pool's upstreams added through the admin API,
	// kept in the store for every replica.
	upstreams *remote.SharedUpstreams
	// httpTools are the http_tools sources of the config file.
	httpTools *httptools.Sources
	// sharedHTTPTools keeps the sources added through the admin API in
	// the store, for every replica.
	sharedHTTPTools *httptools.SharedSources
	// executor runs tasks; stopped before the pool so that running steps
	// can still reach their upstreams.
	executor *agents.Executor
	// taskHub wakes this replica's task listen streams at each stored
	// transition of the executor (ADR 0010, D5); closed by stop.
	taskHub *router.TaskHub
	// states is the key and TTL of the requestState of input_required
	// answers: the agents' own and, sealed by the pool, upstreams'. The
	// pool seals its upstream task handles with the key too.
	states   *agenttools.RequestStates
	security *security
	metrics  *telemetry.Metrics
	recall   *recall.Searcher
	// toolIndex ranks the catalog by the words, for the agents.
	toolIndex *toolsearch.Index
	// toolRanker is toolIndex weighed by outcomes: search_tools, find_tools
	// and the admin API's tool search rank with it.
	toolRanker toolsearch.Ranker
	// toolPerf writes tool performance in batches.
	toolPerf *mcptools.Recorder
	// listings counts what tools/list answers cost, per catalog mode
	// (catalog.go).
	listings listingCosts
	// admin is the admin REST API (serve only); its operations are
	// stopped before the pool.
	admin *admin.Handler
	// credentials presents the credential store to integrations and runs
	// the OAuth flows (ADR 0012); nil without a credential store.
	credentials *credentials.Manager

	cancel  context.CancelFunc // ends the app's background goroutines
	wg      sync.WaitGroup     // the background goroutines
	closers []func() error     // components with goroutines of their own
}

// stop ends the background goroutines, waits for them (the embedded vector
// index saves itself on the way out), then closes the store.
func (a *app) stop() {
	// The listen streams end first: they only watch.
	a.taskHub.Close()
	if a.executor != nil {
		// Running steps get a moment to finish; the tasks stay resumable.
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_ = a.executor.Close(ctx)
		cancel()
	}
	if a.admin != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_ = a.admin.Close(ctx)
		cancel()
	}
	a.cancel()
	if a.pool != nil {
		// Stops every upstream session and reaps stdio children.
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		_ = a.pool.Close(ctx)
		cancel()
	}
	for _, c := range a.closers {
		_ = c()
	}
	a.wg.Wait()
	if a.memory != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = a.memory.close(ctx)
	}
}

// newLogger logs JSON lines; records logged with a request's context carry
// its request id and trace.
func newLogger(cfg *config.Config, w io.Writer) *slog.Logger {
	return slog.New(telemetry.NewLogHandler(slog.NewJSONHandler(w, &slog.HandlerOptions{Level: cfg.SlogLevel()})))
}

// assemble opens the memory layer and builds the router with its local
// tools. Background goroutines started here end when app.stop is called.
// listenAddr is the address serve will listen on ("" for stdio): the
// egress policy refuses it as an upstream.
func assemble(ctx context.Context, cfg *config.Config, sec *security, logger *slog.Logger, listenAddr string) (*app, error) {
	if err := os.MkdirAll(cfg.DataDir, 0o750); err != nil {
		return nil, fmt.Errorf("data dir: %w", err)
	}
	bg, cancel := context.WithCancel(context.Background())
	a := &app{cancel: cancel, security: sec, metrics: telemetry.NewMetrics(telemetry.MetricsOptions{Version: version, Logger: logger}),
		taskHub: router.NewTaskHub()}
	sec.metrics = a.metrics
	if err := a.listings.register(a.metrics.Registerer()); err != nil {
		cancel()
		return nil, fmt.Errorf("metrics: %w", err)
	}
	fail := func(err error) (*app, error) {
		a.stop()
		return nil, err
	}
	m, err := openMemory(ctx, cfg, logger)
	if err != nil {
		return fail(err)
	}
	a.memory = m
	logger.Info("memory", "store", m.where, "embedder", m.embedder.ID())
	recorder := mcptools.NewRecorder(m.store, mcptools.RecorderOptions{Logger: logger})
	a.toolPerf = recorder
	a.wg.Go(func() { recorder.Run(bg) })
	auditOpts := auditlog.Options{Retention: cfg.AuditRetention, MaxEntries: int64(cfg.AuditMaxEntries), Logger: logger}
	if cfg.AuditCalls == config.AuditCallsLog {
		auditOpts.CallLog = logger
	}
	sec.audit = auditlog.New(m.store, auditOpts)
	sec.authFailures = auditlog.NewSummarizer(sec.audit, auditlog.DefaultSummaryWindow)
	// The recorder stops after the summarizer, whose last summaries it
	// still has to write.
	auditCtx, stopAudit := context.WithCancel(context.WithoutCancel(bg))
	a.wg.Go(func() { sec.audit.Run(auditCtx) })
	a.wg.Go(func() {
		defer stopAudit()
		sec.authFailures.Run(bg)
	})

	// What callers' tool calls taught the ranking of search_tools and
	// find_tools, under memory.visibility.
	outcomes := &toolsearch.Outcomes{Family: agents.FamilyOf, Visibility: cfg.MemoryVisibility}
	a.router = router.New(router.Options{
		Version:      version,
		Logger:       logger,
		Instructions: "agents-mcp routes tool calls to local and remote MCP tools. Use search_tools (find_tools when only the discovery tools are listed: then call any tool found, directly or with call_tool) to find a tool by what it does; tools/validate checks arguments without calling a tool; query_memory recalls past tasks, insights and plans.",
		OnToolCall: func(c router.ToolCallRecord) {
			if c.Refused == "" { // tool performance counts calls that ran
				recorder.Record(c.Tool, c.Duration, c.Error)
				// The searches themselves serve no request: what they
				// return is learned from the calls that follow them.
				if c.Method == "" && c.Tool != toolsearch.ToolName && c.Tool != toolsearch.FindToolName {
					outcomes.Record(c.Principal, c.Tool, c.Error != "")
				}
			}
			sec.toolCalled(c)
		},
		OnTaskWrite: sec.taskWritten,
		Access:      sec.routerAccess(cfg.StdioServer),
		Catalog: router.CatalogOptions{Mode: cfg.CatalogMode, Pinned: cfg.CatalogPinned, PublishUpstreams: cfg.CatalogPublishUpstreams,
			MetaTools: []string{toolsearch.FindToolName}},
		OnToolsList: a.listings.record,
		// The call quotas of keys and virtual servers count in the store,
		// shared by every replica that uses it.
		CallQuotas: &quota.Calls{Counters: m.store},
	})
	if err := a.router.SetVirtualServers(cfg.VirtualServers); err != nil {
		return fail(err)
	}
	a.local = localtools.New()
	search := toolsearch.NewIndex(a.router, toolsearch.Options{Embedder: m.queryEmbedder, Logger: logger})
	a.closers = append(a.closers, search.Close)
	a.toolIndex = search
	// search_tools, find_tools and the admin API's GET /tools (the console's
	// Tools page) weigh what worked for the caller (ranking.go); the agents
	// rank by the words (they weigh reliability themselves).
	learned := &toolsearch.Learned{Inner: search, Evidence: outcomes}
	a.toolRanker = learned
	if err := toolsearch.AddSearchTools(a.local, learned); err != nil {
		return fail(err)
	}
	if err := toolsearch.AddFindTools(a.local, &toolsearch.Finder{Registry: a.router, Ranker: learned,
		Skip: []string{router.CallToolName}, Found: outcomes.Found}); err != nil {
		return fail(err)
	}
	if err := a.router.AddCallTool(a.local); err != nil {
		return fail(err)
	}
	searcher := &recall.Searcher{Index: m.index, Embedder: m.queryEmbedder, Learnings: m.store, Insights: m.insights, Patterns: m.store, Logger: logger}
	a.recall = searcher
	// Reads see the calls made before them (see Recorder.ReadThrough).
	performance := recorder.ReadThrough(m.store, 0)
	memoryTools := &mcptools.MemoryTools{
		Recall:          searcher,
		ToolPerformance: performance,
		Visibility:      cfg.MemoryVisibility,
		Written:         m.syncer.Notify,
		Logger:          logger,
	}
	if err := memoryTools.Register(a.local); err != nil {
		return fail(err)
	}
	executor, err := a.addAgents(cfg, m, searcher, search, performance, logger)
	if err != nil {
		return fail(err)
	}
	a.executor = executor
	if cfg.ConformanceFixtures {
		if err := conformance.Register(bg, a.router, a.local); err != nil {
			return fail(err)
		}
		logger.Warn("conformance fixtures are enabled; do not use this in production")
	}
	if err := a.router.AddProvider(ctx, a.local); err != nil {
		return fail(err)
	}
	m.run(bg, &a.wg, logger)
	a.egress, err = egress.New(cfg.Egress)
	if err != nil {
		return fail(err)
	}
	// The configured listen address; serve adds the bound one.
	a.egress.SetSelf(listenAddr)
	// One pooled transport, its dialer checking the egress policy, for
	// the upstreams and the HTTP tools alike.
	httpTransport := telemetry.PropagatingTransport(remote.NewHTTPTransport(a.egress))
	if m.credentials != nil {
		publicURL := cfg.PublicURL
		if publicURL == "" {
			publicURL = "http://" + listenAddr
		}
		// Token endpoints are reached under the egress policy of the
		// upstreams.
		a.credentials = credentials.New(credentials.Options{Store: m.credentials, BaseURL: publicURL, Logger: logger,
			HTTP: &http.Client{Transport: a.egress.RoundTripper(httpTransport),
				Timeout: 30 * time.Second, CheckRedirect: egress.SameOriginRedirects},
			PrincipalName: keyNames(cfg)})
	}
	a.pool = remote.NewPool(remote.Options{
		Registry: a.router, Logger: logger, ClientVersion: version, Egress: a.egress,
		// Bridged calls (ADR 0010 D4) are tasks in the same store, leased
		// under this replica's executor name.
		TaskStore: m.tasks, LeaseOwner: a.executor.Owner() + "/bridge", LeaseTTL: cfg.TaskLeaseTTL,
		HTTPTransport: httpTransport,
		StateKey:      a.states.Key, StateTTL: a.states.TTL,
		Credentials:    credentialSource(a.credentials),
		MaxResultBytes: cfg.MaxResultBytes,
		CacheReads:     cfg.CachedUpstreamReads,
	})
	// Upstream tools called as tasks (ADR 0010, D3): utk_ handles. The
	// backends own disjoint id prefixes (tsk_, utk_, fxt_), so the order in
	// which they are added does not matter.
	a.router.AddTaskBackend(a.pool.Tasks())
	a.metrics.SetSources(telemetry.Sources{
		KnownTool: func(name string) bool { _, ok := a.router.ToolSource(name); return ok },
		Upstreams: func() []telemetry.UpstreamState {
			var out []telemetry.UpstreamState
			for _, st := range a.pool.Statuses() {
				out = append(out, telemetry.UpstreamState{Name: st.Name, State: string(st.State), Tools: st.Tools})
			}
			return out
		},
		Tasks:                  m.store,
		OutboxBacklog:          m.store.OutboxBacklog,
		AuditDropped:           sec.audit.Dropped,
		AuditEvicted:           sec.audit.Evicted,
		ToolPerformanceDropped: recorder.Dropped,
		FastPathCalls: func() uint64 {
			if h := a.mcpHTTP.Load(); h != nil {
				return h.FastPathCalls()
			}
			return 0
		},
	})
	addUpstreams(ctx, a.pool, cfg.Upstreams, logger)
	a.httpTools = httptools.NewSources(a.router, httptools.Options{Egress: a.egress, HTTPTransport: httpTransport, Logger: logger,
		Auth: httpToolsAuth(a.credentials), MaxResultBytes: cfg.MaxResultBytes, Budget: cfg.OpenAPIBudget})
	addHTTPTools(ctx, a.httpTools, cfg.HTTPTools, logger)
	a.sharedHTTPTools = httptools.NewSharedSources(a.httpTools, m.upstreamDefinitions, logger)
	a.upstreams = remote.NewSharedUpstreams(a.pool, m.upstreamDefinitions, logger)
	syncCtx, cancelSync := context.WithTimeout(ctx, upstreamStartWait)
	if err := a.upstreams.Sync(syncCtx); err != nil {
		// The loop below keeps trying; the config file's upstreams serve
		// meanwhile.
		logger.Warn("the upstreams added through the admin API are not started yet", "error", err)
	}
	cancelSync()
	a.wg.Go(func() { a.upstreams.Run(bg, cfg.UpstreamSyncInterval) })
	// The HTTP tool sources of the store are loaded after the upstreams,
	// so that a name both hold (never both stored: they share the
	// store's names) goes the same way on every replica.
	syncCtx, cancelSync = context.WithTimeout(ctx, upstreamStartWait)
	if err := a.sharedHTTPTools.Sync(syncCtx); err != nil {
		logger.Warn("the http_tools sources added through the admin API are not loaded yet", "error", err)
	}
	cancelSync()
	a.wg.Go(func() { a.sharedHTTPTools.Run(bg, cfg.UpstreamSyncInterval) })
	// The virtual servers of the store, followed like its upstreams.
	syncCtx, cancelSync = context.WithTimeout(ctx, upstreamStartWait)
	if err := a.router.SyncVirtualServers(syncCtx, m.store); err != nil {
		logger.Warn("the virtual servers added through the admin API are not served yet", "error", err)
	}
	cancelSync()
	a.wg.Go(func() { a.router.RunVirtualServerSync(bg, m.store, cfg.UpstreamSyncInterval, logger) })
	// Tasks left running by a crash or a stop are resumed once the
	// upstreams are back.
	a.wg.Go(func() { executor.Run(bg) })
	if cfg.TaskRetention > 0 {
		// Every replica sweeps: deletes are idempotent, and no replica is
		// elected for it.
		sweeper := &agents.TaskSweeper{Tasks: m.tasks, Retention: cfg.TaskRetention, Logger: logger}
		a.wg.Go(func() { sweeper.Run(bg) })
	}
	if cfg.InsightRetention > 0 {
		// As for tasks, every replica sweeps; the syncer removes the
		// vectors of what it deletes.
		sweeper := &quota.InsightSweeper{Insights: m.store, Retention: cfg.InsightRetention, Logger: logger}
		a.wg.Go(func() { sweeper.Run(bg) })
	}
	return a, nil
}

// upstreamStartWait bounds how long start-up waits for the upstreams' first
// connect attempts; slower ones keep connecting in the background.
const upstreamStartWait = 10 * time.Second

// addUpstreams starts the configured upstreams concurrently and waits for
// their first connect attempts (within upstreamStartWait), so that a server
// that reports ready already lists the tools of the upstreams that answer.
func addUpstreams(ctx context.Context, pool *remote.Pool, upstreams []config.Upstream, logger *slog.Logger) {
	ctx, cancel := context.WithTimeout(ctx, upstreamStartWait)
	defer cancel()
	var wg sync.WaitGroup
	for _, u := range upstreams {
		wg.Go(func() {
			if err := pool.AddFromConfig(ctx, u); err != nil {
				logger.Error("upstream not added", "upstream", u, "error", err)
			}
		})
	}
	wg.Wait()
	for _, st := range pool.Statuses() {
		logger.Info("upstream", "name", st.Name, "state", string(st.State), "reason", st.Reason, "tools", st.Tools)
	}
}

// addHTTPTools loads the configured http_tools sources, each within
// upstreamStartWait (an OpenAPI document given by URL is fetched then). A
// source refused when added (a name in use, a base_url whose name resolves
// to a refused address) is logged and left out; one whose document is
// unusable is added without tools, and /readyz says why. Neither stops
// the server or the other sources.
func addHTTPTools(ctx context.Context, sources *httptools.Sources, list []config.HTTPSource, logger *slog.Logger) {
	for _, s := range list {
		// Each source gets its own bound, so that one slow document URL
		// does not leave the next sources without time.
		sctx, cancel := context.WithTimeout(ctx, upstreamStartWait)
		if err := sources.Add(sctx, s); err != nil {
			logger.Error("http_tools source not added", "source", s.Name, "error", err)
		}
		cancel()
	}
	for _, st := range sources.Statuses() {
		logger.Info("http_tools", "name", st.Name, "state", st.State, "reason", st.Reason, "tools", st.Tools, "problems", len(st.Problems))
	}
}

// httpToolsCheck lists the http_tools sources in /readyz, with the
// problems of each. A failed source never fails readiness: every other
// tool still works.
func (a *app) httpToolsCheck(context.Context) (any, error) {
	return a.sharedHTTPTools.Statuses(), nil
}

// upstreamsCheck summarises the upstream pool in /readyz. Upstreams that are
// down do not make the server unready: every other tool still works, and
// the summary names what is missing and why.
func (a *app) upstreamsCheck(context.Context) (any, error) {
	return a.pool.Summary(), nil
}

// adminAPI builds the admin REST API over the app's store, pool and
// executor; its writes go to the audit trail.
func (a *app) adminAPI(logger *slog.Logger) *admin.Handler {
	m := a.memory
	// The trail and tool performance are written in batches: their reads
	// first write what is pending, so that a user sees the calls made
	// before the read.
	a.admin = admin.New(admin.Options{
		Learnings: m.store, Insights: m.insights, Patterns: m.store, ToolPerformance: a.toolPerf.ReadThrough(m.store, 0),
		Tasks: m.tasks, Plans: m.plans, Thoughts: m.thoughts, AuditLog: a.security.audit.ReadThrough(m.store, 0),
		Recall: a.recall, Executor: a.executor, Resumer: adminResumer{a.executor}, Upstreams: a.upstreams, HTTPTools: a.sharedHTTPTools,
		VirtualServers: a.router, VirtualServerStore: a.memory.store,
		TaskCounter: m.store, OutboxBacklog: m.store.OutboxBacklog, Catalog: adminCatalog{router: a.router, ranker: a.toolRanker},
		ListingCosts: adminListingCosts{router: a.router, counts: &a.listings},
		Credentials:  credentialService(m.credentials), Authorizer: authorizer(a.credentials),
		Registrar: registrar(a.credentials, a.pool, m.credentials),
		Audit:     a.security.audit, Written: m.syncer.Notify, Logger: logger,
		Reindex: func(ctx context.Context, report func(admin.Progress)) error {
			// Re-embed everything over the live index (no reset: search
			// keeps answering meanwhile), then drop vectors of deleted
			// documents, then save the embedded index.
			err := m.syncer.Reconcile(ctx, true, func(p vectorsync.Progress) {
				report(admin.Progress{Stage: p.Namespace, Done: p.Done, Total: p.Total})
			})
			if err == nil {
				err = m.syncer.Reconcile(ctx, false, nil)
			}
			if d := m.embeddedLoaded(); err == nil && d != nil {
				err = d.Save()
			}
			return err
		},
	})
	return a.admin
}

// credentialService is c as the admin API takes it: a nil interface when
// there is no store, so that its routes answer 503.
func credentialService(c *secrets.Credentials) agentsmcp.CredentialService {
	if c == nil {
		return nil
	}
	return c
}

// authorizer is m as the admin API takes it, nil when there is none.
func authorizer(m *credentials.Manager) admin.Authorizer {
	if m == nil {
		return nil
	}
	return m
}

// registrar is the admin API's Registrar (ADR 0012 D6), nil without a
// credential store: an integration without url is an upstream, whose
// configured URL is the protected resource.
func registrar(m *credentials.Manager, pool *remote.Pool, store *secrets.Credentials) admin.Registrar {
	if m == nil || store == nil {
		return nil
	}
	return admin.ManagerRegistrar{Manager: m, Store: store, Endpoint: pool.Endpoint}
}

// keyNames returns the configured name of an API key's principal ID, so
// that the page of an authorization link names the person it is for.
func keyNames(cfg *config.Config) func(id string) string {
	names := map[string]string{}
	for _, k := range cfg.AuthConfig().Keys {
		if id := k.ID(); id != "" && k.Name != "" {
			names[id] = k.Name
		}
	}
	return func(id string) string { return names[id] }
}

// credentialSource is m as the pool takes it, nil when there is none.
func credentialSource(m *credentials.Manager) agentsmcp.CredentialSource {
	if m == nil {
		return nil
	}
	return m
}

// credentialAuthorizer presents the credential store to the HTTP tools
// (ADR 0012 D5) for the caller in ctx: the caller's own credential of the
// source, else the shared one.
type credentialAuthorizer struct{ m *credentials.Manager }

func (c credentialAuthorizer) Authorize(ctx context.Context, source string) (*agentsmcp.AppliedCredential, error) {
	return c.m.Credentials(ctx, source, agentsmcp.PrincipalIDFrom(ctx))
}

func (c credentialAuthorizer) Refused(ctx context.Context, source string, status int) error {
	return c.m.Refused(ctx, source, agentsmcp.PrincipalIDFrom(ctx), status)
}

// httpToolsAuth is m as the HTTP tools take it, nil when there is none.
func httpToolsAuth(m *credentials.Manager) httptools.Authorizer {
	if m == nil {
		return nil
	}
	return credentialAuthorizer{m}
}
