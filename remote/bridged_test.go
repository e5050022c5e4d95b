package remote

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/internal/mcpwire"
	"github.com/agents-mcp/agents-mcp/memory/sqlite"
)

// sessionlessCaller is the protocol of a caller that cannot receive
// server-to-client requests.
const sessionlessCaller = mcpwire.ProtocolSessionless

// testStateKey is the request-state key of the test pools.
var testStateKey = []byte("0123456789abcdef0123456789abcdef")

// bridgeStore is a real task store (SQLite in a temp dir), shared by the
// pools of a test as replicas share theirs.
func bridgeStore(t *testing.T) *sqlite.DB {
	t.Helper()
	db, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "tasks.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// bridgeOptions turn bridging on over store, with test-sized waits.
func bridgeOptions(store agentsmcp.TaskService, owner string, retryWait time.Duration) Options {
	opts := fastOptions()
	opts.StateKey, opts.TaskStore, opts.LeaseOwner = testStateKey, store, owner
	opts.BridgeRetryWait, opts.BridgePoll, opts.LeaseTTL = retryWait, 50*time.Millisecond, 3*time.Second
	return opts
}

// bridgeEnv is a pool with bridging on and the fixture as a 2025-11-25
// upstream named "up": the pool pins that revision, so the upstream asks
// mid-call with elicitation/create and sampling/createMessage, as a 2025
// server does.
func bridgeEnv(t *testing.T, retryWait time.Duration) (*env, *fixture) {
	t.Helper()
	e := newEnv(t, bridgeOptions(bridgeStore(t), "replica-a", retryWait))
	fx := newFixture("up")
	addPinned(t, e, "up", fx.server)
	return e, fx
}

// addPinned adds s to e as upstream name at 2025-11-25.
func addPinned(t *testing.T, e *env, name string, s *mcp.Server) {
	t.Helper()
	cfg := streamableConfig(name, serveStreamable(t, s).URL())
	cfg.ProtocolVersion = "2025-11-25"
	e.add(cfg)
	if v := e.status(name).ProtocolVersion; v != "2025-11-25" {
		t.Fatalf("upstream speaks %q", v)
	}
}

// A 2026-07-28 client whose SDK answers input_required by itself (go-sdk's
// client MRTR) gets the upstream's elicitation as a question, answers it,
// and gets the tool's result; the upstream saw the answer.
func TestBridgedElicitationAndSamplingFor2026Caller(t *testing.T) {
	t.Parallel()
	e, _ := bridgeEnv(t, 0)
	var mu sync.Mutex
	var asked []string
	opts := &mcp.ClientOptions{
		ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			mu.Lock()
			asked = append(asked, req.Params.Message)
			mu.Unlock()
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ann"}}, nil
		},
		CreateMessageHandler: func(_ context.Context, req *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			mu.Lock()
			asked = append(asked, req.Params.Messages[0].Content.(*mcp.TextContent).Text)
			mu.Unlock()
			return &mcp.CreateMessageResult{Model: "m26", Role: "assistant", Content: &mcp.TextContent{Text: "4"}}, nil
		},
	}
	for name, cs := range map[string]*mcp.ClientSession{"in-memory": e.caller(opts, sessionlessCaller), "http": e.httpCaller(opts, sessionlessCaller)} {
		t.Run(name, func(t *testing.T) {
			if got := mustText(t, cs, "up__elicit", `{}`); got != `accept {"name":"Ann"}` {
				t.Errorf("elicit tool answered %q", got)
			}
			if got := mustText(t, cs, "up__sample", `{}`); got != "model m26 said 4" {
				t.Errorf("sample tool answered %q", got)
			}
		})
	}
	mu.Lock()
	defer mu.Unlock()
	want := []string{"What is your name?", "what is 2+2?", "What is your name?", "what is 2+2?"}
	if strings.Join(asked, "|") != strings.Join(want, "|") {
		t.Errorf("the caller was asked %q, want %q", asked, want)
	}
	testutilEventuallyEmpty(t, e)
}

