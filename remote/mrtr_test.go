package remote

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/internal/mcpwire"
)

// The multi round-trip bridge (mrtr.go, ADR 0010 D1 and D2) against a real
// go-sdk upstream at 2026-07-28 (stateless streamable HTTP, which a go-sdk
// client reaches through server/discover) and real go-sdk callers of both
// revisions through the router.

// upstreamState0 is the requestState the fixture's first answer carries.
const upstreamState0 = "upstream-state-0"

// mrtrFixture is a 2026-07-28 upstream whose tools answer input_required.
type mrtrFixture struct {
	url string

	mu sync.Mutex
	// caps holds the clientCapabilities of each tools/call, as received.
	caps []map[string]any
	// states holds the requestState of each tools/call.
	states []string

	// hold, when above 1, makes the first round of "deploy" wait until
	// that many calls are in it (or 10 s pass), so that they overlap.
	hold   int32
	asking atomic.Int32
	all    chan struct{}
}

func startMRTRFixture(t *testing.T, hold int32) *mrtrFixture {
	t.Helper()
	fx := &mrtrFixture{hold: hold, all: make(chan struct{})}
	s := mcp.NewServer(&mcp.Implementation{Name: "mrtr-fixture", Version: "1"}, nil)
	s.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if r, ok := req.(*mcp.CallToolRequest); ok {
				var caps map[string]any
				if c, ok := r.Params.Meta[mcp.MetaKeyClientCapabilities]; ok {
					b, _ := json.Marshal(c)
					_ = json.Unmarshal(b, &caps)
				}
				fx.mu.Lock()
				fx.caps = append(fx.caps, caps)
				fx.states = append(fx.states, r.Params.RequestState)
				fx.mu.Unlock()
			}
			return next(ctx, method, req)
		}
	})
	text := func(s string) *mcp.CallToolResult {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
	}
	// deploy asks who approves; the retry deploys, saying the state it got.
	s.AddTool(&mcp.Tool{Name: "deploy", InputSchema: json.RawMessage(anySchema)},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			if len(req.Params.InputResponses) == 0 {
				if fx.asking.Add(1) == fx.hold {
					close(fx.all)
				}
				if fx.hold > 1 {
					select {
					case <-fx.all:
					case <-ctx.Done():
					case <-time.After(10 * time.Second):
					}
				}
				return &mcp.CallToolResult{
					InputRequests: mcp.InputRequestMap{"confirm": &mcp.ElicitParams{
						Message:         "Who approves?",
						RequestedSchema: json.RawMessage(`{"type":"object","properties":{"approver":{"type":"string"}},"required":["approver"]}`),
					}},
					RequestState: upstreamState0,
				}, nil
			}
			er, _ := req.Params.InputResponses["confirm"].(*mcp.ElicitResult)
			if er == nil || er.Action != "accept" {
				return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "not confirmed"}}}, nil
			}
			return text(fmt.Sprintf("deployed, approved by %v, state %s", er.Content["approver"], req.Params.RequestState)), nil
		})
	// roots asks for the client's roots; the retry lists their URIs.
	s.AddTool(&mcp.Tool{Name: "roots", InputSchema: json.RawMessage(anySchema)},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			lr, _ := req.Params.InputResponses["where"].(*mcp.ListRootsResult)
			if lr == nil {
				return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{"where": &mcp.ListRootsParams{}}, RequestState: "roots-state"}, nil
			}
			var uris []string
			for _, r := range lr.Roots {
				uris = append(uris, r.URI)
			}
			return text("roots: " + strings.Join(uris, " ")), nil
		})
	// sample asks the client's model; the retry says what it answered.
	s.AddTool(&mcp.Tool{Name: "sample", InputSchema: json.RawMessage(anySchema)},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			cm, _ := req.Params.InputResponses["llm"].(*mcp.CreateMessageWithToolsResult)
			if cm == nil {
				return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{"llm": &mcp.CreateMessageParams{
					MaxTokens: 20, Messages: []*mcp.SamplingMessage{{Role: "user", Content: &mcp.TextContent{Text: "2+2?"}}},
				}}, RequestState: "sample-state"}, nil
			}
			var said string
			if len(cm.Content) == 1 {
				if tc, ok := cm.Content[0].(*mcp.TextContent); ok {
					said = tc.Text
				}
			}
			return text("model " + cm.Model + " said " + said), nil
		})
	// again asks for a confirmation under a new key every round, forever.
	s.AddTool(&mcp.Tool{Name: "again", InputSchema: json.RawMessage(anySchema)},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			n := len(req.Params.RequestState)
			return &mcp.CallToolResult{
				InputRequests: mcp.InputRequestMap{fmt.Sprintf("q%d", n): &mcp.ElicitParams{Message: "Once more?", RequestedSchema: json.RawMessage(`{"type":"object","properties":{}}`)}},
				RequestState:  req.Params.RequestState + "x",
			}, nil
		})
	up := serveHTTP(t, func() http.Handler {
		return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{Stateless: true})
	})
	fx.url = up.URL()
	return fx
}

