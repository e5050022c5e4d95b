package remote

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/internal/mcpwire"
	"github.com/agents-mcp/agents-mcp/internal/seal"
	"github.com/agents-mcp/agents-mcp/internal/taskfixture"
	"github.com/agents-mcp/agents-mcp/router"
)

// ADR 0010, D6: an upstream's notifications/tools/list_changed reaches a
// 2026-07-28 client's subscriptions/listen stream as the router's own
// list_changed. The pool re-lists the upstream, Router.Refresh changes the
// router's tools, and go-sdk delivers the change to every listen stream
// that asked for it. Real parts throughout: a go-sdk upstream over
// streamable HTTP, the pool, the router's HTTP handler on loopback, and
// go-sdk's 2026 client, which opens its listen stream at connect.
func TestUpstreamListChangedReachesA2026ListenStream(t *testing.T) {
	t.Parallel()
	e := newEnv(t, fastOptions())
	fx := newFixture("up")
	e.add(streamableConfig("up", serveStreamable(t, fx.server).URL()))

	h := e.router.HTTPHandler(router.HTTPOptions{})
	srv := httptest.NewServer(h)
	t.Cleanup(func() {
		h.Close()
		e.router.CloseSessions(context.Background())
		srv.Close()
	})
	changed := make(chan *mcp.ToolListChangedRequest, 10)
	c := mcp.NewClient(&mcp.Implementation{Name: "listen-2026", Version: "1"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(_ context.Context, req *mcp.ToolListChangedRequest) { changed <- req },
	})
	cs, err := c.Connect(testCtx(t, 10*time.Second), &mcp.StreamableClientTransport{Endpoint: srv.URL + "/mcp"},
		&mcp.ClientSessionOptions{ProtocolVersion: "2026-07-28"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	if v := cs.InitializeResult().ProtocolVersion; v != "2026-07-28" {
		t.Fatalf("negotiated %s, want 2026-07-28 (sessionless, listen stream)", v)
	}
	// Nothing changed yet. (go-sdk sends the listen request right after
	// server/discover; a tools/list makes sure the stream is served before
	// the upstream changes.)
	if _, err := cs.ListTools(testCtx(t, 5*time.Second), nil); err != nil {
		t.Fatal(err)
	}
	select {
	case req := <-changed:
		t.Fatalf("list_changed before any change: %+v", req.Params)
	case <-time.After(200 * time.Millisecond):
	}

	fx.server.AddTool(&mcp.Tool{Name: "late", Description: "added at run time", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "late!"}}}, nil
		})
	select {
	case req := <-changed:
		// Sent on the listen stream: it carries the stream's subscription.
		if req.Params == nil || req.Params.GetMeta()[mcp.MetaKeySubscriptionID] == nil {
			t.Fatalf("list_changed without a subscription id: %+v", req.Params)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the 2026 client got no notifications/tools/list_changed")
	}
	found := false
	for tool, err := range cs.Tools(testCtx(t, 5*time.Second), nil) {
		if err != nil {
			t.Fatal(err)
		}
		found = found || tool.Name == "up__late"
	}
	if !found {
		t.Error("tools/list after the notification lacks up__late")
	}
}

