// Package router is the MCP face of agents-mcp: one registry of tools from
// several [agentsmcp.ToolProvider]s, served through one go-sdk [mcp.Server]
// over streamable HTTP, legacy HTTP+SSE and stdio.
//
// The router owns what the SDK does not: the merged tool registry (with
// collision reports), argument validation with cached compiled schemas, the
// tools/validate method, the one middleware chain every entry point runs,
// and graceful draining. The transports live under router/transport and
// reach the router through interfaces of their own (transports.go). Everything else of the protocol (initialize and
// version negotiation, ping, logging/setLevel, pagination, resources, prompts,
// completion, subscriptions) is the SDK's.
//
// Indexes derived from the registry, such as the tool search of
// router/toolsearch, read it through [Router.ToolSnapshot] and its
// neighbours (registry_read.go); the router does not know them, and cmd
// wires them to it.
package router

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/internal/mcpserver"
	"github.com/agents-mcp/agents-mcp/internal/toolschema"
	"github.com/agents-mcp/agents-mcp/router/tasks"
	"github.com/agents-mcp/agents-mcp/router/transport/session"
	"github.com/agents-mcp/agents-mcp/router/validation"
)

// ServerName is the implementation name announced in initialize.
const ServerName = "agents-mcp"

// Options configure a [Router].
type Options struct {
	// Version is announced as serverInfo.version.
	Version string
	// Instructions are sent to clients in the initialize result.
	Instructions string
	// Logger receives the router's logs; nil discards them.
	Logger *slog.Logger
	// PageSize bounds list results (tools/list, resources/list, …); zero
	// means the SDK default.
	PageSize int
	// OnToolCall, if set, is told about every tools/call, from a client or
	// in-process, after it ended or was refused (Refused says why). It runs
	// on the call's goroutine before the answer is sent, so it must not
	// block: hand the record to a queue.
	OnToolCall func(ToolCallRecord)
	// OnTaskWrite, if set, is told about every tasks/update and
	// tasks/cancel that reached a task backend, as OnToolCall is about
	// calls, and under the same rule: it must not block.
	OnTaskWrite func(TaskWriteRecord)
	// Access controls which principal may use which tool, resource and
	// prompt.
	Access AccessOptions
	// Catalog configures the catalog modes: what tools/list shows
	// (catalog_mode.go).
	Catalog CatalogOptions
	// OnToolsList, if set, is told about every page of tools/list answered
	// to a client, with its size (catalog_cost.go). It runs on the
	// request's goroutine and must not block.
	OnToolsList func(ToolsListRecord)
	// CallQuotas, if set, charges every tool call against the call
	// quotas of its caller's key and of the virtual server it came
	// through (call_quota.go); nil enforces none.
	CallQuotas agentsmcp.CallQuotaEnforcer
}

// ToolCallRecord describes one finished or refused tools/call, or one
// request for a resource, resource template or prompt refused by the
// caller's allowlist (Method says which).
type ToolCallRecord struct {
	// Tool is the tool name; for a refused request of another Method, the
	// resource URI, template or prompt name asked for.
	Tool string
	// Method is empty for tools/call; otherwise the refused request's
	// method: resources/read, resources/subscribe, subscriptions/listen
	// (one record per refused URI), prompts/get or completion/complete.
	Method   string
	Source   string // the provider's name, "local" or an upstream; empty when refused
	Duration time.Duration
	// Error is empty on success; otherwise the error result's text, or the
	// provider's error message.
	Error string
	// Refused, when not empty, says why the provider was not called
	// ("invalid arguments: …", "not allowed", "rate limited").
	Refused string
	// Principal is the caller's id; empty for in-process calls made
	// without one.
	Principal string
	RequestID string
	// Transport is how the caller came ([agentsmcp.TransportFrom]); a
	// task's steps inherit the transport of the call that started the
	// task, if it is still known.
	Transport string
	// Arguments are the call's arguments as sent, secrets included: redact
	// before storing them.
	Arguments json.RawMessage
	// Client and ClientVersion are the caller's clientInfo, and
	// ClientProfile the ID of its [ClientProfile]; all empty for
	// in-process calls, and the names empty for a client that sent none.
	Client, ClientVersion, ClientProfile string
}

