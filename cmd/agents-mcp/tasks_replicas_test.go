package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestMCPTasksAcrossReplicasAndRestarts (ADR 0010): two
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
		t.Skip("starts FerretDB and two server processes, one of them twice")
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
	waitLeaseReleased(t, cb, id)
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
	// A wipe started by the late answer would reach the upstream within
	// milliseconds; none must.
	time.Sleep(200 * time.Millisecond)
	if got := up.buckets(); strings.Join(got, ",") != "across,restarted" {
		t.Errorf("buckets wiped: %v, want [across restarted]", got)
	}
}

// TestMCPTaskStepInterruptedByAKill (ADR 0010, test plan): a task whose
// destructive step is running on replica a when a is SIGKILLed. b keeps
// answering tasks/get (working, while a's lease lives), its resume loop
// takes the task over once the lease expired, and the interrupted step,
// which may have had its effect, asks its confirmation again under a new
// key: an answer to the key confirmed on a is ignored. Confirmed under the
// new key, the step runs again on b and the task completes.
func TestMCPTaskStepInterruptedByAKill(t *testing.T) {
	if testing.Short() {
		t.Skip("starts FerretDB and two server processes, and waits for a lease to expire")
	}
	mongoURI := startReplicaFerretDB(t)
	up := startHoldingWipeUpstream(t)
	configFile := filepath.Join(t.TempDir(), "agents-mcp.yaml")
	if err := os.WriteFile(configFile, []byte(fmt.Sprintf("upstreams:\n  - name: storage\n    transport: streamable\n    url: %s\n", up.url)), 0o600); err != nil {
		t.Fatal(err)
	}
	const leaseTTL = 3 * time.Second
	env := []string{
		"MONGODB_URI=" + mongoURI, "MONGODB_DATABASE=" + fmt.Sprintf("mcpkill_%d", time.Now().UnixNano()),
		"AGENTS_MCP_CONFIG=" + configFile, "AGENTS_MCP_LLM=builtin",
		"AGENTS_MCP_REQUEST_STATE_KEY=q83vEjRWeJCrze8SNFZ4kKvN7xI0VniQq83vEjRWeJA=",
		"AGENTS_MCP_SECRETS_KEY=" + testSecretsKey,
		"AGENTS_MCP_TASK_LEASE_TTL=" + leaseTTL.String(), "AGENTS_MCP_TASK_RESUME_INTERVAL=200ms",
	}
	a := startServerProcess(t, t.TempDir(), env...)
	b := startServerProcess(t, t.TempDir(), env...)
	logs := func() string { return "a:\n" + a.logs.String() + "\nb:\n" + b.logs.String() }
	ca := &mcpTaskClient{t: t, url: a.base + "/mcp", ext: true, logs: logs}
	cb := &mcpTaskClient{t: t, url: b.base + "/mcp", ext: true, logs: logs}

	// Answered on a (inputs, then the confirmation) until the step runs
	// there and holds in the upstream.
	id := startWipeTask(t, ca, logs)
	confirmed := ""
	for round := 0; confirmed == ""; round++ {
		got := ca.poll(id, "working")
		if got["status"] != "input_required" || round == 3 {
			t.Fatalf("round %d on a: %v\n%s", round, got, logs())
		}
		for k := range got["inputRequests"].(map[string]any) {
			if strings.HasPrefix(k, "confirm.") {
				confirmed = k
			}
		}
		waitLeaseReleased(t, ca, id)
		if r := ca.call("tasks/update", map[string]any{"taskId": id, "inputResponses": answersFor(got, "doomed")}); r.Error != nil {
			t.Fatalf("tasks/update on a: %+v\n%s", r.Error, logs())
		}
	}
	select {
	case <-up.holding:
	case <-time.After(20 * time.Second):
		t.Fatalf("the step never reached the upstream\n%s", logs())
	}
	if err := a.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = a.cmd.Wait()
	killed := time.Now()

	// b answers for the task at once: working, since a's lease lives on.
	if r := cb.call("tasks/get", map[string]any{"taskId": id}); r.Error != nil || r.Result["status"] != "working" {
		t.Fatalf("on b just after the kill: %+v %+v", r.Result, r.Error)
	}
	again := cb.poll(id, "working")
	if took := time.Since(killed); took < leaseTTL/2 {
		t.Errorf("b took the task over %v after the kill, before a's lease (%v) could expire", took, leaseTTL)
	}
	asks, _ := again["inputRequests"].(map[string]any)
	var keys []string
	for k := range asks {
		keys = append(keys, k)
	}
	if again["status"] != "input_required" || len(keys) != 1 || !strings.HasPrefix(keys[0], "confirm.") || keys[0] == confirmed {
		t.Fatalf("on b after the takeover: %v, want input_required with one confirmation other than %s\n%s", again, confirmed, logs())
	}
	fresh := keys[0]
	waitLeaseReleased(t, cb, id)

	// The confirmation given on a was for the run that was cut.
	yes := map[string]any{"action": "accept", "content": map[string]any{"confirm": true}}
	if r := cb.call("tasks/update", map[string]any{"taskId": id, "inputResponses": map[string]any{confirmed: yes}}); r.Error != nil {
		t.Fatalf("tasks/update with the old key: %+v", r.Error)
	}
	if got := cb.poll(id, "working"); got["status"] != "input_required" || !sameKeys(got, again) {
		t.Fatalf("after an answer to the old key: %v", got)
	}
	if r := cb.call("tasks/update", map[string]any{"taskId": id, "inputResponses": map[string]any{fresh: yes}}); r.Error != nil {
		t.Fatalf("tasks/update with the new key: %+v", r.Error)
	}
	checkWiped(t, cb.poll(id, "working", "input_required"), id)
	if got := up.buckets(); strings.Join(got, ",") != "doomed,doomed" {
		t.Errorf("calls of the upstream: %v, want the cut one and the confirmed one", got)
	}
}