// ADR 0010, D5 for upstream tasks: a utk_ handle can be listened to. No
// hub hears the upstream, so the stream's poll reads it through the pool's
// task backend, with the listener's principal, and the notifications carry
// the handle, as tasks/get does.
func TestUpstreamTaskHandleOnAListenStream(t *testing.T) {
	t.Parallel()
	_, s := taskfixture.New()
	opts := fastOptions()
	opts.StateKey = bytes.Repeat([]byte{7}, seal.KeySize)
	e := newEnv(t, opts)
	e.router.AddTaskBackend(e.pool.Tasks())
	h := e.router.HTTPHandler(router.HTTPOptions{TaskPollInterval: 100 * time.Millisecond, Authenticate: func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			ctx := agentsmcp.WithPrincipal(r.Context(), &agentsmcp.Principal{ID: r.Header.Get("X-Test-Principal")})
			next.ServeHTTP(w, r.WithContext(ctx))
		})
	}})
	srv := httptest.NewServer(h)
	t.Cleanup(func() {
		h.Close()
		srv.Close()
	})
	g := &gateway{env: e, url: srv.URL + "/mcp"}
	g.add(streamableConfig("tu", serveTasks(false)(t, s).URL()))

	created := g.call("alice", "tools/call", map[string]any{"name": "tu__greet_later", "arguments": map[string]any{}}, true)
	id, _ := created.Result["taskId"].(string)
	if !strings.HasPrefix(id, TaskHandlePrefix) {
		t.Fatalf("tools/call as a task: %v %v", created.Error, created.Result)
	}
	if bobs := openListen(t, g.url, "bob", id); len(bobs.ack) != 0 {
		t.Fatalf("bob was acknowledged %v", bobs.ack)
	}
	st := openListen(t, g.url, "alice", id)
	if len(st.ack) != 1 || st.ack[0] != id {
		t.Fatalf("alice was acknowledged %v", st.ack)
	}
	now := st.next(t)
	if asks, _ := now["inputRequests"].(map[string]any); now["taskId"] != id || now["status"] != "input_required" || asks["who.1"] == nil {
		t.Fatalf("the task as it is: %v", now)
	}
	ack := g.call("alice", "tasks/update", map[string]any{"taskId": id,
		"inputResponses": map[string]any{"who.1": map[string]any{"action": "accept", "content": map[string]any{"name": "Ada"}}}}, true)
	if ack.Error != nil {
		t.Fatalf("tasks/update: %v", ack.Error)
	}
	for now["status"] != "completed" {
		now = st.next(t)
	}
	if now["taskId"] != id || text(t, now["result"]) != "hello, Ada" {
		t.Fatalf("completed notification: %v", now)
	}
}

// listened is an open task listen stream: its acknowledged ids and its
// notifications' params.
type listened struct {
	ack   []string
	notes chan map[string]any
}

func openListen(t *testing.T, url, principal, id string) *listened {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 9, "method": "subscriptions/listen", "params": map[string]any{
		"_meta": map[string]any{
			mcp.MetaKeyProtocolVersion:    mcpwire.ProtocolSessionless,
			mcp.MetaKeyClientCapabilities: map[string]any{"elicitation": map[string]any{}, "extensions": map[string]any{mcpwire.TasksExtension: map[string]any{}}},
			mcp.MetaKeyClientInfo:         map[string]any{"name": "listen-test", "version": "1"},
		},
		"notifications": map[string]any{"taskIds": []string{id}},
	}})
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", mcpwire.ProtocolSessionless)
	req.Header.Set("Mcp-Method", "subscriptions/listen")
	req.Header.Set("X-Test-Principal", principal)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	msgs := make(chan map[string]any, 100)
	go func() { // ends with the body: the stream's end or the test's cancel
		defer close(msgs)
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			if d, ok := strings.CutPrefix(sc.Text(), "data:"); ok && strings.TrimSpace(d) != "" {
				var m map[string]any
				if json.Unmarshal([]byte(strings.TrimSpace(d)), &m) == nil {
					msgs <- m
				}
			}
		}
	}()
	l := &listened{notes: make(chan map[string]any, 100)}
	select {
	case m := <-msgs:
		params, _ := m["params"].(map[string]any)
		notes, _ := params["notifications"].(map[string]any)
		if m["method"] != "notifications/subscriptions/acknowledged" {
			t.Fatalf("first message: %v", m)
		}
		for _, v := range notes["taskIds"].([]any) {
			l.ack = append(l.ack, v.(string))
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no acknowledgement")
	}
	go func() { // forwards the notifications' params until the stream ends
		defer close(l.notes)
		for m := range msgs {
			if m["method"] == "notifications/tasks" {
				params, _ := m["params"].(map[string]any)
				l.notes <- params
			}
		}
	}()
	return l
}

func (l *listened) next(t *testing.T) map[string]any {
	t.Helper()
	select {
	case n, ok := <-l.notes:
		if !ok {
			t.Fatal("the stream ended")
		}
		return n
	case <-time.After(10 * time.Second):
		t.Fatal("no notification")
	}
	return nil
}