// seen returns the capabilities and states of the tools/call requests so far.
func (fx *mrtrFixture) seen() ([]map[string]any, []string) {
	fx.mu.Lock()
	defer fx.mu.Unlock()
	return slices.Clone(fx.caps), slices.Clone(fx.states)
}

// newMRTREnv is a router and pool with the fixture added as "dep".
func newMRTREnv(t *testing.T, hold int32) (*env, *mrtrFixture) {
	fx := startMRTRFixture(t, hold)
	e := newEnv(t, fastOptions())
	e.add(streamableConfig("dep", fx.url))
	if v := e.status("dep").ProtocolVersion; v != mcpwire.ProtocolSessionless {
		t.Fatalf("the pool reached the fixture at %q, want %s", v, mcpwire.ProtocolSessionless)
	}
	return e, fx
}

// caller2026 is a go-sdk client at 2026-07-28 that declares elicitation
// (and an extension, which the upstream must not see) and handles
// input_required itself, so that the test sees it.
func (e *env) caller2026() *mcp.ClientSession {
	caps := &mcp.ClientCapabilities{}
	caps.AddExtension("io.example/private", nil)
	return e.caller(&mcp.ClientOptions{
		Capabilities: caps,
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return nil, fmt.Errorf("not asked this way")
		},
		MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: true},
	}, mcpwire.ProtocolSessionless)
}

// TestMRTRPassThrough: a 2026-07-28 caller gets the upstream's
// input_required with the same keys and a sealed requestState, and its
// retry with the answers completes the call; the upstream gets its own
// state back, and the caller's capabilities as relayed. A request the
// caller did not declare is not passed through.
func TestMRTRPassThrough(t *testing.T) {
	e, fx := newMRTREnv(t, 0)
	cs := e.caller2026()
	ctx := testCtx(t, 20*time.Second)

	res, err := call(ctx, cs, "dep__deploy", `{}`)
	if err != nil {
		t.Fatal(err)
	}
	if !res.NeedsInput() || res.IsError {
		t.Fatalf("want input_required, got %s", asJSON(t, res))
	}
	if keys := slices.Sorted(maps.Keys(res.InputRequests)); !slices.Equal(keys, []string{"confirm"}) {
		t.Fatalf("input request keys %q, want [confirm]", keys)
	}
	if ep, _ := res.InputRequests["confirm"].(*mcp.ElicitParams); ep == nil || ep.Message != "Who approves?" {
		t.Fatalf("input request %s, want the upstream's elicitation", asJSON(t, res.InputRequests))
	}
	state := res.RequestState
	if state == "" || strings.Contains(state, upstreamState0) {
		t.Fatalf("requestState %q: want the upstream's state sealed, not shown as is", state)
	}

	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "dep__deploy", Arguments: map[string]any{},
		InputResponses: mcp.InputResponseMap{"confirm": &mcp.ElicitResult{Action: "accept", Content: map[string]any{"approver": "ada"}}},
		RequestState:   state})
	if err != nil {
		t.Fatal(err)
	}
	if res.IsError || res.NeedsInput() || resultText(res) != "deployed, approved by ada, state "+upstreamState0 {
		t.Fatalf("retry: %s, want the deployment with the upstream's own state", asJSON(t, res))
	}

	// The caller did not declare roots: what the upstream asks anyway is
	// not passed through.
	if msg := errorText(t, cs, "dep__roots", `{}`); !strings.Contains(msg, `roots/list "where" needs the roots capability, which the client did not declare`) {
		t.Fatalf("an undeclared request passed through: %q", msg)
	}

	caps, states := fx.seen()
	states = states[:2]
	if !slices.Equal(states, []string{"", upstreamState0}) {
		t.Fatalf("upstream got requestStates %q, want none then its own", states)
	}
	for i, c := range caps {
		if _, ok := c["elicitation"]; !ok || len(c) != 1 {
			t.Fatalf("call %d: upstream got clientCapabilities %v; want the caller's elicitation only (no extension, no sampling or roots of the pool)", i, c)
		}
	}
}

