package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestMCPTasksAcrossReplicasAndRestarts (issue 15 part 3, ADR 0010): two
// `serve` processes share one MongoDB wire server (embedded FerretDB), the
// request-state key and the secrets key. run_task, called as an MCP Task on
// replica a with a plan that wipes a bucket (a destructive upstream tool
// whose argument the request does not give), pauses in input_required.
//   - The task is polled and answered on b, and polled to completed on a.
//   - A second task is paused, a is stopped, b still answers for it, a is
//     started again on the same store and the task is answered there.
//   - A third task is cancelled on a and seen cancelled on b.
//
// The bucket is wiped once per answered task and never for the cancelled
// one.
func TestMCPTasksAcrossReplicasAndRestarts(t *testing.T) {
	if testing.Short() {
		t.Skip("starts FerretDB and three server processes")
	}
	mongoURI := startReplicaFerretDB(t)
	up := startWipeUpstream(t)
	configFile := filepath.Join(t.TempDir(), "agents-mcp.yaml")
	if err := os.WriteFile(configFile, []byte(fmt.Sprintf("upstreams:\n  - name: storage\n    transport: streamable\n    url: %s\n", up.url)), 0o600); err != nil {
		t.Fatal(err)
	}
	env := []string{
		"MONGODB_URI=" + mongoURI, "MONGODB_DATABASE=" + fmt.Sprintf("mcptasks_%d", time.Now().UnixNano()),
		"AGENTS_MCP_CONFIG=" + configFile, "AGENTS_MCP_LLM=builtin",
		"AGENTS_MCP_REQUEST_STATE_KEY=q83vEjRWeJCrze8SNFZ4kKvN7xI0VniQq83vEjRWeJA=",
		"AGENTS_MCP_SECRETS_KEY=" + testSecretsKey,
	}
	dirA := t.TempDir()
	a := startServerProcess(t, dirA, env...)
	b := startServerProcess(t, t.TempDir(), env...)
	logs := func() string { return "a:\n" + a.logs.String() + "\nb:\n" + b.logs.String() }
	ca := &mcpTaskClient{t: t, url: a.base + "/mcp", ext: true, logs: logs}
	cb := &mcpTaskClient{t: t, url: b.base + "/mcp", ext: true, logs: logs}
	for name, c := range map[string]*mcpTaskClient{"a": ca, "b": cb} {
		d := c.call("server/discover", map[string]any{})
		caps, _ := d.Result["capabilities"].(map[string]any)
		exts, _ := caps["extensions"].(map[string]any)
		if _, ok := exts["io.modelcontextprotocol/tasks"]; !ok || d.Error != nil {
			t.Fatalf("server/discover on %s: %+v %+v", name, d.Result, d.Error)
		}
	}

	// 1. Started on a, polled and answered on b, completed as seen on a.
	id := startWipeTask(t, ca, logs)
	answerUntilDone(t, cb, id, "across", logs)
	done := ca.poll(id, "working", "input_required")
	checkWiped(t, done, id)
	if got := up.buckets(); strings.Join(got, ",") != "across" {
		t.Fatalf("buckets wiped: %v, want [across]", got)
	}

	// 2. Paused; a stops; b answers tasks/get; a starts again on the same
	// store and takes the answers.
	id = startWipeTask(t, ca, logs)
	before := ca.poll(id, "working")
	if before["status"] != "input_required" {
		t.Fatalf("second task: %v\n%s", before, logs())
	}
	if err := a.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := a.cmd.Wait(); err != nil {
		t.Fatalf("a did not stop cleanly: %v\n%s", err, a.logs.String())
	}
	onB := cb.poll(id, "working")
	if onB["status"] != "input_required" || !sameKeys(before, onB) {
		t.Fatalf("on b while a is down: %v, before %v", onB, before)
	}
	a = startServerProcess(t, dirA, env...)
	ca.url = a.base + "/mcp"
	again := ca.poll(id, "working")
	if again["status"] != "input_required" || !sameKeys(before, again) {
		t.Fatalf("on a after its restart: %v, before %v", again, before)
	}
	answerUntilDone(t, ca, id, "restarted", logs)
	checkWiped(t, cb.poll(id, "working", "input_required"), id)
	if got := up.buckets(); strings.Join(got, ",") != "across,restarted" {
		t.Fatalf("buckets wiped: %v, want [across restarted]", got)
	}

	// 3. Cancelled on a, seen cancelled on b; nothing is wiped.
	id = startWipeTask(t, cb, logs)
	if p := cb.poll(id, "working"); p["status"] != "input_required" {
		t.Fatalf("third task: %v", p)
	}
	if r := ca.call("tasks/cancel", map[string]any{"taskId": id}); r.Error != nil || r.Result["resultType"] != "complete" {
		t.Fatalf("tasks/cancel on a: %+v %+v", r.Result, r.Error)
	}
	if got := cb.poll(id, "working", "input_required"); got["status"] != "cancelled" {
		t.Fatalf("on b after the cancel on a: %v", got)
	}
	// A late answer on b is acked and changes nothing.
	if r := cb.call("tasks/update", map[string]any{"taskId": id, "inputResponses": answersFor(before, "late")}); r.Error != nil {
		t.Errorf("tasks/update of a cancelled task: %+v", r.Error)
	}
	if got := ca.poll(id); got["status"] != "cancelled" {
		t.Fatalf("on a after a late answer: %v", got)
	}
	time.Sleep(200 * time.Millisecond)
	if got := up.buckets(); strings.Join(got, ",") != "across,restarted" {
		t.Errorf("buckets wiped: %v, want [across restarted]", got)
	}
}

