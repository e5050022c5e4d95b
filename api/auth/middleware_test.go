package auth

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	sdkauth "github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/internal/delegation"
)

// failure is one call of Config.OnFailure.
type failure struct {
	hint   string
	status int
	reason string
}

type failureLog struct {
	mu  sync.Mutex
	got []failure
}

func (l *failureLog) hook(_ *http.Request, hint string, status int, reason string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.got = append(l.got, failure{hint, status, reason})
}

func (l *failureLog) take() []failure {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := l.got
	l.got = nil
	return out
}

// okHandler answers 200 with the principal ID it sees.
var okHandler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	p := agentsmcp.PrincipalFrom(r.Context())
	if p == nil {
		http.Error(w, "no principal", http.StatusInternalServerError)
		return
	}
	_, _ = w.Write([]byte(p.ID))
})

type errorBody struct {
	Error struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

func do(t *testing.T, h http.Handler, method string, header http.Header) (*httptest.ResponseRecorder, errorBody) {
	t.Helper()
	req := httptest.NewRequest(method, "/mcp", nil)
	for k, v := range header {
		req.Header[k] = v
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	var body errorBody
	if rec.Code >= 400 {
		if ct := rec.Header().Get("Content-Type"); ct != "application/json" {
			t.Errorf("error Content-Type %q, want application/json", ct)
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
			t.Errorf("error body %q: %v", rec.Body, err)
		}
	}
	return rec, body
}

func bearer(token string) http.Header { return http.Header{"Authorization": {"Bearer " + token}} }

const (
	mcpKey   = "mcp-only-key-0001"
	adminKey = "admin-read-key-0002"
)

func TestMiddlewareRefusals(t *testing.T) {
	rs := newRSASigner(t, "rsa-1")
	is := newTestIssuer(t, rs)
	keys := []Key{
		{Name: "agent", Secret: mcpKey, Scopes: []string{"mcp"}},
		{Name: "viewer", Secret: adminKey, Scopes: []string{"admin:read"}},
	}
	expired := claims("alice", "mcp")
	expired["exp"] = time.Now().Add(-time.Hour).Unix()
	metadataURL := "https://mcp.example.com/.well-known/oauth-protected-resource"

	for _, withJWT := range []bool{false, true} {
		var log failureLog
		cfg := Config{Keys: keys, OnFailure: log.hook}
		if withJWT {
			cfg.JWT = is.jwtConfig()
		}
		a, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		h := a.Middleware(agentsmcp.ScopeMCP)(okHandler)
		tests := []struct {
			name      string
			header    http.Header
			jwtOnly   bool
			status    int
			code      string
			challenge string // the WWW-Authenticate after the resource_metadata param
			hint      string
		}{
			{name: "no header", status: 401, code: "unauthenticated", challenge: ``, hint: "none"},
			{name: "basic", header: http.Header{"Authorization": {"Basic dXNlcjpwYXNz"}}, status: 401, code: "unauthenticated", challenge: ``, hint: "none"},
			{name: "empty bearer", header: http.Header{"Authorization": {"Bearer "}}, status: 401, code: "unauthenticated",
				challenge: `, error="invalid_token", error_description="malformed bearer token"`, hint: "none"},
			{name: "two tokens", header: http.Header{"Authorization": {"Bearer a b"}}, status: 401, code: "unauthenticated",
				challenge: `, error="invalid_token", error_description="malformed bearer token"`, hint: "none"},
			{name: "two headers", header: http.Header{"Authorization": {"Bearer " + mcpKey, "Bearer " + mcpKey}}, status: 401, code: "unauthenticated",
				challenge: `, error="invalid_token", error_description="more than one Authorization header"`, hint: "none"},
			{name: "wrong key", header: bearer("wrong-key"), status: 401, code: "unauthenticated",
				challenge: `, error="invalid_token", error_description="unknown API key`, hint: "key:" + sha256Hex("wrong-key")[:12]},
			{name: "missing scope", header: bearer(adminKey), status: 403, code: "forbidden",
				challenge: `, error="insufficient_scope", scope="mcp", error_description="requires scope mcp"`, hint: "key:" + sha256Hex(adminKey)[:12]},
			{name: "expired jwt", header: bearer(rs.sign(t, expired)), jwtOnly: true, status: 401, code: "unauthenticated",
				challenge: `, error="invalid_token", error_description="token expired"`, hint: "jwt:alice"},
			{name: "jwt without mcp", header: bearer(rs.sign(t, claims("bob", "admin:read"))), jwtOnly: true, status: 403, code: "forbidden",
				challenge: `, error="insufficient_scope", scope="mcp"`, hint: "jwt:bob"},
			{name: "lowercase scheme", header: http.Header{"Authorization": {"bearer " + mcpKey}}, status: 200},
			{name: "key", header: bearer(mcpKey), status: 200},
			{name: "jwt", header: bearer(rs.sign(t, claims("carol", "mcp"))), jwtOnly: true, status: 200},
		}
		for _, tt := range tests {
			if tt.jwtOnly && !withJWT {
				continue
			}
			name := tt.name
			if withJWT {
				name += " (keys and JWT)"
			}
			t.Run(name, func(t *testing.T) {
				rec, body := do(t, h, http.MethodPost, tt.header)
				if rec.Code != tt.status {
					t.Fatalf("status %d (%s), want %d", rec.Code, rec.Body, tt.status)
				}
				fails := log.take()
				if tt.status == 200 {
					if len(fails) != 0 || rec.Header().Get("WWW-Authenticate") != "" {
						t.Errorf("accepted request reported failures %v / challenge %q", fails, rec.Header().Get("WWW-Authenticate"))
					}
					return
				}
				want := `Bearer realm="agents-mcp"`
				if withJWT {
					want += `, resource_metadata="` + metadataURL + `"`
				}
				want += tt.challenge
				if got := rec.Header().Get("WWW-Authenticate"); !strings.HasPrefix(got, want) {
					t.Errorf("WWW-Authenticate\n got %s\nwant %s…", got, want)
				}
				if body.Error.Code != tt.code || body.Error.Message == "" {
					t.Errorf("body %+v, want code %q and a message", body, tt.code)
				}
				if len(fails) != 1 || fails[0].status != tt.status || fails[0].hint != tt.hint || fails[0].reason != body.Error.Message {
					t.Errorf("OnFailure calls %+v, want one with hint %q, status %d, reason %q", fails, tt.hint, tt.status, body.Error.Message)
				}
				for _, secret := range []string{mcpKey, adminKey, "wrong-key"} {
					if strings.Contains(rec.Body.String()+rec.Header().Get("WWW-Authenticate"), secret) || (len(fails) > 0 && strings.Contains(fails[0].hint+fails[0].reason, secret)) {
						t.Errorf("secret %q leaks into the response or the failure hook", secret)
					}
				}
			})
		}
	}
}

// Every combination of key scopes and endpoints: MCP needs mcp, admin
// reads need admin:read, admin writes admin:write, /metrics metrics or
// admin:read.
func TestScopeMatrix(t *testing.T) {
	grants := [][]string{{"mcp"}, {"admin:read"}, {"admin:write"}, {"admin:read", "admin:write"}, {"metrics"}, agentsmcp.Scopes}
	var keys []Key
	for i, g := range grants {
		keys = append(keys, Key{Name: "k" + string(rune('0'+i)), Secret: "matrix-key-" + string(rune('0'+i)), Scopes: g})
	}
	// Not the refusals per address: this test makes more than its burst.
	a, err := New(Config{Keys: keys, FailureRate: -1})
	if err != nil {
		t.Fatal(err)
	}
	mcpEndpoint := a.Middleware(agentsmcp.ScopeMCP)(okHandler)
	adminRead := a.Middleware(agentsmcp.ScopeAdminRead)(okHandler)
	adminWrite := a.Middleware(agentsmcp.ScopeAdminWrite)(okHandler)
	metrics := a.Authenticate(a.RequireAnyScope(agentsmcp.ScopeMetrics, agentsmcp.ScopeAdminRead)(okHandler))
	endpoints := []struct {
		name   string
		h      http.Handler
		method string
		scope  string
		also   string // another scope that opens it
	}{
		{"metrics GET", metrics, http.MethodGet, "metrics", "admin:read"},
		{"mcp POST", mcpEndpoint, http.MethodPost, "mcp", ""},
		{"mcp GET", mcpEndpoint, http.MethodGet, "mcp", ""},
		{"admin read GET", adminRead, http.MethodGet, "admin:read", ""},
		{"admin read HEAD", adminRead, http.MethodHead, "admin:read", ""},
		{"admin write POST", adminWrite, http.MethodPost, "admin:write", ""},
		{"admin write PUT", adminWrite, http.MethodPut, "admin:write", ""},
		{"admin write DELETE", adminWrite, http.MethodDelete, "admin:write", ""},
	}
	for i, g := range grants {
		for _, e := range endpoints {
			want := http.StatusForbidden
			if slices.Contains(g, e.scope) || e.also != "" && slices.Contains(g, e.also) {
				want = http.StatusOK
			}
			rec, _ := do(t, e.h, e.method, bearer(keys[i].Secret))
			if rec.Code != want {
				t.Errorf("key with %v on %s: %d, want %d", g, e.name, rec.Code, want)
			}
			if want == http.StatusForbidden && !strings.Contains(rec.Header().Get("WWW-Authenticate"), `scope="`+e.scope+`"`) {
				t.Errorf("key with %v on %s: challenge %q does not name %s", g, e.name, rec.Header().Get("WWW-Authenticate"), e.scope)
			}
		}
	}
}

// AuthenticateIfPresented lets a request without a credential through
// with no principal, authenticates one with a credential, and refuses a
// bad credential rather than treating it as none.
func TestAuthenticateIfPresented(t *testing.T) {
	a, err := New(Config{Keys: []Key{{Name: "agent", Secret: mcpKey, Scopes: []string{"mcp"}}}})
	if err != nil {
		t.Fatal(err)
	}
	who := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if p := agentsmcp.PrincipalFrom(r.Context()); p != nil {
			_, _ = w.Write([]byte(p.ID))
			return
		}
		_, _ = w.Write([]byte("nobody"))
	})
	h := a.AuthenticateIfPresented(who)
	if rec, _ := do(t, h, http.MethodGet, nil); rec.Code != http.StatusOK || rec.Body.String() != "nobody" {
		t.Errorf("no credential: %d %q, want 200 nobody", rec.Code, rec.Body)
	}
	if rec, _ := do(t, h, http.MethodGet, bearer(mcpKey)); rec.Code != http.StatusOK || !strings.HasPrefix(rec.Body.String(), "key:") {
		t.Errorf("a key: %d %q, want 200 and its principal", rec.Code, rec.Body)
	}
	for _, header := range []http.Header{bearer("wrong-key-0123456789"), {"Authorization": {"Basic x"}}, {"Authorization": {""}}} {
		if rec, _ := do(t, h, http.MethodGet, header); rec.Code != http.StatusUnauthorized {
			t.Errorf("%v: %d %q, want 401", header, rec.Code, rec.Body)
		}
	}
	off, err := New(Config{})
	if err != nil {
		t.Fatal(err)
	}
	if rec, _ := do(t, off.AuthenticateIfPresented(who), http.MethodGet, nil); rec.Body.String() != agentsmcp.AnonymousPrincipal {
		t.Errorf("without keys: %q, want the anonymous principal", rec.Body)
	}
}

