package router_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/internal/mcpwire"
	"github.com/agents-mcp/agents-mcp/internal/testutil"
	"github.com/agents-mcp/agents-mcp/localtools"
	"github.com/agents-mcp/agents-mcp/router"
	"github.com/agents-mcp/agents-mcp/router/conformance"
	"github.com/agents-mcp/agents-mcp/router/internal/routertest"
)

// subscriptions/listen for task ids (ADR 0010, D5) on a real router over
// loopback HTTP, with the conformance fixtures' task backend and ownedTasks,
// a backend whose tasks belong to principals, changed by the test.

// ownedTasks is a task backend whose tasks ("own_…") are seen only by their
// creator, as agents/mcptools.MCPTasks does; set changes one and tells the hub, as
// the executor's OnChange does in cmd.
type ownedTasks struct {
	hub   *router.TaskHub
	mu    sync.Mutex
	tasks map[string]mcpwire.MCPTask
	owner map[string]string
	reads atomic.Int64 // GetTask calls, from streams and tasks/get alike
}

func (o *ownedTasks) Owns(id string) bool { return strings.HasPrefix(id, "own_") }

func (o *ownedTasks) GetTask(ctx context.Context, id string) (*mcpwire.MCPTask, error) {
	o.reads.Add(1)
	o.mu.Lock()
	defer o.mu.Unlock()
	t, ok := o.tasks[id]
	if !ok || !agentsmcp.PrincipalFrom(ctx).MaySee(o.owner[id]) {
		return nil, agentsmcp.Errorf(agentsmcp.ENOTFOUND, "task %q not found", id)
	}
	return &t, nil
}

func (o *ownedTasks) UpdateTask(context.Context, string, mcp.InputResponseMap) error { return nil }
func (o *ownedTasks) CancelTask(context.Context, string) error                       { return nil }

// set stores task t of owner and reports the change to the hub.
func (o *ownedTasks) set(owner string, t mcpwire.MCPTask) {
	o.mu.Lock()
	if o.tasks == nil {
		o.tasks, o.owner = map[string]mcpwire.MCPTask{}, map[string]string{}
	}
	t.UpdatedAt = time.Now()
	if t.CreatedAt.IsZero() {
		t.CreatedAt = t.UpdatedAt
	}
	o.tasks[t.ID], o.owner[t.ID] = t, owner
	o.mu.Unlock()
	o.hub.Notify(t.ID)
}

type listenServer struct {
	url   string
	hub   *router.TaskHub
	owned *ownedTasks
	h     *router.HTTPHandler
}

// newListenServer serves a router with both backends; the caller is the
// principal named by the X-Principal header.
func newListenServer(t *testing.T, poll time.Duration, tune ...func(*router.HTTPOptions)) *listenServer {
	t.Helper()
	r := router.New(router.Options{Version: "test"})
	local := localtools.New()
	ctx, cancel := context.WithCancel(context.Background())
	if err := conformance.Register(ctx, r, local); err != nil {
		t.Fatal(err)
	}
	if err := r.AddProvider(ctx, local); err != nil {
		t.Fatal(err)
	}
	hub := router.NewTaskHub()
	owned := &ownedTasks{hub: hub}
	r.AddTaskBackend(owned)
	opts := router.HTTPOptions{
		TaskHub: hub, TaskPollInterval: poll,
		Authenticate: func(next http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
				p := &agentsmcp.Principal{ID: req.Header.Get("X-Principal")}
				next.ServeHTTP(w, req.WithContext(agentsmcp.WithPrincipal(req.Context(), p)))
			})
		},
	}
	for _, f := range tune {
		f(&opts)
	}
	h := r.HTTPHandler(opts)
	srv := httptest.NewServer(h)
	t.Cleanup(func() {
		cancel()
		hub.Close()
		h.Close()
		r.CloseSessions(context.Background())
		srv.Close()
	})
	return &listenServer{url: srv.URL + "/mcp", hub: hub, owned: owned, h: h}
}

// listenStream is an open subscriptions/listen stream.
type listenStream struct {
	resp   *http.Response
	cancel context.CancelFunc
	events chan map[string]any // closed when the stream ends
}

