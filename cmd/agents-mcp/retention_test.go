package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// tasks.retention on the real serve assembly: ttlMs announces it, the
// task answers as unknown once it is past it, and the sweeper that
// assemble starts deletes it (its log line), then stops with serve.
func TestTaskRetentionOnServe(t *testing.T) {
	fake := fakePlanner(t)
	cfgFile := filepath.Join(t.TempDir(), "agents-mcp.yaml")
	if err := os.WriteFile(cfgFile, []byte(`
auth:
  api_keys:
    - name: alice
      key: `+aliceKey+`
      scopes: [mcp]
tasks:
  retention: 2s
`), 0o600); err != nil {
		t.Fatal(err)
	}
	base, stop, code, logs := startServe(t, map[string]string{
		"AGENTS_MCP_LLM": "openai", "OPENAI_BASE_URL": fake.URL, "OPENAI_API_KEY": "fake-key",
	}, "--config", cfgFile)
	t.Cleanup(func() {
		stop()
		select {
		case <-code:
		case <-time.After(15 * time.Second):
			t.Error("serve did not exit")
		}
	})
	if !strings.Contains(logs.String(), `"name":"tasks.retention","value":"2s","source":"file"`) {
		t.Errorf("the setting is not logged: %s", logs.String())
	}
	alice := &mcpTaskClient{t: t, url: base + "/mcp", key: aliceKey, ext: true}

	created := alice.call("tools/call", map[string]any{"name": "run_task", "arguments": map[string]any{"request": "find tools about insights"}})
	id, _ := created.Result["taskId"].(string)
	if ttl, ok := created.Result["ttlMs"].(float64); created.Error != nil || !ok || ttl < 2000 {
		t.Fatalf("CreateTaskResult: ttlMs %v, want at least the retention (2000): %+v %+v", created.Result["ttlMs"], created.Result, created.Error)
	}
	done := alice.poll(id, "working")
	ttl, _ := done["ttlMs"].(float64)
	createdAt, err := time.Parse(time.RFC3339Nano, done["createdAt"].(string))
	if done["status"] != "completed" || ttl < 2000 || err != nil {
		t.Fatalf("completed task: %v (%v)", done, err)
	}
	// Once ended, its ttlMs no longer grows.
	time.Sleep(50 * time.Millisecond)
	if again := alice.poll(id); again["ttlMs"] != done["ttlMs"] {
		t.Errorf("ttlMs of an ended task changed: %v then %v", done["ttlMs"], again["ttlMs"])
	}
	expiry := createdAt.Add(time.Duration(ttl) * time.Millisecond)
	if r := alice.call("tasks/get", map[string]any{"taskId": id}); time.Now().Before(expiry) && r.Error != nil {
		t.Fatalf("tasks/get within ttlMs: %+v", r.Error)
	}
	time.Sleep(time.Until(expiry) + 10*time.Millisecond)
	if r := alice.call("tasks/get", map[string]any{"taskId": id}); r.Error == nil || r.Error.Code != -32602 {
		t.Errorf("tasks/get past ttlMs: %+v %+v, want -32602", r.Result, r.Error)
	}
	// The sweeper (every second for a retention of 2 s) deletes it.
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(logs.String(), `"msg":"task retention"`) {
		if time.Now().After(deadline) {
			t.Fatalf("no sweep deleted the task within 10 s: %s", logs.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}
