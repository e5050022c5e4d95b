package remote

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/sony/gobreaker/v2"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/internal/backoff"
	"github.com/agents-mcp/agents-mcp/internal/mcpwire"
	"github.com/agents-mcp/agents-mcp/internal/redact"
	"github.com/agents-mcp/agents-mcp/internal/storedform"
)

// upstream is one upstream MCP server: an [agentsmcp.ToolProvider] for the
// registry, and the supervisor goroutine that keeps its session alive.
type upstream struct {
	pool   *Pool
	cfg    agentsmcp.UpstreamConfig
	origin string
	log    *slog.Logger
	client *mcp.Client
	calls  *callTracker
	slots  chan struct{}                                                 // MaxConcurrency call slots
	cb     atomic.Pointer[gobreaker.CircuitBreaker[*mcp.CallToolResult]] // replaced per session

	// Signals to the supervisor; each is buffered so that senders never
	// block and repeated signals coalesce.
	listChanged chan struct{}      // an upstream list_changed notification
	probe       chan struct{}      // a call met a transport error
	refreshReq  chan chan struct{} // Refresh: re-list or connect now, then close the channel

	ctx          context.Context // the supervisor's lifetime
	cancel       context.CancelFunc
	done         chan struct{} // closed when the supervisor has returned
	firstAttempt chan struct{} // closed after the first connect attempt
	firstOnce    sync.Once

	mu       sync.Mutex
	st       Status             // state, reason, errors, timestamps, server info
	session  *mcp.ClientSession // nil unless a session is established
	changed  chan struct{}      // closed and replaced on every state change
	tools    []*mcp.Tool        // exposed tools, names prefixed
	original map[string]string  // exposed tool name → upstream tool name
	problems []string
	extras   *extras // resources and prompts registered for this upstream
	onChange func()
	started  bool

	// history holds the last changes of st.State, oldest first, at most
	// Options.StateHistory (Pool.History); guarded by mu.
	history []agentsmcp.UpstreamTransition

	// principals are the per-principal sessions of an OAuth upstream
	// (oauth.go).
	principals principalSessions

	// Progress and log notifications read from the upstream's connections
	// and handled (forwarded or logged) so far: see settle.
	notesRead, notesHandled atomic.Int64

	// The HTTP client of the raw call path (rawcall.go), built once.
	rawOnce sync.Once
	rawHTTP *http.Client

	// tooLarge is when (Unix ns) the session's stream was last cut at a
	// message over the answer bound (limit.go); 0: never.
	tooLarge atomic.Int64
}

func newUpstream(p *Pool, cfg agentsmcp.UpstreamConfig, origin string) *upstream {
	ctx, cancel := context.WithCancel(context.Background())
	u := &upstream{
		pool:         p,
		cfg:          cfg,
		origin:       origin,
		log:          p.opts.Logger.With("upstream", cfg.Name),
		calls:        newCallTracker(),
		slots:        make(chan struct{}, cfg.MaxConcurrency),
		listChanged:  make(chan struct{}, 1),
		probe:        make(chan struct{}, 1),
		refreshReq:   make(chan chan struct{}),
		ctx:          ctx,
		cancel:       cancel,
		done:         make(chan struct{}),
		firstAttempt: make(chan struct{}),
		changed:      make(chan struct{}),
		extras:       newExtras(cfg.Name, p.opts.Registry.Server()),
	}
	u.st = Status{
		Name:      cfg.Name,
		Transport: cfg.Transport,
		URL:       redact.URL(cfg.URL),
		Command:   cfg.Command,
		Origin:    origin,
		State:     StateConnecting,
		Reason:    "first connection in progress",
		Since:     time.Now(),
	}
	u.history = []agentsmcp.UpstreamTransition{{State: u.st.State, Reason: u.st.Reason, At: u.st.Since}}
	u.client = mcp.NewClient(&mcp.Implementation{Name: "agents-mcp", Version: p.opts.ClientVersion}, &mcp.ClientOptions{
		Logger: u.log,
		// No roots: they would have to come from one particular caller.
		Capabilities:                &mcp.ClientCapabilities{},
		CreateMessageHandler:        u.forwardSampling,
		ElicitationHandler:          u.forwardElicitation,
		ProgressNotificationHandler: u.forwardProgress,
		LoggingMessageHandler:       u.forwardLog,
		ToolListChangedHandler:      func(context.Context, *mcp.ToolListChangedRequest) { signal(u.listChanged) },
		ResourceListChangedHandler: func(context.Context, *mcp.ResourceListChangedRequest) {
			u.dropReads()
			signal(u.listChanged)
		},
		PromptListChangedHandler: func(context.Context, *mcp.PromptListChangedRequest) { signal(u.listChanged) },

		// input_required is handled per call, by its caller (mrtr.go):
		// go-sdk's loop would ask every caller through the handlers
		// above, a 2026-07-28 caller included, which cannot be asked.
		MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: true},
	})
	registerTaskMethods(u.client)
	u.client.AddSendingMiddleware(keepReadsOutOfSessionCache)
	u.cb.Store(u.newBreaker())
	return u
}