// listen opens a stream as principal for the filter, declaring the Tasks
// extension when ext is set. A non-SSE answer is returned with no events.
func listen(t *testing.T, url, principal string, notifications map[string]any, ext bool) *listenStream {
	t.Helper()
	caps := map[string]any{"elicitation": map[string]any{}}
	if ext {
		caps["extensions"] = map[string]any{"io.modelcontextprotocol/tasks": map[string]any{}}
	}
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": "listen-1", "method": "subscriptions/listen", "params": map[string]any{
		"_meta": map[string]any{
			"io.modelcontextprotocol/protocolVersion":    "2026-07-28",
			"io.modelcontextprotocol/clientCapabilities": caps,
			"io.modelcontextprotocol/clientInfo":         map[string]any{"name": "listen-test", "version": "1"},
		},
		"notifications": notifications,
	}})
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", "subscriptions/listen")
	req.Header.Set("X-Principal", principal)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	s := &listenStream{resp: resp, cancel: cancel, events: make(chan map[string]any, 100)}
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		close(s.events)
		return s
	}
	go func() { // owned by the test: ends when the body does (cancel)
		defer close(s.events)
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			if d, ok := strings.CutPrefix(sc.Text(), "data:"); ok && strings.TrimSpace(d) != "" {
				var m map[string]any
				if err := json.Unmarshal([]byte(strings.TrimSpace(d)), &m); err != nil {
					t.Errorf("stream event %q: %v", d, err)
					return
				}
				s.events <- m
			}
		}
	}()
	return s
}

// next returns the next message, or fails after timeout.
func (s *listenStream) next(t *testing.T, timeout time.Duration) map[string]any {
	t.Helper()
	select {
	case m, ok := <-s.events:
		if !ok {
			t.Fatal("the stream ended")
		}
		return m
	case <-time.After(timeout):
		t.Fatal("no message on the stream")
	}
	return nil
}

// quiet fails if a message arrives within d.
func (s *listenStream) quiet(t *testing.T, d time.Duration) {
	t.Helper()
	select {
	case m, ok := <-s.events:
		if ok {
			t.Fatalf("unexpected message: %v", m)
		}
	case <-time.After(d):
	}
}

func ackedIDs(t *testing.T, m map[string]any) []string {
	t.Helper()
	params, _ := m["params"].(map[string]any)
	meta, _ := params["_meta"].(map[string]any)
	if m["method"] != "notifications/subscriptions/acknowledged" || meta["io.modelcontextprotocol/subscriptionId"] != "listen-1" {
		t.Fatalf("first message is not the acknowledgement: %v", m)
	}
	notes, _ := params["notifications"].(map[string]any)
	raw, ok := notes["taskIds"].([]any)
	if !ok || len(notes) != 1 {
		t.Fatalf("acknowledged filter %v, want taskIds only", notes)
	}
	var ids []string
	for _, id := range raw {
		ids = append(ids, id.(string))
	}
	return ids
}

// taskNote checks m is a notifications/tasks of this stream and returns its
// params without _meta.
func taskNote(t *testing.T, m map[string]any) map[string]any {
	t.Helper()
	params, _ := m["params"].(map[string]any)
	meta, _ := params["_meta"].(map[string]any)
	if m["method"] != "notifications/tasks" || meta["io.modelcontextprotocol/subscriptionId"] != "listen-1" {
		t.Fatalf("not a notifications/tasks of this stream: %v", m)
	}
	delete(params, "_meta")
	return params
}

