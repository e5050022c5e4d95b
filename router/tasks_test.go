package router_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agents-mcp/agents-mcp/localtools"
	"github.com/agents-mcp/agents-mcp/router"
	"github.com/agents-mcp/agents-mcp/router/conformance"
	"github.com/agents-mcp/agents-mcp/router/internal/routertest"
)

// The Tasks extension on a real router, served over loopback HTTP, with
// the conformance fixtures' in-memory task backend: these tests pin the
// protocol layer (ADR 0010); agents/mcptools.MCPTasks and cmd test the executor's.

func newTasksServer(t *testing.T) string {
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
	h := r.HTTPHandler(router.HTTPOptions{})
	srv := httptest.NewServer(h)
	t.Cleanup(func() {
		cancel()
		h.Close()
		r.CloseSessions(context.Background())
		srv.Close()
	})
	return srv.URL + "/mcp"
}

type taskReply struct {
	status int
	Result map[string]any `json:"result"`
	Error  *struct {
		Code    int             `json:"code"`
		Message string          `json:"message"`
		Data    json.RawMessage `json:"data"`
	} `json:"error"`
}

// call2026 sends one 2026-07-28 request, declaring the Tasks extension
// when ext is set, with the routing headers a conforming client sends
// (extra ones replace them).
func call2026(t *testing.T, url, method string, params map[string]any, ext bool, extra map[string]string) taskReply {
	t.Helper()
	caps := map[string]any{}
	if ext {
		caps["extensions"] = map[string]any{"io.modelcontextprotocol/tasks": map[string]any{}}
		caps["elicitation"] = map[string]any{}
	}
	if params == nil {
		params = map[string]any{}
	}
	if params["_noElicitation"] == true {
		delete(params, "_noElicitation")
		delete(caps, "elicitation")
	}
	params["_meta"] = map[string]any{
		"io.modelcontextprotocol/protocolVersion":    "2026-07-28",
		"io.modelcontextprotocol/clientCapabilities": caps,
		"io.modelcontextprotocol/clientInfo":         map[string]any{"name": "tasks-test", "version": "1"},
	}
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 7, "method": method, "params": params})
	headers := map[string]string{"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": method}
	if name, ok := params["name"].(string); ok && method == "tools/call" {
		headers["Mcp-Name"] = name
	}
	if id, ok := params["taskId"].(string); ok {
		headers["Mcp-Name"] = id
	}
	for k, v := range extra {
		if v == "" {
			delete(headers, k)
		} else {
			headers[k] = v
		}
	}
	resp, data := routertest.Post(t, url, body, headers)
	r := routertest.DecodeReply(t, resp, data)
	out := taskReply{status: resp.StatusCode}
	out.Result = map[string]any{}
	if len(r.Result) > 0 {
		if err := json.Unmarshal(r.Result, &out.Result); err != nil {
			t.Fatalf("%s: result %s: %v", method, r.Result, err)
		}
	}
	if r.Error != nil {
		var full taskReply
		if err := json.Unmarshal(decodedBody(t, resp, data), &full); err != nil {
			t.Fatal(err)
		}
		out.Error = full.Error
	}
	return out
}

// decodedBody is the JSON-RPC message of a JSON or SSE response.
func decodedBody(t *testing.T, resp *http.Response, data []byte) []byte {
	t.Helper()
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		return data
	}
	for line := range strings.SplitSeq(string(data), "\n") {
		if d, ok := strings.CutPrefix(line, "data:"); ok && strings.TrimSpace(d) != "" {
			return []byte(strings.TrimSpace(d))
		}
	}
	t.Fatalf("no message in %q", data)
	return nil
}

func wantTaskError(t *testing.T, what string, r taskReply, code int) {
	t.Helper()
	if r.Error == nil || r.Error.Code != code {
		t.Fatalf("%s: got %+v (error %+v), want error %d", what, r.Result, r.Error, code)
	}
}

