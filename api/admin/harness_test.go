package admin_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/pb33f/libopenapi"
	validator "github.com/pb33f/libopenapi-validator"
	"github.com/pb33f/libopenapi-validator/config"
	verrors "github.com/pb33f/libopenapi-validator/errors"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/agents"
	"github.com/agents-mcp/agents-mcp/api/admin"
	"github.com/agents-mcp/agents-mcp/credentials"
	"github.com/agents-mcp/agents-mcp/httptools"
	"github.com/agents-mcp/agents-mcp/internal/testutil"
	"github.com/agents-mcp/agents-mcp/memory/embed"
	"github.com/agents-mcp/agents-mcp/memory/recall"
	"github.com/agents-mcp/agents-mcp/memory/secrets"
	"github.com/agents-mcp/agents-mcp/memory/sqlite"
	"github.com/agents-mcp/agents-mcp/memory/vectors"
	"github.com/agents-mcp/agents-mcp/memory/vectorsync"
	"github.com/agents-mcp/agents-mcp/remote"
	"github.com/agents-mcp/agents-mcp/router"
	"github.com/agents-mcp/agents-mcp/router/toolsearch"
)

// The tests use no mocks: the store is a real SQLite database, semantic
// search a real Recall over an embedded vector index, upstreams real go-sdk
// MCP servers over streamable HTTP behind a real remote.Pool and router,
// tasks run on a real executor, and every response is checked against the
// embedded OpenAPI document by libopenapi-validator. The one stand-in is
// the authentication layer (package api/auth): testPrincipal puts the
// principal that the real middleware would into the request context.

// Headers through which tests choose the principal of a request.
const (
	principalHeader = "X-Test-Principal"
	scopesHeader    = "X-Test-Scopes"
)

// testPrincipal does what the authentication middleware does for the
// admin API: it puts the caller's principal in the request context (none
// when the request names none).
func testPrincipal(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if id := r.Header.Get(principalHeader); id != "" {
			var scopes []string
			if s := r.Header.Get(scopesHeader); s != "" {
				scopes = strings.Split(s, ",")
			}
			r = r.WithContext(agentsmcp.WithPrincipal(r.Context(), &agentsmcp.Principal{ID: id, Scopes: scopes}))
		}
		next.ServeHTTP(w, r)
	})
}

// storeRecorder is an AuditRecorder that writes each entry to the store at
// once (the real recorder batches in the background), so tests can read
// the trail right after a request.
type storeRecorder struct {
	t  *testing.T
	db *sqlite.DB
	// storeFails is set by tests that break the store on purpose.
	storeFails atomic.Bool

	mu      sync.Mutex
	entries []*agentsmcp.AuditEntry
}

func (s *storeRecorder) Record(e *agentsmcp.AuditEntry) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := s.db.CreateAuditEntries(ctx, []*agentsmcp.AuditEntry{e}); err != nil && !s.storeFails.Load() {
		s.t.Errorf("audit entry %+v not stored: %v", e, err)
	}
	s.mu.Lock()
	s.entries = append(s.entries, e)
	s.mu.Unlock()
}

func (s *storeRecorder) all() []*agentsmcp.AuditEntry {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.entries)
}

// upstreamToken is the credential the test upstream requires.
const upstreamToken = "s3cr3t-upstream-token"

// fixture is an upstream MCP server over streamable HTTP that requires
// "Authorization: Bearer <upstreamToken>".
type fixture struct {
	url     string
	started chan string // ids of "block" calls that began
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	fx := &fixture{started: make(chan string, 10)}
	s := mcp.NewServer(&mcp.Implementation{Name: "fixture", Version: "1.0.0"}, nil)
	obj := json.RawMessage(`{"type":"object"}`)
	s.AddTool(&mcp.Tool{Name: "echo", Description: "Returns its arguments as text", InputSchema: obj},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(req.Params.Arguments)}}}, nil
		})
	s.AddTool(&mcp.Tool{Name: "block", Description: "Blocks until cancelled", InputSchema: obj},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			fx.started <- string(req.Params.Arguments)
			<-ctx.Done()
			return nil, ctx.Err()
		})
	mcpHandler := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+upstreamToken {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		mcpHandler.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	fx.url = srv.URL + "/mcp"
	return fx
}