func TestListenAcksOnlyTheTasksTheCallerMaySee(t *testing.T) {
	s := newListenServer(t, time.Hour)
	s.owned.set("alice", mcpwire.MCPTask{ID: "own_a", Status: mcpwire.MCPTaskWorking})
	s.owned.set("bob", mcpwire.MCPTask{ID: "own_b", Status: mcpwire.MCPTaskWorking})

	st := listen(t, s.url, "alice", map[string]any{
		"taskIds":          []string{"own_b", "own_a", "own_missing", "fxt_unknown", "nobody_owns", "own_a"},
		"toolsListChanged": true,
	}, true)
	if st.resp.StatusCode != http.StatusOK {
		t.Fatalf("listen: HTTP %d", st.resp.StatusCode)
	}
	// Bob's task, unknown ids and ids no backend owns are left out, not
	// refused; the list changes asked for in the same filter are not
	// acknowledged on this stream.
	if got := ackedIDs(t, st.next(t, 5*time.Second)); !slices.Equal(got, []string{"own_a"}) {
		t.Fatalf("acknowledged %v, want [own_a]", got)
	}
	if now := taskNote(t, st.next(t, 5*time.Second)); now["taskId"] != "own_a" || now["status"] != "working" {
		t.Fatalf("the task as it is: %v", now)
	}
	// A change of bob's task is not sent to alice.
	s.owned.set("bob", mcpwire.MCPTask{ID: "own_b", Status: mcpwire.MCPTaskCompleted, Result: &mcp.CallToolResult{Content: []mcp.Content{}}})
	st.quiet(t, 300*time.Millisecond)

	// Nothing visible: the acknowledgement lists none and the stream ends
	// with its result, as go-sdk does for an empty filter.
	st = listen(t, s.url, "alice", map[string]any{"taskIds": []string{"own_b"}}, true)
	if got := ackedIDs(t, st.next(t, 5*time.Second)); len(got) != 0 {
		t.Fatalf("acknowledged %v, want none", got)
	}
	if end := st.next(t, 5*time.Second); end["id"] != "listen-1" || end["result"] == nil {
		t.Fatalf("final message %v, want the listen result", end)
	}
	if _, open := <-st.events; open {
		t.Fatal("the stream did not end")
	}
}

func TestListenForTaskIDsNeedsTheExtension(t *testing.T) {
	s := newListenServer(t, time.Hour)
	s.owned.set("alice", mcpwire.MCPTask{ID: "own_a", Status: mcpwire.MCPTaskWorking})
	st := listen(t, s.url, "alice", map[string]any{"taskIds": []string{"own_a"}}, false)
	defer st.resp.Body.Close()
	var reply struct {
		ID    string `json:"id"`
		Error struct {
			Code int             `json:"code"`
			Data json.RawMessage `json:"data"`
		} `json:"error"`
	}
	if err := json.NewDecoder(st.resp.Body).Decode(&reply); err != nil {
		t.Fatal(err)
	}
	if st.resp.StatusCode != http.StatusBadRequest || reply.ID != "listen-1" || reply.Error.Code != mcp.CodeMissingRequiredClientCapabilities ||
		!strings.Contains(string(reply.Error.Data), `"requiredCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}`) {
		t.Fatalf("HTTP %d %+v", st.resp.StatusCode, reply)
	}
}