// The wire of a bridged call, round by round, with the client's MRTR off:
// the question under key call.1 and a sealed state; a retry without the
// answer is asked again; a tampered state is refused; the answer gives
// the result; the same state after that is refused as not held.
func TestBridgedCallRounds(t *testing.T) {
	t.Parallel()
	e, _ := bridgeEnv(t, 0)
	cs := e.httpCaller(&mcp.ClientOptions{
		MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: true},
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return nil, errors.New("not used")
		},
	}, sessionlessCaller)
	ctx := testCtx(t, 20*time.Second)
	params := func(state string, answers mcp.InputResponseMap) *mcp.CallToolParams {
		return &mcp.CallToolParams{Name: "up__elicit", Arguments: json.RawMessage(`{}`), RequestState: state, InputResponses: answers}
	}
	res, err := cs.CallTool(ctx, params("", nil))
	if err != nil {
		t.Fatal(err)
	}
	q, ok := res.InputRequests["call.1"].(*mcp.ElicitParams)
	if !res.NeedsInput() || !ok || q.Message != "What is your name?" || len(res.InputRequests) != 1 {
		t.Fatalf("first round: %s", asJSON(t, res))
	}
	state := res.RequestState
	if !strings.HasPrefix(state, bridgeStatePrefix) {
		t.Fatalf("requestState %q", state)
	}

	// No answer (or one to another key): the open question again, at once.
	start := time.Now()
	res, err = cs.CallTool(ctx, params(state, mcp.InputResponseMap{"other": &mcp.ElicitResult{Action: "accept"}}))
	if err != nil || res.InputRequests["call.1"] == nil || res.RequestState != state {
		t.Fatalf("retry without the answer: %v %s", err, asJSON(t, res))
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("retry without the answer took %s", d)
	}

	// A changed state is refused, and so is the state on another tool.
	tampered := state[:len(state)-2] + "xx"
	for _, p := range []*mcp.CallToolParams{params(tampered, nil), {Name: "up__echo", Arguments: json.RawMessage(`{"text":"x"}`), RequestState: state}} {
		_, err = cs.CallTool(ctx, p)
		var rpcErr *jsonrpc.Error
		if !errors.As(err, &rpcErr) || rpcErr.Code != jsonrpc.CodeInvalidParams {
			t.Errorf("%s with state %.12s…: %v, want -32602", p.Name, p.RequestState, err)
		}
	}

	res, err = cs.CallTool(ctx, params(state, mcp.InputResponseMap{"call.1": &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Bo"}}}))
	if err != nil || res.NeedsInput() || resultText(res) != `accept {"name":"Bo"}` {
		t.Fatalf("answered: %v %s", err, asJSON(t, res))
	}

	// The call ended; its state still reads the stored result.
	res, err = cs.CallTool(ctx, params(state, nil))
	if err != nil || resultText(res) != `accept {"name":"Bo"}` {
		t.Errorf("state of an ended call: %v %s", err, asJSON(t, res))
	}
}

// A retry whose answer the upstream takes time to act on waits at most
// BridgeRetryWait, then answers input_required with no question and the
// same state; the next retry gets the result.
func TestBridgedRetryWaitIsBounded(t *testing.T) {
	t.Parallel()
	e := newEnv(t, bridgeOptions(bridgeStore(t), "replica-a", 200*time.Millisecond))
	s := mcp.NewServer(&mcp.Implementation{Name: "slow-asker", Version: "1"}, nil)
	s.AddTool(&mcp.Tool{Name: "ask", InputSchema: json.RawMessage(anySchema)},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			res, err := req.Session.Elicit(ctx, &mcp.ElicitParams{Message: "go?", RequestedSchema: json.RawMessage(`{"type":"object","properties":{}}`)})
			if err != nil {
				return nil, err
			}
			time.Sleep(time.Second) // the work the answer allowed
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "done after " + res.Action}}}, nil
		})
	addPinned(t, e, "slow", s)
	cs := e.caller(&mcp.ClientOptions{
		MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: true},
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return nil, errors.New("not used")
		},
	}, sessionlessCaller)
	ctx := testCtx(t, 20*time.Second)
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "slow__ask", Arguments: json.RawMessage(`{}`)})
	if err != nil || res.InputRequests["call.1"] == nil {
		t.Fatalf("first round: %v %s", err, asJSON(t, res))
	}
	state := res.RequestState
	start := time.Now()
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "slow__ask", Arguments: json.RawMessage(`{}`), RequestState: state,
		InputResponses: mcp.InputResponseMap{"call.1": &mcp.ElicitResult{Action: "accept", Content: map[string]any{}}}})
	d := time.Since(start)
	if err != nil || !res.NeedsInput() || len(res.InputRequests) != 0 || res.RequestState != state {
		t.Fatalf("retry past the wait: %v %s", err, asJSON(t, res))
	}
	if d < 200*time.Millisecond || d > 900*time.Millisecond {
		t.Errorf("retry answered after %s, want about 200ms", d)
	}
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "slow__ask", Arguments: json.RawMessage(`{}`), RequestState: state})
	for err == nil && res.NeedsInput() && len(res.InputRequests) == 0 {
		res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "slow__ask", Arguments: json.RawMessage(`{}`), RequestState: state})
	}
	if err != nil || resultText(res) != "done after accept" {
		t.Fatalf("last retry: %v %s", err, asJSON(t, res))
	}
}

