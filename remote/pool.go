package remote

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/egress"
	"github.com/agents-mcp/agents-mcp/internal/mcpserver"
	"github.com/agents-mcp/agents-mcp/internal/redact"
	"github.com/agents-mcp/agents-mcp/internal/seal"
	"github.com/agents-mcp/agents-mcp/internal/validate"
)

// Registry is where a [Pool] publishes its upstreams: the router. Each
// upstream is added as a tool provider named after the upstream; resources
// and prompts are registered on Server directly.
type Registry interface {
	// AddProvider lists p's tools and registers them. When it accepts p,
	// it registers p's [agentsmcp.ToolChangeNotifier] callback before
	// listing; refusing p (its name is taken) leaves the callback unset.
	AddProvider(ctx context.Context, p agentsmcp.ToolProvider) error
	RemoveProvider(name string)
	Server() mcpserver.Server
	// Problems returns, per provider, the tools the registry refused
	// (collisions, invalid names or schemas).
	Problems() map[string][]string
}

// Options configure a [Pool]. Zero values select the documented defaults.
type Options struct {
	Registry Registry
	Logger   *slog.Logger
	// ClientVersion is announced to upstreams as clientInfo.version.
	ClientVersion string
	// HealthInterval is how often a ready upstream is pinged (default 15 s).
	// Two missed pings in a row end the session and start a reconnect.
	HealthInterval time.Duration
	// ListChangedDelay debounces list_changed notifications from upstreams
	// before the pool re-lists (default 200 ms).
	ListChangedDelay time.Duration
	// BreakerFailures consecutive failed calls open an upstream's circuit
	// (default 5); it stays open for BreakerCooldown (default 10 s), then
	// lets one call through to probe.
	BreakerFailures int
	BreakerCooldown time.Duration
	// MinBackoff is the first reconnect delay (default 250 ms); later ones
	// double up to the upstream's MaxBackoff, with equal jitter (each wait
	// between half and all of its delay).
	MinBackoff time.Duration
	// Egress is the policy of the upstream URLs: each streamable and sse
	// upstream's URL is checked when it is added (EINVALID when refused),
	// and every request (redirects and SSE endpoints included) before it is
	// sent. Nil means [egress.Default]. Connections are checked by the
	// transport: build HTTPTransport with [NewHTTPTransport] and the same
	// policy.
	Egress *egress.Policy
	// Credentials gives the tokens of upstreams with auth oauth (ADR
	// 0012; oauth.go): the shared credential for the pool's own session,
	// each caller's for its calls. Nil: such upstreams connect with their
	// headers only.
	Credentials agentsmcp.CredentialSource
	// HTTPTransport carries streamable and SSE traffic; nil means
	// NewHTTPTransport(Egress), a pooled transport sized for many
	// concurrent calls per upstream.
	HTTPTransport http.RoundTripper
	// StateKey seals what the pool hands to callers of MCP 2026-07-28 and
	// trusts when they bring it back: the requestState they get when an
	// upstream answers input_required (ADR 0010 D2) or a bridged call asks
	// (D4), and the handles of upstream tasks ([Tasks], D3); a key of
	// [seal.KeySize] bytes. Every replica needs the same key for a retry or
	// a handle to land on any of them. Nil means a random key of this pool:
	// they must then come back to it.
	StateKey []byte
	// StateTTL is how long such a requestState is accepted (default
	// [DefaultStateTTL]).
	StateTTL time.Duration
	// TaskHandleTTL is the least time an upstream task's handle stays valid
	// (default DefaultTaskHandleTTL); longer when the task's ttlMs is.
	TaskHandleTTL time.Duration
	// TaskStore turns on bridged calls (ADR 0010 D4; bridged.go): a
	// 2026-07-28 caller of an older upstream that asks mid-call is asked
	// through input_required answers, or a task, and the call is stored in
	// TaskStore, so that any replica with the same store and StateKey takes
	// the answer. Nil refuses such an upstream request, as before D4.
	TaskStore agentsmcp.TaskService
	// LeaseOwner names this replica in the leases of the bridged calls it
	// holds (default: bridge- and random hex); LeaseTTL is their lease,
	// renewed every third of it (default 30 s).
	LeaseOwner string
	LeaseTTL   time.Duration
	// BridgeRetryWait bounds how long the retry of a bridged call waits
	// for the next question or the result (default DefaultBridgeRetryWait);
	// BridgePoll is how often the store is read meanwhile, and by the
	// holder for answers (default DefaultBridgePoll).
	BridgeRetryWait time.Duration
	BridgePoll      time.Duration
	// StateHistory is how many state transitions [Pool.History] keeps per
	// upstream (default DefaultStateHistory).
	StateHistory int
	// MaxResultBytes bounds one message of an upstream, the answer to a
	// call above all (default [DefaultMaxResultBytes]): past it the answer
	// is not read further and the call fails with a JSON-RPC error
	// (-32603) that names the limit (limit.go).
	MaxResultBytes int64
	// CacheReads, when positive, turns on the cache of upstream
	// resources/read results marked cacheable (ttlMs > 0) and bounds it in
	// entries (result_cache.go); 0, the default, relays every read.
	CacheReads int
}