// newBreaker returns a closed circuit breaker. Each new session gets one:
// failures of a dead session say nothing about the one that just passed
// initialize and tools/list.
func (u *upstream) newBreaker() *gobreaker.CircuitBreaker[*mcp.CallToolResult] {
	opts := u.pool.opts
	return gobreaker.NewCircuitBreaker[*mcp.CallToolResult](gobreaker.Settings{
		Name:        u.cfg.Name,
		MaxRequests: 1,
		Timeout:     opts.BreakerCooldown,
		ReadyToTrip: func(c gobreaker.Counts) bool {
			return c.ConsecutiveFailures >= uint32(opts.BreakerFailures)
		},
		IsSuccessful: breakerSuccess,
		OnStateChange: func(_ string, from, to gobreaker.State) {
			u.log.Warn("upstream circuit breaker", "from", from.String(), "to", to.String())
		},
	})
}

// signal sends on a buffered channel of capacity 1 without blocking.
func signal(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

// Name implements agentsmcp.ToolProvider.
func (u *upstream) Name() string { return u.cfg.Name }

// Tools implements agentsmcp.ToolProvider: the tools of the last successful
// listing, or none while the upstream is down (or was never ready).
func (u *upstream) Tools(context.Context) ([]*mcp.Tool, error) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.st.State == StateDown {
		return nil, nil
	}
	return slices.Clone(u.tools), nil
}

// OnToolsChanged implements agentsmcp.ToolChangeNotifier.
func (u *upstream) OnToolsChanged(f func()) {
	u.mu.Lock()
	u.onChange = f
	u.mu.Unlock()
}

// registered reports whether a registry took u as a provider: accepting a
// provider that implements agentsmcp.ToolChangeNotifier means registering
// its callback.
func (u *upstream) registered() bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.onChange != nil
}

func (u *upstream) notifyToolsChanged() {
	u.mu.Lock()
	f := u.onChange
	u.mu.Unlock()
	if f != nil {
		f()
	}
}

func (u *upstream) start() {
	u.mu.Lock()
	u.started = true
	u.mu.Unlock()
	go u.run()
}

// stop ends the supervisor and waits (within ctx) until the session is
// closed and a stdio child is reaped.
func (u *upstream) stop(ctx context.Context) error {
	u.cancel()
	u.mu.Lock()
	started := u.started
	u.mu.Unlock()
	if !started {
		return nil
	}
	select {
	case <-u.done:
		u.closePrincipalSessions()
		return nil
	case <-ctx.Done():
		return fmt.Errorf("stop upstream %q: %w", u.cfg.Name, ctx.Err())
	}
}

// status returns a snapshot. A ready upstream whose circuit is open is
// reported degraded.
func (u *upstream) status() Status {
	u.mu.Lock()
	st := u.st
	st.Tools = len(u.tools)
	st.Resources, st.ResourceTemplates, st.Prompts = u.extras.counts()
	st.Problems = slices.Clone(u.problems)
	prefix := u.cfg.Name + agentsmcp.NamespaceSeparator
	for exposed, name := range u.original {
		if exposed != prefix+name {
			if st.Aliases == nil {
				st.Aliases = map[string]string{}
			}
			st.Aliases[exposed] = name
		}
	}
	u.mu.Unlock()
	st.Problems = append(st.Problems, u.pool.opts.Registry.Problems()[u.cfg.Name]...)
	st.InFlight = u.calls.count()
	breaker := u.cb.Load().State()
	st.Breaker = breaker.String()
	if st.State == StateReady && breaker == gobreaker.StateOpen {
		st.State = StateDegraded
		st.Reason = fmt.Sprintf("circuit open after %d consecutive failed calls; calls are refused for %s", u.pool.opts.BreakerFailures, u.pool.opts.BreakerCooldown)
	}
	return st
}