// holdingWipeUpstream is wipeUpstream whose first call holds until its
// caller goes away (its replica is killed): a step cut mid-call.
type holdingWipeUpstream struct {
	url     string
	holding chan struct{} // closed when the first call holds
	mu      sync.Mutex
	wiped   []string // the buckets of every call, in order
}

func startHoldingWipeUpstream(t *testing.T) *holdingWipeUpstream {
	t.Helper()
	up := &holdingWipeUpstream{holding: make(chan struct{})}
	release := make(chan struct{})
	s := mcp.NewServer(&mcp.Implementation{Name: "storage", Version: "1.0.0"}, nil)
	s.AddTool(&mcp.Tool{Name: "wipe_bucket", Description: "Wipe every object of a storage bucket",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"bucket":{"type":"string","description":"name of the bucket to wipe"}},"required":["bucket"]}`),
		Annotations: &mcp.ToolAnnotations{DestructiveHint: new(true)}},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var args struct{ Bucket string }
			_ = json.Unmarshal(req.Params.Arguments, &args)
			up.mu.Lock()
			up.wiped = append(up.wiped, args.Bucket)
			first := len(up.wiped) == 1
			up.mu.Unlock()
			if first {
				close(up.holding)
				select {
				case <-ctx.Done():
					return nil, ctx.Err()
				case <-release:
				}
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "wiped " + args.Bucket}}}, nil
		})
	srv := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
	t.Cleanup(srv.Close)
	// Before srv.Close, which waits for the held call.
	t.Cleanup(func() { close(release) })
	up.url = srv.URL
	return up
}

func (up *holdingWipeUpstream) buckets() []string {
	up.mu.Lock()
	defer up.mu.Unlock()
	return slices.Clone(up.wiped)
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
				t.Fatalf("answered question %s is still open: %v\n%s", k, got, logs())
			}
		}
		if round == 3 {
			t.Fatalf("still asking after %d rounds: %v", round, got)
		}
		waitLeaseReleased(t, c, id)
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

// waitLeaseReleased waits until the replica that paused the task has
// released its lease. FerretDB, unlike MongoDB, applies an update as read,
// modify, write back, with nothing to stop another process's update of the
// same document in between (memory/mongo lockKey): the release that
// follows a pause can write back the paused task over answers stored by
// another replica meanwhile, which are then lost (seen here: the answered
// question still open after an acked tasks/update), or over that replica's
// lease (the task then stays working until its lease expires). On MongoDB
// each update is atomic; this test is about routing, not about FerretDB.
func waitLeaseReleased(t *testing.T, c *mcpTaskClient, id string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		r := c.call("tools/call", map[string]any{"name": "get_task", "arguments": map[string]any{"taskId": id}})
		sc, _ := r.Result["structuredContent"].(map[string]any)
		task, _ := sc["task"].(map[string]any)
		lease, ok := task["lease"].(map[string]any)
		if !ok {
			t.Fatalf("get_task %s: %+v %+v", id, r.Result, r.Error)
		}
		if lease["owner"] == nil || lease["owner"] == "" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("task %s is paused with its lease held: %v", id, task)
		}
		time.Sleep(20 * time.Millisecond)
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

// TestMCPTasksOverStdio: `agents-mcp stdio` speaking 2026-07-28 (one JSON
// message a line, no initialize) advertises the Tasks extension in
// server/discover, and run_task called with the extension declared answers
// with a task that tasks/get, tasks/update and tasks/cancel then drive on
// the same pipe.
func TestMCPTasksOverStdio(t *testing.T) {
	up := startWipeUpstream(t)
	configFile := filepath.Join(t.TempDir(), "agents-mcp.yaml")
	if err := os.WriteFile(configFile, []byte(fmt.Sprintf("upstreams:\n  - name: storage\n    transport: streamable\n    url: %s\n", up.url)), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$", "--", "stdio", "--data-dir", t.TempDir())
	cmd.Env = append(os.Environ(), childEnv+"=1", "AGENTS_MCP_CONFIG="+configFile, "AGENTS_MCP_LLM=builtin")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	logs := &syncBuffer{}
	cmd.Stderr = logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Closing stdin ends the server; the kill is for a server that hangs.
	t.Cleanup(func() {
		stdin.Close()
		exited := make(chan struct{})
		go func() { _ = cmd.Wait(); close(exited) }()
		select {
		case <-exited:
		case <-time.After(15 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
			t.Error("stdio did not exit when its stdin closed")
		}
	})
	out := bufio.NewReader(stdout)
	next := 0
	call := func(method string, params map[string]any) rpcAnswer {
		t.Helper()
		params["_meta"] = map[string]any{
			"io.modelcontextprotocol/protocolVersion": "2026-07-28",
			"io.modelcontextprotocol/clientCapabilities": map[string]any{
				"extensions":  map[string]any{"io.modelcontextprotocol/tasks": map[string]any{}},
				"elicitation": map[string]any{},
			},
			"io.modelcontextprotocol/clientInfo": map[string]any{"name": "tasks-stdio", "version": "1"},
		}
		next++
		body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": next, "method": method, "params": params})
		if _, err := stdin.Write(append(body, '\n')); err != nil {
			t.Fatalf("%s: %v\n%s", method, err, logs.String())
		}
		// Notifications may come first; the answer carries our id.
		lines := make(chan string, 1)
		go func() {
			for {
				line, err := out.ReadString('\n')
				if err != nil {
					close(lines)
					return
				}
				var m struct{ ID *int }
				if json.Unmarshal([]byte(line), &m) == nil && m.ID != nil && *m.ID == next {
					lines <- line
					return
				}
			}
		}()
		select {
		case line, ok := <-lines:
			if !ok {
				t.Fatalf("%s: stdout ended\n%s", method, logs.String())
			}
			var a rpcAnswer
			if err := json.Unmarshal([]byte(line), &a); err != nil {
				t.Fatalf("%s: %q", method, line)
			}
			return a
		case <-time.After(20 * time.Second):
			t.Fatalf("%s: no answer\n%s", method, logs.String())
		}
		return rpcAnswer{}
	}

	d := call("server/discover", map[string]any{})
	caps, _ := d.Result["capabilities"].(map[string]any)
	exts, _ := caps["extensions"].(map[string]any)
	if _, ok := exts["io.modelcontextprotocol/tasks"]; !ok || d.Error != nil {
		t.Fatalf("server/discover over stdio: %+v %+v", d.Result, d.Error)
	}
	created := call("tools/call", map[string]any{"name": "run_task", "arguments": map[string]any{"request": wipeRequest}})
	id, _ := created.Result["taskId"].(string)
	if created.Error != nil || created.Result["resultType"] != "task" || !strings.HasPrefix(id, "tsk_") {
		t.Fatalf("run_task as a task over stdio: %+v %+v\n%s", created.Result, created.Error, logs.String())
	}
	poll := func(while ...string) map[string]any {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second)
		for {
			r := call("tasks/get", map[string]any{"taskId": id})
			if r.Error != nil {
				t.Fatalf("tasks/get: %+v", r.Error)
			}
			if !slices.Contains(while, r.Result["status"].(string)) {
				return r.Result
			}
			if time.Now().After(deadline) {
				t.Fatalf("still %v", r.Result)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	for round := 0; ; round++ {
		got := poll("working")
		if got["status"] != "input_required" {
			checkWiped(t, got, id)
			break
		}
		if round == 3 {
			t.Fatalf("still asking: %v", got)
		}
		if r := call("tasks/update", map[string]any{"taskId": id, "inputResponses": answersFor(got, "piped")}); r.Error != nil {
			t.Fatalf("tasks/update: %+v", r.Error)
		}
	}
	if got := up.buckets(); strings.Join(got, ",") != "piped" {
		t.Errorf("buckets wiped: %v, want [piped]", got)
	}
	// A second task, cancelled while it waits.
	created = call("tools/call", map[string]any{"name": "run_task", "arguments": map[string]any{"request": wipeRequest}})
	id, _ = created.Result["taskId"].(string)
	if p := poll("working"); p["status"] != "input_required" {
		t.Fatalf("second task: %v", p)
	}
	if r := call("tasks/cancel", map[string]any{"taskId": id}); r.Error != nil || r.Result["resultType"] != "complete" {
		t.Fatalf("tasks/cancel: %+v %+v", r.Result, r.Error)
	}
	if got := poll(); got["status"] != "cancelled" {
		t.Fatalf("after cancel: %v", got)
	}
}
