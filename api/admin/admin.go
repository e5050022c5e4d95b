package admin

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/go-chi/chi/v5"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/memory/recall"
)

// Prefix is the path under which [Handler] serves its routes: mount it
// with the prefix kept, e.g. mux.Handle(admin.Prefix+"/", h).
const Prefix = "/admin/v1"

// Recall is the semantic search behind the q parameter of the memory
// routes: what the query_memory tool uses, so that both answer alike.
// [*recall.Searcher] implements it. Each method returns the matches best
// first and the search mode (recall.ModeSemantic, or ModeLexical when it
// fell back to the store's word filter).
type Recall interface {
	SimilarLearnings(ctx context.Context, q *recall.Query, f agentsmcp.LearningFilter, max int) ([]recall.LearningMatch, string, error)
	SimilarInsights(ctx context.Context, q *recall.Query, f agentsmcp.InsightFilter, max int) ([]recall.InsightMatch, string, error)
	SimilarPatterns(ctx context.Context, q *recall.Query, f agentsmcp.PatternFilter, minSuccessRate float64, max int) ([]recall.PatternMatch, string, error)
}

// Upstreams manages the upstream MCP servers: the server passes a
// remote.SharedUpstreams, which keeps additions and removals (of
// config-file upstreams too) in the store for every replica; a bare
// remote.Pool serves one process without a store. Add must refuse stdio
// configs on its own too (both do); this package refuses them before
// calling it.
type Upstreams = agentsmcp.UpstreamManager

// TaskCanceller stops a task: agents.Executor implements it. Cancel
// returns the task as it is afterwards; ENOTFOUND for an unknown id.
type TaskCanceller interface {
	Cancel(ctx context.Context, id string) (*agentsmcp.Task, error)
}

// TaskResumer answers a paused task and restarts it: the server adapts
// agents.Executor.Resume. ENOTFOUND for an unknown id, ECONFLICT for a
// task that has ended, EINVALID for answers the task does not wait for.
type TaskResumer interface {
	Resume(ctx context.Context, id string, in ResumeInput) (*agentsmcp.Task, error)
}

// AuditRecorder takes the audit entries of admin writes. Record must not
// block on storage (the recorder batches and writes in the background)
// and must not keep e's fields from changing meaning: this package never
// touches e after the call.
type AuditRecorder interface {
	Record(e *agentsmcp.AuditEntry)
}

// Progress is how far a long operation got: Done of Total units of the
// named stage ("learnings", "insights", …).
type Progress struct {
	Stage string
	Done  int
	Total int
}

// ReindexFunc rebuilds the vector index from the store, calling report
// after each batch with the figures of the current stage (a stage per
// namespace; the operation adds up the stages), until done or ctx ends.
// It runs in an operation of its own, one at a time.
type ReindexFunc func(ctx context.Context, report func(Progress)) error

