package remote

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/internal/mcpwire"
	"github.com/agents-mcp/agents-mcp/internal/seal"
	"github.com/agents-mcp/agents-mcp/internal/taskfixture"
	"github.com/agents-mcp/agents-mcp/router"
)

// Upstream tasks through the gateway (ADR 0010, D3): a real go-sdk upstream
// that implements the Tasks extension with custom methods, the pool in
// front of it, and a real router serving raw 2026-07-28 JSON-RPC over
// loopback HTTP to two principals.

// serveTasks serves an upstream over stateless streamable HTTP, as a
// 2026-07-28 server is served: go-sdk's client then negotiates 2026-07-28
// through server/discover. jsonResponse answers with JSON bodies rather
// than event streams.
func serveTasks(jsonResponse bool) func(*testing.T, *mcp.Server) *httpUpstream {
	return func(t *testing.T, s *mcp.Server) *httpUpstream {
		return serveHTTP(t, func() http.Handler {
			return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s },
				&mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: jsonResponse})
		})
	}
}

// runTaskStdioServer serves the task server over stdio, for the stdio case
// of the tests (see TestMain).
func runTaskStdioServer() int {
	_, s := taskfixture.New()
	if err := s.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		fmt.Fprintf(os.Stderr, "task stdio fixture: %v\n", err)
		return 1
	}
	return 0
}

// gateway is a router with the pool's task backend, served over loopback
// HTTP; the X-Test-Principal header names the caller.
type gateway struct {
	*env
	url string
}

