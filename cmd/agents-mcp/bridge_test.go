package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// mrtrUpstream is a real go-sdk MCP server (v1.8.0) over loopback
// streamable HTTP whose one tool asks for a confirmation the MRTR way: its
// first answer is input_required with an elicitation and a requestState,
// and only a retry carrying the answer and the state echoed does the work.
// Served stateless, it speaks 2026-07-28 (a go-sdk client negotiates it
// through server/discover). Served with sessions, a go-sdk client ends up
// at 2025-11-25, and go-sdk's server then fulfils the tool's input
// requests itself with an elicitation/create request to its client and
// reruns the handler within the one tools/call.
type mrtrUpstream struct {
	url string

	mu       sync.Mutex
	calls    int      // tools/call requests that reached the server
	versions []string // the protocol version each tools/call was made under
	rounds   []string // per handler run: "ask" or "done:<state>:<answer>"

	// holdAsks, when above 1, makes the asking round wait until that many
	// calls are asking at once (or 10 s pass), so that the input requests
	// of calls from different clients are in flight together.
	holdAsks int
	asking   int
	allAsk   chan struct{}
}

const mrtrState = "deploy-state-41"

func startMRTRUpstream(t *testing.T, stateless bool, holdAsks int) *mrtrUpstream {
	t.Helper()
	up := &mrtrUpstream{holdAsks: holdAsks, allAsk: make(chan struct{})}
	s := mcp.NewServer(&mcp.Implementation{Name: "deployer", Version: "1.0.0"}, nil)
	// Counts the tools/call requests on the wire: an upstream that elicited
	// through a server-to-client request instead (what go-sdk does for a
	// client older than 2026-07-28) reruns the handler inside one request.
	s.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method == "tools/call" {
				// Sent on every request after initialize, and by a
				// 2026-07-28 client on every request.
				v := ""
				if ex := req.GetExtra(); ex != nil && ex.Header != nil {
					v = ex.Header.Get("Mcp-Protocol-Version")
				}
				up.mu.Lock()
				up.calls++
				up.versions = append(up.versions, v)
				up.mu.Unlock()
			}
			return next(ctx, method, req)
		}
	})
	s.AddTool(&mcp.Tool{Name: "deploy_service", Description: "Deploy a service to production after a confirmation",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"service":{"type":"string"}},"required":["service"]}`)},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			if len(req.Params.InputResponses) == 0 {
				up.note("ask")
				up.waitAsks(ctx)
				return &mcp.CallToolResult{
					InputRequests: mcp.InputRequestMap{"confirm": &mcp.ElicitParams{
						Message:         "Deploy to production? Say who approves.",
						RequestedSchema: json.RawMessage(`{"type":"object","properties":{"approver":{"type":"string"}},"required":["approver"]}`),
					}},
					RequestState: mrtrState,
				}, nil
			}
			er, _ := req.Params.InputResponses["confirm"].(*mcp.ElicitResult)
			if er == nil || er.Action != "accept" {
				up.note("declined")
				return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "not confirmed"}}}, nil
			}
			approver, _ := er.Content["approver"].(string)
			up.note(fmt.Sprintf("done:%s:%s", req.Params.RequestState, approver))
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "deployed, approved by " + approver}}}, nil
		})
	srv := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{Stateless: stateless}))
	t.Cleanup(srv.Close)
	up.url = srv.URL
	return up
}

func (up *mrtrUpstream) note(s string) {
	up.mu.Lock()
	defer up.mu.Unlock()
	up.rounds = append(up.rounds, s)
}

func (up *mrtrUpstream) waitAsks(ctx context.Context) {
	up.mu.Lock()
	up.asking++
	if up.asking == up.holdAsks {
		close(up.allAsk)
	}
	up.mu.Unlock()
	if up.holdAsks <= 1 {
		return
	}
	select {
	case <-up.allAsk:
	case <-ctx.Done():
	case <-time.After(10 * time.Second):
	}
}

func (up *mrtrUpstream) seen() (int, []string, []string) {
	up.mu.Lock()
	defer up.mu.Unlock()
	return up.calls, append([]string(nil), up.versions...), append([]string(nil), up.rounds...)
}

// TestBridgeMRTRUpstreamToElicitingClient checks the bridging of ADR 0010, the
// 2025 client side: a client of 2025-11-25, which knows nothing of
// input_required, calls through `serve` a tool of a go-sdk upstream that
// answers input_required with an elicitation. agents-mcp must ask the
// client with an elicitation/create request and get its answer to the
// upstream; the client gets the tool's final result in one tools/call.
//
// With the upstream at 2026-07-28 this is the MRTR bridge: the pool's own
// loop (remote/mrtr.go) elicits from the calling client and retries with
// inputResponses and the requestState echoed (two tools/call requests
// reach the upstream). With the upstream at 2025-11-25
// the upstream elicits from the pool itself, and the same handler relays.
func TestBridgeMRTRUpstreamToElicitingClient(t *testing.T) {
	for _, tc := range []struct {
		name      string
		stateless bool
		version   string // the upstream's protocol version seen on each tools/call
		calls     int    // tools/call requests reaching the upstream
	}{
		{"upstream at 2026-07-28 answers input_required", true, "2026-07-28", 2},
		{"upstream at 2025-11-25 elicits itself", false, "2025-11-25", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			up := startMRTRUpstream(t, tc.stateless, 1)
			configFile := filepath.Join(t.TempDir(), "agents-mcp.yaml")
			cfg := fmt.Sprintf("upstreams:\n  - name: deployer\n    transport: streamable\n    url: %s\n", up.url)
			if err := os.WriteFile(configFile, []byte(cfg), 0o600); err != nil {
				t.Fatal(err)
			}
			base, _, _, logs := startServe(t, map[string]string{}, "--config", configFile)

			var mu sync.Mutex
			var asked []*mcp.ElicitParams
			c := mcp.NewClient(&mcp.Implementation{Name: "bridge-test-2025", Version: "1"}, &mcp.ClientOptions{
				ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
					mu.Lock()
					asked = append(asked, req.Params)
					mu.Unlock()
					return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"approver": "ada"}}, nil
				},
			})
			ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
			defer cancel()
			cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: base + "/mcp"}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			if v := cs.InitializeResult().ProtocolVersion; v != "2025-11-25" {
				t.Fatalf("negotiated %q, want 2025-11-25", v)
			}

			const tool = "deployer__deploy_service"
			waitFor(t, 20*time.Second, func() bool {
				res, err := cs.ListTools(ctx, nil)
				if err != nil {
					return false
				}
				for _, tl := range res.Tools {
					if tl.Name == tool {
						return true
					}
				}
				return false
			}, "the upstream tool is listed; log:\n"+logs.String())

			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: map[string]any{"service": "billing"}})
			calls, versions, rounds := up.seen()
			if err != nil {
				t.Fatalf("tools/call: %v (upstream rounds %q)\nlog:\n%s", err, rounds, logs.String())
			}
			b, _ := json.Marshal(res)
			if res.IsError || res.NeedsInput() || !strings.Contains(string(b), "deployed, approved by ada") {
				t.Fatalf("result %s, want the tool's final answer (upstream rounds %q)", b, rounds)
			}
			mu.Lock()
			defer mu.Unlock()
			if len(asked) != 1 || asked[0].Message != "Deploy to production? Say who approves." {
				t.Fatalf("the client was asked %d times: %+v; want once, with the upstream's question", len(asked), asked)
			}
			if calls != tc.calls || strings.Join(rounds, " ") != "ask done:"+mrtrState+":ada" {
				t.Fatalf("upstream saw %d tools/call requests, handler rounds %q; want %d and [ask done:%s:ada]\nlog:\n%s", calls, rounds, tc.calls, mrtrState, logs.String())
			}
			for _, v := range versions {
				if v != tc.version {
					t.Fatalf("upstream tools/call under protocol %q, want %s", versions, tc.version)
				}
			}
		})
	}
}

// TestBridgeMRTRConcurrentCallers has two 2025-11-25 clients call the
// same 2026-07-28 upstream tool at once, so that both input_required
// answers are in flight together: each client must be asked its own
// question and the upstream must get each answer back on its own call.
func TestBridgeMRTRConcurrentCallers(t *testing.T) {
	up := startMRTRUpstream(t, true, 2)
	configFile := filepath.Join(t.TempDir(), "agents-mcp.yaml")
	cfg := fmt.Sprintf("upstreams:\n  - name: deployer\n    transport: streamable\n    url: %s\n", up.url)
	if err := os.WriteFile(configFile, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	base, _, _, logs := startServe(t, map[string]string{}, "--config", configFile)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()

	const tool = "deployer__deploy_service"
	names := []string{"ada", "bob"}
	sessions := make([]*mcp.ClientSession, len(names))
	asked := make([]int, len(names))
	var mu sync.Mutex
	for i, name := range names {
		c := mcp.NewClient(&mcp.Implementation{Name: "bridge-test-" + name, Version: "1"}, &mcp.ClientOptions{
			ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
				mu.Lock()
				asked[i]++
				mu.Unlock()
				return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"approver": name}}, nil
			},
		})
		cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: base + "/mcp"}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
		if err != nil {
			t.Fatal(err)
		}
		defer cs.Close()
		sessions[i] = cs
	}
	waitFor(t, 20*time.Second, func() bool {
		res, err := sessions[0].ListTools(ctx, nil)
		return err == nil && slices.ContainsFunc(res.Tools, func(tl *mcp.Tool) bool { return tl.Name == tool })
	}, "the upstream tool is listed; log:\n"+logs.String())

	type outcome struct {
		text string
		err  error
	}
	out := make([]outcome, len(names))
	var wg sync.WaitGroup
	for i := range names {
		wg.Go(func() {
			res, err := sessions[i].CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: map[string]any{"service": "billing"}})
			if err == nil {
				b, _ := json.Marshal(res.Content)
				out[i].text = string(b)
			}
			out[i].err = err
		})
	}
	wg.Wait()
	_, _, rounds := up.seen()
	mu.Lock()
	defer mu.Unlock()
	for i, name := range names {
		if out[i].err != nil || !strings.Contains(out[i].text, "approved by "+name) {
			t.Errorf("client %s: %q, %v; want its own approval (asked %v, upstream rounds %q)", name, out[i].text, out[i].err, asked, rounds)
		}
		if asked[i] != 1 {
			t.Errorf("client %s was asked %d times, want once", name, asked[i])
		}
	}
}

// waitFor polls cond until it holds or d passes.
func waitFor(t *testing.T, d time.Duration, cond func() bool, what string) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting: %s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestBridgeMRTRPassThroughTo2026Client checks ADR 0010 D2 on two real
// `serve` replicas that share tasks.request_state_key: a raw 2026-07-28
// client (no session, so it cannot be sent an elicitation request) calls
// the tool of a 2026-07-28 upstream that answers input_required. Replica A
// passes the answer through, with the upstream's key and question and its
// requestState sealed; another principal's retry with that state is
// refused with -32602; the owner's retry with the answer, sent to replica
// B, reaches the upstream with the upstream's own state and completes.
func TestBridgeMRTRPassThroughTo2026Client(t *testing.T) {
	up := startMRTRUpstream(t, true, 1)
	configFile := filepath.Join(t.TempDir(), "agents-mcp.yaml")
	cfg := fmt.Sprintf(`upstreams:
  - name: deployer
    transport: streamable
    url: %s