// env is a server assembled as cmd/agents-mcp does, around one admin API.
type env struct {
	t      *testing.T
	db     *sqlite.DB
	syncer *vectorsync.Syncer
	router *router.Router
	pool   *remote.Pool
	// httpTools serves /http-tools over the same router and store.
	httpTools *httptools.SharedSources
	executor  *agents.Executor
	fx        *fixture
	audit     *storeRecorder
	handler   *admin.Handler
	srv       *httptest.Server
}

type envOptions struct {
	noRecall bool
	edit     func(*admin.Options)
}

func newEnv(t *testing.T, eo ...envOptions) *env {
	t.Helper()
	var o envOptions
	if len(eo) > 0 {
		o = eo[0]
	}
	ctx := context.Background()
	db, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "admin.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	index := vectors.NewFlat(embed.HashDimensions)
	syncer, err := vectorsync.New(vectorsync.Config{Outbox: db, Index: index, Embedder: embed.Hash{},
		Sources: []vectorsync.Source{vectorsync.Learnings(db), vectorsync.Insights(db), vectorsync.Patterns(db)}})
	if err != nil {
		t.Fatal(err)
	}
	e := &env{t: t, db: db, syncer: syncer, fx: newFixture(t)}
	e.router = router.New(router.Options{Version: "test"})
	e.pool = remote.NewPool(remote.Options{Registry: e.router, MinBackoff: 50 * time.Millisecond, HealthInterval: time.Minute})
	t.Cleanup(func() {
		cctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := e.pool.Close(cctx); err != nil {
			t.Errorf("pool close: %v", err)
		}
	})
	e.httpTools = httptools.NewSharedSources(httptools.NewSources(e.router, httptools.Options{}), db, nil)
	e.executor = agents.NewExecutor(agents.ExecutorOptions{Tasks: db, Plans: db, Tools: e.router, StepTimeout: time.Minute})
	t.Cleanup(func() {
		cctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = e.executor.Close(cctx)
	})
	e.audit = &storeRecorder{t: t, db: db}
	opts := admin.Options{
		Learnings: db, Insights: db, Patterns: db, ToolPerformance: db, Tasks: db, Plans: db, Thoughts: db,
		AuditLog: db, Executor: e.executor, Resumer: executorResumer{e.executor}, Upstreams: e.pool, HTTPTools: e.httpTools, Audit: e.audit, Written: syncer.Notify,
		VirtualServers: e.router, VirtualServerStore: db, ListingCosts: routerListingCosts{e.router},
		Reindex: func(ctx context.Context, report func(admin.Progress)) error {
			return syncer.Reconcile(ctx, true, func(p vectorsync.Progress) {
				report(admin.Progress{Stage: p.Namespace, Done: p.Done, Total: p.Total})
			})
		},
	}
	// The catalog of the real router, ranked by its search_tools index
	// (cmd/agents-mcp's adminCatalog does the same for the server).
	opts.Catalog = routerCatalog{router: e.router, index: toolsearch.NewIndex(e.router, toolsearch.Options{})}
	// Credentials behind the sealing layer, with a key of the test.
	credKey := make([]byte, secrets.KeySize)
	_, _ = rand.Read(credKey)
	sealer, err := secrets.New(credKey)
	if err != nil {
		t.Fatal(err)
	}
	creds := &secrets.Credentials{CredentialService: db, Sealer: sealer}
	opts.Credentials = creds
	manager := credentials.New(credentials.Options{Store: creds, BaseURL: "http://127.0.0.1:8080"})
	opts.Authorizer, opts.Registrar = manager, admin.ManagerRegistrar{Manager: manager, Store: creds}
	if !o.noRecall {
		opts.Recall = &recall.Searcher{Index: index, Embedder: embed.Hash{}, Learnings: db, Insights: db, Patterns: db}
	}
	if o.edit != nil {
		o.edit(&opts)
	}
	e.handler = admin.New(opts)
	t.Cleanup(func() {
		cctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := e.handler.Close(cctx); err != nil {
			t.Errorf("admin close: %v", err)
		}
	})
	mux := http.NewServeMux()
	mux.Handle(admin.Prefix+"/", testPrincipal(e.handler))
	e.srv = httptest.NewServer(mux)
	t.Cleanup(e.srv.Close)
	return e
}