// Options configure [New]. Every service is optional: a route whose
// service is missing answers 503 unavailable, so the API, and its
// OpenAPI document, stay the same on every server.
type Options struct {
	Learnings       agentsmcp.LearningService
	Insights        agentsmcp.InsightService
	Patterns        agentsmcp.PatternService
	ToolPerformance agentsmcp.ToolPerformanceService
	Tasks           agentsmcp.TaskService
	Plans           agentsmcp.PlanService
	Thoughts        agentsmcp.ThoughtService
	// Catalog serves GET /tools.
	Catalog ToolCatalog
	// ListingCosts serves GET /tools/listing-cost.
	ListingCosts ListingCosts
	// TaskCounter and OutboxBacklog serve GET /summary.
	TaskCounter   agentsmcp.TaskCounter
	OutboxBacklog func(ctx context.Context) (pending int64, oldest time.Time, err error)
	// AuditLog serves GET /audit.
	AuditLog agentsmcp.AuditService
	// Recall serves the q parameter; without it q is a word filter of
	// the store (mode "lexical").
	Recall   Recall
	Executor TaskCanceller
	// Resumer serves POST /tasks/{id}/resume.
	Resumer   TaskResumer
	Upstreams Upstreams
	// HTTPTools serves /http-tools: the server passes an
	// httptools.SharedSources, which keeps additions and removals in the
	// store for every replica.
	HTTPTools HTTPTools
	// VirtualServers serves GET /virtual-servers; VirtualServerStore the
	// writes, kept in the store for every replica.
	VirtualServers     VirtualServers
	VirtualServerStore agentsmcp.VirtualServerService
	// Credentials serves /credentials: the store behind its sealing layer
	// (memory/secrets.Credentials). Authorizer serves
	// /credentials/authorize; AuthorizationTTL is how long the flows it
	// starts stay open (shown as expiresAt; default 10 min).
	Credentials      agentsmcp.CredentialService
	Authorizer       Authorizer
	AuthorizationTTL time.Duration
	// Registrar serves /credentials/discover and /credentials/register.
	Registrar Registrar
	// Reindex serves POST /reindex.
	Reindex ReindexFunc
	// Audit records every write; nil records nothing (and New logs a
	// warning).
	Audit AuditRecorder
	// Written is called after the API changed memory (an insight created
	// or deleted), to wake the vector index sync: vectorsync.Syncer.Notify.
	Written func()
	Logger  *slog.Logger

	// MaxBodyBytes bounds request bodies; default 1 MiB.
	MaxBodyBytes int64
	// RequestTimeout bounds the store and pool calls of one request;
	// default 30 s.
	RequestTimeout time.Duration
	// MaxOperations bounds the operations kept (running or ended); when
	// it is reached the oldest ended one is forgotten, and with every one
	// running a new one is refused (429). Default 64.
	MaxOperations int
	// OperationTTL is how long an ended operation stays visible; default
	// 1 h.
	OperationTTL time.Duration
	// RefreshTimeout bounds an upstream refresh operation; default 1 min.
	RefreshTimeout time.Duration
	// ReindexTimeout bounds a reindex operation; default 1 h.
	ReindexTimeout time.Duration
}

func (o Options) withDefaults() Options {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.MaxBodyBytes <= 0 {
		o.MaxBodyBytes = 1 << 20
	}
	if o.RequestTimeout <= 0 {
		o.RequestTimeout = 30 * time.Second
	}
	if o.MaxOperations <= 0 {
		o.MaxOperations = 64
	}
	if o.OperationTTL <= 0 {
		o.OperationTTL = time.Hour
	}
	if o.AuthorizationTTL <= 0 {
		o.AuthorizationTTL = 10 * time.Minute
	}
	if o.RefreshTimeout <= 0 {
		o.RefreshTimeout = time.Minute
	}
	if o.ReindexTimeout <= 0 {
		o.ReindexTimeout = time.Hour
	}
	return o
}

// Handler serves the admin API under [Prefix]. It owns the goroutines of
// the operations it starts: call [Handler.Close] when the server stops.
type Handler struct {
	opts   Options
	router chi.Router
	ops    *operations
}

// New returns the admin API. Mount it with its prefix kept:
//
//	mux.Handle(admin.Prefix+"/", auth.Authenticate(h))
//
// It checks scopes itself, from the principal of the request context.
func New(opts Options) *Handler {
	opts = opts.withDefaults()
	if opts.Audit == nil {
		opts.Logger.Warn("admin API without an audit recorder: admin writes are not audited")
	}
	h := &Handler{opts: opts, ops: newOperations(opts.MaxOperations, opts.OperationTTL, opts.Logger)}
	h.router = h.routes()
	return h
}

// ServeHTTP implements [http.Handler].
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h.router.ServeHTTP(w, r)
}

// Close cancels the running operations and waits for them to end, or for
// ctx. Operations started afterwards are refused (503).
func (h *Handler) Close(ctx context.Context) error {
	return h.ops.close(ctx)
}