// TestMRTRPassThroughRefusals: the sealed requestState is refused with
// -32602 on another tool, for another principal, when changed, and once
// expired; the upstream never sees such a retry.
func TestMRTRPassThroughRefusals(t *testing.T) {
	e, fx := newMRTREnv(t, 0)
	u, _ := e.pool.get("dep")
	ada := &agentsmcp.Principal{ID: "key:ada"}
	ctx := testCtx(t, 20*time.Second)

	// In-process calls with the _meta of a 2026-07-28 request, so that the
	// principal can be chosen.
	call2026 := func(p *agentsmcp.Principal, tool, state string) (*mcp.CallToolResult, error) {
		params := &mcp.CallToolParamsRaw{Name: tool, Arguments: json.RawMessage(`{}`), RequestState: state}
		params.Meta = mcp.Meta{
			mcp.MetaKeyProtocolVersion:    mcpwire.ProtocolSessionless,
			mcp.MetaKeyClientCapabilities: map[string]any{"elicitation": map[string]any{}},
		}
		if state != "" {
			params.InputResponses = mcp.InputResponseMap{"confirm": &mcp.ElicitResult{Action: "accept", Content: map[string]any{"approver": "ada"}}}
		}
		return u.CallTool(agentsmcp.WithPrincipal(ctx, p), &mcp.CallToolRequest{Params: params})
	}
	res, err := call2026(ada, "dep__deploy", "")
	if err != nil || res.InputRequests == nil || res.RequestState == "" { // the router's server sets resultType
		t.Fatalf("first call: %v, %v; want input_required", res, err)
	}
	state := res.RequestState
	_, before := fx.seen()

	body, mac, _ := strings.Cut(state, ".")
	tampered := body[:len(body)-2] + map[bool]string{true: "A", false: "B"}[body[len(body)-2] != 'A'] + body[len(body)-1:] + "." + mac

	for _, tc := range []struct {
		name, tool, state string
		who               *agentsmcp.Principal
		want              string
	}{
		{"another principal", "dep__deploy", state, &agentsmcp.Principal{ID: "key:bob"}, "issued to another caller"},
		{"another tool", "dep__roots", state, ada, "issued for another tool"},
		{"tampered", "dep__deploy", tampered, ada, "failed verification"},
		{"not sealed here", "dep__deploy", upstreamState0, ada, "failed verification"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := call2026(tc.who, tc.tool, tc.state)
			if code, _ := errCode(err); code != jsonrpc.CodeInvalidParams || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, %v; want -32602 saying %q", res, err, tc.want)
			}
		})
	}
	t.Run("expired", func(t *testing.T) {
		e.pool.states.Now = func() time.Time { return time.Now().Add(DefaultStateTTL + time.Minute) }
		defer func() { e.pool.states.Now = nil }()
		res, err := call2026(ada, "dep__deploy", state)
		if code, _ := errCode(err); code != jsonrpc.CodeInvalidParams || !strings.Contains(err.Error(), "expired") {
			t.Fatalf("got %v, %v; want -32602 saying it expired", res, err)
		}
	})
	if _, after := fx.seen(); len(after) != len(before) {
		t.Fatalf("refused retries reached the upstream: states %q", after[len(before):])
	}

	// The owner's retry still works, with the state as issued.
	res, err = call2026(ada, "dep__deploy", state)
	if err != nil || res.IsError || !strings.Contains(resultText(res), "approved by ada, state "+upstreamState0) {
		t.Fatalf("the owner's retry: %v, %v", res, err)
	}
}