// A 2026-07-28 caller that did not declare elicitation is not asked (the
// spec forbids it): the upstream is refused at once, as before bridging.
// So is every such caller when the pool has no task store (bridging off).
func TestBridgedCallWithoutCapabilityOrStore(t *testing.T) {
	t.Parallel()
	e, _ := bridgeEnv(t, 0)
	cs := e.httpCaller(nil, sessionlessCaller)
	if msg := errorText(t, cs, "up__elicit", `{}`); !strings.Contains(msg, "does not support elicitation") {
		t.Errorf("caller without elicitation: %q", msg)
	}

	plain := newEnv(t, fastOptions())
	addPinned(t, plain, "up", newFixture("up").server)
	cs = plain.httpCaller(&mcp.ClientOptions{
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ann"}}, nil
		},
	}, sessionlessCaller)
	if msg := errorText(t, cs, "up__elicit", `{}`); !strings.Contains(msg, "elicitation") || strings.Contains(msg, "Ann") {
		t.Errorf("no task store: %q", msg)
	}
}

// A caller that goes away before any question cancels the upstream call,
// as for a call that is not bridged.
func TestBridgedCallCancelledBeforeQuestion(t *testing.T) {
	t.Parallel()
	e, fx := bridgeEnv(t, 0)
	cs := e.caller(nil, sessionlessCaller)
	ctx, cancel := context.WithCancel(testCtx(t, 10*time.Second))
	done := make(chan error, 1)
	go func() {
		_, err := call(ctx, cs, "up__block", `{"id":"c1"}`)
		done <- err
	}()
	fx.waitStarted(t, 1, 5*time.Second)
	cancel()
	select {
	case id := <-fx.cancelled:
		if id != "c1" {
			t.Errorf("cancelled %q", id)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the upstream call was not cancelled")
	}
	<-done
	testutilEventuallyEmpty(t, e)
}

func testutilEventuallyEmpty(t *testing.T, e *env) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		e.pool.bridge.mu.Lock()
		n := len(e.pool.bridge.calls)
		e.pool.bridge.mu.Unlock()
		if n == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d bridged calls still held", n)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Progress of an upstream call reaches a 2026-07-28 caller as before
// bridging: the background call keeps the request's context values, so
// notifications still travel on the request's stream while it is open.
func TestBridgedCallKeepsProgress(t *testing.T) {
	t.Parallel()
	e, fx := bridgeEnv(t, 0)
	progress := &progressLog{}
	opts := &mcp.ClientOptions{ProgressNotificationHandler: progress.handler}
	for name, cs := range map[string]*mcp.ClientSession{"in-memory": e.caller(opts, sessionlessCaller), "http": e.httpCaller(opts, sessionlessCaller)} {
		t.Run(name, func(t *testing.T) {
			tok := "caller-token-" + name
			p := &mcp.CallToolParams{Name: "up__progress", Arguments: json.RawMessage(`{}`)}
			p.SetProgressToken(tok)
			res, err := cs.CallTool(testCtx(t, 10*time.Second), p)
			if err != nil || res.IsError {
				t.Fatalf("call: %v %s", err, resultText(res))
			}
			<-fx.progTok
			deadline := time.Now().Add(5 * time.Second)
			for len(progress.forToken(tok)) < 3 && time.Now().Before(deadline) {
				time.Sleep(10 * time.Millisecond)
			}
			if n := len(progress.forToken(tok)); n != 3 {
				t.Errorf("%d progress notifications with the caller's token, want 3", n)
			}
		})
	}
}

// Two replicas (two pools, each with its own router) on one store: a call
// started on A, asked through input_required, is answered by a retry on B.
// B stores the answer, A (the holder) hands it to the upstream and stores
// the result, and B's retry returns it. Then a call whose holder shuts
// down ends failed, as a retry on B reads it.
func TestBridgedCallAcrossReplicas(t *testing.T) {
	t.Parallel()
	store := bridgeStore(t)
	a := newEnv(t, bridgeOptions(store, "replica-a", 5*time.Second))
	b := newEnv(t, bridgeOptions(store, "replica-b", 5*time.Second))
	fx := newFixture("up")
	url := serveStreamable(t, fx.server).URL()
	for _, e := range []*env{a, b} {
		cfg := streamableConfig("up", url)
		cfg.ProtocolVersion = "2025-11-25"
		e.add(cfg)
	}
	noMRTR := &mcp.ClientOptions{
		MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: true},
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return nil, errors.New("not used")
		},
	}
	onA, onB := a.httpCaller(noMRTR, sessionlessCaller), b.httpCaller(noMRTR, sessionlessCaller)
	ctx := testCtx(t, 30*time.Second)

	res, err := onA.CallTool(ctx, &mcp.CallToolParams{Name: "up__elicit", Arguments: json.RawMessage(`{}`)})
	if err != nil || res.InputRequests["call.1"] == nil {
		t.Fatalf("first round on A: %v %s", err, asJSON(t, res))
	}
	state := res.RequestState
	var st bridgeState
	if _, err := a.pool.bridge.sealer.Open(bridgeStateLabel, strings.TrimPrefix(state, bridgeStatePrefix), &st); err != nil {
		t.Fatal(err)
	}
	stored, err := store.FindTaskByID(ctx, st.Task)
	if err != nil || !mcpwire.IsBridgedCall(stored) || stored.Lease.Owner != "replica-a" || mcpwire.OpenQuestion(stored) == nil || mcpwire.OpenQuestion(stored).Key != "call.1" {
		t.Fatalf("stored task: %v %s", err, asJSON(t, stored))
	}

	res, err = onB.CallTool(ctx, &mcp.CallToolParams{Name: "up__elicit", Arguments: json.RawMessage(`{}`), RequestState: state,
		InputResponses: mcp.InputResponseMap{"call.1": &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Cy"}}}})
	if err != nil || res.NeedsInput() || resultText(res) != `accept {"name":"Cy"}` {
		t.Fatalf("retry on B: %v %s", err, asJSON(t, res))
	}
	// The holder stores the end, then releases its lease in a second
	// write: B can answer between the two.
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		stored, err = store.FindTaskByID(ctx, st.Task)
		if err == nil && stored.Status == agentsmcp.TaskSucceeded && stored.Lease.Owner == "" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("stored task after the call: %v %s", err, asJSON(t, stored))
		}
	}

	// A second call held by A; A shuts down (its upstream request is
	// cancelled); B's retry reads the failure.
	res, err = onA.CallTool(ctx, &mcp.CallToolParams{Name: "up__elicit", Arguments: json.RawMessage(`{}`)})
	if err != nil || res.InputRequests["call.1"] == nil {
		t.Fatalf("second call on A: %v %s", err, asJSON(t, res))
	}
	state = res.RequestState
	closeCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := a.pool.Close(closeCtx); err != nil {
		t.Fatal(err)
	}
	res, err = onB.CallTool(ctx, &mcp.CallToolParams{Name: "up__elicit", Arguments: json.RawMessage(`{}`), RequestState: state,
		InputResponses: mcp.InputResponseMap{"call.1": &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "Di"}}}})
	// The failure is the router's rendering of the stored one: a tool
	// error naming why.
	if err != nil || !res.IsError || !strings.Contains(resultText(res), "the server holding it stopped") {
		t.Errorf("retry on B of a call whose holder stopped: %v %s", err, asJSON(t, res))
	}
}

