package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agents-mcp/agents-mcp/agents/openai/openaitest"
)

// MCP Tasks (ADR 0010) on the real serve assembly: run_task called by a
// 2026-07-28 request that declares the Tasks extension answers with a
// CreateTaskResult for the stored tsk_ task, which tasks/get, tasks/update
// and tasks/cancel then drive. The client is raw JSON-RPC over loopback
// HTTP, because go-sdk's client drops the fields of a CreateTaskResult.
// The model is a fake OpenAI-compatible server: a request that contains
// "confirm-me" is planned with a step that needs a confirmation.

const (
	aliceKey = "alice-key-0123456789"
	bobKey   = "bob-key-0123456789"
	opsKey   = "ops-key-0123456789"
)

func fakePlanner(t *testing.T) *openaitest.FakeServer {
	fake := openaitest.NewFakeServer(t)
	fake.Handler = func(req openaitest.ChatRequest) openaitest.Reply {
		system, user := "", ""
		for _, m := range req.Messages {
			if m.Role == "system" {
				system += m.Content
			} else {
				user += m.Content
			}
		}
		if strings.Contains(system, "thought agent") {
			return openaitest.Text(`{"subGoals":["find the tools"],"reasoning":"search the catalog","approaches":["search"],"constraints":[],"assumptions":[],"uncertainties":[],"confidence":0.9,"recommendedTools":[{"tool":"search_tools","reason":"it finds tools"}]}`, 10, 10)
		}
		confirm := strings.Contains(user, "confirm-me")
		plan, _ := json.Marshal(map[string]any{"goal": "find tools", "steps": []any{map[string]any{
			"id": "s1", "tool": "search_tools", "arguments": map[string]any{"query": "insight"},
			"description": "search the catalog", "needsConfirmation": confirm,
		}}})
		return openaitest.Text(string(plan), 10, 10)
	}
	return fake
}

type mcpTaskClient struct {
	t    *testing.T
	url  string
	key  string
	ext  bool // declare the Tasks extension
	next int
	// logs, when set, tells what the servers logged when a poll fails.
	logs func() string
	// caps are more client capabilities to declare, beside the
	// extension's (bridge_test.go, sampling_test.go).
	caps map[string]any
}

type rpcAnswer struct {
	status int
	Result map[string]any `json:"result"`
	Error  *struct {
		Code    int             `json:"code"`
		Message string          `json:"message"`
		Data    json.RawMessage `json:"data"`
	} `json:"error"`
}

// call sends one 2026-07-28 request with the headers a conforming client
// sends, and reads the JSON or SSE answer.
func (c *mcpTaskClient) call(method string, params map[string]any) rpcAnswer {
	c.t.Helper()
	caps := map[string]any{}
	if c.ext {
		caps["extensions"] = map[string]any{"io.modelcontextprotocol/tasks": map[string]any{}}
		caps["elicitation"] = map[string]any{}
	}
	for k, v := range c.caps {
		caps[k] = v
	}
	params["_meta"] = map[string]any{
		"io.modelcontextprotocol/protocolVersion":    "2026-07-28",
		"io.modelcontextprotocol/clientCapabilities": caps,
		"io.modelcontextprotocol/clientInfo":         map[string]any{"name": "tasks-e2e", "version": "1"},
	}
	c.next++
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": c.next, "method": method, "params": params})
	req, _ := http.NewRequest(http.MethodPost, c.url, strings.NewReader(string(body)))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", method)
	if c.key != "" {
		req.Header.Set("Authorization", "Bearer "+c.key)
	}
	if name, ok := params["name"].(string); ok {
		req.Header.Set("Mcp-Name", name)
	} else if id, ok := params["taskId"].(string); ok {
		req.Header.Set("Mcp-Name", id)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	var raw strings.Builder
	buf := make([]byte, 32<<10)
	for {
		n, err := resp.Body.Read(buf)
		raw.WriteString(string(buf[:n]))
		if err != nil {
			break
		}
	}
	data := raw.String()
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		for line := range strings.SplitSeq(data, "\n") {
			if d, ok := strings.CutPrefix(line, "data:"); ok && strings.Contains(d, `"id"`) {
				data = strings.TrimSpace(d)
			}
		}
	}
	out := rpcAnswer{status: resp.StatusCode}
	if err := json.Unmarshal([]byte(data), &out); err != nil {
		c.t.Fatalf("%s: HTTP %d, not JSON-RPC: %q", method, resp.StatusCode, data)
	}
	return out
}