// TestMRTRSessionCallers: callers of 2025-11-25 are asked by the pool
// itself: roots/list goes to a caller that declared roots, and
// sampling/createMessage to one that declared sampling; a caller without
// the capability, and a call made inside agents-mcp, get an
// isError result naming what was asked; an upstream that never stops
// asking ends after 10 rounds.
func TestMRTRSessionCallers(t *testing.T) {
	e, fx := newMRTREnv(t, 0)
	ctx := testCtx(t, 30*time.Second)

	withRoots := mcp.NewClient(&mcp.Implementation{Name: "roots-caller", Version: "1"}, nil) // go-sdk declares roots by default
	withRoots.AddRoots(&mcp.Root{URI: "file:///work/project", Name: "project"})
	st, ct := mcp.NewInMemoryTransports()
	ss, err := e.router.Server().Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	cs, err := withRoots.Connect(ctx, ct, &mcp.ClientSessionOptions{ProtocolVersion: callerVersion})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if got := mustText(t, cs, "dep__roots", `{}`); got != "roots: file:///work/project" {
		t.Fatalf("roots through a 2025 caller: %q", got)
	}
	caps, _ := fx.seen()
	if c := caps[len(caps)-1]; c["roots"] == nil || c["elicitation"] != nil || c["sampling"] != nil {
		t.Fatalf("upstream got clientCapabilities %v, want the caller's roots only", c)
	}

	sampler := e.caller(&mcp.ClientOptions{CreateMessageHandler: func(_ context.Context, req *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
		return &mcp.CreateMessageResult{Model: "fake-model", Role: "assistant", Content: &mcp.TextContent{Text: "4"}}, nil
	}}, callerVersion)
	if got := mustText(t, sampler, "dep__sample", `{}`); got != "model fake-model said 4" {
		t.Fatalf("sampling through a 2025 caller: %q", got)
	}

	noRoots := e.caller(&mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{},
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{}}, nil
		}}, callerVersion)
	if msg := errorText(t, noRoots, "dep__roots", `{}`); !strings.Contains(msg, `roots/list "where" needs the roots capability`) {
		t.Fatalf("a caller without roots: %q", msg)
	}
	if msg := errorText(t, noRoots, "dep__sample", `{}`); !strings.Contains(msg, `sampling/createMessage "llm" needs the sampling capability`) {
		t.Fatalf("a caller without sampling: %q", msg)
	}
	if msg := errorText(t, noRoots, "dep__again", `{}`); !strings.Contains(msg, "after 10 rounds") {
		t.Fatalf("an upstream asking forever: %q", msg)
	}

	// In process, as an executor step: no client.
	res, err := e.router.CallTool(ctx, &mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{Name: "dep__deploy", Arguments: json.RawMessage(`{}`)}})
	if err != nil || !res.IsError || !strings.Contains(resultText(res), `elicitation/create "confirm": "Who approves?"`) || !strings.Contains(resultText(res), "no client to ask") {
		t.Fatalf("in-process call: %v, %q", err, resultText(res))
	}
}

// TestMRTRCallersOfBothRevisions: a 2025-11-25 caller and a 2026-07-28
// caller are in the same tool of the same upstream at once: the first is
// asked and gets the result in one call, the second gets input_required.
// With go-sdk's own client loop, the 2026-07-28 caller would have been sent
// an elicitation request it cannot receive.
func TestMRTRCallersOfBothRevisions(t *testing.T) {
	e, _ := newMRTREnv(t, 2)
	var asked atomic.Int32
	old := e.caller(&mcp.ClientOptions{ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		asked.Add(1)
		return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"approver": "old"}}, nil
	}}, callerVersion)
	cur := e.caller2026()
	ctx := testCtx(t, 30*time.Second)

	var oldRes, curRes *mcp.CallToolResult
	var oldErr, curErr error
	var wg sync.WaitGroup
	wg.Go(func() { oldRes, oldErr = call(ctx, old, "dep__deploy", `{}`) })
	wg.Go(func() { curRes, curErr = call(ctx, cur, "dep__deploy", `{}`) })
	wg.Wait()
	if oldErr != nil || oldRes.IsError || !strings.Contains(resultText(oldRes), "approved by old") || asked.Load() != 1 {
		t.Fatalf("2025 caller: %v, %q, asked %d times; want the result after one question", oldErr, resultText(oldRes), asked.Load())
	}
	if curErr != nil || !curRes.NeedsInput() || curRes.InputRequests["confirm"] == nil {
		t.Fatalf("2026 caller: %v, %v; want input_required", curErr, curRes)
	}
}