// addFixtureUpstream adds the fixture to the pool, as the config file
// would, and waits until it is ready.
func (e *env) addFixtureUpstream(name string) {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cfg := agentsmcp.UpstreamConfig{Name: name, Transport: remote.TransportStreamable, URL: e.fx.url, Timeout: 5 * time.Second,
		Headers: map[string]string{"Authorization": "Bearer " + upstreamToken}}
	if err := e.pool.AddFromConfig(ctx, cfg.WithDefaults()); err != nil {
		e.t.Fatal(err)
	}
	testutil.Eventually(e.t, 10*time.Second, "upstream "+name+" is ready", func() bool {
		st, _ := e.pool.Status(name)
		return st.State == remote.StateReady
	})
}

// drain indexes what the store holds, so that semantic search finds it.
func (e *env) drain() {
	e.t.Helper()
	if _, err := e.syncer.Drain(context.Background()); err != nil {
		e.t.Fatal(err)
	}
}

// Principals of the tests.
var (
	adminAll  = caller{id: "key:admin", scopes: agentsmcp.Scopes}
	readOnly  = caller{id: "key:reader", scopes: []string{agentsmcp.ScopeAdminRead}}
	writeOnly = caller{id: "key:writer", scopes: []string{agentsmcp.ScopeAdminWrite}}
	mcpOnly   = caller{id: "key:mcp", scopes: []string{agentsmcp.ScopeMCP}}
	nobody    = caller{}
)

type caller struct {
	id     string
	scopes []string
}

// request is one API call of a test.
type request struct {
	method, path string
	as           caller
	body         any    // marshalled to JSON, or sent as is when []byte or string
	contentType  string // default: application/json on writes; noContentType for none
	header       map[string]string
}

// noContentType as a request's contentType sends no Content-Type at all.
const noContentType = "none"

// response is what came back, checked against the OpenAPI document.
type response struct {
	status int
	header http.Header
	body   []byte
}

func (r *response) decode(t *testing.T, v any) {
	t.Helper()
	if err := json.Unmarshal(r.body, v); err != nil {
		t.Fatalf("decode %s: %v", r.body, err)
	}
}

// errorBody returns the error of an error response.
func (r *response) errorBody(t *testing.T) admin.ErrorBody {
	t.Helper()
	var b struct {
		Error admin.ErrorBody `json:"error"`
	}
	r.decode(t, &b)
	if b.Error.Code == "" {
		t.Fatalf("no error in %s", r.body)
	}
	return b.Error
}

// do sends req and checks the response against the OpenAPI document (and
// the request too, when the server accepted it: the document must not be
// stricter than the server).
func (e *env) do(req request) *response {
	e.t.Helper()
	var body io.Reader
	var raw []byte
	switch b := req.body.(type) {
	case nil:
	case []byte:
		raw = b
	case string:
		raw = []byte(b)
	default:
		var err error
		if raw, err = json.Marshal(b); err != nil {
			e.t.Fatal(err)
		}
	}
	if raw != nil {
		body = bytes.NewReader(raw)
	}
	hr, err := http.NewRequest(req.method, e.srv.URL+req.path, body)
	if err != nil {
		e.t.Fatal(err)
	}
	switch {
	case req.contentType == noContentType:
	case req.contentType != "":
		hr.Header.Set("Content-Type", req.contentType)
	case raw != nil || (req.method != "" && req.method != http.MethodGet && req.method != http.MethodHead):
		// Every write says JSON, even without a body.
		hr.Header.Set("Content-Type", "application/json")
	}
	for k, v := range req.header {
		hr.Header.Set(k, v)
	}
	if req.as.id != "" {
		hr.Header.Set(principalHeader, req.as.id)
		hr.Header.Set(scopesHeader, strings.Join(req.as.scopes, ","))
	}
	resp, err := http.DefaultClient.Do(hr)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	got, err := io.ReadAll(resp.Body)
	if err != nil {
		e.t.Fatal(err)
	}
	out := &response{status: resp.StatusCode, header: resp.Header, body: got}
	if resp.StatusCode != http.StatusMethodNotAllowed && strings.HasPrefix(req.path, admin.Prefix+"/") && !strings.Contains(req.path, "/nope") {
		checkAgainstDocument(e.t, req, raw, out)
	}
	return out
}

