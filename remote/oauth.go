package remote

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/egress"
	"github.com/agents-mcp/agents-mcp/internal/credapply"
)

// This file serves upstreams protected by OAuth ([agentsmcp.UpstreamAuthOAuth],
// ADR 0012). Their tokens come from [Options.Credentials], per caller:
//
//   - The supervisor's session (the catalog: initialize, tools/list, pings)
//     carries the shared credential of the upstream (principal ""): a
//     client-credentials grant, or the tokens an administrator obtained
//     for the server itself. Without one the upstream is down, and its
//     status says how to authorize.
//   - A call on behalf of a principal goes over a session of that
//     principal's own, opened on its first call with its own tokens, and
//     closed after principalSessionIdle without calls, or when more than
//     maxPrincipalSessions are open (the least recently used goes). One
//     session per principal is needed, not a token per request on the
//     shared session: servers bind a session to the user who opened it
//     (go-sdk refuses a request whose token names another user), and the
//     upstream's view of who calls must be the caller.
//   - Tokens are asked for at every request, so a refreshed token is used
//     at once. A 401 or 403 drops the cached token
//     ([agentsmcp.CredentialSource.Refused]) and the session.
//   - A missing or refused credential ends the call with an actionable
//     result (mcpwire.AuthorizationRequiredResult), not an error: it names
//     the upstream and the link to authorize, which the router also offers
//     to a client that supports URL-mode elicitation. resources/read and
//     prompts/get go over the caller's session too (callerSession), and
//     fail with that message.
//   - Calls of 2026-07-28 callers are not bridged (bridged.go): a bridged
//     call would run on the pool's session, with the server's authorization.
//
// The caller's own token never reaches the upstream: the requests carry
// only what the credential store holds for the upstream.

// Bounds of the per-principal sessions of one OAuth upstream.
const (
	maxPrincipalSessions = 64
	principalSessionIdle = 10 * time.Minute
)

// credentialTransport adds the credential of one principal to the
// requests for the upstream's origin, and keeps the last authorization
// failure, which the call then reports.
type credentialTransport struct {
	base        http.RoundTripper
	headers     map[string]string // the upstream's static headers, applied first
	source      agentsmcp.CredentialSource
	integration string
	principal   string
	origin      *url.URL

	mu      sync.Mutex
	authErr error
}

func (t *credentialTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if !egress.SameOrigin(req.URL, t.origin) {
		return t.base.RoundTrip(req)
	}
	applied, err := t.source.Credentials(req.Context(), t.integration, t.principal)
	if err == nil && applied == nil {
		err = &agentsmcp.AuthorizationRequired{Integration: t.integration, Reason: "it has no credential"}
	}
	if err != nil {
		t.setAuthErr(err)
		return nil, err
	}
	req = req.Clone(req.Context())
	for k, v := range t.headers {
		req.Header.Set(k, v)
	}
	// The credential wins over a static header of the same name, and an
	// Authorization is only ever what the store holds.
	req.Header.Del("Authorization")
	credapply.Apply(applied, req)
	resp, err := t.base.RoundTrip(req)
	if err == nil && (resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden) {
		t.setAuthErr(t.source.Refused(req.Context(), t.integration, t.principal, resp.StatusCode))
	}
	return resp, err
}

func (t *credentialTransport) setAuthErr(err error) {
	t.mu.Lock()
	t.authErr = err
	t.mu.Unlock()
}

// takeAuthErr returns the authorization failure since the last take.
func (t *credentialTransport) takeAuthErr() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	err := t.authErr
	t.authErr = nil
	return err
}

// oauthClient returns the HTTP client of a session of principal: the
// upstream's client with the principal's credential on top, and its
// credential transport.
func (u *upstream) oauthClient(principal string) (*http.Client, *credentialTransport) {
	origin, _ := url.Parse(u.cfg.URL) // validated when added
	tr := &credentialTransport{base: u.pool.http.Transport, headers: u.cfg.Headers, source: u.pool.opts.Credentials,
		integration: u.cfg.Name, principal: principal, origin: origin}
	return &http.Client{Transport: tr, CheckRedirect: u.pool.http.CheckRedirect}, tr
}

// principalSession is the session of one principal with an OAuth upstream.
type principalSession struct {
	ready    chan struct{} // closed once cs or err is set
	cs       *mcp.ClientSession
	err      error
	tr       *credentialTransport
	inUse    int
	lastUsed time.Time
}

// principalSessions are the sessions of one OAuth upstream, by principal.
type principalSessions struct {
	mu sync.Mutex
	m  map[string]*principalSession
}

// usesOAuth reports whether calls go over per-principal sessions.
func (u *upstream) usesOAuth() bool {
	return u.cfg.Auth == agentsmcp.UpstreamAuthOAuth && u.pool.opts.Credentials != nil
}

// principalSession returns principal's session, opening it when there is
// none; release must be called when the call is over. The error of a
// session that cannot open is an authorization failure when the upstream
// refused the credential (or there was none).
func (u *upstream) principalSession(ctx context.Context, principal string) (ps *principalSession, release func(), err error) {
	sessions := &u.principals
	sessions.mu.Lock()
	if sessions.m == nil {
		sessions.m = map[string]*principalSession{}
	}
	closing := u.sweepLocked(time.Now())
	ps = sessions.m[principal]
	opener := ps == nil
	if opener {
		ps = &principalSession{ready: make(chan struct{})}
		sessions.m[principal] = ps
	}
	ps.inUse++
	ps.lastUsed = time.Now()
	sessions.mu.Unlock()
	for _, old := range closing {
		go u.closePrincipalSession(old) // bounded by closeWait; the caller does not wait for it
	}
	release = func() {
		sessions.mu.Lock()
		ps.inUse--
		ps.lastUsed = time.Now()
		sessions.mu.Unlock()
	}
	if opener {
		u.openPrincipalSession(ctx, principal, ps)
	}
	select {
	case <-ps.ready:
	case <-ctx.Done():
		release()
		return nil, nil, u.contextError(ctx, "opening the caller's session")
	}
	if ps.err != nil {
		release()
		u.dropPrincipalSession(principal, ps)
		return nil, nil, ps.err
	}
	return ps, release, nil
}