auth:
  api_keys:
    - name: alice
      key: %s
      scopes: [mcp]
    - name: bob
      key: %s
      scopes: [mcp]
`, up.url, aliceKey, bobKey)
	if err := os.WriteFile(configFile, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"AGENTS_MCP_REQUEST_STATE_KEY": "q83vEjRWeJCrze8SNFZ4kKvN7xI0VniQq83vEjRWeJA="}
	var bases []string
	var logs []*syncBuffer
	for range 2 {
		base, stop, code, l := startServe(t, env, "--config", configFile)
		t.Cleanup(func() {
			// serve writes to its data directory until it has exited.
			stop()
			select {
			case <-code:
			case <-time.After(15 * time.Second):
				t.Error("serve did not exit")
			}
		})
		bases, logs = append(bases, base), append(logs, l)
	}
	allLogs := func() string { return "replica A:\n" + logs[0].String() + "\nreplica B:\n" + logs[1].String() }
	elicit := map[string]any{"elicitation": map[string]any{}}
	aliceA := &mcpTaskClient{t: t, url: bases[0] + "/mcp", key: aliceKey, caps: elicit}
	aliceB := &mcpTaskClient{t: t, url: bases[1] + "/mcp", key: aliceKey, caps: elicit}
	bobB := &mcpTaskClient{t: t, url: bases[1] + "/mcp", key: bobKey, caps: elicit}

	const tool = "deployer__deploy_service"
	var first rpcAnswer
	waitFor(t, 20*time.Second, func() bool {
		first = aliceA.call("tools/call", map[string]any{"name": tool, "arguments": map[string]any{"service": "billing"}})
		return first.Error == nil || !strings.Contains(first.Error.Message, "unknown tool")
	}, "the upstream tool is listed on replica A; log:\n"+allLogs())
	if first.Error != nil || first.Result["resultType"] != "input_required" {
		t.Fatalf("first call: %+v %v, want input_required\n%s", first.Error, first.Result, allLogs())
	}
	reqs, _ := first.Result["inputRequests"].(map[string]any)
	confirm, _ := reqs["confirm"].(map[string]any)
	params, _ := confirm["params"].(map[string]any)
	if len(reqs) != 1 || confirm["method"] != "elicitation/create" || params["message"] != "Deploy to production? Say who approves." {
		t.Fatalf("inputRequests %v, want the upstream's one elicitation under its key", reqs)
	}
	state, _ := first.Result["requestState"].(string)
	if state == "" || strings.Contains(state, mrtrState) {
		t.Fatalf("requestState %q, want the upstream's sealed", state)
	}

	retry := map[string]any{"name": tool, "arguments": map[string]any{"service": "billing"}, "requestState": state,
		"inputResponses": map[string]any{"confirm": map[string]any{"action": "accept", "content": map[string]any{"approver": "ada"}}}}
	if r := bobB.call("tools/call", retry); r.Error == nil || r.Error.Code != -32602 || !strings.Contains(r.Error.Message, "another caller") {
		t.Fatalf("bob's retry with alice's state: %+v %v, want -32602", r.Error, r.Result)
	}
	done := aliceB.call("tools/call", retry)
	calls, versions, rounds := up.seen()
	b, _ := json.Marshal(done.Result)
	if done.Error != nil || done.Result["resultType"] != "complete" || done.Result["isError"] == true || !strings.Contains(string(b), "deployed, approved by ada") {
		t.Fatalf("alice's retry on B: %+v %s (upstream rounds %q)\n%s", done.Error, b, rounds, allLogs())
	}
	if calls != 2 || strings.Join(rounds, " ") != "ask done:"+mrtrState+":ada" || slices.ContainsFunc(versions, func(v string) bool { return v != "2026-07-28" }) {
		t.Fatalf("upstream saw %d calls under %q, rounds %q; want 2 under 2026-07-28, [ask done:%s:ada]", calls, versions, rounds, mrtrState)
	}
}