// setState records a state change, in the history too, and wakes calls
// waiting for a session. u.mu must be held.
func (u *upstream) setStateLocked(s State, reason string) {
	if u.st.State != s || u.st.Reason != reason {
		if u.st.State != s {
			u.st.Since = time.Now()
			u.log.Info("upstream state", "state", string(s), "reason", reason)
			u.history = append(u.history, agentsmcp.UpstreamTransition{State: s, Reason: reason, At: u.st.Since})
			if over := len(u.history) - u.pool.opts.StateHistory; over > 0 {
				u.history = slices.Delete(u.history, 0, over)
			}
		}
		u.st.State, u.st.Reason = s, reason
	}
	close(u.changed)
	u.changed = make(chan struct{})
}

// errorText is err's message fit for logs, status and callers: at most max
// bytes, with the upstream's URL redacted (Go's HTTP errors quote the URL,
// query tokens included).
func (u *upstream) errorText(err error, max int) string {
	msg := err.Error()
	if u.cfg.URL != "" {
		msg = strings.ReplaceAll(msg, u.cfg.URL, redact.URL(u.cfg.URL))
		if i := strings.IndexByte(u.cfg.URL, '?'); i >= 0 && i+1 < len(u.cfg.URL) {
			msg = strings.ReplaceAll(msg, u.cfg.URL[i+1:], redact.Marker)
		}
	}
	return storedform.TruncateUTF8(msg, max)
}

func (u *upstream) recordErrorLocked(err error) {
	u.st.LastError = u.errorText(err, 1024)
	u.st.LastErrorAt = time.Now()
}

// run is the supervisor: connect, serve the session until it must be
// replaced, and again, with backoff between failed attempts, until stopped.
func (u *upstream) run() {
	defer close(u.done)
	defer u.extras.clear()
	defer u.firstOnce.Do(func() { close(u.firstAttempt) })
	failures := 0
	var waiting []chan struct{} // Refresh calls to answer after the next attempt
	for u.ctx.Err() == nil {
		s, err := u.connect()
		// Add and Refresh return once the attempt is over and its outcome
		// is in the status: on success connect recorded it, on failure
		// the branch below does before it answers them.
		attempted := func() {
			u.firstOnce.Do(func() { close(u.firstAttempt) })
			for _, ch := range waiting {
				close(ch)
			}
			waiting = nil
		}
		if err != nil {
			if u.ctx.Err() != nil {
				return
			}
			failures++
			// Equal jitter: replicas and upstreams restarted together spread
			// out without ever retrying in a tight loop.
			wait := backoff.Delay(u.pool.opts.MinBackoff, u.cfg.MaxBackoff, failures)
			u.mu.Lock()
			wasUp := u.st.State != StateDown
			u.recordErrorLocked(err)
			u.st.FailedAttempts = failures
			u.st.NextAttemptAt = time.Now().Add(wait)
			u.setStateLocked(StateDown, "cannot connect: "+u.errorText(err, 300))
			u.mu.Unlock()
			attempted()
			u.log.Warn("upstream connect failed", "attempt", failures, "retry_in", wait.Round(time.Millisecond), "error", u.errorText(err, 2000))
			if wasUp {
				// Withdraw what the upstream offered until it is back.
				u.notifyToolsChanged()
				u.extras.clear()
			}
			timer := time.NewTimer(wait)
			select {
			case <-u.ctx.Done():
				timer.Stop()
				return
			case <-timer.C:
			case ch := <-u.refreshReq:
				timer.Stop()
				waiting = append(waiting, ch)
			}
			continue
		}
		attempted()
		failures = 0
		u.serve(s)
		u.closeSession(s)
	}
}

// session is one established connection: the client session and, for
// stdio, the child process.
type session struct {
	cs   *mcp.ClientSession
	proc *process // nil unless stdio
	stop context.CancelFunc
}