// openPrincipalSession initializes principal's session, in the protocol
// version the catalog session negotiated.
func (u *upstream) openPrincipalSession(ctx context.Context, principal string, ps *principalSession) {
	defer close(ps.ready)
	client, tr := u.oauthClient(principal)
	ps.tr = tr
	u.mu.Lock()
	version := u.st.ProtocolVersion
	u.mu.Unlock()
	hctx, cancel := handshakeContext(u.ctx, ctx)
	defer cancel()
	cs, err := u.client.Connect(hctx, u.streamableTransport(client), &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		if authErr := tr.takeAuthErr(); authErr != nil {
			ps.err = authErr
			return
		}
		ps.err = agentsmcp.Errorf(agentsmcp.EUNAVAILABLE, "upstream %q: opening the caller's session: %s", u.cfg.Name, u.errorText(err, 300))
		return
	}
	ps.cs = cs
}

// handshakeContext is the context of a caller's session's handshake: the
// upstream's lifetime, ended with the call (and by its deadline), but
// without the values of the caller's request. go-sdk's client sends the
// protocol version of an incoming request it finds in the context as the
// initialize's MCP-Protocol-Version header, so a 2026-07-28 caller's would
// reach an upstream that negotiated an older version, which refuses it
// (400). cancel releases it once the handshake is over.
func handshakeContext(upstream, call context.Context) (ctx context.Context, cancel context.CancelFunc) {
	ctx, cancelUpstream := context.WithCancel(upstream)
	stop := context.AfterFunc(call, cancelUpstream)
	cancelDeadline := func() {}
	if d, ok := call.Deadline(); ok {
		ctx, cancelDeadline = context.WithDeadline(ctx, d)
	}
	return ctx, func() {
		stop()
		cancelDeadline()
		cancelUpstream()
	}
}

// dropPrincipalSession forgets ps (a failed or refused session) and closes
// it, so that the next call opens a new one.
func (u *upstream) dropPrincipalSession(principal string, ps *principalSession) {
	u.principals.mu.Lock()
	if u.principals.m[principal] == ps {
		delete(u.principals.m, principal)
	}
	u.principals.mu.Unlock()
	go u.closePrincipalSession(ps)
}

// sweepLocked removes the sessions idle for principalSessionIdle, and the
// least recently used ones beyond maxPrincipalSessions - 1 (room for one
// more), and returns them to be closed. Sessions in use stay.
func (u *upstream) sweepLocked(now time.Time) []*principalSession {
	var out []*principalSession
	m := u.principals.m
	for p, ps := range m {
		if ps.inUse == 0 && now.Sub(ps.lastUsed) > principalSessionIdle {
			delete(m, p)
			out = append(out, ps)
		}
	}
	for len(m) >= maxPrincipalSessions {
		oldest, at := "", now
		for p, ps := range m {
			if ps.inUse == 0 && !ps.lastUsed.After(at) {
				oldest, at = p, ps.lastUsed
			}
		}
		if oldest == "" {
			break // every one is in use: go over the bound rather than cut a call
		}
		out = append(out, m[oldest])
		delete(m, oldest)
	}
	return out
}

// closePrincipalSession closes ps once it opened, waiting at most
// closeWait for the upstream.
func (u *upstream) closePrincipalSession(ps *principalSession) {
	<-ps.ready
	if ps.cs == nil {
		return
	}
	closed := make(chan struct{})
	go func() {
		defer close(closed)
		_ = ps.cs.Close()
	}()
	select {
	case <-closed:
	case <-time.After(closeWait):
	}
}

// closePrincipalSessions closes every principal session (the upstream is
// stopping).
func (u *upstream) closePrincipalSessions() {
	u.principals.mu.Lock()
	all := u.principals.m
	u.principals.m = nil
	u.principals.mu.Unlock()
	var wg sync.WaitGroup
	for _, ps := range all {
		wg.Go(func() { u.closePrincipalSession(ps) })
	}
	wg.Wait()
}

// callerSession returns the session that a request of ctx's caller goes
// over (resources/read, prompts/get): the caller's own for an OAuth
// upstream, so that nobody reads with the server's authorization, else
// the pool's. release must be called when the request is over.
func (u *upstream) callerSession(ctx context.Context) (*mcp.ClientSession, func(), error) {
	cs, err := u.waitSession(ctx)
	if err != nil {
		return nil, nil, err
	}
	principal := agentsmcp.PrincipalIDFrom(ctx)
	if !u.usesOAuth() || principal == "" {
		return cs, func() {}, nil
	}
	ps, release, err := u.principalSession(ctx, principal)
	if err != nil {
		return nil, nil, err
	}
	return ps.cs, release, nil
}

// asAuthorization returns the authorization failure err holds, if any.
func asAuthorization(err error) (*agentsmcp.AuthorizationRequired, bool) {
	var ar *agentsmcp.AuthorizationRequired
	ok := errors.As(err, &ar)
	return ar, ok
}
