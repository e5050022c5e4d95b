package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	agentsmcp "github.com/agents-mcp/agents-mcp"
)

// wipeUpstream is a real go-sdk MCP server over loopback streamable HTTP
// with one destructive tool whose argument no request gives: a plan that
// calls it needs an input and a confirmation.
type wipeUpstream struct {
	url   string
	mu    sync.Mutex
	wiped []string // the buckets wiped, in order
}

func startWipeUpstream(t *testing.T) *wipeUpstream {
	t.Helper()
	up := &wipeUpstream{}
	s := mcp.NewServer(&mcp.Implementation{Name: "storage", Version: "1.0.0"}, nil)
	s.AddTool(&mcp.Tool{Name: "wipe_bucket", Description: "Wipe every object of a storage bucket",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"bucket":{"type":"string","description":"name of the bucket to wipe"}},"required":["bucket"]}`),
		Annotations: &mcp.ToolAnnotations{DestructiveHint: new(true)}},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var args struct{ Bucket string }
			_ = json.Unmarshal(req.Params.Arguments, &args)
			up.mu.Lock()
			up.wiped = append(up.wiped, args.Bucket)
			up.mu.Unlock()
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "wiped " + args.Bucket}}}, nil
		})
	srv := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
	t.Cleanup(srv.Close)
	up.url = srv.URL
	return up
}

func (up *wipeUpstream) buckets() []string {
	up.mu.Lock()
	defer up.mu.Unlock()
	return append([]string(nil), up.wiped...)
}

// mrtrServer starts `serve` in-process on dataDir with the upstream, the
// builtin planner and env, and returns its base URL and how to stop it
// (waiting for it to exit).
func mrtrServer(t *testing.T, dataDir string, up *wipeUpstream, env map[string]string) (string, func()) {
	t.Helper()
	configFile := filepath.Join(t.TempDir(), "agents-mcp.yaml")
	cfg := fmt.Sprintf("upstreams:\n  - name: storage\n    transport: streamable\n    url: %s\n", up.url)
	if err := os.WriteFile(configFile, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	all := map[string]string{"AGENTS_MCP_LLM": "builtin"}
	for k, v := range env {
		all[k] = v
	}
	base, cancel, code, logs := startServe(t, all, "--data-dir", dataDir, "--config", configFile)
	stop := func() {
		cancel()
		select {
		case c := <-code:
			if c != 0 {
				t.Errorf("serve exited with %d: %s", c, logs.String())
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("serve did not stop: %s", logs.String())
		}
	}
	return base, stop
}

// mrtrClient connects a go-sdk client speaking MCP 2026-07-28 that
// declares elicitation, with the SDK's automatic retry loop off: the test
// answers each input_required itself.
func mrtrClient(t *testing.T, base string) *mcp.ClientSession {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "mrtr-test", Version: "1"}, &mcp.ClientOptions{
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return nil, errors.New("a 2026-07-28 client is never sent elicitation requests")
		},
		MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: true},
	})
	cs, err := c.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: base + "/mcp"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	if v := cs.InitializeResult(); v == nil || v.ProtocolVersion != "2026-07-28" {
		t.Fatalf("negotiated %+v, want protocol 2026-07-28", v)
	}
	return cs
}

const wipeRequest = "wipe a storage bucket"

// answer is what a run_task call answered.
type answer struct {
	res *mcp.CallToolResult
	err error
}

func callRunTask(t *testing.T, cs *mcp.ClientSession, params *mcp.CallToolParams) answer {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	params.Name = "run_task"
	params.Arguments = map[string]any{"request": wipeRequest}
	res, err := cs.CallTool(ctx, params)
	return answer{res, err}
}

// needsInput checks that res is an input_required result asking exactly
// keys (sorted), and returns it.
func needsInput(t *testing.T, a answer, keys ...string) *mcp.CallToolResult {
	t.Helper()
	res, err := a.res, a.err
	if err != nil {
		t.Fatalf("run_task: %v", err)
	}
	if !res.NeedsInput() || res.RequestState == "" {
		b, _ := json.Marshal(res)
		t.Fatalf("run_task answered %s, want input_required with a requestState", b)
	}
	var got []string
	for k, ir := range res.InputRequests {
		if _, ok := ir.(*mcp.ElicitParams); !ok {
			t.Errorf("input request %q is %T, want an elicitation", k, ir)
		}
		got = append(got, k)
	}
	if strings.Join(sorted(got), ",") != strings.Join(keys, ",") {
		t.Fatalf("input requests %v, want %v", sorted(got), keys)
	}
	return res
}

func sorted(s []string) []string {
	out := append([]string(nil), s...)
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if out[j] < out[i] {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
}

// taskOf decodes the task of a complete run_task result.
func taskOf(t *testing.T, a answer) *agentsmcp.Task {
	t.Helper()
	res, err := a.res, a.err
	if err != nil {
		t.Fatalf("run_task: %v", err)
	}
	if res.NeedsInput() || res.IsError {
		b, _ := json.Marshal(res)
		t.Fatalf("run_task answered %s, want its task", b)
	}
	var out struct{ Task *agentsmcp.Task }
	b, _ := json.Marshal(res.StructuredContent)
	if err := json.Unmarshal(b, &out); err != nil || out.Task == nil {
		t.Fatalf("run_task result %s: %v", b, err)
	}
	return out.Task
}

func wantInvalidParams(t *testing.T, what string, err error, saying string) {
	t.Helper()
	var werr *jsonrpc.Error
	if !errors.As(err, &werr) || werr.Code != jsonrpc.CodeInvalidParams || !strings.Contains(werr.Message, saying) {
		t.Fatalf("%s: err = %v, want JSON-RPC -32602 saying %q", what, err, saying)
	}
}

// TestRunTaskAsksA2026ClientThroughInputRequired: a client of MCP
// 2026-07-28 calls run_task whose plan wipes a bucket (destructive) that
// the request does not name. The call answers input_required asking for
// the bucket; a changed requestState is refused; the server restarts on
// the same data dir; the retry with the bucket resumes the stored task
// there and answers input_required asking to confirm the step; the retry
// that confirms it ends with the task succeeded and the bucket wiped
// once. No elicitation request ever reaches the client.
func TestRunTaskAsksA2026ClientThroughInputRequired(t *testing.T) {
	up := startWipeUpstream(t)
	dataDir := t.TempDir()
	base, stop := mrtrServer(t, dataDir, up, nil)
	cs := mrtrClient(t, base)

	first := needsInput(t, callRunTask(t, cs, &mcp.CallToolParams{}), "inputs")
	ask := first.InputRequests["inputs"].(*mcp.ElicitParams)
	schema, _ := json.Marshal(ask.RequestedSchema)
	if !strings.Contains(string(schema), `"bucket"`) || !strings.Contains(ask.Message, "bucket") {
		t.Errorf("the inputs question %q, schema %s, does not ask for bucket", ask.Message, schema)
	}
	bucket := mcp.InputResponseMap{"inputs": &mcp.ElicitResult{Action: "accept", Content: map[string]any{"bucket": "logs-2026"}}}

	// A changed requestState is refused, and changes nothing.
	body, mac, _ := strings.Cut(first.RequestState, ".")
	i := len(body) / 2
	c := byte('A')
	if body[i] == 'A' {
		c = 'B'
	}
	tampered := body[:i] + string(c) + body[i+1:] + "." + mac
	wantInvalidParams(t, "a tampered requestState", callRunTask(t, cs, &mcp.CallToolParams{InputResponses: bucket, RequestState: tampered}).err, "failed verification")
	wantInvalidParams(t, "inputResponses without a requestState", callRunTask(t, cs, &mcp.CallToolParams{InputResponses: bucket}).err, "verification")

	// The task is stored paused; another process (here, the same data dir
	// after a restart) takes the retry.
	stop()
	if st, err := os.Stat(filepath.Join(dataDir, RequestStateKeyFile)); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("the generated request state key: %v, %v", st, err)
	}
	base, stop = mrtrServer(t, dataDir, up, nil)
	defer stop()
	cs = mrtrClient(t, base)

	second := needsInput(t, callRunTask(t, cs, &mcp.CallToolParams{InputResponses: bucket, RequestState: first.RequestState}), "confirm:wipe_bucket")
	if q := second.InputRequests["confirm:wipe_bucket"].(*mcp.ElicitParams); !strings.Contains(q.Message, "storage__wipe_bucket") {
		t.Errorf("the confirmation question %q does not name the tool", q.Message)
	}
	if got := up.buckets(); len(got) != 0 {
		t.Fatalf("the destructive step ran before it was confirmed: %v", got)
	}
	task := taskOf(t, callRunTask(t, cs, &mcp.CallToolParams{
		InputResponses: mcp.InputResponseMap{"confirm:wipe_bucket": &mcp.ElicitResult{Action: "accept", Content: map[string]any{"confirm": true}}},
		RequestState:   second.RequestState,
	}))
	if task.Status != agentsmcp.TaskSucceeded {
		b, _ := json.Marshal(task)
		t.Fatalf("task %s, want succeeded: %s", task.Status, b)
	}
	if got := up.buckets(); len(got) != 1 || got[0] != "logs-2026" {
		t.Errorf("buckets wiped: %v, want [logs-2026]", got)
	}
	// A repeated retry answers the outcome; it runs nothing again.
	again := taskOf(t, callRunTask(t, cs, &mcp.CallToolParams{
		InputResponses: mcp.InputResponseMap{"confirm:wipe_bucket": &mcp.ElicitResult{Action: "accept", Content: map[string]any{"confirm": true}}},
		RequestState:   second.RequestState,
	}))
	if again.ID != task.ID || again.Status != agentsmcp.TaskSucceeded || len(up.buckets()) != 1 {
		t.Errorf("a repeated retry: task %s %s, buckets %v", again.ID, again.Status, up.buckets())
	}
}

// TestRunTaskRefusesAnExpiredRequestState: with a short
// tasks.request_state_ttl, a retry after it is refused with -32602; the
// task stays paused, and resume_task still answers it.
func TestRunTaskRefusesAnExpiredRequestState(t *testing.T) {
	up := startWipeUpstream(t)
	base, stop := mrtrServer(t, t.TempDir(), up, map[string]string{"AGENTS_MCP_REQUEST_STATE_TTL": "1s"})
	defer stop()
	cs := mrtrClient(t, base)
	first := needsInput(t, callRunTask(t, cs, &mcp.CallToolParams{}), "inputs")
	time.Sleep(1100 * time.Millisecond)
	late := callRunTask(t, cs, &mcp.CallToolParams{
		InputResponses: mcp.InputResponseMap{"inputs": &mcp.ElicitResult{Action: "accept", Content: map[string]any{"bucket": "late"}}},
		RequestState:   first.RequestState,
	})
	wantInvalidParams(t, "an expired requestState", late.err, "expired")
	list := callTool(t, cs, "list_tasks", map[string]any{"status": "paused"})
	tasks, _ := list["tasks"].([]any)
	if len(tasks) != 1 {
		t.Fatalf("paused tasks after the refusal: %v", list)
	}
	if len(up.buckets()) != 0 {
		t.Errorf("a refused retry ran the step: %v", up.buckets())
	}
}

// TestRunTaskWithTheSDKsOwnRetryLoop: go-sdk's client answers
// input_required itself (its multi round-trip middleware calls the
// elicitation handler, then retries), so a 2026-07-28 application sees
// one call that ends with the task succeeded: run_task, then
// generate_plan and execute_task with wait.
func TestRunTaskWithTheSDKsOwnRetryLoop(t *testing.T) {
	up := startWipeUpstream(t)
	// auto: a client that declares sampling is the model. This one
	// speaks 2026-07-28, so it is never sent a sampling request: its
	// model is asked through sampling inputRequests (ADR 0009), which
	// the SDK's loop fulfils with its CreateMessageHandler, before the
	// task's own questions.
	base, stop := mrtrServer(t, t.TempDir(), up, map[string]string{"AGENTS_MCP_LLM": "auto"})
	defer stop()
	var mu sync.Mutex
	var asked, sampled []string
	c := mcp.NewClient(&mcp.Implementation{Name: "mrtr-sdk-loop", Version: "1"}, &mcp.ClientOptions{
		ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			mu.Lock()
			asked = append(asked, req.Params.Message)
			mu.Unlock()
			if strings.HasPrefix(req.Params.Message, "Allow step") {
				return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"confirm": true}}, nil
			}
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"bucket": "tmp"}}, nil
		},
		CreateMessageHandler: func(_ context.Context, req *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			if req.Session.InitializeResult().ProtocolVersion < "2026-07-28" {
				return nil, errors.New("this test's client speaks 2026-07-28")
			}
			b, _ := json.Marshal(req.Params)
			var params map[string]any
			_ = json.Unmarshal(b, &params)
			mu.Lock()
			sampled = append(sampled, req.Params.SystemPrompt)
			mu.Unlock()
			return &mcp.CreateMessageResult{Role: "assistant", Model: "wipe-model", Content: &mcp.TextContent{Text: wipeModel(params)}}, nil
		},
	})
	cs, err := c.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: base + "/mcp"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	task := taskOf(t, callRunTask(t, cs, &mcp.CallToolParams{}))
	mu.Lock()
	defer mu.Unlock()
	if task.Status != agentsmcp.TaskSucceeded || len(asked) != 2 || strings.Join(up.buckets(), ",") != "tmp" {
		t.Errorf("task %s after questions %q; buckets %v", task.Status, asked, up.buckets())
	}
	if len(sampled) != 2 || !strings.Contains(sampled[0], "thought agent") {
		t.Errorf("%d sampling requests, want the thought and the plan", len(sampled))
	}
	mu.Unlock()

	plan := callTool(t, cs, "generate_plan", map[string]any{"request": wipeRequest})["plan"].(map[string]any)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "execute_task", Arguments: map[string]any{"planId": plan["id"], "wait": true}})
	task = taskOf(t, answer{res, err})
	mu.Lock()
	if task.Status != agentsmcp.TaskSucceeded || len(asked) != 4 || strings.Join(up.buckets(), ",") != "tmp,tmp" {
		t.Errorf("execute_task: task %s after questions %q; buckets %v", task.Status, asked, up.buckets())
	}
	if len(sampled) != 3 {
		t.Errorf("%d sampling requests, want one more for generate_plan", len(sampled))
	}
}

// TestRunTaskStillElicitsFromA20251125Client: a client of 2025-11-25 is
// asked through elicitation requests while its one call waits, as before
// MRTR, and never gets an input_required result.
func TestRunTaskStillElicitsFromA20251125Client(t *testing.T) {
	up := startWipeUpstream(t)
	base, stop := mrtrServer(t, t.TempDir(), up, nil)
	defer stop()
	var mu sync.Mutex
	var asked []string
	c := mcp.NewClient(&mcp.Implementation{Name: "elicit-2025", Version: "1"}, &mcp.ClientOptions{
		ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			mu.Lock()
			asked = append(asked, req.Params.Message)
			mu.Unlock()
			if strings.HasPrefix(req.Params.Message, "Allow step") {
				return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"confirm": true}}, nil
			}
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"bucket": "old"}}, nil
		},
		// Off, so that an input_required result would reach the test
		// rather than be answered by the SDK.
		MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: true},
	})
	cs, err := c.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: base + "/mcp"}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	task := taskOf(t, callRunTask(t, cs, &mcp.CallToolParams{}))
	mu.Lock()
	defer mu.Unlock()
	if task.Status != agentsmcp.TaskSucceeded || len(asked) != 2 || strings.Join(up.buckets(), ",") != "old" {
		t.Errorf("task %s after elicitations %q; buckets %v", task.Status, asked, up.buckets())
	}
}

// TestRunTaskAsksAgainOrPauses: an answer the plan's inputs schema
// refuses is asked again, saying why; a declined question is not asked
// again in that round, and the call answers the paused task, which
// resume_task can still answer.
func TestRunTaskAsksAgainOrPauses(t *testing.T) {
	up := startWipeUpstream(t)
	base, stop := mrtrServer(t, t.TempDir(), up, nil)
	defer stop()
	cs := mrtrClient(t, base)
	first := needsInput(t, callRunTask(t, cs, &mcp.CallToolParams{}), "inputs")
	again := needsInput(t, callRunTask(t, cs, &mcp.CallToolParams{
		InputResponses: mcp.InputResponseMap{"inputs": &mcp.ElicitResult{Action: "accept", Content: map[string]any{"bucket": 42}}},
		RequestState:   first.RequestState,
	}), "inputs")
	if q := again.InputRequests["inputs"].(*mcp.ElicitParams); !strings.HasPrefix(q.Message, "The last answer was refused: ") || !strings.Contains(q.Message, "bucket") {
		t.Errorf("asked again with %q", q.Message)
	}
	paused := taskOf(t, callRunTask(t, cs, &mcp.CallToolParams{
		InputResponses: mcp.InputResponseMap{"inputs": &mcp.ElicitResult{Action: "decline"}},
		RequestState:   again.RequestState,
	}))
	if paused.Status != agentsmcp.TaskPaused || paused.Steps[0].Status != agentsmcp.StepWaitingInput {
		t.Fatalf("after a decline: task %s, step %s", paused.Status, paused.Steps[0].Status)
	}
	callTool(t, cs, "resume_task", map[string]any{"taskId": paused.ID, "inputs": map[string]any{"bucket": "by-hand"}, "confirm": []string{"wipe_bucket"}})
	deadline := time.Now().Add(10 * time.Second)
	for len(up.buckets()) == 0 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if got := up.buckets(); strings.Join(got, ",") != "by-hand" {
		t.Errorf("buckets wiped: %v, want [by-hand]", got)
	}
}

// TestMRTRRoundsLandOnAnyReplica: two replicas share one MongoDB wire
// server (FerretDB) and tasks.request_state_key. run_task starts on a and
// answers input_required; the answer reaches b, which resumes the stored
// task and asks for the confirmation; the confirmation reaches a again and
// the task succeeds, the bucket wiped once. A third replica without the
// shared key refuses the state it did not sign.
func TestMRTRRoundsLandOnAnyReplica(t *testing.T) {
	if testing.Short() {
		t.Skip("starts FerretDB and three server processes")
	}
	mongoURI := startReplicaFerretDB(t)
	up := startWipeUpstream(t)
	configFile := filepath.Join(t.TempDir(), "agents-mcp.yaml")
	if err := os.WriteFile(configFile, []byte(fmt.Sprintf("upstreams:\n  - name: storage\n    transport: streamable\n    url: %s\n", up.url)), 0o600); err != nil {
		t.Fatal(err)
	}
	database := fmt.Sprintf("mrtr_%d", time.Now().UnixNano())
	env := []string{"MONGODB_URI=" + mongoURI, "MONGODB_DATABASE=" + database, "AGENTS_MCP_CONFIG=" + configFile, "AGENTS_MCP_LLM=builtin"}
	shared := append(env[:len(env):len(env)], "AGENTS_MCP_REQUEST_STATE_KEY=q83vEjRWeJCrze8SNFZ4kKvN7xI0VniQq83vEjRWeJA=")
	a := startServerProcess(t, t.TempDir(), shared...)
	b := startServerProcess(t, t.TempDir(), shared...)
	c := startServerProcess(t, t.TempDir(), env...)
	if !strings.Contains(c.logs.String(), "tasks.request_state_key (AGENTS_MCP_REQUEST_STATE_KEY) is not set") {
		t.Errorf("a replica on MongoDB without the key does not warn:\n%s", c.logs.String())
	}
	ca, cb, cc := mrtrClient(t, a.base), mrtrClient(t, b.base), mrtrClient(t, c.base)

	first := needsInput(t, callRunTask(t, ca, &mcp.CallToolParams{}), "inputs")
	bucket := mcp.InputResponseMap{"inputs": &mcp.ElicitResult{Action: "accept", Content: map[string]any{"bucket": "shared"}}}
	wantInvalidParams(t, "a replica with another key", callRunTask(t, cc, &mcp.CallToolParams{InputResponses: bucket, RequestState: first.RequestState}).err, "failed verification")
	second := needsInput(t, callRunTask(t, cb, &mcp.CallToolParams{InputResponses: bucket, RequestState: first.RequestState}), "confirm:wipe_bucket")
	task := taskOf(t, callRunTask(t, ca, &mcp.CallToolParams{
		InputResponses: mcp.InputResponseMap{"confirm:wipe_bucket": &mcp.ElicitResult{Action: "accept", Content: map[string]any{"confirm": true}}},
		RequestState:   second.RequestState,
	}))
	if task.Status != agentsmcp.TaskSucceeded || strings.Join(up.buckets(), ",") != "shared" {
		t.Errorf("task %s, buckets wiped %v; want succeeded, [shared]", task.Status, up.buckets())
	}
}