// Without credentials configured, every request is anonymous and is
// served the same way whatever it carries.
func TestMiddlewareWithoutAuth(t *testing.T) {
	a, err := New(Config{OnFailure: func(*http.Request, string, int, string) { t.Error("OnFailure called without auth") }})
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range []http.Handler{a.Middleware(agentsmcp.ScopeMCP)(okHandler), a.Middleware(agentsmcp.ScopeAdminWrite)(okHandler)} {
		for _, header := range []http.Header{nil, bearer("anything"), {"Authorization": {"Basic x"}}} {
			for _, method := range []string{http.MethodGet, http.MethodPost, http.MethodDelete} {
				rec, _ := do(t, h, method, header)
				if rec.Code != http.StatusOK || rec.Body.String() != agentsmcp.AnonymousPrincipal {
					t.Errorf("%s with %v: %d %q, want 200 anonymous", method, header, rec.Code, rec.Body)
				}
			}
		}
	}
	if a.Metadata() != nil {
		t.Error("metadata without JWT")
	}
}

// The handler behind Authenticate sees the request as it came, plus the
// principal in both places MCP code looks.
func TestAuthenticateContext(t *testing.T) {
	rs := newRSASigner(t, "rsa-1")
	is := newTestIssuer(t, rs)
	a, err := New(Config{Keys: []Key{{Name: "agent", Secret: mcpKey, Scopes: []string{"mcp"}, Tools: []string{"x__*"}}}, JWT: is.jwtConfig()})
	if err != nil {
		t.Fatal(err)
	}
	type seen struct {
		header    http.Header
		principal *agentsmcp.Principal
		info      *sdkauth.TokenInfo
		delegated *delegation.DelegatedToken
	}
	var got seen
	h := a.Authenticate(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = seen{r.Header.Clone(), agentsmcp.PrincipalFrom(r.Context()), sdkauth.TokenInfoFromContext(r.Context()),
			delegation.DelegatedTokenFrom(r.Context())}
	}))
	jwtExp := time.Now().Add(time.Hour).Truncate(time.Second)
	c := claims("alice", "mcp admin:read")
	c["exp"] = jwtExp.Unix()
	for _, tt := range []struct {
		name    string
		token   string
		wantID  string
		wantExp time.Time
	}{
		{"key", mcpKey, "key:" + sha256Hex(mcpKey)[:12], time.Time{}},
		{"jwt", rs.sign(t, c), "jwt:alice", jwtExp},
	} {
		t.Run(tt.name, func(t *testing.T) {
			header := http.Header{"Authorization": {"Bearer " + tt.token}, "X-Trace": {"abc"}, "Mcp-Session-Id": {"s1"}}
			rec, _ := do(t, h, http.MethodPost, header)
			if rec.Code != http.StatusOK {
				t.Fatalf("status %d %s", rec.Code, rec.Body)
			}
			for k, v := range header {
				if !slices.Equal(got.header[k], v) {
					t.Errorf("header %s = %q, want %q", k, got.header[k], v)
				}
			}
			if got.principal == nil || got.principal.ID != tt.wantID {
				t.Fatalf("context principal %+v, want %s", got.principal, tt.wantID)
			}
			if got.info == nil || got.info.UserID != tt.wantID || !got.info.Expiration.Equal(tt.wantExp) || !slices.Equal(got.info.Scopes, got.principal.Scopes) {
				t.Fatalf("TokenInfo %+v, want UserID %s, expiry %v", got.info, tt.wantID, tt.wantExp)
			}
			if p := got.info.Extra[agentsmcp.TokenInfoPrincipal]; p != got.principal {
				t.Errorf("TokenInfo principal = %p, want the context principal %p", p, got.principal)
			}
			// Only a JWT is the caller's own identity, to delegate (ADR
			// 0012 D7b); it prints redacted wherever it goes.
			inInfo, _ := got.info.Extra[delegation.TokenInfoDelegatedToken].(*delegation.DelegatedToken)
			if tt.name == "key" {
				if got.delegated != nil || inInfo != nil {
					t.Errorf("an API key is delegable: %v %v", got.delegated, inInfo)
				}
				return
			}
			if got.delegated == nil || inInfo != got.delegated || got.delegated.Value() != tt.token ||
				got.delegated.Principal() != tt.wantID || !got.delegated.Expires().Equal(tt.wantExp) {
				t.Fatalf("delegated token %+v (TokenInfo %p), want the JWT of %s", got.delegated, inInfo, tt.wantID)
			}
			if text := fmt.Sprintf("%v %+v %#v %s", got.delegated, got.info, got.delegated, got.delegated); strings.Contains(text, tt.token) {
				t.Errorf("the delegated token prints: %s", text)
			}
		})
	}
}