// DefaultStateHistory is the default of [Options.StateHistory].
const DefaultStateHistory = 50

func (o Options) withDefaults() Options {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.ClientVersion == "" {
		o.ClientVersion = "dev"
	}
	if o.HealthInterval <= 0 {
		o.HealthInterval = 15 * time.Second
	}
	if o.ListChangedDelay <= 0 {
		o.ListChangedDelay = 200 * time.Millisecond
	}
	if o.BreakerFailures <= 0 {
		o.BreakerFailures = 5
	}
	if o.BreakerCooldown <= 0 {
		o.BreakerCooldown = 10 * time.Second
	}
	if o.MinBackoff <= 0 {
		o.MinBackoff = 250 * time.Millisecond
	}
	if o.TaskHandleTTL <= 0 {
		o.TaskHandleTTL = DefaultTaskHandleTTL
	}
	if o.Egress == nil {
		o.Egress = egress.Default()
	}
	if o.HTTPTransport == nil {
		o.HTTPTransport = NewHTTPTransport(o.Egress)
	}
	if o.StateKey == nil {
		o.StateKey = make([]byte, seal.KeySize)
		_, _ = rand.Read(o.StateKey) // never fails (crypto/rand)
	}
	if o.StateTTL <= 0 {
		o.StateTTL = DefaultStateTTL
	}
	if o.StateHistory <= 0 {
		o.StateHistory = DefaultStateHistory
	}
	if o.MaxResultBytes <= 0 {
		o.MaxResultBytes = DefaultMaxResultBytes
	}
	return o
}

// NewHTTPTransport is the pool's default transport, for wrapping (with
// trace propagation, say) in [Options.HTTPTransport]. It keeps many idle
// connections per upstream host: at 32 concurrent callers a transport with
// the default 2 idle connections per host opens thousands of new
// connections a second. Every connection it makes is checked against
// policy ([egress.Policy.DialContext]; nil means [egress.Default]), so that
// a name resolving to a refused address at connect time (DNS rebinding) is
// still refused. The raw path's tools/call POSTs to plain-HTTP upstreams go
// on connections of its own, dialed the same way (see [HTTPTransport]).
func NewHTTPTransport(policy *egress.Policy) *HTTPTransport {
	if policy == nil {
		policy = egress.Default()
	}
	return &HTTPTransport{Transport: &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           policy.DialContext(&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}),
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          512,
		MaxIdleConnsPerHost:   128,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   5 * time.Second,
		ExpectContinueTimeout: time.Second,
	}}
}

// Pool is the set of upstream MCP servers. Each upstream has a supervisor
// goroutine, owned by the pool, that connects, re-lists on list_changed,
// pings, and reconnects; [Pool.Remove] and [Pool.Close] stop it and release
// its session (and stdio process group).
//
// Attribution of upstream requests: upstreams send sampling, elicitation and
// logging messages without saying which call they belong to, and one
// upstream session serves every caller. The pool forwards such a message to
// the calling client only when every call in flight to that upstream comes
// from the same client session; otherwise it refuses the request (sampling,
// elicitation) or logs the message itself (logging), so that one client
// never sees another's traffic. Progress notifications carry a token and are
// always delivered to the right caller, and so are the input requests of a
// 2026-07-28 upstream's input_required answer, which belong to the call
// that got it: a caller of MCP 2026-07-28 gets that answer passed through,
// with the upstream's requestState sealed to it (see [Options.StateKey]);
// the pool asks a caller of an earlier revision itself, and retries the
// call with the answers.
//
// A Pool is safe for concurrent use.
type Pool struct {
	opts   Options
	http   *http.Client
	bridge *bridge      // nil without Options.TaskStore
	states *seal.Sealer // seals and opens the state of passed-through input_required
	reads  *resultCache // nil unless Options.CacheReads

	mu        sync.Mutex
	upstreams map[string]*upstream
	closed    bool
}

// NewPool returns an empty pool that publishes to opts.Registry.
func NewPool(opts Options) *Pool {
	opts = opts.withDefaults()
	return &Pool{
		opts:   opts,
		states: &seal.Sealer{Key: opts.StateKey},
		http: &http.Client{
			Transport:     drainingTransport{base: opts.Egress.RoundTripper(opts.HTTPTransport)},
			CheckRedirect: egress.SameOriginRedirects,
		},
		upstreams: map[string]*upstream{},
		bridge:    newBridge(opts),
		reads:     newResultCache(opts.CacheReads),
	}
}