// connect establishes a session: initialize (with protocol-version
// fallback) and the first tools/list must both succeed within the upstream's
// timeout. Resources and prompts are listed too, but their failure only
// shows in the status.
func (u *upstream) connect() (*session, error) {
	u.mu.Lock()
	if u.st.State != StateDown {
		u.setStateLocked(StateConnecting, u.st.Reason)
	}
	u.mu.Unlock()
	ctx, cancel := context.WithTimeout(u.ctx, u.cfg.Timeout)
	defer cancel()

	s, err := u.dial(ctx)
	if err != nil {
		return nil, err
	}
	tools, original, problems, err := u.listTools(ctx, s.cs)
	if err != nil {
		u.closeSession(s)
		return nil, fmt.Errorf("first tools/list: %w", err)
	}
	problems = append(problems, u.syncExtras(ctx, s.cs)...)
	if logsBySession(s.cs) {
		// An upstream sends no log messages before logging/setLevel. Ask
		// for all of them: the calling client's own level decides what
		// it receives.
		if err := s.cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "debug"}); err != nil {
			problems = append(problems, "logging/setLevel failed: "+u.errorText(err, 300))
		}
	}

	init := s.cs.InitializeResult()
	u.cb.Store(u.newBreaker())
	u.mu.Lock()
	u.session = s.cs
	u.tools, u.original, u.problems = tools, original, problems
	u.st.ConnectedAt = time.Now()
	u.st.FailedAttempts = 0
	u.st.NextAttemptAt = time.Time{}
	if init != nil {
		u.st.ProtocolVersion = init.ProtocolVersion
		if init.ServerInfo != nil {
			u.st.ServerName, u.st.ServerVersion = init.ServerInfo.Name, init.ServerInfo.Version
		}
	}
	if s.proc != nil {
		u.st.PID = s.proc.pid()
	}
	u.setStateLocked(StateReady, fmt.Sprintf("connected; %d tools", len(tools)))
	u.mu.Unlock()
	u.log.Info("upstream ready", "tools", len(tools), "protocol_version", u.st.ProtocolVersion, "problems", len(problems))
	u.notifyToolsChanged()
	return s, nil
}

// logsBySession reports whether cs is with an upstream that can log and
// takes its log level from logging/setLevel.
func logsBySession(cs *mcp.ClientSession) bool {
	init := cs.InitializeResult()
	return init != nil && init.Capabilities != nil && init.Capabilities.Logging != nil && !mcpwire.Revision(init.ProtocolVersion).Sessionless()
}

// logsByRequest reports whether cs is with an upstream that can log and
// takes its log level from each request's _meta.
func logsByRequest(cs *mcp.ClientSession) bool {
	init := cs.InitializeResult()
	return init != nil && init.Capabilities != nil && init.Capabilities.Logging != nil && mcpwire.Revision(init.ProtocolVersion).Sessionless()
}

// fallbackVersions are proposed, in order, when an upstream refuses the
// SDK's newest protocol version in a way the SDK does not negotiate itself.
var fallbackVersions = []string{"2025-06-18", "2025-03-26", "2024-11-05"}

// dial connects and initializes, trying older protocol versions when the
// upstream answers the handshake with a protocol error rather than a
// transport failure (which would fail the same way again).
func (u *upstream) dial(ctx context.Context) (*session, error) {
	versions := []string{u.cfg.ProtocolVersion}
	if u.cfg.ProtocolVersion == "" {
		versions = append(versions, fallbackVersions...)
	}
	var firstErr error
	for _, v := range versions {
		s, err := u.dialVersion(ctx, v)
		if err == nil {
			return s, nil
		}
		if firstErr == nil {
			firstErr = err
		}
		if ctx.Err() != nil || !isProtocolRefusal(err) {
			break
		}
		u.log.Info("upstream refused protocol version; trying an older one", "version", versionLabel(v), "error", u.errorText(err, 2000))
	}
	return nil, firstErr
}

func versionLabel(v string) string {
	if v == "" {
		return "latest"
	}
	return v
}

// isProtocolRefusal reports whether a failed handshake was the upstream
// answering but refusing (a JSON-RPC error or an unsupported version), as
// opposed to not answering at all.
func isProtocolRefusal(err error) bool {
	return upstreamError(err) != nil || strings.Contains(err.Error(), "unsupported protocol version")
}

func (u *upstream) dialVersion(ctx context.Context, version string) (*session, error) {
	sessionCtx, stopSession := context.WithCancel(u.ctx)
	t, proc, err := u.transport(sessionCtx, stopSession)
	if err != nil {
		stopSession()
		return nil, err
	}
	cs, err := u.client.Connect(ctx, t, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		stopSession()
		if proc != nil {
			proc.kill(u.log)
		}
		if ctx.Err() != nil {
			return nil, fmt.Errorf("initialize did not finish within %s: %w", u.cfg.Timeout, err)
		}
		return nil, fmt.Errorf("initialize: %w", err)
	}
	return &session{cs: cs, proc: proc, stop: stopSession}, nil
}

// closeWait bounds how long closing an HTTP session may hold up the
// supervisor (a reconnect, Remove, Close).
const closeWait = 2 * time.Second