// The principal reaches a real go-sdk tool handler as
// req.Extra.TokenInfo, over a real streamable HTTP connection, and go-sdk
// binds the session to it.
func TestPrincipalReachesMCPHandler(t *testing.T) {
	a, err := New(Config{Keys: []Key{
		{Name: "agent", Secret: mcpKey, Scopes: []string{"mcp"}, Tools: []string{"whoami"}},
		{Name: "other", Secret: "other-mcp-key-0003", Scopes: []string{"mcp"}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	server := mcp.NewServer(&mcp.Implementation{Name: "test", Version: "v0"}, nil)
	mcp.AddTool(server, &mcp.Tool{Name: "whoami"}, func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		p, _ := req.Extra.TokenInfo.Extra[agentsmcp.TokenInfoPrincipal].(*agentsmcp.Principal)
		if p == nil {
			return nil, nil, agentsmcp.Errorf(agentsmcp.EUNAUTHORIZED, "no principal")
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: p.ID + " " + p.Name + " " + strings.Join(p.Tools, ",")}}}, nil, nil
	})
	handler := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, nil)
	srv := httptest.NewServer(a.Middleware(agentsmcp.ScopeMCP)(handler))
	defer srv.Close()

	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	var sessionID string
	client := mcp.NewClient(&mcp.Implementation{Name: "client", Version: "v0"}, nil)
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{
		Endpoint:             srv.URL,
		HTTPClient:           &http.Client{Transport: bearerTransport{token: mcpKey, sessionID: &sessionID}},
		DisableStandaloneSSE: true,
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "whoami"})
	if err != nil {
		t.Fatal(err)
	}
	want := "key:" + sha256Hex(mcpKey)[:12] + " agent whoami"
	if text := res.Content[0].(*mcp.TextContent).Text; res.IsError || text != want {
		t.Fatalf("whoami = %q (error %v), want %q", text, res.IsError, want)
	}

	// Another valid key may not use the first key's session.
	body := `{"jsonrpc":"2.0","id":9,"method":"tools/list"}`
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer other-mcp-key-0003")
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Session-Id", sessionID)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if sessionID == "" || resp.StatusCode != http.StatusForbidden {
		t.Errorf("other key on session %q: %d, want 403", sessionID, resp.StatusCode)
	}
}