// Add starts an upstream defined at run time (the admin API). Only
// streamable and sse upstreams are accepted: a stdio command from the
// network would be remote code execution, so stdio upstreams can only come
// from the config file ([Pool.AddFromConfig]).
//
// Add returns once the upstream is registered and its first connect attempt
// has finished or ctx is done, whichever is first; a failed attempt is not an
// error (the pool keeps retrying and [Pool.Status] says why). Errors:
// EINVALID for a bad config, ECONFLICT for a name in use, EUNAVAILABLE after
// Close.
func (p *Pool) Add(ctx context.Context, cfg agentsmcp.UpstreamConfig) error {
	if cfg.Transport == TransportStdio {
		return agentsmcp.Errorf(agentsmcp.EINVALID, "upstream %q: stdio upstreams can only be defined in the config file", cfg.Name)
	}
	return p.add(ctx, cfg, OriginAPI)
}

// AddFromConfig is [Pool.Add] for upstreams from the config file, which may
// use any transport, stdio included.
func (p *Pool) AddFromConfig(ctx context.Context, cfg agentsmcp.UpstreamConfig) error {
	return p.add(ctx, cfg, OriginConfig)
}

func (p *Pool) add(ctx context.Context, cfg agentsmcp.UpstreamConfig, origin string) error {
	cfg = cfg.WithDefaults()
	if err := configError(cfg); err != nil {
		return err
	}
	if err := p.checkEgress(ctx, cfg); err != nil {
		return err
	}
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return agentsmcp.Errorf(agentsmcp.EUNAVAILABLE, "the upstream pool is shut down")
	}
	if _, dup := p.upstreams[cfg.Name]; dup {
		p.mu.Unlock()
		return agentsmcp.Errorf(agentsmcp.ECONFLICT, "upstream %q already exists", cfg.Name)
	}
	u := newUpstream(p, cfg, origin)
	p.upstreams[cfg.Name] = u
	p.mu.Unlock()

	u.start()
	select {
	case <-u.firstAttempt:
	case <-ctx.Done():
	}
	// Registering after the first attempt makes the registry list the
	// tools that attempt found before Add returns; tools found later reach
	// it through OnToolsChanged. (ctx may be over: the upstream is added
	// all the same.)
	err := p.opts.Registry.AddProvider(context.WithoutCancel(ctx), u)
	if err != nil && (agentsmcp.ErrorCode(err) != agentsmcp.ECONFLICT || !u.registered()) {
		// ECONFLICT with the provider registered reports refused tools,
		// which Status shows; anything else (another provider holding
		// the name included) means the provider is not registered.
		p.mu.Lock()
		if p.upstreams[cfg.Name] == u {
			delete(p.upstreams, cfg.Name)
		}
		p.mu.Unlock()
		_ = u.stop(context.WithoutCancel(ctx))
		if agentsmcp.ErrorCode(err) == agentsmcp.ECONFLICT {
			return agentsmcp.Errorf(agentsmcp.ECONFLICT, "upstream %q: the name is taken by another tool provider", cfg.Name)
		}
		return fmt.Errorf("register upstream %q: %w", cfg.Name, err)
	}
	p.mu.Lock()
	gone := p.upstreams[cfg.Name] != u
	p.mu.Unlock()
	if gone {
		// Removed (or the pool closed) while connecting: Remove found
		// nothing to unregister yet.
		p.opts.Registry.RemoveProvider(cfg.Name)
	}
	return nil
}

// configError is EINVALID with every problem of cfg, or nil.
func configError(cfg agentsmcp.UpstreamConfig) error {
	problems := validate.UpstreamConfigProblems(&cfg)
	if len(problems) == 0 {
		return nil
	}
	msgs := make([]string, len(problems))
	for i, pr := range problems {
		msgs[i] = pr.Error()
	}
	return agentsmcp.Errorf(agentsmcp.EINVALID, "upstream %q: %s", cfg.Name, strings.Join(msgs, "; "))
}

// egressLookupTimeout bounds the name lookup of an upstream URL's check.
const egressLookupTimeout = 5 * time.Second

// checkEgress checks an upstream's URL against the egress policy before
// anything connects to it: EINVALID when refused.
func (p *Pool) checkEgress(ctx context.Context, cfg agentsmcp.UpstreamConfig) error {
	if cfg.URL == "" {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, egressLookupTimeout)
	defer cancel()
	if err := p.opts.Egress.CheckURL(ctx, cfg.URL); err != nil {
		return agentsmcp.Errorf(agentsmcp.EINVALID, "upstream %q: url %s: %v", cfg.Name, redact.URL(cfg.URL), err)
	}
	return nil
}