// pollTask calls tasks/get until the task leaves the statuses in while.
func pollTask(t *testing.T, url, id string, while ...string) map[string]any {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		r := call2026(t, url, "tasks/get", map[string]any{"taskId": id}, true, nil)
		if r.Error != nil {
			t.Fatalf("tasks/get %s: %+v", id, r.Error)
		}
		if !slices.Contains(while, r.Result["status"].(string)) {
			return r.Result
		}
		if time.Now().After(deadline) {
			t.Fatalf("task %s still %v", id, r.Result["status"])
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func TestTasksAreAdvertisedInServerDiscoverOnly(t *testing.T) {
	url := newTasksServer(t)
	r := call2026(t, url, "server/discover", nil, false, nil)
	caps, _ := r.Result["capabilities"].(map[string]any)
	exts, _ := caps["extensions"].(map[string]any)
	if _, ok := exts["io.modelcontextprotocol/tasks"]; !ok {
		t.Fatalf("server/discover capabilities: %v", caps)
	}
	if _, ok := caps["tasks"]; ok {
		t.Error("a v1-style capabilities.tasks is advertised")
	}
	// 2025-11-25 defines no Tasks extension: initialize does not offer it.
	resp, data := routertest.Post(t, url, []byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`), nil)
	if init := routertest.DecodeReply(t, resp, data); strings.Contains(string(init.Result), "io.modelcontextprotocol/tasks") {
		t.Errorf("initialize (2025-11-25) advertises the Tasks extension: %s", init.Result)
	}
}

func TestTaskCreatedPolledToCompletion(t *testing.T) {
	url := newTasksServer(t)
	created := call2026(t, url, "tools/call", map[string]any{"name": "slow_compute", "arguments": map[string]any{"seconds": 0.3, "label": "x"}}, true, nil)
	if created.Error != nil {
		t.Fatalf("tools/call: %+v", created.Error)
	}
	keys := slices.Sorted(func(yield func(string) bool) {
		for k := range created.Result {
			if k != "_meta" && !yield(k) { // go-sdk adds serverInfo to _meta
				return
			}
		}
	})
	want := []string{"createdAt", "lastUpdatedAt", "pollIntervalMs", "resultType", "status", "statusMessage", "taskId", "ttlMs"}
	if !slices.Equal(keys, want) {
		t.Errorf("CreateTaskResult keys %v, want %v", keys, want)
	}
	id, _ := created.Result["taskId"].(string)
	if created.Result["resultType"] != "task" || created.Result["status"] != "working" || created.Result["ttlMs"] != nil || !strings.HasPrefix(id, "fxt_") {
		t.Fatalf("CreateTaskResult: %v", created.Result)
	}
	if _, err := time.Parse(time.RFC3339Nano, created.Result["createdAt"].(string)); err != nil {
		t.Errorf("createdAt: %v", err)
	}
	done := pollTask(t, url, id, "working")
	res, _ := done["result"].(map[string]any)
	if done["status"] != "completed" || done["resultType"] != "complete" || res == nil || !strings.Contains(jsonText(res), `done after 0.3s`) {
		t.Fatalf("completed task: %v", done)
	}
	if _, ok := done["inputRequests"]; ok {
		t.Error("a completed task carries inputRequests")
	}
	// Cancelling an ended task is acked and changes nothing.
	ack := call2026(t, url, "tasks/cancel", map[string]any{"taskId": id}, true, nil)
	delete(ack.Result, "_meta")
	if ack.Error != nil || len(ack.Result) != 1 || ack.Result["resultType"] != "complete" {
		t.Fatalf("cancel of an ended task: %+v %+v", ack.Result, ack.Error)
	}
	if again := pollTask(t, url, id); again["status"] != "completed" {
		t.Errorf("after cancel, an ended task is %v", again["status"])
	}
}

func jsonText(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func TestTaskCancelAndInputRequired(t *testing.T) {
	url := newTasksServer(t)
	created := call2026(t, url, "tools/call", map[string]any{"name": "slow_compute", "arguments": map[string]any{"seconds": 60}}, true, nil)
	id := created.Result["taskId"].(string)
	if ack := call2026(t, url, "tasks/cancel", map[string]any{"taskId": id}, true, nil); ack.Error != nil || ack.Result["resultType"] != "complete" {
		t.Fatalf("tasks/cancel: %+v", ack)
	}
	if got := pollTask(t, url, id); got["status"] != "cancelled" {
		t.Fatalf("after cancel: %v", got)
	}

	created = call2026(t, url, "tools/call", map[string]any{"name": "multi_input", "arguments": map[string]any{}}, true, nil)
	id = created.Result["taskId"].(string)
	got := pollTask(t, url, id, "working")
	asks, _ := got["inputRequests"].(map[string]any)
	if got["status"] != "input_required" || len(asks) != 2 {
		t.Fatalf("multi_input task: %v", got)
	}
	// A client that did not declare elicitation is shown no form it could
	// not show (it would wait on it for good): it polls, and the status
	// message says how to answer.
	noElicit := call2026(t, url, "tasks/get", map[string]any{"taskId": id, "_noElicitation": true}, true, nil)
	if asks, ok := noElicit.Result["inputRequests"].(map[string]any); noElicit.Result["status"] != "input_required" || !ok || len(asks) != 0 {
		t.Errorf("tasks/get without elicitation: %v", noElicit.Result)
	}
	// An unknown key and an undecodable answer are ignored; a partial
	// answer leaves the other key open.
	ack := call2026(t, url, "tasks/update", map[string]any{"taskId": id, "inputResponses": map[string]any{
		"user_name": map[string]any{"action": "accept", "content": map[string]any{"name": "Ann"}},
		"nope":      map[string]any{"ignored": true},
	}}, true, nil)
	if ack.Error != nil || ack.Result["resultType"] != "complete" {
		t.Fatalf("tasks/update: %+v", ack)
	}
	got = pollTask(t, url, id)
	asks, _ = got["inputRequests"].(map[string]any)
	if _, open := asks["confirm"]; got["status"] != "input_required" || len(asks) != 1 || !open {
		t.Fatalf("after a partial update: %v", got)
	}
	call2026(t, url, "tasks/update", map[string]any{"taskId": id, "inputResponses": map[string]any{
		"confirm": map[string]any{"action": "accept", "content": map[string]any{"confirm": true}},
	}}, true, nil)
	if got = pollTask(t, url, id, "input_required", "working"); got["status"] != "completed" {
		t.Fatalf("after both answers: %v", got)
	}
}

func TestTasksGating(t *testing.T) {
	url := newTasksServer(t)
	created := call2026(t, url, "tools/call", map[string]any{"name": "slow_compute", "arguments": map[string]any{"seconds": 1}}, true, nil)
	id := created.Result["taskId"].(string)

	for _, method := range []string{"tasks/get", "tasks/update", "tasks/cancel"} {
		r := call2026(t, url, method, map[string]any{"taskId": id, "inputResponses": map[string]any{}}, false, nil)
		wantTaskError(t, method+" without the extension", r, -32021)
		if r.status != http.StatusBadRequest { // go-sdk's SEP-2575 mapping
			t.Errorf("%s without the extension: HTTP %d, want 400", method, r.status)
		}
		var data struct {
			RequiredCapabilities struct {
				Extensions map[string]any `json:"extensions"`
			} `json:"requiredCapabilities"`
		}
		if err := json.Unmarshal(r.Error.Data, &data); err != nil || data.RequiredCapabilities.Extensions["io.modelcontextprotocol/tasks"] == nil {
			t.Errorf("%s: -32021 data %s", method, r.Error.Data)
		}
	}
	for _, method := range []string{"tasks/list", "tasks/result"} {
		r := call2026(t, url, method, map[string]any{"taskId": id}, true, nil)
		wantTaskError(t, method, r, -32601)
	}
	wantTaskError(t, "unknown task", call2026(t, url, "tasks/get", map[string]any{"taskId": "fxt_nonexistent"}, true, nil), -32602)
	wantTaskError(t, "id no backend owns", call2026(t, url, "tasks/get", map[string]any{"taskId": "whatever"}, true, nil), -32602)

	// Mcp-Name must match params.taskId when sent; it may be left out.
	r := call2026(t, url, "tasks/get", map[string]any{"taskId": id}, true, map[string]string{"Mcp-Name": "fxt_other"})
	if r.status != http.StatusBadRequest {
		t.Errorf("Mcp-Name mismatch: HTTP %d", r.status)
	}
	wantTaskError(t, "Mcp-Name mismatch", r, -32020)
	if r := call2026(t, url, "tasks/get", map[string]any{"taskId": id}, true, map[string]string{"Mcp-Name": ""}); r.Error != nil {
		t.Errorf("tasks/get without Mcp-Name: %+v", r.Error)
	}

	// Without the extension, a task-supporting tool answers synchronously,
	// and the legacy task param neither errs nor makes a task.
	plain := call2026(t, url, "tools/call", map[string]any{"name": "slow_compute", "arguments": map[string]any{"seconds": 0}}, false, nil)
	if plain.Error != nil || plain.Result["taskId"] != nil || plain.Result["content"] == nil {
		t.Errorf("tools/call without the extension: %+v %+v", plain.Result, plain.Error)
	}
	legacy := call2026(t, url, "tools/call", map[string]any{"name": "greet", "arguments": map[string]any{"name": "x"}, "task": map[string]any{"ttl": 1000}}, true, nil)
	if legacy.Error != nil || legacy.Result["resultType"] == "task" {
		t.Errorf("legacy task param: %+v %+v", legacy.Result, legacy.Error)
	}

	// 2025-11-25 defines no Tasks: the methods are not served there.
	sid := routertest.Initialize(t, url)
	resp, data := routertest.Post(t, url, []byte(`{"jsonrpc":"2.0","id":2,"method":"tasks/get","params":{"taskId":"`+id+`"}}`),
		map[string]string{"Mcp-Session-Id": sid, "Mcp-Protocol-Version": "2025-11-25"})
	if r := routertest.DecodeReply(t, resp, data); r.Error == nil || r.Error.Code != -32601 {
		t.Errorf("tasks/get in a 2025-11-25 session: %s", data)
	}
}