// Router merges the tools of its providers into one MCP server.
//
// A Router is safe for concurrent use. Tool names are unique across providers:
// the provider added first keeps a contested name, and the collision is
// reported by [Router.AddProvider] and [Router.Refresh] and kept in
// [Router.Problems].
type Router struct {
	server *mcp.Server
	logger *slog.Logger
	drain  *drainTracker
	// sessionIDs mints the ids of stateful streamable sessions, so that
	// a session shared by replicas opens again under its id.
	sessionIDs session.IDMint

	mu        sync.RWMutex
	providers []agentsmcp.ToolProvider
	tools     map[string]*toolEntry // client-visible name → entry
	problems  map[string][]string   // provider → problems found at its last listing
	completer map[completionKey]CompletionFunc
	// gen counts changes of tools; watchers are signalled after each (see
	// [Router.WatchTools]).
	gen      uint64
	watchers map[chan struct{}]struct{}

	// middleware is what [Router.use] added to the server, in order: the
	// other entry points run the same chain (middleware.go).
	middleware []middlewareGroup // one group per use
	fastChain  fastChain

	onToolCall  func(ToolCallRecord)
	access      AccessOptions
	catalog     CatalogOptions
	onToolsList func(ToolsListRecord)
	virtual     virtualSet       // the virtual servers (virtual_servers.go)
	listed      listings         // each session's last tools/list (list_changed.go)
	digests     listingDigests   // memoised listing digests (listing_digest.go)
	observers   sessionObservers // the HTTP transports' session tables
	tasks       *tasks.Backends  // nil until AddTaskBackend
	onTaskWrite func(TaskWriteRecord)
	callQuotas  agentsmcp.CallQuotaEnforcer
	precharges  sync.Map // ticket → *precharge: calls charged by the HTTP guard (call_precharge.go)
}

type toolEntry struct {
	tool     *mcp.Tool
	raw      []byte // the tool as JSON, to detect changes on refresh
	provider agentsmcp.ToolProvider
	schema   *validation.Schema
	// registered is what readers of the registry are given (see
	// [Router.ToolSnapshot]); made once, with the entry.
	registered *agentsmcp.RegisteredTool
}

// New returns a router with no providers. Add local tools with
// [localtools.New] and [Router.AddProvider].
func New(opts Options) *Router {
	logger := opts.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	r := &Router{
		logger:    logger,
		drain:     newDrainTracker(),
		tools:     map[string]*toolEntry{},
		problems:  map[string][]string{},
		completer: map[completionKey]CompletionFunc{},
		watchers:  map[chan struct{}]struct{}{},

		onToolCall:  opts.OnToolCall,
		callQuotas:  opts.CallQuotas,
		onTaskWrite: opts.OnTaskWrite,
		access:      opts.Access,
		catalog:     opts.Catalog,
		onToolsList: opts.OnToolsList,
	}
	version := opts.Version
	if version == "" {
		version = "dev"
	}
	r.server = mcp.NewServer(&mcp.Implementation{Name: ServerName, Title: "Agents MCP Server", Version: version}, &mcp.ServerOptions{
		Instructions: opts.Instructions,
		// Clients' protocol mistakes are warnings (see peerMistakes).
		Logger:   slog.New(sdkLogHandler{logger.Handler()}),
		PageSize: opts.PageSize,
		// No KeepAlive: go-sdk would ping every session, busy or not,
		// whether or not its client can receive the ping, and close it
		// after missed pings. The HTTP transports ping idle sessions that
		// can receive one (router/transport/session); a stdio session ends
		// with its input.
		CompletionHandler: r.complete,
		GetSessionID:      r.sessionIDs.New,
		InitializedHandler: func(_ context.Context, req *mcp.InitializedRequest) {
			r.sessionInitialized(req.Session.ID())
		},
		// The SDK records subscriptions itself and delivers
		// notifications/resources/updated; nothing more is needed here.
		SubscribeHandler:   func(context.Context, *mcp.SubscribeRequest) error { return nil },
		UnsubscribeHandler: func(context.Context, *mcp.UnsubscribeRequest) error { return nil },
		Capabilities: &mcp.ServerCapabilities{
			Logging:     &mcp.LoggingCapabilities{},
			Completions: &mcp.CompletionCapabilities{},
			Tools:       &mcp.ToolCapabilities{ListChanged: true},
			// Announced even while there are none: upstream resources
			// and prompts may appear after a client has initialized.
			Resources: &mcp.ResourceCapabilities{ListChanged: true, Subscribe: true},
			Prompts:   &mcp.PromptCapabilities{ListChanged: true},
		},
	})
	// Added first, so innermost: the raw answer replaces the placeholder
	// after the tool handler, before any other middleware sees it.
	r.use(false, rawResultMiddleware)
	// virtualMiddleware outside access control, so that access control
	// sees the registry's names of a virtual server's tools
	// (virtual_servers.go).
	r.use(false, revisionMiddleware, r.cacheHintsMiddleware, r.drain.middleware, r.virtualMiddleware, r.accessMiddleware, r.logLevelMiddleware)
	r.server.AddSendingMiddleware(r.listChangedMiddleware)
	if err := mcp.AddReceivingCustomMethod(r.server, MethodValidate, r.handleValidate); err != nil {
		panic(err) // only possible if MethodValidate shadowed a standard method
	}
	return r
}