// expect sends req and fails unless the status is want.
func (e *env) expect(want int, req request) *response {
	e.t.Helper()
	r := e.do(req)
	if r.status != want {
		e.t.Fatalf("%s %s: status %d, want %d: %s", req.method, req.path, r.status, want, r.body)
	}
	return r
}

// expectError sends req and fails unless it is answered with status and
// error code.
func (e *env) expectError(status int, code string, req request) admin.ErrorBody {
	e.t.Helper()
	r := e.expect(status, req)
	eb := r.errorBody(e.t)
	if eb.Code != code {
		e.t.Fatalf("%s %s: error code %q, want %q: %s", req.method, req.path, eb.Code, code, r.body)
	}
	return eb
}

// freeFormPaths are the values whose members the document leaves open on
// purpose (arbitrary JSON, maps keyed by data): strict mode would report
// each member as undeclared. "**" also matches the members whose keys the
// validator writes in brackets ($.body.paths['/x']).
var freeFormPaths = []string{
	"$.body.items[*].arguments**",    // audit: the redacted request body
	"$.body.items[*].commonErrors**", // tool performance: error class → count
	"$.body.items[*].stepCounts**",   // tasks: step status → count
	"$.body.inputs**",                // task and plan inputs
	"$.body.steps[*].output**",       // step outputs
	"$.body.steps[*].arguments**",    // plan step arguments
	"$.body.plan.inputs**",           // the plan of a task
	"$.body.plan.steps[*].arguments**",
	"$.body.exposedTools[*].inputSchema**", // MCP tool schemas, as upstreams declare them
	"$.body.exposedTools[*].outputSchema**",
	"$.body.exposedTools[*].annotations**",
	"$.body.exposedTools[*]._meta.*",
	"$.body.aliases.*", // upstream aliases: exposed name → upstream tool name
	"$.body.items[*].aliases.*",
	"$.body.headers**", // upstream headers: name → value
	"$.body.rename.*",  // virtual servers: registry name → exposed name or description
	"$.body.descriptions.*",
	"$.body.items[*].rename.*",
	"$.body.items[*].descriptions.*",
	"$.body.info**", // the OpenAPI document itself
	"$.body.paths**",
	"$.body.components**",
	"$.body.servers**",
	"$.body.security**",
	"$.body.tags**",
}

var (
	docOnce      sync.Once
	docValidator validator.Validator
	docErr       error
	validateMu   sync.Mutex // the validator's caches are not documented as safe for concurrent use
)

func openAPIValidator(t *testing.T) validator.Validator {
	t.Helper()
	docOnce.Do(func() {
		doc, err := libopenapi.NewDocument(admin.OpenAPI)
		if err != nil {
			docErr = err
			return
		}
		// Strict mode reports properties that the document does not
		// declare: every field the server returns must be documented.
		v, errs := validator.NewValidator(doc, config.WithStrictMode(), config.WithFormatAssertions(),
			config.WithStrictIgnorePaths(freeFormPaths...), config.WithStrictIgnoredHeadersExtra("X-Content-Type-Options"))
		if len(errs) > 0 {
			docErr = fmt.Errorf("%v", errs)
			return
		}
		docValidator = v
	})
	if docErr != nil {
		t.Fatalf("the OpenAPI document does not load: %v", docErr)
	}
	return docValidator
}