// closeSession closes a session and, for stdio, kills and reaps what is
// left of the child's process group.
func (u *upstream) closeSession(s *session) {
	u.mu.Lock()
	if u.session == s.cs {
		u.session = nil
	}
	u.mu.Unlock()
	closed := make(chan struct{})
	go func() {
		defer close(closed)
		_ = s.cs.Close()
	}()
	if s.proc != nil {
		<-closed // the stdio transport stops and reaps the child within its grace periods
	} else {
		// go-sdk's Close waits for the notifications still being sent,
		// such as the cancellations of calls to an upstream that stopped
		// answering, up to 5 s each. They end on their own.
		select {
		case <-closed:
		case <-time.After(closeWait):
			u.log.Debug("upstream session still closing; not waiting for it")
		}
	}
	s.stop()
	if s.proc != nil {
		s.proc.kill(u.log)
	}
}

// listTools lists the upstream's tools (every page) and turns them into the
// exposed set: filtered by allow/deny, renamed `<upstream>__<tool>`, with
// input and output schemas as JSON bytes so that the router passes them on
// unchanged. A tool whose prefixed name is valid but for its length is
// exposed under its [ToolAlias]; other tools whose exposed name would be
// invalid are left out and reported.
//
// Names are claimed so that the result depends only on the set of tools
// listed, not on their order: first every tool under its prefixed name,
// then the aliased tools in the order of their names, each taking the
// first attempt of [ToolAlias] that no tool claimed before it.
func (u *upstream) listTools(ctx context.Context, cs *mcp.ClientSession) (tools []*mcp.Tool, original map[string]string, problems []string, err error) {
	original = map[string]string{}
	prefix := u.cfg.Name + agentsmcp.NamespaceSeparator
	offered := map[string]bool{} // allowed upstream tool names listed
	var long []*mcp.Tool         // to alias; Name still the upstream's
	for t, err := range cs.Tools(ctx, nil) {
		if err != nil {
			return nil, nil, nil, err
		}
		if !toolAllowed(u.cfg.Tools, t.Name) {
			continue
		}
		if offered[t.Name] {
			problems = append(problems, fmt.Sprintf("tool %q is listed twice", t.Name))
			continue
		}
		offered[t.Name] = true
		exposed := *t
		exposed.Name = prefix + t.Name
		aliased := needsAlias(exposed.Name)
		if !aliased && !agentsmcp.ToolNamePattern.MatchString(exposed.Name) {
			problems = append(problems, fmt.Sprintf("tool %q: exposed name %q does not match %s", t.Name, exposed.Name, agentsmcp.ToolNamePattern))
			continue
		}
		if exposed.InputSchema, err = schemaJSON(t.InputSchema); err != nil {
			problems = append(problems, fmt.Sprintf("tool %q: input schema: %v", t.Name, err))
			continue
		}
		if t.OutputSchema != nil {
			if exposed.OutputSchema, err = schemaJSON(t.OutputSchema); err != nil {
				problems = append(problems, fmt.Sprintf("tool %q: output schema: %v", t.Name, err))
				continue
			}
		}
		if aliased {
			exposed.Name = t.Name
			long = append(long, &exposed)
			continue
		}
		original[exposed.Name] = t.Name
		tools = append(tools, &exposed)
	}
	slices.SortFunc(long, func(a, b *mcp.Tool) int { return strings.Compare(a.Name, b.Name) })
	for _, exposed := range long {
		name := exposed.Name
		alias := ToolAlias(u.cfg.Name, name, 0)
		for n := 1; original[alias] != ""; n++ {
			alias = ToolAlias(u.cfg.Name, name, n)
		}
		exposed.Name = alias
		exposed.Meta = maps.Clone(exposed.Meta)
		if exposed.Meta == nil {
			exposed.Meta = mcp.Meta{}
		}
		exposed.Meta[MetaUpstreamTool] = name
		original[alias] = name
		tools = append(tools, exposed)
	}
	slices.SortFunc(tools, func(a, b *mcp.Tool) int { return strings.Compare(a.Name, b.Name) })
	for _, name := range u.cfg.Tools.Allow {
		if !offered[name] {
			problems = append(problems, fmt.Sprintf("allowed tool %q is not offered by the upstream", name))
		}
	}
	return tools, original, problems, nil
}

// schemaJSON encodes a schema the client decoded, once, so that the router
// compiles and serves exactly these bytes.
func schemaJSON(s any) (json.RawMessage, error) {
	if raw, ok := s.(json.RawMessage); ok {
		return raw, nil
	}
	b, err := json.Marshal(s)
	if err != nil {
		return nil, err
	}
	return b, nil
}