// Server is the router's MCP server as [Router.Server] hands it out.
type Server = mcpserver.Server

// Server returns the MCP server that the transports serve. Resources and
// prompts are registered on it directly (AddResource, AddPrompt, …).
// It offers no AddReceivingMiddleware: [Router.Use] adds middleware that
// every entry point runs, where one added to go-sdk's server alone would
// be skipped by the fast paths, the REST bridge and in-process calls; nor
// does a type assertion reach go-sdk's server behind it.
func (r *Router) Server() Server { return mcpserver.Of(r.server) }

// AddProvider lists p's tools and registers them. When p implements
// [agentsmcp.ToolChangeNotifier], its tools are re-listed on every change it
// reports. The returned error reports a failed listing or name problems
// (collisions, invalid names or schemas); the tools without problems are
// registered either way.
func (r *Router) AddProvider(ctx context.Context, p agentsmcp.ToolProvider) error {
	r.mu.Lock()
	if slices.ContainsFunc(r.providers, func(q agentsmcp.ToolProvider) bool { return q.Name() == p.Name() }) {
		r.mu.Unlock()
		return agentsmcp.Errorf(agentsmcp.ECONFLICT, "provider %q is already registered", p.Name())
	}
	r.providers = append(r.providers, p)
	r.mu.Unlock()
	if n, ok := p.(agentsmcp.ToolChangeNotifier); ok {
		n.OnToolsChanged(func() {
			// The provider's callback must not block, and refreshing lists
			// tools, so it runs on its own goroutine, bounded by a timeout.
			go func() {
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				defer cancel()
				if err := r.Refresh(ctx, p.Name()); err != nil {
					r.logger.Warn("refresh tools", "provider", p.Name(), "error", err)
				}
			}()
		})
	}
	return r.Refresh(ctx, p.Name())
}

// RemoveProvider unregisters a provider and all of its tools.
func (r *Router) RemoveProvider(name string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.providers = slices.DeleteFunc(r.providers, func(p agentsmcp.ToolProvider) bool { return p.Name() == name })
	var gone []string
	for toolName, e := range r.tools {
		if e.provider.Name() == name {
			gone = append(gone, toolName)
			delete(r.tools, toolName)
		}
	}
	delete(r.problems, name)
	r.server.RemoveTools(gone...)
	if len(gone) > 0 {
		r.toolsChangedLocked()
	}
}

