package router_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/internal/mcpwire"
	"github.com/agents-mcp/agents-mcp/localtools"
	"github.com/agents-mcp/agents-mcp/router"
)

// scriptedProvider is a ToolProvider whose tools answer with what a test
// scripts, standing in for the remote pool (which returns EUNAVAILABLE and
// *jsonrpc.Error values). It records every request it is given.
type scriptedProvider struct {
	name  string
	tools []*mcp.Tool
	run   map[string]func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error)

	mu   sync.Mutex
	reqs []*mcp.CallToolRequest
}

func (p *scriptedProvider) Name() string                               { return p.name }
func (p *scriptedProvider) Tools(context.Context) ([]*mcp.Tool, error) { return p.tools, nil }

func (p *scriptedProvider) CallTool(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	p.mu.Lock()
	p.reqs = append(p.reqs, req)
	p.mu.Unlock()
	if f := p.run[req.Params.Name]; f != nil {
		return f(ctx, req)
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ran " + req.Params.Name + " " + string(req.Params.Arguments)}}}, nil
}

func (p *scriptedProvider) calls() []*mcp.CallToolRequest {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]*mcp.CallToolRequest(nil), p.reqs...)
}

type echoIn struct {
	Text string `json:"text"`
}

type echoOut struct {
	Echo string `json:"echo"`
}

// callRouter is a router with the local tool "echo" and the scripted
// upstream "up", and the records of its OnToolCall.
type callRouter struct {
	r  *router.Router
	up *scriptedProvider

	mu      sync.Mutex
	records []router.ToolCallRecord
}

func (c *callRouter) takeRecords() []router.ToolCallRecord {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := c.records
	c.records = nil
	return out
}

func newCallRouter(t *testing.T) *callRouter {
	t.Helper()
	c := &callRouter{}
	c.r = router.New(router.Options{OnToolCall: func(rec router.ToolCallRecord) {
		c.mu.Lock()
		c.records = append(c.records, rec)
		c.mu.Unlock()
	}})
	l := localtools.New()
	err := localtools.Add(l, &mcp.Tool{Name: "echo", Description: "Echo text back"},
		func(_ context.Context, _ *mcp.CallToolRequest, in echoIn) (*mcp.CallToolResult, *echoOut, error) {
			return nil, &echoOut{Echo: in.Text}, nil
		})
	if err != nil {
		t.Fatal(err)
	}
	c.up = &scriptedProvider{
		name: "up",
		tools: []*mcp.Tool{
			rawTool("up__person", personSchema),
			rawTool("up__any", `{"type":"object"}`),
			rawTool("up__down", `{"type":"object"}`),
			rawTool("up__rpc", `{"type":"object"}`),
			rawTool("up__slow", `{"type":"object"}`),
			rawTool("up__crash", `{"type":"object"}`),
			rawTool("up__toolerr", `{"type":"object"}`),
			rawTool("up__nil", `{"type":"object"}`),
		},
		run: map[string]func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error){
			"up__down": func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return nil, agentsmcp.Errorf(agentsmcp.EUNAVAILABLE, `upstream "up" is down (connection refused)`)
			},
			"up__rpc": func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "bad widget"}
			},
			"up__slow": func(ctx context.Context, _ *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				<-ctx.Done()
				return nil, fmt.Errorf("call to upstream %q: %w", "up", ctx.Err())
			},
			"up__crash": func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return nil, errors.New("upstream exploded: secret detail")
			},
			"up__toolerr": func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "no such widget"}}}, nil
			},
			"up__nil": func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return nil, nil
			},
		},
	}
	for _, p := range []agentsmcp.ToolProvider{l, c.up} {
		if err := c.r.AddProvider(context.Background(), p); err != nil {
			t.Fatalf("AddProvider(%s): %v", p.Name(), err)
		}
	}
	return c
}

func callReq(name, args string) *mcp.CallToolRequest {
	p := &mcp.CallToolParamsRaw{Name: name}
	if args != "" {
		p.Arguments = json.RawMessage(args)
	}
	return &mcp.CallToolRequest{Params: p}
}

// wantCode fails t unless err carries code and its message contains every
// one of parts.
func wantCode(t *testing.T, err error, code string, parts ...string) {
	t.Helper()
	var appErr *agentsmcp.Error
	if !errors.As(err, &appErr) || appErr.Code != code {
		t.Fatalf("err = %v, want an agentsmcp error with code %s", err, code)
	}
	for _, p := range parts {
		if !strings.Contains(appErr.Message, p) {
			t.Errorf("message %q lacks %q", appErr.Message, p)
		}
	}
}