func TestListenSendsEachVisibleChangeOnceWithTheDetailedTask(t *testing.T) {
	// The poll is an hour away: only the hub can bring these changes.
	s := newListenServer(t, time.Hour)
	s.owned.set("alice", mcpwire.MCPTask{ID: "own_a", Status: mcpwire.MCPTaskWorking, StatusMessage: "0 of 1 steps ended"})
	st := listen(t, s.url, "alice", map[string]any{"taskIds": []string{"own_a"}}, true)
	ackedIDs(t, st.next(t, 5*time.Second))
	// First the task as it is, so that a change made before the stream
	// opened is not missed.
	note := taskNote(t, st.next(t, 5*time.Second))
	if got := call2026(t, s.url, "tasks/get", map[string]any{"taskId": "own_a"}, true, map[string]string{"X-Principal": "alice"}); !sameTask(got.Result, note) {
		t.Fatalf("notification %v\ndiffers from tasks/get %v", note, got.Result)
	}

	// The same view again, as after a write that changes nothing visible.
	s.owned.set("alice", mcpwire.MCPTask{ID: "own_a", Status: mcpwire.MCPTaskWorking, StatusMessage: "0 of 1 steps ended"})
	st.quiet(t, 300*time.Millisecond)

	ask := mcp.InputRequestMap{"confirm.s1.1": &mcp.ElicitParams{Message: "Allow?", RequestedSchema: map[string]any{"type": "object"}}}
	s.owned.set("alice", mcpwire.MCPTask{ID: "own_a", Status: mcpwire.MCPTaskInputRequired, StatusMessage: "waiting", InputRequests: ask})
	note = taskNote(t, st.next(t, 5*time.Second))
	if got := call2026(t, s.url, "tasks/get", map[string]any{"taskId": "own_a"}, true, map[string]string{"X-Principal": "alice"}); !sameTask(got.Result, note) {
		t.Fatalf("notification %v\ndiffers from tasks/get %v", note, got.Result)
	}
	if asks, _ := note["inputRequests"].(map[string]any); note["status"] != "input_required" || asks["confirm.s1.1"] == nil {
		t.Fatalf("input_required notification: %v", note)
	}
	st.quiet(t, 300*time.Millisecond)

	// A new question key is a change even when the status stays.
	ask2 := mcp.InputRequestMap{"confirm.s1.2": ask["confirm.s1.1"]}
	s.owned.set("alice", mcpwire.MCPTask{ID: "own_a", Status: mcpwire.MCPTaskInputRequired, StatusMessage: "waiting", InputRequests: ask2})
	if note = taskNote(t, st.next(t, 5*time.Second)); note["inputRequests"].(map[string]any)["confirm.s1.2"] == nil {
		t.Fatalf("new key: %v", note)
	}

	res := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "done"}}}
	s.owned.set("alice", mcpwire.MCPTask{ID: "own_a", Status: mcpwire.MCPTaskCompleted, Result: res})
	note = taskNote(t, st.next(t, 5*time.Second))
	if got := call2026(t, s.url, "tasks/get", map[string]any{"taskId": "own_a"}, true, map[string]string{"X-Principal": "alice"}); !sameTask(got.Result, note) {
		t.Fatalf("notification %v\ndiffers from tasks/get %v", note, got.Result)
	}
	if note["status"] != "completed" || !strings.Contains(jsonText(note["result"]), `"text":"done"`) {
		t.Fatalf("completed notification: %v", note)
	}
	st.quiet(t, 300*time.Millisecond)
}

// sameTask compares a tasks/get result and a notification's params, but
// for what only a result carries (resultType, _meta).
func sameTask(get, note map[string]any) bool {
	g := map[string]any{}
	for k, v := range get {
		if k != "resultType" && k != "_meta" {
			g[k] = v
		}
	}
	return jsonText(g) == jsonText(note)
}

func TestListenPollsTasksNoHubReports(t *testing.T) {
	// The fixtures' tasks change on their own, unseen by the hub: the
	// stream's poll finds the change, and sends it once.
	s := newListenServer(t, 100*time.Millisecond)
	created := call2026(t, s.url, "tools/call", map[string]any{"name": "slow_compute", "arguments": map[string]any{"seconds": 1.5, "label": "polled"}}, true, nil)
	id, _ := created.Result["taskId"].(string)
	if id == "" {
		t.Fatalf("tools/call: %+v", created)
	}
	st := listen(t, s.url, "alice", map[string]any{"taskIds": []string{id}}, true)
	if got := ackedIDs(t, st.next(t, 5*time.Second)); !slices.Equal(got, []string{id}) {
		t.Fatalf("acknowledged %v", got)
	}
	if now := taskNote(t, st.next(t, 5*time.Second)); now["status"] != "working" {
		t.Fatalf("the task as it is: %v", now)
	}
	note := taskNote(t, st.next(t, 5*time.Second))
	if note["taskId"] != id || note["status"] != "completed" || !strings.Contains(jsonText(note["result"]), "done after 1.5s") {
		t.Fatalf("notification: %v", note)
	}
	st.quiet(t, 500*time.Millisecond)
}

// listenGoroutines counts the goroutines serving listen streams.
func listenGoroutines() int {
	buf := make([]byte, 1<<22)
	buf = buf[:runtime.Stack(buf, true)]
	return strings.Count(string(buf), "(*Listener).Serve(")
}

