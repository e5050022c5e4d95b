package mcphttp_test

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agents-mcp/agents-mcp/router"
	"github.com/agents-mcp/agents-mcp/router/internal/routertest"
)

// newSessionServer serves a router whose callers are the principals named
// by their bearer token ("alice", "bob").
func newSessionServer(t *testing.T, opts router.HTTPOptions) *httptest.Server {
	t.Helper()
	r := router.New(router.Options{Version: "test"})
	verify := func(_ context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
		if token != "alice" && token != "bob" {
			return nil, auth.ErrInvalidToken
		}
		return &auth.TokenInfo{UserID: "key:" + token, Expiration: time.Now().Add(time.Hour)}, nil
	}
	opts.Authenticate = auth.RequireBearerToken(verify, nil)
	h := r.HTTPHandler(opts)
	srv := httptest.NewServer(h)
	t.Cleanup(func() {
		h.Close()
		r.CloseSessions(context.Background())
		srv.CloseClientConnections()
		srv.Close()
	})
	return srv
}

// sessionRequest sends one request as token, in session sid if not "".
func sessionRequest(t *testing.T, srv *httptest.Server, token, method, sid, body string) (status int, respBody, newSID string) {
	t.Helper()
	req, err := http.NewRequest(method, srv.URL+"/mcp", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if sid != "" {
		req.Header.Set("Mcp-Session-Id", sid)
		req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(data), resp.Header.Get("Mcp-Session-Id")
}

// openSession initializes a session as token; with complete, it also
// sends notifications/initialized.
func openSession(t *testing.T, srv *httptest.Server, token string, complete bool) string {
	t.Helper()
	status, body, sid := sessionRequest(t, srv, token, http.MethodPost, "", routertest.InitializeBody)
	if status != http.StatusOK || sid == "" {
		t.Fatalf("initialize as %s: %d %s", token, status, body)
	}
	if complete {
		if status, body, _ := sessionRequest(t, srv, token, http.MethodPost, sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`); status != http.StatusAccepted {
			t.Fatalf("notifications/initialized: %d %s", status, body)
		}
	}
	return sid
}

const ping = `{"jsonrpc":"2.0","id":2,"method":"ping"}`

// TestForeignSessionLooksUnknown: bob, holding alice's session id, gets
// the very answer of an id that never existed, on POST, GET and DELETE,
// and alice's session is untouched.
func TestForeignSessionLooksUnknown(t *testing.T) {
	srv := newSessionServer(t, router.HTTPOptions{})
	sid := openSession(t, srv, "alice", true)
	for _, method := range []string{http.MethodPost, http.MethodGet, http.MethodDelete} {
		fs, fb, _ := sessionRequest(t, srv, "bob", method, sid, ping)
		us, ub, _ := sessionRequest(t, srv, "bob", method, "no-such-session", ping)
		if fs != http.StatusNotFound || fs != us || fb != ub {
			t.Errorf("%s as bob: alice's session %d %q, an unknown one %d %q; want the same 404", method, fs, fb, us, ub)
		}
	}
	if status, body, _ := sessionRequest(t, srv, "alice", http.MethodPost, sid, ping); status != http.StatusOK || !strings.Contains(body, `"result"`) {
		t.Errorf("alice's own session after bob's tries: %d %s", status, body)
	}
}

// TestSessionsPerPrincipalAreCapped: past the limit a principal's next
// initialize is refused with 429, others are not affected, and ending a
// session gives its slot back.
func TestSessionsPerPrincipalAreCapped(t *testing.T) {
	srv := newSessionServer(t, router.HTTPOptions{MaxSessionsPerPrincipal: 3})
	var sids []string
	for range 3 {
		sids = append(sids, openSession(t, srv, "alice", true))
	}
	status, body, sid := sessionRequest(t, srv, "alice", http.MethodPost, "", routertest.InitializeBody)
	if status != http.StatusTooManyRequests || sid != "" || !strings.Contains(body, "too many open sessions") {
		t.Fatalf("4th session of alice: %d %q %s, want 429 and no session", status, sid, body)
	}
	// The legacy SSE transport shares the count.
	req, _ := http.NewRequest(http.MethodGet, srv.URL+"/sse", nil)
	req.Header.Set("Authorization", "Bearer alice")
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("a 4th session of alice over /sse: %v %v, want 429", resp, err)
	} else {
		resp.Body.Close()
	}
	openSession(t, srv, "bob", true)

	if status, body, _ := sessionRequest(t, srv, "alice", http.MethodDelete, sids[0], ""); status/100 != 2 {
		t.Fatalf("DELETE: %d %s", status, body)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		status, _, sid := sessionRequest(t, srv, "alice", http.MethodPost, "", routertest.InitializeBody)
		if status == http.StatusOK && sid != "" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the slot of a deleted session never came back: %d", status)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestSessionsThatNeverInitializeAreClosed: a bare initialize (no
// notifications/initialized) and a bare GET /sse lose their session after
// SessionInitTimeout; a session that completed the handshake stays.
func TestSessionsThatNeverInitializeAreClosed(t *testing.T) {
	srv := newSessionServer(t, router.HTTPOptions{SessionInitTimeout: 300 * time.Millisecond, MaxSessionsPerPrincipal: 2})
	bare := openSession(t, srv, "alice", false)
	done := openSession(t, srv, "alice", true)
	// A client that skips notifications/initialized but works in its
	// session (go-sdk serves it) keeps its session too.
	working := openSession(t, srv, "bob", false)
	if status, body, _ := sessionRequest(t, srv, "bob", http.MethodPost, working, ping); status != http.StatusOK {
		t.Fatalf("a request in a session without notifications/initialized: %d %s", status, body)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+"/sse", nil)
	req.Header.Set("Authorization", "Bearer bob")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	start := time.Now()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() { // the endpoint event, keepalives, then the end
	}
	if ctx.Err() != nil {
		t.Fatal("a legacy SSE session that never initialized was still open after 10 s")
	}
	t.Logf("bare SSE session closed after %v", time.Since(start).Round(time.Millisecond))

	deadline := time.Now().Add(5 * time.Second)
	for {
		status, _, _ := sessionRequest(t, srv, "alice", http.MethodPost, bare, ping)
		if status == http.StatusNotFound {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("a session that never initialized still answers after 5 s: %d", status)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if status, body, _ := sessionRequest(t, srv, "alice", http.MethodPost, done, ping); status != http.StatusOK {
		t.Errorf("the initialized session: %d %s", status, body)
	}
	if status, body, _ := sessionRequest(t, srv, "bob", http.MethodPost, working, ping); status != http.StatusOK {
		t.Errorf("the working session without notifications/initialized: %d %s", status, body)
	}
	// The reaped session's slot is free again: alice holds one of two.
	openSession(t, srv, "alice", true)
}

// The client of go-sdk completes the handshake by itself: its session is
// never reaped, even with a short init timeout.
func TestSDKClientSessionIsNotReaped(t *testing.T) {
	srv := newSessionServer(t, router.HTTPOptions{SessionInitTimeout: 200 * time.Millisecond})
	c := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil)
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{
		Endpoint: srv.URL + "/mcp", HTTPClient: &http.Client{Transport: routertest.Bearer{Token: "alice", Base: http.DefaultTransport}},
	}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"}) // a protocol with sessions
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	time.Sleep(600 * time.Millisecond)
	if err := cs.Ping(context.Background(), nil); err != nil {
		t.Fatalf("ping after the init timeout: %v", err)
	}
}
