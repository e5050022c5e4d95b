package httptools

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/egress"
	"github.com/agents-mcp/agents-mcp/internal/redact"
	"github.com/agents-mcp/agents-mcp/internal/toolschema"
)

// Authorizer supplies the credentials of a source's requests: the
// credential store, adapted in cmd (ADR 0012 D5). The caller is in ctx.
type Authorizer interface {
	// Authorize is called before each request: what it returns is added
	// to the request (over the source's own Headers). Nil means the source
	// has no credential. An error wrapping an
	// [*agentsmcp.AuthorizationRequired] is answered with
	// [mcpwire.AuthorizationRequiredResult]; any other error is a tool
	// error with its text, so it must not hold a secret.
	Authorize(ctx context.Context, source string) (*agentsmcp.AppliedCredential, error)
	// Refused is called when source answered 401 or 403 to a request that
	// carried a credential from Authorize: a cached token is dropped, and
	// the error it returns (an [*agentsmcp.AuthorizationRequired] when a
	// person must act) becomes the result.
	Refused(ctx context.Context, source string, status int) error
}

// Options configure how sources are loaded and called.
type Options struct {
	// Egress is the policy every request passes (base URLs when a source
	// is added, then every request and connection); nil means
	// [egress.Default].
	Egress *egress.Policy
	// HTTPTransport carries the requests; cmd passes the transport of the
	// upstream pool, whose dialer checks each connection against the same
	// policy. Nil means a transport built here with Egress's dialer check.
	HTTPTransport http.RoundTripper
	// Auth, when set, is asked for credentials before each request.
	Auth   Authorizer
	Logger *slog.Logger
	// ReadFile reads OpenAPI documents given as paths; nil means
	// os.ReadFile.
	ReadFile func(string) ([]byte, error)
	// MaxResultBytes bounds every source's answers above its own
	// max_response_bytes: the smaller one applies (the server's
	// limits.max_result_bytes, which bounds every upstream answer). Zero:
	// each source's own alone.
	MaxResultBytes int64
	// Budget bounds the loading of each OpenAPI document; its zero
	// fields take the defaults.
	Budget Budget
}

func (o Options) withDefaults() Options {
	if o.Egress == nil {
		o.Egress = egress.Default()
	}
	if o.HTTPTransport == nil {
		o.HTTPTransport = &http.Transport{
			Proxy:               http.ProxyFromEnvironment,
			DialContext:         o.Egress.DialContext(&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}),
			MaxIdleConnsPerHost: 32,
			IdleConnTimeout:     90 * time.Second,
			TLSHandshakeTimeout: 5 * time.Second,
		}
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.ReadFile == nil {
		o.ReadFile = os.ReadFile
	}
	o.Budget = o.Budget.withDefaults()
	return o
}

// client is the HTTP client of every source: each request is checked
// against the egress policy, redirects stay within the origin of the
// first request (so the source's headers never reach another host), and
// each call is bounded by its context, not by the client.
func (o Options) client() *http.Client {
	return &http.Client{
		Transport:     o.Egress.RoundTripper(o.HTTPTransport),
		CheckRedirect: egress.SameOriginRedirects,
	}
}

// Provider is one source as an [agentsmcp.ToolProvider]: its tools are
// fixed when it is loaded.
type Provider struct {
	src    Source
	opts   Options
	client *http.Client
	base   *url.URL

	tools    []*mcp.Tool
	ops      map[string]*operation
	problems []string
	failed   string // why the source serves no tool, when it cannot be used
	// overBudget: failed because the document is over its [Budget], which
	// loading it again would not change.
	overBudget bool
	// deleg gives the Authorization of a source that acts as its caller
	// (Source.Delegation); nil otherwise.
	deleg *delegator

	// accepted is set when a registry takes the provider: the router
	// registers the change callback only then, so that an ECONFLICT for
	// the provider's name can be told from one for some of its tools.
	accepted atomic.Bool
}

// OnToolsChanged records that a registry accepted p. A source's tools are
// fixed once it is loaded, so the callback is never called: a changed
// source is removed and added again.
func (p *Provider) OnToolsChanged(func()) { p.accepted.Store(true) }

// Status is the state of one source, as /readyz shows it.
type Status struct {
	Name string `json:"name"`
	// Kind is "endpoints" or "openapi".
	Kind string `json:"kind"`
	// State is "ready", or "failed" when the source serves no tool
	// (Reason says why).
	State    string   `json:"state"`
	Reason   string   `json:"reason,omitempty"`
	Tools    int      `json:"tools"`
	Problems []string `json:"problems,omitempty"`
	// Origin is "config" for a source of the config file and "api" for
	// one added through the admin API (and kept in the store); set by
	// [SharedSources.Statuses].
	Origin string `json:"origin,omitempty"`
}

