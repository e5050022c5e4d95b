package main

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agents-mcp/agents-mcp/internal/taskfixture"
)

// Upstream tasks on the real serve assembly (ADR 0010, D3): a go-sdk
// upstream that implements the Tasks extension, behind `serve`, called by
// raw 2026-07-28 JSON-RPC of two principals. The task's handle is sealed
// with tasks.request_state_key and holds everything needed to reach the
// task: a second serve with the same key (a restart, or another replica)
// takes it and drives the task to its end.
func TestUpstreamToolAsAnMCPTask(t *testing.T) {
	fx, s := taskfixture.New()
	up := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s },
		&mcp.StreamableHTTPOptions{Stateless: true}))
	t.Cleanup(up.Close)
	cfgFile := filepath.Join(t.TempDir(), "agents-mcp.yaml")
	if err := os.WriteFile(cfgFile, []byte(fmt.Sprintf(`
auth:
  api_keys:
    - name: alice
      key: %s
      scopes: [mcp]
    - name: bob
      key: %s
      scopes: [mcp]
upstreams:
  - name: tu
    transport: streamable
    url: %s
`, aliceKey, bobKey, up.URL)), 0o600); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{
		"AGENTS_MCP_LLM":               "builtin",
		"AGENTS_MCP_REQUEST_STATE_KEY": base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{3}, 32)),
	}
	start := func() (string, func()) {
		base, stop, code, logs := startServe(t, env, "--config", cfgFile)
		return base, func() {
			stop()
			select {
			case c := <-code:
				if c != 0 {
					t.Errorf("serve exited with %d: %s", c, logs.String())
				}
			case <-time.After(30 * time.Second):
				t.Fatalf("serve did not stop: %s", logs.String())
			}
		}
	}

	baseA, stopA := start()
	alice := &mcpTaskClient{t: t, url: baseA + "/mcp", key: aliceKey, ext: true}
	bob := &mcpTaskClient{t: t, url: baseA + "/mcp", key: bobKey, ext: true}
	created := alice.call("tools/call", map[string]any{"name": "tu__greet_later", "arguments": map[string]any{}})
	id, _ := created.Result["taskId"].(string)
	if created.Error != nil || created.Result["resultType"] != "task" || !strings.HasPrefix(id, "utk_") || created.Result["status"] != "input_required" {
		t.Fatalf("tu__greet_later as a task: %+v %+v", created.Result, created.Error)
	}
	got := alice.call("tasks/get", map[string]any{"taskId": id})
	asks, _ := got.Result["inputRequests"].(map[string]any)
	if got.Error != nil || got.Result["taskId"] != id || asks["who.1"] == nil {
		t.Fatalf("tasks/get: %+v %+v", got.Result, got.Error)
	}
	for _, method := range []string{"tasks/get", "tasks/update", "tasks/cancel"} {
		r := bob.call(method, map[string]any{"taskId": id, "inputResponses": map[string]any{}})
		if r.Error == nil || r.Error.Code != -32602 || r.Error.Message != fmt.Sprintf("task %q not found", id) {
			t.Errorf("%s by another principal: %+v %+v", method, r.Result, r.Error)
		}
	}
	// Without the extension, the tool is a plain tool.
	plain := &mcpTaskClient{t: t, url: baseA + "/mcp", key: aliceKey}
	if r := plain.call("tools/call", map[string]any{"name": "tu__greet_later", "arguments": map[string]any{}}); r.Error != nil || r.Result["resultType"] == "task" {
		t.Errorf("tu__greet_later without the extension: %+v %+v", r.Result, r.Error)
	}
	stopA()

	// Another serve with the same key answers the task.
	baseB, stopB := start()
	defer stopB()
	alice.url = baseB + "/mcp"
	ack := alice.call("tasks/update", map[string]any{"taskId": id,
		"inputResponses": map[string]any{"who.1": map[string]any{"action": "accept", "content": map[string]any{"name": "Ada"}}}})
	if ack.Error != nil || ack.Result["resultType"] != "complete" {
		t.Fatalf("tasks/update on the second serve: %+v %+v", ack.Result, ack.Error)
	}
	done := alice.poll(id, "input_required", "working")
	res, _ := done["result"].(map[string]any)
	content, _ := res["content"].([]any)
	if done["status"] != "completed" || done["taskId"] != id || len(content) != 1 || !strings.Contains(fmt.Sprint(content[0]), "hello, Ada") {
		t.Fatalf("the task after the update: %v", done)
	}
	names, undeclared := fx.Seen()
	if len(undeclared) > 0 {
		t.Errorf("tasks/* reached the upstream without the extension declared: %v", undeclared)
	}
	for _, n := range names {
		if !strings.HasSuffix(n, " job-1") {
			t.Errorf("an upstream tasks/* request had %q; want Mcp-Name job-1, the upstream's own id", n)
		}
	}
	if len(names) < 4 {
		t.Errorf("the upstream saw %v", names)
	}
}