// routes declares every route. Reads are wrapped by read (scope
// admin:read), writes by write (scope admin:write, body limit, audit).
func (h *Handler) routes() chi.Router {
	root := chi.NewRouter()
	root.NotFound(h.notFound)
	root.MethodNotAllowed(h.methodNotAllowed)
	root.Route(Prefix, func(r chi.Router) {
		r.NotFound(h.notFound)
		r.MethodNotAllowed(h.methodNotAllowed)

		r.Get("/openapi.json", h.read(h.openAPI))
		r.Get("/whoami", h.whoami)
		r.Get("/summary", h.read(h.summary))

		r.Get("/learnings", h.read(h.listLearnings))
		r.Get("/learnings/{id}", h.read(h.getLearning))
		r.Get("/tools", h.read(h.listTools))
		r.Get("/tools/performance", h.read(h.listToolPerformance))
		r.Get("/tools/listing-cost", h.read(h.listingCost))
		r.Get("/patterns", h.read(h.listPatterns))
		r.Get("/insights", h.read(h.listInsights))
		r.Post("/insights", h.write(h.createInsight, nil))
		r.Get("/insights/{id}", h.read(h.getInsight))
		r.Delete("/insights/{id}", h.write(h.deleteInsight, nil))

		r.Get("/tasks", h.read(h.listTasks))
		r.Get("/tasks/{id}", h.read(h.getTask))
		r.Post("/tasks/{id}/cancel", h.write(h.cancelTask, nil))
		r.Post("/tasks/{id}/resume", h.write(h.resumeTask, scrubResumeBody))
		r.Get("/plans/{id}", h.read(h.getPlan))
		r.Get("/thoughts/{id}", h.read(h.getThought))

		r.Get("/upstreams", h.read(h.listUpstreams))
		r.Post("/upstreams", h.write(h.addUpstream, scrubUpstreamBody))
		r.Get("/upstreams/{name}", h.read(h.getUpstream))
		r.Delete("/upstreams/{name}", h.write(h.removeUpstream, nil))
		r.Post("/upstreams/{name}/refresh", h.write(h.refreshUpstream, nil))

		r.Get("/http-tools", h.read(h.listHTTPTools))
		r.Post("/http-tools", h.writeLimit(max(h.opts.MaxBodyBytes, agentsmcp.MaxHTTPSourceConfigBytes), h.addHTTPTools, scrubHTTPToolsBody))
		r.Get("/http-tools/{name}", h.read(h.getHTTPTools))
		r.Delete("/http-tools/{name}", h.write(h.removeHTTPTools, nil))

		r.Get("/virtual-servers", h.read(h.listVirtualServers))
		r.Post("/virtual-servers", h.write(h.createVirtualServer, nil))
		r.Get("/virtual-servers/{name}", h.read(h.getVirtualServer))
		r.Delete("/virtual-servers/{name}", h.write(h.deleteVirtualServer, nil))

		r.Get("/credentials", h.read(h.listCredentials))
		r.Post("/credentials", h.write(h.createCredential, scrubCredentialBody))
		r.Delete("/credentials/{id}", h.write(h.deleteCredential, nil))
		r.Post("/credentials/authorize", h.write(h.startAuthorization, nil))
		r.Post("/credentials/discover", h.write(h.discoverOAuth, scrubOAuthDiscoveryBody))
		r.Post("/credentials/register", h.write(h.registerOAuth, scrubOAuthDiscoveryBody))

		r.Post("/reindex", h.write(h.reindex, nil))
		r.Get("/operations", h.read(h.listOperations))
		r.Get("/operations/{id}", h.read(h.getOperation))
		r.Post("/operations/{id}/cancel", h.write(h.cancelOperation, nil))

		r.Get("/audit", h.read(h.listAudit))
	})
	return root
}

// requestContext bounds the service calls of one request.
func (h *Handler) requestContext(r *http.Request) (context.Context, context.CancelFunc) {
	return context.WithTimeout(r.Context(), h.opts.RequestTimeout)
}

func (h *Handler) written() {
	if h.opts.Written != nil {
		h.opts.Written()
	}
}