// A bridged call cancelled in the store (tasks/cancel, on any replica)
// while its question is open: the holder stops waiting, the upstream's
// request fails, the task stays cancelled and a retry says so.
func TestBridgedCallCancelledInStore(t *testing.T) {
	t.Parallel()
	store := bridgeStore(t)
	e := newEnv(t, bridgeOptions(store, "replica-a", 5*time.Second))
	fx := newFixture("up")
	addPinned(t, e, "up", fx.server)
	cs := e.httpCaller(&mcp.ClientOptions{
		MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: true},
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return nil, errors.New("not used")
		},
	}, sessionlessCaller)
	ctx := testCtx(t, 20*time.Second)
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "up__elicit", Arguments: json.RawMessage(`{}`)})
	if err != nil || res.InputRequests["call.1"] == nil {
		t.Fatalf("first round: %v %s", err, asJSON(t, res))
	}
	var st bridgeState
	if _, err := e.pool.bridge.sealer.Open(bridgeStateLabel, strings.TrimPrefix(res.RequestState, bridgeStatePrefix), &st); err != nil {
		t.Fatal(err)
	}
	task, err := store.FindTaskByID(ctx, st.Task)
	if err != nil {
		t.Fatal(err)
	}
	task.Status, task.EndedAt, task.Error = agentsmcp.TaskCancelled, time.Now(), "cancelled by the user"
	task.Steps[0].Status = agentsmcp.StepCancelled
	if err := store.UpdateTask(ctx, task); err != nil {
		t.Fatal(err)
	}
	testutilEventuallyEmpty(t, e) // the holder let go of the call
	if got, _ := store.FindTaskByID(ctx, st.Task); got.Status != agentsmcp.TaskCancelled || got.Lease.Owner != "" {
		t.Errorf("after the holder let go: %s", asJSON(t, got))
	}
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "up__elicit", Arguments: json.RawMessage(`{}`), RequestState: res.RequestState})
	if err != nil || !res.IsError || !strings.Contains(resultText(res), "was cancelled") {
		t.Errorf("retry of a cancelled call: %v %s", err, asJSON(t, res))
	}
}