// testSecretsKey is a 32-byte key, base64, shared by the replicas.
const testSecretsKey = "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8="

// startWipeTask calls run_task as a task and returns the task id.
func startWipeTask(t *testing.T, c *mcpTaskClient, logs func() string) string {
	t.Helper()
	created := c.call("tools/call", map[string]any{"name": "run_task", "arguments": map[string]any{"request": wipeRequest}})
	id, _ := created.Result["taskId"].(string)
	if created.Error != nil || created.Result["resultType"] != "task" || !strings.HasPrefix(id, "tsk_") {
		t.Fatalf("run_task as a task: %+v %+v\n%s", created.Result, created.Error, logs())
	}
	return id
}

// answersFor answers every question of an input_required task: the bucket
// for inputs, yes for confirmations.
func answersFor(task map[string]any, bucket string) map[string]any {
	out := map[string]any{}
	asks, _ := task["inputRequests"].(map[string]any)
	for k := range asks {
		switch {
		case strings.HasPrefix(k, "inputs."):
			out[k] = map[string]any{"action": "accept", "content": map[string]any{"bucket": bucket}}
		case strings.HasPrefix(k, "confirm."):
			out[k] = map[string]any{"action": "accept", "content": map[string]any{"confirm": true}}
		}
	}
	return out
}

func sameKeys(x, y map[string]any) bool {
	kx, _ := x["inputRequests"].(map[string]any)
	ky, _ := y["inputRequests"].(map[string]any)
	if len(kx) != len(ky) || len(kx) == 0 {
		return false
	}
	for k := range kx {
		if _, ok := ky[k]; !ok {
			return false
		}
	}
	return true
}

// answerUntilDone polls the task on c and answers each question there
// until it has ended. It needs at most one inputs and one confirmation
// round.
func answerUntilDone(t *testing.T, c *mcpTaskClient, id, bucket string, logs func() string) {
	t.Helper()
	var answered map[string]any
	for round := 0; ; round++ {
		got := c.poll(id, "working")
		if got["status"] != "input_required" {
			return
		}
		// Keys answered by an acked update are closed: the poll asks
		// something else.
		asks, _ := got["inputRequests"].(map[string]any)
		for k := range answered {
			if _, open := asks[k]; open {
				t.Fatalf("answered question %s is still open: %v", k, got)
			}
		}
		if round == 3 {
			t.Fatalf("still asking after %d rounds: %v", round, got)
		}
		answers := answersFor(got, bucket)
		if len(answers) == 0 {
			t.Fatalf("input_required without a question: %v", got)
		}
		if r := c.call("tasks/update", map[string]any{"taskId": id, "inputResponses": answers}); r.Error != nil || r.Result["resultType"] != "complete" {
			t.Fatalf("tasks/update: %+v %+v\n%s", r.Result, r.Error, logs())
		}
		answered = answers
	}
}

// checkWiped checks a completed run_task task: its result is the
// synchronous answer, the executor task succeeded.
func checkWiped(t *testing.T, done map[string]any, id string) {
	t.Helper()
	res, _ := done["result"].(map[string]any)
	sc, _ := res["structuredContent"].(map[string]any)
	task, _ := sc["task"].(map[string]any)
	if done["status"] != "completed" || res["isError"] == true || task["id"] != id || task["status"] != "succeeded" {
		t.Fatalf("completed run_task: %v", done)
	}
}