func newGateway(t *testing.T, key []byte) *gateway {
	t.Helper()
	opts := fastOptions()
	opts.StateKey = key
	e := newEnv(t, opts)
	e.router.AddTaskBackend(e.pool.Tasks())
	h := e.router.HTTPHandler(router.HTTPOptions{Authenticate: func(next http.Handler) http.Handler {
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
	return &gateway{env: e, url: srv.URL + "/mcp"}
}

type gwReply struct {
	Result map[string]any `json:"result"`
	Error  *jsonrpc.Error `json:"error"`
}

// call sends one 2026-07-28 request as principal, declaring elicitation
// and, with ext, the Tasks extension.
func (g *gateway) call(principal, method string, params map[string]any, ext bool) gwReply {
	g.t.Helper()
	caps := map[string]any{"elicitation": map[string]any{}}
	if ext {
		caps["extensions"] = map[string]any{mcpwire.TasksExtension: map[string]any{}}
	}
	params["_meta"] = map[string]any{
		mcp.MetaKeyProtocolVersion:    mcpwire.ProtocolSessionless,
		mcp.MetaKeyClientCapabilities: caps,
		mcp.MetaKeyClientInfo:         map[string]any{"name": "tasks-test", "version": "1"},
	}
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
	req, _ := http.NewRequest(http.MethodPost, g.url, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", mcpwire.ProtocolSessionless)
	req.Header.Set("Mcp-Method", method)
	req.Header.Set("X-Test-Principal", principal)
	if name, ok := params["name"].(string); ok {
		req.Header.Set("Mcp-Name", name)
	}
	if id, ok := params["taskId"].(string); ok {
		req.Header.Set("Mcp-Name", id)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		g.t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		for line := range strings.SplitSeq(string(data), "\n") {
			if d, ok := strings.CutPrefix(line, "data:"); ok && strings.TrimSpace(d) != "" {
				data = []byte(strings.TrimSpace(d))
				break
			}
		}
	}
	var r gwReply
	if err := json.Unmarshal(data, &r); err != nil {
		g.t.Fatalf("%s: HTTP %d, not JSON-RPC: %q", method, resp.StatusCode, data)
	}
	return r
}

// wantNotFound checks the answer every caller gets for a task it may not
// use: -32602, saying the task was not found, and nothing else.
func wantNotFound(t *testing.T, what string, r gwReply, id string) {
	t.Helper()
	if r.Error == nil || r.Error.Code != jsonrpc.CodeInvalidParams || r.Error.Message != fmt.Sprintf("task %q not found", id) {
		t.Fatalf("%s: got %+v, %v; want -32602 task %q not found", what, r.Error, r.Result, id)
	}
}

func text(t *testing.T, res any) string {
	t.Helper()
	m, _ := res.(map[string]any)
	content, _ := m["content"].([]any)
	var out []string
	for _, c := range content {
		if c, ok := c.(map[string]any); ok {
			s, _ := c["text"].(string)
			out = append(out, s)
		}
	}
	return strings.Join(out, "\n")
}

func TestUpstreamTaskThroughGateway(t *testing.T) {
	key := bytes.Repeat([]byte{7}, seal.KeySize)
	for _, tc := range []struct {
		name  string
		serve func(*testing.T, *mcp.Server) *httpUpstream // nil: stdio
		cfg   func(name, url string) agentsmcp.UpstreamConfig
		// headers: the upstream sees Mcp-Name (streamable HTTP only).
		headers bool
	}{
		{"streamable-sse", serveTasks(false), streamableConfig, true},
		{"streamable-json", serveTasks(true), streamableConfig, true},
		{"stdio", nil, func(string, string) agentsmcp.UpstreamConfig {
			cfg := stdioConfig(t, "tu")
			cfg.Env = map[string]string{stdioServerEnv: "tasks"}
			return cfg
		}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ts, s := taskfixture.New()
			url := ""
			if tc.serve != nil {
				url = tc.serve(t, s).URL()
			}
			g := newGateway(t, key)
			g.add(tc.cfg("tu", url))
			if st := g.status("tu"); !mcpwire.Revision(st.ProtocolVersion).Sessionless() {
				t.Fatalf("the upstream negotiated %s, before the Tasks extension", st.ProtocolVersion)
			}

			// Called as a task, the tool answers with a handle.
			created := g.call("alice", "tools/call", map[string]any{"name": "tu__greet_later", "arguments": map[string]any{}}, true)
			if created.Error != nil {
				t.Fatalf("tools/call: %v", created.Error)
			}
			id, _ := created.Result["taskId"].(string)
			if created.Result["resultType"] != "task" || !strings.HasPrefix(id, TaskHandlePrefix) {
				t.Fatalf("tools/call as a task: %v", created.Result)
			}
			if created.Result["status"] != "input_required" || created.Result["ttlMs"] != float64(60000) {
				t.Errorf("CreateTaskResult: %v; want input_required, ttlMs 60000", created.Result)
			}
			for _, k := range []string{"inputRequests", "result", "content"} {
				if _, ok := created.Result[k]; ok {
					t.Errorf("CreateTaskResult has %q: %v", k, created.Result)
				}
			}

			// tasks/get shows the upstream's task under the handle.
			got := g.call("alice", "tasks/get", map[string]any{"taskId": id}, true)
			if got.Error != nil || got.Result["taskId"] != id || got.Result["status"] != "input_required" {
				t.Fatalf("tasks/get: %v %v", got.Error, got.Result)
			}
			asks, _ := got.Result["inputRequests"].(map[string]any)
			if _, ok := asks["who.1"]; !ok {
				t.Fatalf("tasks/get inputRequests: %v", got.Result)
			}

			// Another principal, and handles that were changed or sealed
			// under another key, are unknown tasks.
			wantNotFound(t, "bob's tasks/get", g.call("bob", "tasks/get", map[string]any{"taskId": id}, true), id)
			wantNotFound(t, "bob's tasks/update", g.call("bob", "tasks/update", map[string]any{"taskId": id,
				"inputResponses": map[string]any{"who.1": map[string]any{"action": "accept", "content": map[string]any{"name": "Mallory"}}}}, true), id)
			wantNotFound(t, "bob's tasks/cancel", g.call("bob", "tasks/cancel", map[string]any{"taskId": id}, true), id)
			body, mac, _ := strings.Cut(strings.TrimPrefix(id, TaskHandlePrefix), ".")
			var payload map[string]any
			raw, _ := base64.RawURLEncoding.DecodeString(body)
			_ = json.Unmarshal(raw, &payload)
			inner, _ := payload["v"].(map[string]any)
			inner["p"] = seal.Digest("bob")
			payload["v"] = inner
			forgedBody, _ := json.Marshal(payload)
			tampered := TaskHandlePrefix + base64.RawURLEncoding.EncodeToString(forgedBody) + "." + mac
			wantNotFound(t, "tampered handle", g.call("bob", "tasks/get", map[string]any{"taskId": tampered}, true), tampered)
			other := seal.Sealer{Key: bytes.Repeat([]byte{8}, seal.KeySize)}
			tok, _ := other.Seal(taskHandleLabel, taskHandle{Upstream: "tu", TaskID: "job-1", Principal: seal.Digest("bob")}, time.Hour)
			wantNotFound(t, "handle under another key", g.call("bob", "tasks/get", map[string]any{"taskId": TaskHandlePrefix + tok}, true), TaskHandlePrefix+tok)

			// An update whose answers the router could not decode still
			// reaches the upstream, with no answers, and is acked.
			if ack := g.call("alice", "tasks/update", map[string]any{"taskId": id, "inputResponses": map[string]any{"who.1": "garbage"}}, true); ack.Error != nil {
				t.Fatalf("tasks/update without a usable answer: %v", ack.Error)
			}
			if still := g.call("alice", "tasks/get", map[string]any{"taskId": id}, true); still.Result["status"] != "input_required" {
				t.Fatalf("tasks/get after an update without answers: %v %v", still.Error, still.Result)
			}

			// tasks/update delivers the answer; the task completes.
			ack := g.call("alice", "tasks/update", map[string]any{"taskId": id,
				"inputResponses": map[string]any{"who.1": map[string]any{"action": "accept", "content": map[string]any{"name": "Ada"}}}}, true)
			if ack.Error != nil || ack.Result["resultType"] != "complete" {
				t.Fatalf("tasks/update: %v %v", ack.Error, ack.Result)
			}
			done := g.call("alice", "tasks/get", map[string]any{"taskId": id}, true)
			if done.Result["status"] != "completed" || text(t, done.Result["result"]) != "hello, Ada" || done.Result["taskId"] != id {
				t.Fatalf("tasks/get after the update: %v %v", done.Error, done.Result)
			}

			// A task without a lifetime can be reached for the handle's.
			slow := g.call("alice", "tools/call", map[string]any{"name": "tu__slow_job", "arguments": map[string]any{}}, true)
			slowID, _ := slow.Result["taskId"].(string)
			if slow.Result["status"] != "working" {
				t.Fatalf("slow_job as a task: %v %v", slow.Error, slow.Result)
			}
			if ttl, _ := slow.Result["ttlMs"].(float64); ttl < float64((DefaultTaskHandleTTL-time.Minute).Milliseconds()) || ttl > float64(DefaultTaskHandleTTL.Milliseconds()) {
				t.Errorf("ttlMs of a task the upstream keeps forever: %v; want the handle's life, %s", slow.Result["ttlMs"], DefaultTaskHandleTTL)
			}
			if ack := g.call("alice", "tasks/cancel", map[string]any{"taskId": slowID}, true); ack.Error != nil {
				t.Fatalf("tasks/cancel: %v", ack.Error)
			}
			if c := g.call("alice", "tasks/get", map[string]any{"taskId": slowID}, true); c.Result["status"] != "cancelled" {
				t.Fatalf("tasks/get after cancel: %v %v", c.Error, c.Result)
			}

			// A task the upstream no longer knows is an unknown task.
			if r := g.call("alice", "tools/call", map[string]any{"name": "tu__forget", "arguments": map[string]any{"id": "job-2"}}, false); r.Error != nil {
				t.Fatal(r.Error)
			}
			wantNotFound(t, "a task the upstream forgot", g.call("alice", "tasks/get", map[string]any{"taskId": slowID}, true), slowID)

			// MRTR first, then the task (SEP-2663): the question is passed
			// through with the upstream's state sealed, and the retry that
			// answers it becomes the task.
			ask := g.call("alice", "tools/call", map[string]any{"name": "tu__name_then_task", "arguments": map[string]any{}}, true)
			state, _ := ask.Result["requestState"].(string)
			if ask.Error != nil || ask.Result["resultType"] != "input_required" || state == "" || state == "name-state" {
				t.Fatalf("name_then_task, first round: %v %v", ask.Error, ask.Result)
			}
			retry := g.call("alice", "tools/call", map[string]any{"name": "tu__name_then_task", "arguments": map[string]any{},
				"requestState": state, "inputResponses": map[string]any{"user_name": map[string]any{"action": "accept", "content": map[string]any{"name": "Grace"}}}}, true)
			composedID, _ := retry.Result["taskId"].(string)
			if retry.Error != nil || retry.Result["resultType"] != "task" || !strings.HasPrefix(composedID, TaskHandlePrefix) {
				t.Fatalf("name_then_task, the retry: %v %v", retry.Error, retry.Result)
			}
			if c := g.call("alice", "tasks/get", map[string]any{"taskId": composedID}, true); c.Result["status"] != "completed" || text(t, c.Result["result"]) != "hello, Grace" {
				t.Fatalf("the composed task: %v %v", c.Error, c.Result)
			}

			// Without the extension: no task; a tool that needs one says so.
			plain := g.call("alice", "tools/call", map[string]any{"name": "tu__greet_later", "arguments": map[string]any{}}, false)
			if plain.Error != nil || plain.Result["resultType"] == "task" || text(t, plain.Result) != "sync" {
				t.Fatalf("tools/call without the extension: %v %v", plain.Error, plain.Result)
			}
			req := g.call("alice", "tools/call", map[string]any{"name": "tu__required_job", "arguments": map[string]any{}}, false)
			if req.Error == nil || req.Error.Code != mcp.CodeMissingRequiredClientCapabilities || !bytes.Contains(req.Error.Data, []byte(mcpwire.TasksExtension)) {
				t.Fatalf("required_job without the extension: %+v %v; want -32021 naming the extension", req.Error, req.Result)
			}
			// A tool the upstream never makes a task stays plain in task mode.
			if p := g.call("alice", "tools/call", map[string]any{"name": "tu__plain", "arguments": map[string]any{}}, true); p.Result["resultType"] == "task" || text(t, p.Result) != "sync" {
				t.Fatalf("plain in task mode: %v %v", p.Error, p.Result)
			}

			names, undeclared := ts.Seen()
			if len(undeclared) > 0 {
				t.Errorf("tasks/* sent without the extension declared: %v", undeclared)
			}
			if tc.headers {
				for _, n := range names {
					if _, id, _ := strings.Cut(n, " "); !strings.HasPrefix(id, "job-") {
						t.Errorf("Mcp-Name of an upstream tasks/* request: %q; want the upstream's task id", n)
					}
				}
				if len(names) < 6 {
					t.Errorf("the upstream saw %d tasks/* requests (%v); want at least 6", len(names), names)
				}
			}

			// Once the upstream is removed, its handles are unknown tasks.
			if err := g.pool.Remove(testCtx(t, 10*time.Second), "tu"); err != nil {
				t.Fatal(err)
			}
			wantNotFound(t, "after the upstream was removed", g.call("alice", "tasks/get", map[string]any{"taskId": id}, true), id)
		})
	}
}