// serve watches an established session until it has to be replaced (it
// ended, or stopped answering pings) or the upstream is stopped. It
// re-lists on list_changed (debounced) and on Refresh.
func (u *upstream) serve(s *session) {
	ended := make(chan error, 1)
	go func() { ended <- s.cs.Wait() }() // returns when closeSession closes cs
	health := time.NewTicker(u.pool.opts.HealthInterval)
	defer health.Stop()
	var debounce <-chan time.Time
	missed := 0
	for {
		select {
		case <-u.ctx.Done():
			return
		case err := <-ended:
			u.lost(fmt.Errorf("session ended: %v", orClosed(err)))
			return
		case <-u.listChanged:
			if debounce == nil {
				debounce = time.After(u.pool.opts.ListChangedDelay)
			}
		case <-debounce:
			debounce = nil
			u.relist(s.cs)
		case ch := <-u.refreshReq:
			u.relist(s.cs)
			close(ch)
		case <-u.probe:
			if err := u.ping(s.cs); err != nil {
				u.lost(fmt.Errorf("a call failed and the upstream does not answer pings: %w", err))
				return
			}
		case <-health.C:
			if err := u.ping(s.cs); err != nil {
				missed++
				if missed >= 2 {
					u.lost(fmt.Errorf("%d pings in a row failed: %w", missed, err))
					return
				}
				u.mu.Lock()
				u.recordErrorLocked(err)
				u.setStateLocked(StateDegraded, "ping failed: "+u.errorText(err, 300))
				u.mu.Unlock()
				continue
			}
			missed = 0
			u.mu.Lock()
			if u.st.State == StateDegraded {
				u.setStateLocked(StateReady, fmt.Sprintf("answering again; %d tools", len(u.tools)))
			}
			u.mu.Unlock()
		}
	}
}

func orClosed(err error) error {
	if err == nil {
		return errors.New("closed by the upstream")
	}
	return err
}

func (u *upstream) ping(cs *mcp.ClientSession) error {
	ctx, cancel := context.WithTimeout(u.ctx, min(u.cfg.Timeout, 10*time.Second))
	defer cancel()
	return cs.Ping(ctx, nil)
}

// lost records that the session is gone; the tools stay listed while the
// supervisor reconnects, and calls wait for the new session.
func (u *upstream) lost(err error) {
	if u.ctx.Err() != nil {
		return
	}
	u.log.Warn("upstream session lost; reconnecting", "error", u.errorText(err, 2000))
	u.mu.Lock()
	u.session = nil
	u.recordErrorLocked(err)
	u.setStateLocked(StateConnecting, "reconnecting: "+u.errorText(err, 300))
	u.mu.Unlock()
}

// relist re-reads tools, resources and prompts after a list_changed or a
// Refresh. A failure keeps the previous lists and degrades the upstream.
func (u *upstream) relist(cs *mcp.ClientSession) {
	ctx, cancel := context.WithTimeout(u.ctx, u.cfg.Timeout)
	defer cancel()
	tools, original, problems, err := u.listTools(ctx, cs)
	if err != nil {
		u.log.Warn("re-listing tools failed", "error", u.errorText(err, 2000))
		u.mu.Lock()
		u.recordErrorLocked(err)
		u.setStateLocked(StateDegraded, "re-listing tools failed: "+u.errorText(err, 300))
		u.mu.Unlock()
		return
	}
	problems = append(problems, u.syncExtras(ctx, cs)...)
	u.mu.Lock()
	u.tools, u.original, u.problems = tools, original, problems
	u.setStateLocked(StateReady, fmt.Sprintf("connected; %d tools", len(tools)))
	u.mu.Unlock()
	u.notifyToolsChanged()
}

// refreshNow asks the supervisor to re-list (or to connect now, if the
// upstream is not connected) and waits for it within ctx.
func (u *upstream) refreshNow(ctx context.Context) Status {
	done := make(chan struct{})
	select {
	case u.refreshReq <- done:
		select {
		case <-done:
		case <-ctx.Done():
		case <-u.done:
		}
	case <-ctx.Done():
	case <-u.done:
	}
	return u.status()
}

// toolAllowed reports whether the upstream tool named tool passes f: Deny
// wins, and an empty Allow allows all.
func toolAllowed(f agentsmcp.UpstreamToolFilter, tool string) bool {
	if slices.Contains(f.Deny, tool) {
		return false
	}
	return len(f.Allow) == 0 || slices.Contains(f.Allow, tool)
}