// Load builds the provider of src. A source whose config is invalid, or
// whose base_url the egress policy refuses, is EINVALID. An OpenAPI
// document that cannot be read or used is not an error: the provider then
// serves no tool and its [Provider.Status] says why, so that one bad
// document never stops the others. So is a document over its [Budget], and
// a load that ctx cancelled. Operations that cannot be turned into tools
// are left out and listed as problems.
func Load(ctx context.Context, src Source, opts Options) (*Provider, error) {
	src = src.WithDefaults()
	if problems := src.Problems(); len(problems) > 0 {
		msgs := make([]string, len(problems))
		for i, p := range problems {
			msgs[i] = p.Error()
		}
		return nil, agentsmcp.Errorf(agentsmcp.EINVALID, "http_tools %q: %s", src.Name, strings.Join(msgs, "; "))
	}
	opts = opts.withDefaults()
	p := &Provider{src: src, opts: opts, client: opts.client(), ops: map[string]*operation{}}
	if src.Delegation != "" {
		p.deleg = newDelegator(src, opts)
	}
	if src.BaseURL != "" {
		if err := p.setBase(ctx, src.BaseURL); err != nil {
			return nil, agentsmcp.Errorf(agentsmcp.EINVALID, "http_tools %q: base_url: %v", src.Name, err)
		}
	}
	var ops []*operation
	if p.isOpenAPI() {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(ctx, opts.Budget.Timeout, errLoadTimeout)
		defer cancel()
		ops = p.loadOpenAPI(ctx)
	} else {
		for _, e := range src.Endpoints {
			ops = append(ops, endpointOperation(e))
		}
	}
	p.publish(ctx, ops)
	if p.failed == "" {
		opts.Logger.Debug("http tools loaded", "source", src.Name, "tools", len(p.tools), "problems", len(p.problems))
	} else {
		opts.Logger.Warn("http tools source not usable", "source", src.Name, "reason", p.failed)
	}
	return p, nil
}

// egressLookupTimeout bounds the name lookup of a base URL's check.
const egressLookupTimeout = 5 * time.Second

func (p *Provider) setBase(ctx context.Context, raw string) error {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("%s is not an absolute http or https URL", redact.URL(raw))
	}
	ctx, cancel := context.WithTimeout(ctx, egressLookupTimeout)
	defer cancel()
	if err := p.opts.Egress.CheckURL(ctx, u.String()); err != nil {
		return err
	}
	u.RawQuery, u.Fragment = "", ""
	p.base = u
	return nil
}

// publish names the operations' tools ("<source>__<name>", aliased when
// longer than 64 characters; a name met twice gets "_2", "_3"…) and keeps
// those whose input schema passes [toolschema.Check] and compiles; an
// output schema that does not compile is dropped. When ctx ends first,
// no tool is kept and p.failed says why.
func (p *Provider) publish(ctx context.Context, ops []*operation) {
	prefix := p.src.Name + agentsmcp.NamespaceSeparator
	taken := map[string]bool{}
	for _, op := range ops {
		if p.isOpenAPI() && p.stopped(ctx) {
			clear(p.ops)
			p.tools = nil
			return
		}
		name := prefix + op.tool.Name
		for n := 2; taken[toolName(name)]; n++ {
			name = fmt.Sprintf("%s%s_%d", prefix, op.tool.Name, n)
		}
		if name != prefix+op.tool.Name {
			p.problems = append(p.problems, fmt.Sprintf("operation %q: the name is used twice; exposed as %q", op.id, toolName(name)))
		}
		op.tool.Name = toolName(name)
		taken[op.tool.Name] = true
		if err := toolschema.Check(op.tool); err != nil {
			p.problems = append(p.problems, fmt.Sprintf("operation %q: %v", op.id, err))
			continue
		}
		if err := compileSchema(toolschema.JSON(op.tool.InputSchema)); err != nil {
			p.problems = append(p.problems, fmt.Sprintf("operation %q: the input schema does not compile: %v", op.id, firstLine(err)))
			continue
		}
		if op.tool.OutputSchema != nil {
			if err := compileSchema(toolschema.JSON(op.tool.OutputSchema)); err != nil {
				p.problems = append(p.problems, fmt.Sprintf("operation %q: the output schema does not compile and is left out: %v", op.id, firstLine(err)))
				op.tool.OutputSchema, op.wrapOutput = nil, false
			}
		}
		p.ops[op.tool.Name] = op
		p.tools = append(p.tools, op.tool)
	}
	slices.SortFunc(p.tools, func(a, b *mcp.Tool) int { return cmp.Compare(a.Name, b.Name) })
	if len(p.tools) == 0 && p.failed == "" {
		p.failed = "no usable operation"
	}
}

// maxToolName is the length limit of [agentsmcp.ToolNamePattern].
const maxToolName = 64