func checkAgainstDocument(t *testing.T, req request, raw []byte, out *response) {
	t.Helper()
	v := openAPIValidator(t)
	newReq := func() *http.Request {
		var body io.Reader
		if raw != nil {
			body = bytes.NewReader(raw)
		}
		hr := httptest.NewRequest(req.method, req.path, body)
		hr.Header.Set("Authorization", "Bearer test")
		if raw != nil {
			hr.Header.Set("Content-Type", "application/json")
		}
		return hr
	}
	resp := &http.Response{
		StatusCode: out.status, Header: out.header, Body: io.NopCloser(bytes.NewReader(out.body)),
		Request: newReq(),
	}
	validateMu.Lock()
	defer validateMu.Unlock()
	if ok, errs := v.ValidateHttpResponse(newReq(), resp); !ok {
		t.Errorf("%s %s → %d does not match the OpenAPI document: %s\nbody: %s", req.method, req.path, out.status, describe(errs), truncate(out.body))
	}
	if out.status < 400 {
		if ok, errs := v.ValidateHttpRequest(newReq()); !ok {
			t.Errorf("%s %s was accepted by the server but the OpenAPI document refuses it: %s", req.method, req.path, describe(errs))
		}
	}
}

func describe(errs []*verrors.ValidationError) string {
	var b strings.Builder
	for _, e := range errs {
		fmt.Fprintf(&b, "\n  - %s: %s", e.Message, e.Reason)
		for _, se := range e.SchemaValidationErrors {
			fmt.Fprintf(&b, "\n      %s at %s (%s)", se.Reason, se.FieldPath, se.KeywordLocation)
		}
	}
	return b.String()
}

func truncate(b []byte) string {
	if len(b) > 2000 {
		return string(b[:2000]) + "…"
	}
	return string(b)
}

// waitOperation polls an operation until it ends.
func (e *env) waitOperation(location string) admin.Operation {
	e.t.Helper()
	var op admin.Operation
	testutil.Eventually(e.t, 20*time.Second, "operation "+location+" ends", func() bool {
		e.expect(http.StatusOK, request{method: "GET", path: location, as: readOnly}).decode(e.t, &op)
		return op.Status != admin.OperationRunning
	})
	return op
}

// routerCatalog serves GET /tools from the router and its search index,
// as the server's does.
type routerCatalog struct {
	router *router.Router
	index  *toolsearch.Index
}

func (c routerCatalog) Tools() []admin.CatalogTool {
	var out []admin.CatalogTool
	for _, t := range c.router.Tools() {
		src, _ := c.router.ToolSource(t.Name)
		out = append(out, admin.CatalogTool{Name: t.Name, Source: src, Description: t.Description})
	}
	return out
}

func (c routerCatalog) Search(ctx context.Context, query, scope string, limit int) ([]admin.CatalogTool, string, string) {
	res := c.index.Search(ctx, query, scope, limit)
	var out []admin.CatalogTool
	for _, m := range res.Tools {
		out = append(out, admin.CatalogTool{Name: m.Name, Source: m.Source, Description: m.Description, Score: m.Score, Why: m.Why})
	}
	return out, res.Mode, res.Note
}

// executorResumer adapts the executor as the server's adminResumer does.
type executorResumer struct{ executor *agents.Executor }

func (r executorResumer) Resume(ctx context.Context, id string, in admin.ResumeInput) (*agentsmcp.Task, error) {
	return r.executor.Resume(ctx, id, agents.ResumeRequest{Inputs: in.Inputs, Confirm: in.Confirm, Reject: in.Reject}, nil)
}

// routerListingCosts serves GET /tools/listing-cost from the real router's
// figures now, without counts (a harness without clients answers no pages).
type routerListingCosts struct{ router *router.Router }

func (c routerListingCosts) ListingCosts() admin.ListingCostPage {
	page := admin.NewListingCostPage("approximate", func(mode agentsmcp.CatalogMode) (int, int, int) {
		now := c.router.ListingCost(nil, mode)
		return now.Tools, now.Bytes, now.Tokens
	}, nil)
	page.VirtualServers = []admin.VirtualServerCost{}
	for _, vs := range c.router.VirtualServers() {
		full, disc, _ := c.router.VirtualListingCost(vs.Name)
		page.VirtualServers = append(page.VirtualServers, admin.VirtualServerCost{Name: vs.Name, Mode: string(vs.CatalogMode),
			Full: admin.ToolsCount{Tools: full.Tools, Bytes: full.Bytes, Tokens: full.Tokens}, Discovery: admin.ToolsCount{Tools: disc.Tools, Bytes: disc.Bytes, Tokens: disc.Tokens}})
	}
	return page
}