// Refresh re-lists the named provider's tools and applies the difference:
// removed tools disappear, new and changed ones are (re)registered, which
// also drops their cached compiled schemas. Clients are notified with
// notifications/tools/list_changed (debounced by the SDK).
func (r *Router) Refresh(ctx context.Context, providerName string) error {
	r.mu.RLock()
	idx := slices.IndexFunc(r.providers, func(p agentsmcp.ToolProvider) bool { return p.Name() == providerName })
	var p agentsmcp.ToolProvider
	if idx >= 0 {
		p = r.providers[idx]
	}
	r.mu.RUnlock()
	if p == nil {
		return agentsmcp.Errorf(agentsmcp.ENOTFOUND, "provider %q is not registered", providerName)
	}

	listed, err := p.Tools(ctx)
	if err != nil {
		return fmt.Errorf("list tools of %q: %w", providerName, err)
	}

	r.mu.Lock()
	defer r.mu.Unlock()
	if !slices.Contains(r.providers, p) {
		return nil // removed while we were listing
	}
	var problems []string
	seen := map[string]bool{}
	changed := false
	for _, t := range listed {
		if err := toolschema.Check(t); err != nil {
			problems = append(problems, err.Error())
			continue
		}
		if seen[t.Name] {
			problems = append(problems, fmt.Sprintf("tool %q is listed twice", t.Name))
			continue
		}
		seen[t.Name] = true
		raw, err := json.Marshal(t)
		if err != nil {
			problems = append(problems, fmt.Sprintf("tool %q cannot be encoded: %v", t.Name, err))
			continue
		}
		old, exists := r.tools[t.Name]
		if exists && old.provider != p {
			problems = append(problems, fmt.Sprintf("tool %q collides with the tool of the same name from provider %q, which keeps it", t.Name, old.provider.Name()))
			continue
		}
		if exists && string(old.raw) == string(raw) {
			continue
		}
		e := &toolEntry{tool: t, raw: raw, provider: p, schema: validation.New(inputSchemaJSON(t))}
		e.registered = &agentsmcp.RegisteredTool{Tool: t, Source: p.Name(), InputSchema: e.schema.Raw()}
		r.tools[t.Name] = e
		r.server.AddTool(t, r.toolHandler(e))
		changed = true
	}
	var gone []string
	for name, e := range r.tools {
		if e.provider == p && !seen[name] {
			gone = append(gone, name)
			delete(r.tools, name)
		}
	}
	if len(gone) > 0 {
		r.server.RemoveTools(gone...)
		changed = true
	}
	if changed {
		r.toolsChangedLocked()
	}
	r.problems[providerName] = problems
	if len(problems) > 0 {
		for _, msg := range problems {
			r.logger.Warn("tool registration problem", "provider", providerName, "problem", msg)
		}
		return agentsmcp.Errorf(agentsmcp.ECONFLICT, "provider %q: %d tool problem(s): %s", providerName, len(problems), problems[0])
	}
	return nil
}

// Problems returns, per provider, the problems found when its tools were last
// listed (collisions, invalid names, unusable schemas).
func (r *Router) Problems() map[string][]string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := make(map[string][]string, len(r.problems))
	for k, v := range r.problems {
		if len(v) > 0 {
			out[k] = slices.Clone(v)
		}
	}
	return out
}

// Tools returns a snapshot of every registered tool, sorted by name.
func (r *Router) Tools() []*mcp.Tool {
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := make([]*mcp.Tool, 0, len(r.tools))
	for _, e := range r.tools {
		out = append(out, e.tool)
	}
	slices.SortFunc(out, func(a, b *mcp.Tool) int {
		if a.Name < b.Name {
			return -1
		} else if a.Name > b.Name {
			return 1
		}
		return 0
	})
	return out
}

// ToolSource returns the name of the provider that serves tool.
func (r *Router) ToolSource(tool string) (string, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	e, ok := r.tools[tool]
	if !ok {
		return "", false
	}
	return e.provider.Name(), true
}

// toolsChangedLocked records a change of r.tools: it bumps the generation
// and signals every watcher without blocking (a signal still pending is
// enough, so signals coalesce). r.mu must be held for writing.
func (r *Router) toolsChangedLocked() {
	r.gen++
	for ch := range r.watchers {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
}

func (r *Router) entry(name string) (*toolEntry, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	e, ok := r.tools[name]
	return e, ok
}

// inputSchemaJSON returns the tool's input schema as JSON without
// re-encoding a json.RawMessage, so upstream bytes are what gets compiled.
func inputSchemaJSON(t *mcp.Tool) json.RawMessage {
	return toolschema.JSON(t.InputSchema)
}

func errorResult(msg string) *mcp.CallToolResult {
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: msg}}}
}

// callError is the error text of a finished call, empty on success.
func callError(res *mcp.CallToolResult, err error) string {
	if err != nil {
		return agentsmcp.ErrorMessage(err)
	}
	if res == nil || !res.IsError {
		return ""
	}
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok && t.Text != "" {
			return t.Text
		}
	}
	return "error result"
}