func (c *mcpTaskClient) poll(id string, while ...string) map[string]any {
	c.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		r := c.call("tasks/get", map[string]any{"taskId": id})
		if r.Error != nil {
			c.t.Fatalf("tasks/get %s: %+v", id, r.Error)
		}
		status, _ := r.Result["status"].(string)
		still := false
		for _, w := range while {
			still = still || status == w
		}
		if !still {
			return r.Result
		}
		if time.Now().After(deadline) {
			logs := ""
			if c.logs != nil {
				logs = c.logs()
			}
			c.t.Fatalf("task %s is still %s: %v\n%s", id, status, r.Result, logs)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func TestRunTaskAsAnMCPTask(t *testing.T) {
	fake := fakePlanner(t)
	dir := t.TempDir()
	cfgFile := filepath.Join(dir, "agents-mcp.yaml")
	if err := os.WriteFile(cfgFile, []byte(`
auth:
  api_keys:
    - name: alice
      key: `+aliceKey+`
      scopes: [mcp]
    - name: bob
      key: `+bobKey+`
      scopes: [mcp]
    - name: ops
      key: `+opsKey+`
      scopes: [admin:read]
`), 0o600); err != nil {
		t.Fatal(err)
	}
	base, stop, code, logs := startServe(t, map[string]string{
		"AGENTS_MCP_LLM": "openai", "OPENAI_BASE_URL": fake.URL, "OPENAI_API_KEY": "fake-key",
	}, "--config", cfgFile)
	t.Cleanup(func() {
		// serve writes to its data directory until it has exited, and the
		// directory is removed after this.
		stop()
		select {
		case <-code:
		case <-time.After(15 * time.Second):
			t.Error("serve did not exit")
		}
	})
	alice := &mcpTaskClient{t: t, url: base + "/mcp", key: aliceKey, ext: true}
	bob := &mcpTaskClient{t: t, url: base + "/mcp", key: bobKey, ext: true}

	// run_task as a task, polled to completed: the result is what the
	// synchronous call returns, the task as structured content.
	created := alice.call("tools/call", map[string]any{"name": "run_task", "arguments": map[string]any{"request": "find tools about insights"}})
	id, _ := created.Result["taskId"].(string)
	if created.Error != nil || created.Result["resultType"] != "task" || !strings.HasPrefix(id, "tsk_") {
		t.Fatalf("run_task as a task: %+v %+v\n%s", created.Result, created.Error, logs.String())
	}
	for _, absent := range []string{"result", "error", "inputRequests", "requestState", "content"} {
		if _, ok := created.Result[absent]; ok {
			t.Errorf("the CreateTaskResult carries %q", absent)
		}
	}
	// A task that has not ended may still wait for an answer as long as
	// tasks.input_wait; an ended one is kept forever (no retention).
	if v, ok := created.Result["ttlMs"].(float64); created.Result["status"] == "working" && (!ok || v < 600_000) {
		t.Errorf("ttlMs of a working task: %v, want at least the input wait (10m)", created.Result["ttlMs"])
	}
	done := alice.poll(id, "working")
	if v, ok := done["ttlMs"]; !ok || v != nil {
		t.Errorf("ttlMs of an ended task: %v (present %v), want null", v, ok)
	}
	res, _ := done["result"].(map[string]any)
	sc, _ := res["structuredContent"].(map[string]any)
	task, _ := sc["task"].(map[string]any)
	if done["status"] != "completed" || res["isError"] == true || task["id"] != id || task["status"] != "succeeded" ||
		!strings.HasPrefix(fmt.Sprint(sc["thoughtId"]), "thg_") || !strings.HasPrefix(fmt.Sprint(sc["planId"]), "pln_") {
		t.Fatalf("completed run_task: %v", done)
	}

	// Another principal is told the task does not exist, whatever it asks.
	for _, method := range []string{"tasks/get", "tasks/cancel", "tasks/update"} {
		r := bob.call(method, map[string]any{"taskId": id, "inputResponses": map[string]any{}})
		if r.Error == nil || r.Error.Code != -32602 {
			t.Errorf("%s by another principal: %+v %+v", method, r.Result, r.Error)
		}
	}
	// Without the extension: tasks/* are refused with -32021, and run_task
	// answers as before, with the task in its result.
	plain := &mcpTaskClient{t: t, url: base + "/mcp", key: aliceKey}
	if r := plain.call("tasks/get", map[string]any{"taskId": id}); r.Error == nil || r.Error.Code != -32021 {
		t.Errorf("tasks/get without the extension: %+v %+v", r.Result, r.Error)
	}
	sync := plain.call("tools/call", map[string]any{"name": "run_task", "arguments": map[string]any{"request": "find tools about insights"}})
	if sync.Error != nil || sync.Result["resultType"] == "task" || sync.Result["structuredContent"] == nil {
		t.Errorf("run_task without the extension: %+v %+v", sync.Result, sync.Error)
	}
	if r := alice.call("tasks/list", map[string]any{}); r.Error == nil || r.Error.Code != -32601 || r.status != http.StatusNotFound {
		t.Errorf("tasks/list: HTTP %d %+v", r.status, r.Error)
	}

	// A step that needs a confirmation: input_required with its question,
	// answered with tasks/update, then completed.
	created = alice.call("tools/call", map[string]any{"name": "run_task", "arguments": map[string]any{"request": "confirm-me: find tools"}})
	id, _ = created.Result["taskId"].(string)
	paused := alice.poll(id, "working")
	asks, _ := paused["inputRequests"].(map[string]any)
	ask, _ := asks["confirm.s1.1"].(map[string]any)
	if paused["status"] != "input_required" || ask["method"] != "elicitation/create" {
		t.Fatalf("task waiting for a confirmation: %v", paused)
	}
	if r := bob.call("tasks/update", map[string]any{"taskId": id, "inputResponses": map[string]any{
		"confirm.s1.1": map[string]any{"action": "accept", "content": map[string]any{"confirm": true}},
	}}); r.Error == nil || r.Error.Code != -32602 {
		t.Errorf("tasks/update by another principal: %+v", r)
	}
	if still := alice.poll(id); still["status"] != "input_required" {
		t.Fatalf("another principal's answer was taken: %v", still)
	}
	ack := alice.call("tasks/update", map[string]any{"taskId": id, "inputResponses": map[string]any{
		"confirm.s1.1": map[string]any{"action": "accept", "content": map[string]any{"confirm": true}},
		"confirm.s9.1": map[string]any{"action": "accept", "content": map[string]any{"confirm": true}},
	}})
	if ack.Error != nil || ack.Result["resultType"] != "complete" {
		t.Fatalf("tasks/update: %+v %+v", ack.Result, ack.Error)
	}
	if done := alice.poll(id, "input_required", "working"); done["status"] != "completed" {
		t.Fatalf("after the confirmation: %v", done)
	}

	// Cancel a paused task; cancelling it again is acked, and it stays
	// cancelled.
	created = alice.call("tools/call", map[string]any{"name": "run_task", "arguments": map[string]any{"request": "confirm-me: again"}})
	id, _ = created.Result["taskId"].(string)
	alice.poll(id, "working")
	for range 2 {
		if r := alice.call("tasks/cancel", map[string]any{"taskId": id}); r.Error != nil || r.Result["resultType"] != "complete" {
			t.Fatalf("tasks/cancel: %+v %+v", r.Result, r.Error)
		}
	}
	if got := alice.poll(id); got["status"] != "cancelled" {
		t.Fatalf("after cancel: %v", got)
	}

	// tasks/update and tasks/cancel are audited as writes, with the keys
	// answered but never the answers.
	var entries []struct {
		Principal, Target, Outcome string
		Arguments                  json.RawMessage
	}
	deadline := time.Now().Add(10 * time.Second)
	for len(entries) < 6 && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
		req, _ := http.NewRequest(http.MethodGet, base+"/admin/v1/audit?kind=mcp_write&limit=50", nil)
		req.Header.Set("Authorization", "Bearer "+opsKey)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var page struct {
			Items []struct {
				Principal, Target, Outcome string
				Arguments                  json.RawMessage
			}
		}
		err = json.NewDecoder(resp.Body).Decode(&page)
		resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("audit: HTTP %d, %v", resp.StatusCode, err)
		}
		entries = page.Items
	}
	var alices, bobs, cancels int
	for _, e := range entries {
		switch {
		case strings.Contains(string(e.Arguments), `"confirm":`):
			t.Errorf("an audit entry holds an answer: %s", e.Arguments)
		case strings.HasPrefix(e.Target, "tasks/cancel ") && e.Outcome == "ok":
			cancels++
		case strings.HasPrefix(e.Target, "tasks/update ") && e.Outcome == "error" && e.Principal != "":
			bobs++
		case strings.HasPrefix(e.Target, "tasks/update ") && e.Outcome == "ok" && strings.Contains(string(e.Arguments), `"confirm.s1.1"`):
			alices++
		}
	}
	if alices != 1 || cancels != 2 || bobs < 1 {
		t.Errorf("audit of task writes: %d updates, %d refused, %d cancels: %+v", alices, bobs, cancels, entries)
	}
}