func TestListenStreamsEndWithTheClientAndAtShutdown(t *testing.T) {
	s := newListenServer(t, 50*time.Millisecond)
	s.owned.set("alice", mcpwire.MCPTask{ID: "own_a", Status: mcpwire.MCPTaskWorking})
	var streams []*listenStream
	for range 5 {
		st := listen(t, s.url, "alice", map[string]any{"taskIds": []string{"own_a"}}, true)
		ackedIDs(t, st.next(t, 5*time.Second))
		taskNote(t, st.next(t, 5*time.Second))
		streams = append(streams, st)
	}
	// The five streams share one watcher of the task, the one the hub
	// knows.
	if n := s.hub.Watchers(); n != 1 {
		t.Fatalf("%d watchers of the task registered with the hub, want 1 for the five streams", n)
	}
	for _, st := range streams {
		st.cancel()
	}
	testutil.Eventually(t, 5*time.Second, "the streams' handlers return", func() bool {
		return s.hub.Watchers() == 0 && listenGoroutines() == 0
	})

	// At shutdown a stream ends with its listen result.
	st := listen(t, s.url, "alice", map[string]any{"taskIds": []string{"own_a"}}, true)
	ackedIDs(t, st.next(t, 5*time.Second))
	taskNote(t, st.next(t, 5*time.Second))
	s.hub.Close()
	if end := st.next(t, 5*time.Second); end["id"] != "listen-1" || fmt.Sprint(end["result"]) == "<nil>" {
		t.Fatalf("final message %v, want the listen result", end)
	}
	if _, open := <-st.events; open {
		t.Fatal("the stream did not end")
	}
	testutil.Eventually(t, 5*time.Second, "no stream is served", func() bool { return listenGoroutines() == 0 })
}

func TestListenStreamsTakeSessionSlots(t *testing.T) {
	s := newListenServer(t, time.Hour, func(o *router.HTTPOptions) { o.MaxSessionsPerPrincipal = 2 })
	s.owned.set("alice", mcpwire.MCPTask{ID: "own_a", Status: mcpwire.MCPTaskWorking})
	var open []*listenStream
	for range 2 {
		st := listen(t, s.url, "alice", map[string]any{"taskIds": []string{"own_a"}}, true)
		ackedIDs(t, st.next(t, 5*time.Second))
		open = append(open, st)
	}
	third := listen(t, s.url, "alice", map[string]any{"taskIds": []string{"own_a"}}, true)
	third.resp.Body.Close()
	if third.resp.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("a third stream: HTTP %d, want 429", third.resp.StatusCode)
	}
	// A stream that ends gives its slot back.
	open[0].cancel()
	testutil.Eventually(t, 5*time.Second, "a slot is free again", func() bool {
		st := listen(t, s.url, "alice", map[string]any{"taskIds": []string{"own_a"}}, true)
		defer st.cancel()
		return st.resp.StatusCode == http.StatusOK
	})
}

// Over stdio go-sdk serves every listen: task ids are not acknowledged
// (stdio clients poll tasks/get), and the listen ends at once.
func TestListenForTaskIDsOverStdioAcksNone(t *testing.T) {
	r := router.New(router.Options{Version: "test"})
	local := localtools.New()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := conformance.Register(ctx, r, local); err != nil {
		t.Fatal(err)
	}
	if err := r.AddProvider(ctx, local); err != nil {
		t.Fatal(err)
	}
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"t","version":"1"},` +
		`"io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}}`
	input := `{"jsonrpc":"2.0","id":1,"method":"subscriptions/listen","params":{` + meta + `,"notifications":{"taskIds":["fxt_0123"]}}}` + "\n"
	outR, outW := io.Pipe()
	transport := &router.StdioTransport{
		Grace: 5 * time.Second,
		Inner: &mcp.IOTransport{Reader: io.NopCloser(strings.NewReader(input)), Writer: routertest.NopWriteCloser{Writer: outW}},
	}
	runDone := make(chan error, 1)
	go func() {
		runDone <- r.Server().Run(context.Background(), transport)
		outW.Close()
	}()
	var lines []string
	sc := bufio.NewScanner(outR)
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	<-runDone
	got := strings.Join(lines, "\n")
	if !strings.Contains(got, `"notifications/subscriptions/acknowledged"`) || strings.Contains(got, "taskIds") ||
		!strings.Contains(got, `"id":1,"result"`) {
		t.Fatalf("stdio listen for task ids:\n%s", got)
	}
}