// toolName returns name, or when it is longer than 64 characters, its
// first 55 characters, "_" and 8 hex digits of its SHA-256: the same
// name on every replica and restart.
func toolName(name string) string {
	if len(name) <= maxToolName {
		return name
	}
	sum := sha256.Sum256([]byte(name))
	return strings.TrimRight(name[:maxToolName-9], "_") + "_" + hex.EncodeToString(sum[:])[:8]
}

// sanitizeName replaces every character outside [A-Za-z0-9_-] with "_".
func sanitizeName(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r < 0x80 && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-') {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	return b.String()
}

// AcceptsDelegation reports whether the source acts with its callers'
// identity (Source.Delegation): only then does the router let the
// caller's token reach it (delegation.DelegationAcceptor).
func (p *Provider) AcceptsDelegation() bool { return p.deleg != nil }

// Name is the source's name.
func (p *Provider) Name() string { return p.src.Name }

// Tools returns the source's tools.
func (p *Provider) Tools(context.Context) ([]*mcp.Tool, error) {
	return slices.Clone(p.tools), nil
}

// isOpenAPI reports whether the source's tools come from an OpenAPI
// document.
func (p *Provider) isOpenAPI() bool { return p.src.OpenAPI != "" || p.src.OpenAPIDocument != "" }

// Status reports the source's state.
func (p *Provider) Status() Status {
	st := Status{Name: p.src.Name, Kind: "endpoints", State: "ready", Tools: len(p.tools), Problems: slices.Clone(p.problems)}
	if p.isOpenAPI() {
		st.Kind = "openapi"
	}
	if p.failed != "" {
		st.State, st.Reason = "failed", p.failed
	}
	return st
}

// Registry is where sources publish their tools; the router is one, and cmd
// hands it over.
type Registry interface {
	AddProvider(ctx context.Context, p agentsmcp.ToolProvider) error
	RemoveProvider(name string)
}

// Sources is the set of loaded sources. It is safe for concurrent use.
type Sources struct {
	reg  Registry
	opts Options

	mu        sync.Mutex
	providers map[string]*Provider
}

// NewSources returns an empty set that publishes to reg.
func NewSources(reg Registry, opts Options) *Sources {
	return &Sources{reg: reg, opts: opts.withDefaults(), providers: map[string]*Provider{}}
}

// Add loads src and registers its tools. Errors: EINVALID for an invalid
// source (see [Load]), ECONFLICT for a name in use (by a source, an
// upstream or the local tools). A source whose document is unusable is
// added all the same, without tools; [Sources.Statuses] says why.
func (s *Sources) Add(ctx context.Context, src Source) error {
	p, err := Load(ctx, src, s.opts)
	if err != nil {
		return err
	}
	return s.add(ctx, p)
}

// add registers a loaded provider, as [Sources.Add].
func (s *Sources) add(ctx context.Context, p *Provider) error {
	s.mu.Lock()
	if _, dup := s.providers[p.Name()]; dup {
		s.mu.Unlock()
		return agentsmcp.Errorf(agentsmcp.ECONFLICT, "http_tools %q already exists", p.Name())
	}
	s.providers[p.Name()] = p
	s.mu.Unlock()
	if err := s.reg.AddProvider(ctx, p); err != nil {
		if agentsmcp.ErrorCode(err) == agentsmcp.ECONFLICT && !p.accepted.Load() {
			s.mu.Lock()
			delete(s.providers, p.Name())
			s.mu.Unlock()
			return agentsmcp.Errorf(agentsmcp.ECONFLICT, "http_tools %q: the name is taken by another tool provider", p.Name())
		}
		// Tools refused one by one (collisions) leave the others
		// registered; the router's Problems name them.
		s.mu.Lock()
		p.problems = append(p.problems, err.Error())
		s.mu.Unlock()
	}
	return nil
}

// Remove unregisters a source's tools. ENOTFOUND if there is no such
// source.
func (s *Sources) Remove(name string) error {
	s.mu.Lock()
	_, ok := s.providers[name]
	delete(s.providers, name)
	s.mu.Unlock()
	if !ok {
		return agentsmcp.Errorf(agentsmcp.ENOTFOUND, "http_tools %q does not exist", name)
	}
	s.reg.RemoveProvider(name)
	return nil
}

// has reports whether a source named name is loaded.
func (s *Sources) has(name string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.providers[name]
	return ok
}

// Statuses reports every source, by name.
func (s *Sources) Statuses() []Status {
	s.mu.Lock()
	out := make([]Status, 0, len(s.providers))
	for _, p := range s.providers {
		out = append(out, p.Status())
	}
	s.mu.Unlock()
	slices.SortFunc(out, func(a, b Status) int { return cmp.Compare(a.Name, b.Name) })
	return out
}