// bearerTransport adds the key to every request and remembers the MCP
// session the server assigns.
type bearerTransport struct {
	token     string
	sessionID *string
}

func (b bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	resp, err := http.DefaultTransport.RoundTrip(r)
	if err == nil && resp.Header.Get("Mcp-Session-Id") != "" {
		*b.sessionID = resp.Header.Get("Mcp-Session-Id")
	}
	return resp, err
}

// While the issuer's keys cannot be fetched, JWT callers get 503, not a
// challenge that would send them to fetch a new token.
func TestMiddlewareIssuerDown(t *testing.T) {
	rs := newRSASigner(t, "rsa-1")
	is := newTestIssuer(t, rs)
	is.setDown(true)
	var log failureLog
	a, err := New(Config{JWT: is.jwtConfig(), OnFailure: log.hook})
	if err != nil {
		t.Fatal(err)
	}
	rec, body := do(t, a.Middleware(agentsmcp.ScopeMCP)(okHandler), http.MethodPost, bearer(rs.sign(t, claims("alice", "mcp"))))
	if rec.Code != http.StatusServiceUnavailable || body.Error.Code != "unavailable" || rec.Header().Get("WWW-Authenticate") != "" {
		t.Errorf("issuer down: %d %+v challenge %q; want 503 unavailable without challenge", rec.Code, body, rec.Header().Get("WWW-Authenticate"))
	}
	if f := log.take(); len(f) != 1 || f[0].status != 503 || f[0].hint != "jwt:alice" {
		t.Errorf("OnFailure %+v", f)
	}
}