func TestCallToolInProcessSuccess(t *testing.T) {
	c := newCallRouter(t)
	ctx := context.Background()
	var caller agentsmcp.ToolCaller = c.r

	res, err := caller.CallTool(ctx, callReq("echo", `{"text":"hi"}`))
	if err != nil || res.IsError {
		t.Fatalf("echo: res=%+v err=%v", res, err)
	}
	if got := string(res.StructuredContent.(json.RawMessage)); got != `{"echo":"hi"}` {
		t.Errorf("echo structured content = %s", got)
	}

	// The provider receives the request itself: its session and its
	// progress token are what the remote pool forwards with.
	req := callReq("up__person", `{"name":"Ada","age":36}`)
	req.Params.SetProgressToken("tok-1")
	res, err = caller.CallTool(ctx, req)
	if err != nil || res.IsError {
		t.Fatalf("up__person: res=%+v err=%v", res, err)
	}
	if got := textOf(res); got != `ran up__person {"name":"Ada","age":36}` {
		t.Errorf("text = %q", got)
	}
	calls := c.up.calls()
	if len(calls) != 1 || calls[0] != req {
		t.Fatalf("provider got %v, want exactly the request passed in", calls)
	}
	if tok := calls[0].Params.GetProgressToken(); tok != "tok-1" {
		t.Errorf("progress token = %v", tok)
	}

	// Nil arguments are {}: fine for a schema without requirements, and
	// the provider still gets the request as is.
	res, err = caller.CallTool(ctx, callReq("up__any", ""))
	if err != nil || res.IsError {
		t.Fatalf("up__any without arguments: res=%+v err=%v", res, err)
	}

	// A failure of the tool is a result, not an error.
	res, err = caller.CallTool(ctx, callReq("up__toolerr", `{}`))
	if err != nil || !res.IsError || textOf(res) != "no such widget" {
		t.Fatalf("up__toolerr: res=%+v err=%v, want the error result", res, err)
	}

	// A provider answering nothing gives an empty result.
	res, err = caller.CallTool(ctx, callReq("up__nil", `{}`))
	if err != nil || res == nil || res.IsError {
		t.Fatalf("up__nil: res=%+v err=%v, want an empty result", res, err)
	}
}

// An in-process call made with the values of a task-mode request (an
// executor step that runs for resume_task) is not a task-mode call: an
// upstream tool must not turn it into a task of its own.
func TestCallToolInProcessIsNeverATaskModeCall(t *testing.T) {
	c := newCallRouter(t)
	sawMode := true
	c.up.run["up__any"] = func(ctx context.Context, _ *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		sawMode = mcpwire.TaskModeFrom(ctx) != nil
		return &mcp.CallToolResult{}, nil
	}
	ctx := mcpwire.WithTaskMode(context.Background(), &mcpwire.TaskMode{})
	if _, err := c.r.CallTool(ctx, callReq("up__any", `{}`)); err != nil {
		t.Fatal(err)
	}
	if sawMode {
		t.Fatal("the provider got the task mode of the request whose values the in-process call carries")
	}
}

// TestCallToolInProcessGetsADecodedResult: an in-process call made with
// the values of a call whose answer may be written raw (an executor step of
// run_task) gets the provider's result itself; a provider that found the
// outer call's holder would hand it an empty placeholder (seen as empty
// step outputs of relayed upstream tools in the e2e agents test).
func TestCallToolInProcessGetsADecodedResult(t *testing.T) {
	c := newCallRouter(t)
	c.up.run["up__any"] = func(ctx context.Context, _ *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if h := mcpwire.RawToolResultFrom(ctx); h != nil {
			return h.Set(json.RawMessage(`{"content":[{"type":"text","text":"raw"}]}`)), nil
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "decoded"}}}, nil
	}
	outer := &mcpwire.RawToolResult{}
	ctx := mcpwire.WithRawToolResult(context.Background(), outer)
	res, err := c.r.CallTool(ctx, callReq("up__any", `{}`))
	if err != nil {
		t.Fatal(err)
	}
	if got := textOf(res); got != "decoded" {
		t.Fatalf("in-process result %q, want the provider's decoded result", got)
	}
	if raw, ok := outer.Take(res); ok {
		t.Fatalf("the outer call's holder took this call's answer: %s", raw)
	}
}

