package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// startAskingUpstream serves, on loopback, a go-sdk upstream whose tool
// "ask" elicits the user's name in the middle of the call, as a
// 2025-11-25 server does (the pool is pinned to that revision), and
// answers "hello <name>".
func startAskingUpstream(t *testing.T) string {
	t.Helper()
	s := mcp.NewServer(&mcp.Implementation{Name: "asker", Version: "1"}, nil)
	s.AddTool(&mcp.Tool{Name: "ask", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			res, err := req.Session.Elicit(ctx, &mcp.ElicitParams{
				Message:         "What is your name?",
				RequestedSchema: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}`),
			})
			if err != nil {
				return nil, err
			}
			name, _ := res.Content["name"].(string)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: res.Action + ": hello " + name}}}, nil
		})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil), ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
	})
	return "http://" + ln.Addr().String() + "/mcp"
}

// A bridged call (ADR 0010 D4) across two serve processes on one FerretDB:
// a 2026-07-28 client calls a 2025-11-25 upstream's tool that elicits; the
// question is answered on the other replica, by the MRTR retry and by
// tasks/update; another principal is refused; and when the replica holding
// the upstream request is killed, the other one fails the task once the
// lease expired.
func TestBridgedCallAcrossReplicasAndAKill(t *testing.T) {
	if testing.Short() {
		t.Skip("starts FerretDB and two server processes, and waits for a lease to expire")
	}
	mongoURI := startReplicaFerretDB(t)
	url := startAskingUpstream(t)
	configFile := filepath.Join(t.TempDir(), "agents-mcp.yaml")
	cfg := fmt.Sprintf(`upstreams:
  - name: asker
    transport: streamable
    url: %s
    protocol_version: "2025-11-25"
    timeout: 60s
auth:
  api_keys:
    - name: alice
      key: %s
      scopes: [mcp]
    - name: bob
      key: %s
      scopes: [mcp]
`, url, aliceKey, bobKey)
	if err := os.WriteFile(configFile, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	const leaseTTL = 3 * time.Second
	env := []string{
		"MONGODB_URI=" + mongoURI, "MONGODB_DATABASE=" + fmt.Sprintf("bridged_%d", time.Now().UnixNano()),
		"AGENTS_MCP_CONFIG=" + configFile,
		"AGENTS_MCP_REQUEST_STATE_KEY=q83vEjRWeJCrze8SNFZ4kKvN7xI0VniQq83vEjRWeJA=",
		"AGENTS_MCP_SECRETS_KEY=" + testSecretsKey,
		"AGENTS_MCP_TASK_LEASE_TTL=" + leaseTTL.String(), "AGENTS_MCP_TASK_RESUME_INTERVAL=200ms",
	}
	a := startServerProcess(t, t.TempDir(), env...)
	b := startServerProcess(t, t.TempDir(), env...)
	logs := func() string { return "a:\n" + a.logs.String() + "\nb:\n" + b.logs.String() }
	elicit := map[string]any{"elicitation": map[string]any{}}
	client := func(p *serverProcess, key string, ext bool) *mcpTaskClient {
		return &mcpTaskClient{t: t, url: p.base + "/mcp", key: key, ext: ext, caps: elicit, logs: logs}
	}
	aliceA, aliceB, bobB := client(a, aliceKey, false), client(b, aliceKey, false), client(b, bobKey, false)
	const tool = "asker__ask"
	call := map[string]any{"name": tool, "arguments": map[string]any{}}

	// MRTR: asked on A, answered on B.
	var first rpcAnswer
	waitFor(t, 20*time.Second, func() bool {
		first = aliceA.call("tools/call", map[string]any{"name": tool, "arguments": map[string]any{}})
		return first.Error == nil || !strings.Contains(first.Error.Message, "unknown tool")
	}, "the upstream tool is listed on replica A")
	reqs, _ := first.Result["inputRequests"].(map[string]any)
	q, _ := reqs["call.1"].(map[string]any)
	state, _ := first.Result["requestState"].(string)
	if first.Error != nil || first.Result["resultType"] != "input_required" || q["method"] != "elicitation/create" || !strings.HasPrefix(state, "brg.") {
		t.Fatalf("first call on A: %+v %v\n%s", first.Error, first.Result, logs())
	}
	answer := func(name string) map[string]any {
		return map[string]any{"call.1": map[string]any{"action": "accept", "content": map[string]any{"name": name}}}
	}
	retry := map[string]any{"name": tool, "arguments": map[string]any{}, "requestState": state, "inputResponses": answer("Bob")}
	if r := bobB.call("tools/call", retry); r.Error == nil || r.Error.Code != -32602 || !strings.Contains(r.Error.Message, "another caller") {
		t.Fatalf("bob's retry with alice's state: %+v %v", r.Error, r.Result)
	}
	retry["inputResponses"] = answer("Ada")
	done := aliceB.call("tools/call", retry)
	if text := resultText(done); done.Error != nil || done.Result["resultType"] != "complete" || text != "accept: hello Ada" {
		t.Fatalf("alice's retry on B: %+v %v\n%s", done.Error, done.Result, logs())
	}

	// Task mode: created on B, read and answered on A, completed as seen on B.
	taskB, taskA := client(b, aliceKey, true), client(a, aliceKey, true)
	created := taskB.call("tools/call", call)
	id, _ := created.Result["taskId"].(string)
	if created.Error != nil || created.Result["resultType"] != "task" || !strings.HasPrefix(id, "tsk_") {
		t.Fatalf("task mode on B: %+v %v\n%s", created.Error, created.Result, logs())
	}
	got := taskA.call("tasks/get", map[string]any{"taskId": id})
	if asks, _ := got.Result["inputRequests"].(map[string]any); got.Error != nil || got.Result["status"] != "input_required" || asks["call.1"] == nil {
		t.Fatalf("tasks/get on A: %+v %v", got.Error, got.Result)
	}
	if r := client(a, bobKey, true).call("tasks/get", map[string]any{"taskId": id}); r.Error == nil || r.Error.Code != -32602 {
		t.Fatalf("bob reads alice's bridged task: %+v %v", r.Error, r.Result)
	}
	if r := taskA.call("tasks/update", map[string]any{"taskId": id, "inputResponses": answer("Grace")}); r.Error != nil {
		t.Fatalf("tasks/update on A: %+v", r.Error)
	}
	end := taskB.poll(id, "input_required", "working")
	res, _ := end["result"].(map[string]any)
	if end["status"] != "completed" || resultText(rpcAnswer{Result: res}) != "accept: hello Grace" {
		t.Fatalf("on B after the update: %v\n%s", end, logs())
	}

	// The holder is killed while its question is open: the other replica
	// fails the task once the lease expired.
	held := taskA.call("tools/call", call)
	id, _ = held.Result["taskId"].(string)
	if held.Result["resultType"] != "task" || id == "" {
		t.Fatalf("task mode on A: %+v %v", held.Error, held.Result)
	}
	if err := a.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = a.cmd.Wait()
	killed := time.Now()
	failed := taskB.poll(id, "input_required", "working")
	if took := time.Since(killed); took < leaseTTL/2 {
		t.Errorf("failed %v after the kill, before A's lease (%v) could expire", took, leaseTTL)
	}
	e, _ := failed["error"].(map[string]any)
	if msg, _ := e["message"].(string); failed["status"] != "failed" || !strings.Contains(msg, "stopped before the call ended") {
		t.Fatalf("on B after the holder was killed: %v\n%s", failed, logs())
	}
}

// resultText joins the text contents of a tools/call result.
func resultText(r rpcAnswer) string {
	content, _ := r.Result["content"].([]any)
	var parts []string
	for _, c := range content {
		if m, ok := c.(map[string]any); ok {
			if s, ok := m["text"].(string); ok {
				parts = append(parts, s)
			}
		}
	}
	return strings.Join(parts, "\n")
}