// RequireScope without Authenticate in front is a wiring mistake; it
// fails closed.
func TestRequireScopeWithoutPrincipal(t *testing.T) {
	a, err := New(Config{})
	if err != nil {
		t.Fatal(err)
	}
	rec, body := do(t, a.RequireScope(agentsmcp.ScopeMCP)(okHandler), http.MethodGet, nil)
	if rec.Code != http.StatusUnauthorized || body.Error.Code != "unauthenticated" {
		t.Errorf("no principal: %d %+v, want 401", rec.Code, body)
	}
}

// TestRefusalsAreLimitedPerAddress: past its burst of refusals an address
// gets 429 (with Retry-After and the challenge) instead of 401, the hook
// still hears of each one, the right key from that address still gets in,
// and another address is not affected.
func TestRefusalsAreLimitedPerAddress(t *testing.T) {
	var log failureLog
	a, err := New(Config{Keys: []Key{{Name: "agent", Secret: mcpKey, Scopes: []string{"mcp"}}}, OnFailure: log.hook, FailureRate: 0.001, FailureBurst: 3})
	if err != nil {
		t.Fatal(err)
	}
	h := a.Middleware(agentsmcp.ScopeMCP)(okHandler)
	send := func(addr, token string) *httptest.ResponseRecorder {
		req := httptest.NewRequest(http.MethodPost, "/mcp", nil)
		req.RemoteAddr = addr
		req.Header.Set("Authorization", "Bearer "+token)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec
	}
	var got []int
	for range 5 {
		got = append(got, send("192.0.2.7:4000", "wrong-key-0123456789").Code)
	}
	if want := []int{401, 401, 401, 429, 429}; !slices.Equal(got, want) {
		t.Fatalf("statuses %v, want %v", got, want)
	}
	last := send("192.0.2.7:4001", "wrong-key-0123456789") // another port: the same client
	if last.Code != 429 || last.Header().Get("Retry-After") == "" || !strings.HasPrefix(last.Header().Get("WWW-Authenticate"), "Bearer ") {
		t.Errorf("the 6th refusal: %d, Retry-After %q, WWW-Authenticate %q", last.Code, last.Header().Get("Retry-After"), last.Header().Get("WWW-Authenticate"))
	}
	if ok := send("192.0.2.7:4002", mcpKey); ok.Code != 200 {
		t.Errorf("the right key from the limited address: %d %s", ok.Code, ok.Body)
	}
	if other := send("198.51.100.1:4000", "wrong-key-0123456789"); other.Code != 401 {
		t.Errorf("another address: %d, want 401", other.Code)
	}
	// IPv6 clients are one /64.
	for range 3 {
		send("[2001:db8:1:2::a]:4000", "wrong-key-0123456789")
	}
	if v6 := send("[2001:db8:1:2::b]:4000", "wrong-key-0123456789"); v6.Code != 429 {
		t.Errorf("another address of the same /64 after its burst: %d, want 429", v6.Code)
	}
	if n := len(log.take()); n != 11 {
		t.Errorf("the hook heard of %d refusals, want every one of 11", n)
	}
}