func TestCallToolInProcessRefusesInvalidArguments(t *testing.T) {
	c := newCallRouter(t)
	ctx := context.Background()
	cs := connect(t, c.r, nil)

	for _, tc := range []struct{ name, tool, args string }{
		{"wrong type", "up__person", `{"name":"Ada","age":"x"}`},
		{"nil arguments", "up__person", ``},
		{"local tool", "echo", `{"text":3}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := c.r.CallTool(ctx, callReq(tc.tool, tc.args))
			// The message is the summary a client gets.
			var args any = json.RawMessage(tc.args)
			if tc.args == "" {
				args = nil
			}
			mcpRes, mcpErr := cs.CallTool(ctx, &mcp.CallToolParams{Name: tc.tool, Arguments: args})
			if mcpErr != nil || !mcpRes.IsError {
				t.Fatalf("MCP path: res=%+v err=%v", mcpRes, mcpErr)
			}
			wantCode(t, err, agentsmcp.EINVALID, "invalid arguments for tool")
			if msg := agentsmcp.ErrorMessage(err); msg != textOf(mcpRes) {
				t.Errorf("in-process message %q, MCP error result %q", msg, textOf(mcpRes))
			}
		})
	}
	_, err := c.r.CallTool(ctx, callReq("up__any", `[1,`))
	wantCode(t, err, agentsmcp.EINVALID, "not valid JSON")

	if calls := c.up.calls(); len(calls) != 0 {
		t.Errorf("provider was called with invalid arguments %d times", len(calls))
	}
	for _, rec := range c.takeRecords() {
		if rec.Source != "" || !strings.HasPrefix(rec.Refused, "invalid arguments: ") {
			t.Errorf("a call refused for its arguments is recorded as %+v; want Refused set and no provider", rec)
		}
	}
}

func TestCallToolInProcessErrors(t *testing.T) {
	c := newCallRouter(t)
	ctx := context.Background()

	_, err := c.r.CallTool(ctx, callReq("nope", `{}`))
	wantCode(t, err, agentsmcp.ENOTFOUND, `"nope"`)
	_, err = c.r.CallTool(ctx, &mcp.CallToolRequest{})
	wantCode(t, err, agentsmcp.EINVALID)

	_, err = c.r.CallTool(ctx, callReq("up__down", `{}`))
	wantCode(t, err, agentsmcp.EUNAVAILABLE, `upstream "up" is down (connection refused)`)

	_, err = c.r.CallTool(ctx, callReq("up__rpc", `{}`))
	wantCode(t, err, agentsmcp.EINVALID, "up__rpc", "-32602", "bad widget")

	_, err = c.r.CallTool(ctx, callReq("up__crash", `{}`))
	wantCode(t, err, agentsmcp.EINTERNAL, "up__crash")
	if strings.Contains(agentsmcp.ErrorMessage(err), "secret") {
		t.Errorf("internal details leaked: %q", agentsmcp.ErrorMessage(err))
	}

	tctx, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
	defer cancel()
	_, err = c.r.CallTool(tctx, callReq("up__slow", `{}`))
	wantCode(t, err, agentsmcp.EUNAVAILABLE, "cancelled or timed out")

	cctx, cancel := context.WithCancel(ctx)
	cancel()
	_, err = c.r.CallTool(cctx, callReq("up__slow", `{}`))
	wantCode(t, err, agentsmcp.EUNAVAILABLE, "cancelled or timed out")
}

func TestCallToolInProcessIsRecordedLikeMCPCalls(t *testing.T) {
	c := newCallRouter(t)
	ctx := context.Background()
	cs := connect(t, c.r, nil)
	calls := []struct{ tool, args string }{
		{"echo", `{"text":"hi"}`},
		{"up__person", `{"age":-1}`}, // refused: not recorded
		{"up__down", `{}`},
		{"up__rpc", `{}`},
		{"up__toolerr", `{}`},
		{"up__crash", `{}`},
	}
	for _, call := range calls {
		_, _ = c.r.CallTool(ctx, callReq(call.tool, call.args))
	}
	inProcess := c.takeRecords()
	for _, call := range calls {
		_, _ = cs.CallTool(ctx, &mcp.CallToolParams{Name: call.tool, Arguments: json.RawMessage(call.args)})
	}
	viaMCP := c.takeRecords()

	want := []struct{ tool, provider, err string }{
		{"echo", "local", ""},
		{"up__down", "up", `upstream "up" is down (connection refused)`},
		{"up__rpc", "up", "internal error"},
		{"up__toolerr", "up", "no such widget"},
		{"up__crash", "up", "internal error"},
	}
	for name, recs := range map[string][]router.ToolCallRecord{"in-process": ran(inProcess), "MCP": ran(viaMCP)} {
		if len(recs) != len(want) {
			t.Fatalf("%s records = %+v, want %d", name, recs, len(want))
		}
		for i, w := range want {
			got := recs[i]
			if got.Tool != w.tool || got.Source != w.provider || got.Error != w.err || got.Duration <= 0 {
				t.Errorf("%s record %d = %+v, want %+v", name, i, got, w)
			}
		}
	}
}

func TestCallToolInProcessIsNotRefusedWhileDraining(t *testing.T) {
	c := newCallRouter(t)
	ctx := context.Background()
	cs := connect(t, c.r, nil)
	if n := c.r.Drain(ctx); n != 0 {
		t.Fatalf("Drain = %d", n)
	}
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "x"}}); err == nil {
		t.Fatal("a client's call was accepted while draining")
	}
	res, err := c.r.CallTool(ctx, callReq("echo", `{"text":"x"}`))
	if err != nil || res.IsError {
		t.Fatalf("in-process call while draining: res=%+v err=%v", res, err)
	}
}

// ran keeps the records of calls that reached their provider.
func ran(recs []router.ToolCallRecord) []router.ToolCallRecord {
	return slices.DeleteFunc(recs, func(r router.ToolCallRecord) bool { return r.Refused != "" })
}
