package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// startSharedReplicas starts n `serve` processes on one FerretDB database
// with sessions.shared on, each knowing the API keys "key-a" and "key-b"
// (two principals).
func startSharedReplicas(t *testing.T, n int, env ...string) []*serverProcess {
	t.Helper()
	mongoURI := startReplicaFerretDB(t)
	database := fmt.Sprintf("sessions_%d", time.Now().UnixNano())
	var out []*serverProcess
	for range n {
		base := []string{"MONGODB_URI=" + mongoURI, "MONGODB_DATABASE=" + database,
			"AGENTS_MCP_SESSIONS_SHARED=true", "AGENTS_MCP_API_KEYS=key-a,key-b"}
		out = append(out, startServerProcess(t, t.TempDir(), append(base, env...)...))
	}
	return out
}

// roundRobin sends each request to the next live replica, as a load
// balancer without affinity does, with the caller's API key.
type roundRobin struct {
	key   string
	mu    sync.Mutex
	bases []string
	n     atomic.Int64
	hits  map[string]int
}

func (rr *roundRobin) RoundTrip(req *http.Request) (*http.Response, error) {
	rr.mu.Lock()
	base := rr.bases[int(rr.n.Add(1))%len(rr.bases)]
	rr.hits[base]++
	rr.mu.Unlock()
	u, _ := url.Parse(base)
	req = req.Clone(req.Context())
	req.URL.Scheme, req.URL.Host, req.Host = u.Scheme, u.Host, u.Host
	req.Header.Set("Authorization", "Bearer "+rr.key)
	return http.DefaultTransport.RoundTrip(req)
}

func (rr *roundRobin) only(base string) {
	rr.mu.Lock()
	defer rr.mu.Unlock()
	rr.bases = []string{base}
}

// TestSharedSessionServedByAnyReplica: with sessions.shared, a go-sdk
// client whose every request goes to the next of two replicas (no
// affinity) keeps one 2025-11-25 session across both; once the replica
// that opened it is killed, the other serves it alone; the session id
// with another principal's credential is refused as unknown.
func TestSharedSessionServedByAnyReplica(t *testing.T) {
	if testing.Short() {
		t.Skip("starts FerretDB and two server processes")
	}
	reps := startSharedReplicas(t, 2)
	rr := &roundRobin{key: "key-a", bases: []string{reps[0].base, reps[1].base}, hits: map[string]int{}}
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "shared-sessions-test", Version: "1"}, nil).
		Connect(ctx, &mcp.StreamableClientTransport{Endpoint: "http://replicas/mcp", HTTPClient: &http.Client{Transport: rr}, DisableStandaloneSSE: true}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatalf("connect: %v\nA: %s\nB: %s", err, reps[0].logs, reps[1].logs)
	}
	defer cs.Close()
	if err := cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "warning"}); err != nil {
		t.Fatalf("setLevel: %v", err)
	}
	call := func(round int) {
		t.Helper()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "list_tasks", Arguments: map[string]any{}})
		if err != nil {
			t.Fatalf("round %d: list_tasks: %v\nA: %s\nB: %s", round, err, reps[0].logs, reps[1].logs)
		}
		if res.IsError {
			t.Fatalf("round %d: list_tasks: %v", round, res.Content)
		}
		if _, err := cs.ListTools(ctx, nil); err != nil {
			t.Fatalf("round %d: tools/list: %v", round, err)
		}
	}
	for i := range 6 {
		call(i)
	}
	rr.mu.Lock()
	hitsA, hitsB := rr.hits[reps[0].base], rr.hits[reps[1].base]
	rr.mu.Unlock()
	if hitsA < 3 || hitsB < 3 {
		t.Fatalf("the requests did not alternate: %d on A, %d on B", hitsA, hitsB)
	}

	// A stolen id: the same session id with the other principal's key.
	sid := cs.ID()
	for _, p := range reps {
		if status := postWithSession(t, p.base, "key-b", sid, `{"jsonrpc":"2.0","id":9,"method":"tools/list"}`); status != http.StatusNotFound {
			t.Fatalf("the session of key-a, used with key-b on %s: HTTP %d, want 404", p.base, status)
		}
	}

	// The replica that opened it dies; the other serves it alone.
	_ = reps[0].cmd.Process.Kill()
	_ = reps[0].cmd.Wait()
	rr.only(reps[1].base)
	for i := range 3 {
		call(100 + i)
	}
}

// postWithSession POSTs body with a session id and key and returns the
// HTTP status.
func postWithSession(t *testing.T, base, key, sid, body string) int {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, base+"/mcp", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	req.Header.Set("Mcp-Session-Id", sid)
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

// TestSharedStreamResumesOnAnotherReplica: a client that lost the stream
// of a call on replica A after its priming event resumes it with
// Last-Event-ID on replica B, and gets the call's answer, which A wrote.
func TestSharedStreamResumesOnAnotherReplica(t *testing.T) {
	if testing.Short() {
		t.Skip("starts FerretDB and two server processes")
	}
	reps := startSharedReplicas(t, 2)
	resumeThrough(t, reps[0].base, reps[1].base)
}

// resumeThrough opens a session on a, breaks the stream of a call there
// after its first event, and resumes it with Last-Event-ID through b,
// until it gets the call's answer.
func resumeThrough(t *testing.T, a, b string) {
	t.Helper()
	sid := rawInitialize(t, a, "key-a")

	// The call's stream on A: read the priming event's id, then hang up.
	req, _ := http.NewRequest(http.MethodPost, a+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"list_tasks","arguments":{}}}`))
	setSessionHeaders(req, "key-a", sid)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	lastID := ""
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if id, ok := strings.CutPrefix(sc.Text(), "id:"); ok {
			lastID = strings.TrimSpace(id)
			break
		}
	}
	resp.Body.Close()
	if lastID == "" {
		t.Fatalf("no event id on the call's stream (content type %s)", resp.Header.Get("Content-Type"))
	}

	// Resume on B, until A has written the answer.
	deadline := time.Now().Add(20 * time.Second)
	for {
		req, _ := http.NewRequest(http.MethodGet, b+"/mcp", nil)
		setSessionHeaders(req, "key-a", sid)
		req.Header.Set("Last-Event-ID", lastID)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK && strings.Contains(string(body), `"id":7`) && strings.Contains(string(body), `"result"`) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("resume through %s: HTTP %d %s", b, resp.StatusCode, body)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func setSessionHeaders(req *http.Request, key, sid string) {
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	req.Header.Set("Authorization", "Bearer "+key)
	if sid != "" {
		req.Header.Set("Mcp-Session-Id", sid)
	}
}

// rawInitialize opens a 2025-11-25 session on base and returns its id.
func rawInitialize(t *testing.T, base, key string) string {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": map[string]any{
		"protocolVersion": "2025-11-25", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "raw", "version": "1"},
	}})
	req, _ := http.NewRequest(http.MethodPost, base+"/mcp", strings.NewReader(string(body)))
	setSessionHeaders(req, key, "")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	sid := resp.Header.Get("Mcp-Session-Id")
	if sid == "" {
		t.Fatalf("initialize: HTTP %d without a session id", resp.StatusCode)
	}
	if status := postWithSession(t, base, key, sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`); status != http.StatusAccepted {
		t.Fatalf("notifications/initialized: HTTP %d", status)
	}
	return sid
}