// Remove stops an upstream: its tools, resources and prompts disappear, its
// session is closed and a stdio child's process group is killed and reaped
// before Remove returns (or ctx ends). ENOTFOUND if there is no such
// upstream.
func (p *Pool) Remove(ctx context.Context, name string) error {
	p.mu.Lock()
	u, ok := p.upstreams[name]
	delete(p.upstreams, name)
	p.mu.Unlock()
	if !ok {
		return agentsmcp.Errorf(agentsmcp.ENOTFOUND, "upstream %q does not exist", name)
	}
	p.opts.Registry.RemoveProvider(name)
	return u.stop(ctx)
}

// Refresh re-lists an upstream's tools, resources and prompts now, or, if it
// is not connected, makes the next connect attempt start now. It waits for
// the outcome within ctx and returns the upstream's status then. ENOTFOUND
// if there is no such upstream.
func (p *Pool) Refresh(ctx context.Context, name string) (Status, error) {
	u, ok := p.get(name)
	if !ok {
		return Status{}, agentsmcp.Errorf(agentsmcp.ENOTFOUND, "upstream %q does not exist", name)
	}
	return u.refreshNow(ctx), nil
}

// Status returns one upstream's status.
func (p *Pool) Status(name string) (Status, bool) {
	u, ok := p.get(name)
	if !ok {
		return Status{}, false
	}
	return u.status(), true
}

// Endpoint returns the URL of a streamable or sse upstream as configured,
// not redacted, for agents-mcp's own requests to it (OAuth discovery);
// false if there is no such upstream or it has no URL.
func (p *Pool) Endpoint(name string) (string, bool) {
	u, ok := p.get(name)
	if !ok || u.cfg.URL == "" {
		return "", false
	}
	return u.cfg.URL, true
}

// Statuses returns every upstream's status, sorted by name.
func (p *Pool) Statuses() []Status {
	p.mu.Lock()
	ups := make([]*upstream, 0, len(p.upstreams))
	for _, u := range p.upstreams {
		ups = append(ups, u)
	}
	p.mu.Unlock()
	out := make([]Status, len(ups))
	for i, u := range ups {
		out[i] = u.status()
	}
	slices.SortFunc(out, func(a, b Status) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// History is [agentsmcp.UpstreamManager.History]: at most
// [Options.StateHistory] transitions. The degraded state that Status
// reports while the circuit is open is not one: it is computed when asked.
func (p *Pool) History(name string) ([]agentsmcp.UpstreamTransition, bool) {
	u, ok := p.get(name)
	if !ok {
		return nil, false
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	return slices.Clone(u.history), true
}

// Tools returns the tools an upstream currently exposes, with their
// client-visible names. ENOTFOUND if there is no such upstream.
func (p *Pool) Tools(ctx context.Context, name string) ([]*mcp.Tool, error) {
	u, ok := p.get(name)
	if !ok {
		return nil, agentsmcp.Errorf(agentsmcp.ENOTFOUND, "upstream %q does not exist", name)
	}
	return u.Tools(ctx)
}

// Summary counts the upstreams by state.
func (p *Pool) Summary() Summary {
	var s Summary
	for _, st := range p.Statuses() {
		s.Total++
		switch st.State {
		case StateReady:
			s.Ready++
			continue
		case StateDegraded:
			s.Degraded++
		case StateConnecting:
			s.Connecting++
		case StateDown:
			s.Down++
		}
		if s.NotReady == nil {
			s.NotReady = map[string]string{}
		}
		s.NotReady[st.Name] = string(st.State) + ": " + st.Reason
	}
	return s
}

// Close stops every upstream and waits for their sessions and processes to
// end (bounded by ctx). The pool accepts no upstreams afterwards.
func (p *Pool) Close(ctx context.Context) error {
	p.mu.Lock()
	p.closed = true
	ups := p.upstreams
	p.upstreams = map[string]*upstream{}
	p.mu.Unlock()
	var wg sync.WaitGroup
	errs := make([]error, 0, len(ups))
	var mu sync.Mutex
	for name, u := range ups {
		p.opts.Registry.RemoveProvider(name)
		wg.Go(func() {
			if err := u.stop(ctx); err != nil {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	// The upstreams are stopped, so their bridged calls are ending.
	errs = append(errs, p.bridge.wait(ctx))
	return errors.Join(errs...)
}

func (p *Pool) get(name string) (*upstream, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	u, ok := p.upstreams[name]
	return u, ok
}
