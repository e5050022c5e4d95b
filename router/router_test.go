package router_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/localtools"
	"github.com/agents-mcp/agents-mcp/router"
)

// staticProvider is a real ToolProvider whose tool set a test can change;
// it stands in for an upstream server until the remote pool exists.
type staticProvider struct {
	name string

	mu       sync.Mutex
	tools    []*mcp.Tool
	calls    []string
	onChange func()
}

func (p *staticProvider) Name() string { return p.name }

func (p *staticProvider) Tools(context.Context) ([]*mcp.Tool, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.tools), nil
}

func (p *staticProvider) CallTool(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	p.mu.Lock()
	p.calls = append(p.calls, req.Params.Name+" "+string(req.Params.Arguments))
	p.mu.Unlock()
	if req.Params.Name == p.name+"__fail" {
		return nil, errors.New("upstream exploded: secret detail")
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: p.name + " ran " + req.Params.Name}}}, nil
}

func (p *staticProvider) OnToolsChanged(f func()) {
	p.mu.Lock()
	p.onChange = f
	p.mu.Unlock()
}

func (p *staticProvider) setTools(tools ...*mcp.Tool) {
	p.mu.Lock()
	p.tools = tools
	f := p.onChange
	p.mu.Unlock()
	if f != nil {
		f()
	}
}

func rawTool(name, schema string) *mcp.Tool {
	return &mcp.Tool{Name: name, Description: "tool " + name, InputSchema: json.RawMessage(schema)}
}

const personSchema = `{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","title":"Person",` +
	`"properties":{"name":{"type":"string"},"age":{"type":"integer","minimum":0},"color":{"enum":["red","green"]},` +
	`"address":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}},` +
	`"required":["name","age"],"oneOf":[{"required":["name"]}]}`

type validateParams = router.ValidateParams
type validateResult = router.ValidateResult

// connect serves r over in-memory transports and returns a connected go-sdk
// client session that can also call tools/validate.
func connect(t *testing.T, r *router.Router, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	ctx := context.Background()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := r.Server().Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	c := mcp.NewClient(&mcp.Implementation{Name: "router-test", Version: "1"}, opts)
	if err := mcp.AddSendingCustomMethod[*validateParams, *validateResult](c, router.MethodValidate); err != nil {
		t.Fatal(err)
	}
	cs, err := c.Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func validate(ctx context.Context, cs *mcp.ClientSession, name, args string) (*validateResult, error) {
	p := &validateParams{Name: name}
	if args != "" {
		p.Arguments = json.RawMessage(args)
	}
	return mcp.CallCustomMethod[*validateParams, *validateResult](ctx, cs, router.MethodValidate, p)
}

func newRouterWith(t *testing.T, providers ...agentsmcp.ToolProvider) *router.Router {
	t.Helper()
	r := router.New(router.Options{Version: "test"})
	for _, p := range providers {
		if err := r.AddProvider(context.Background(), p); err != nil {
			t.Fatalf("AddProvider(%s): %v", p.Name(), err)
		}
	}
	return r
}

func TestToolsListPassesSchemasThroughByteForByte(t *testing.T) {
	p := &staticProvider{name: "up", tools: []*mcp.Tool{rawTool("up__person", personSchema)}}
	r := newRouterWith(t, p)
	cs := connect(t, r, nil)
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Tools) != 1 {
		t.Fatalf("got %d tools, want 1", len(res.Tools))
	}
	got, _ := json.Marshal(res.Tools[0].InputSchema)
	var want, have any
	_ = json.Unmarshal([]byte(personSchema), &want)
	_ = json.Unmarshal(got, &have)
	wantJSON, _ := json.Marshal(want)
	haveJSON, _ := json.Marshal(have)
	if string(wantJSON) != string(haveJSON) {
		t.Errorf("schema changed in transit:\n got %s\nwant %s", haveJSON, wantJSON)
	}
}

func TestValidateReportsPointerErrors(t *testing.T) {
	p := &staticProvider{name: "up", tools: []*mcp.Tool{rawTool("up__person", personSchema)}}
	r := newRouterWith(t, p)
	cs := connect(t, r, nil)
	ctx := context.Background()

	tests := []struct {
		name        string
		args        string
		valid       bool
		wantIssues  []string // "path keyword"
		wantMissing []string
	}{
		{"valid", `{"name":"Ada","age":36,"color":"red"}`, true, nil, nil},
		{"no arguments", ``, false, []string{"/name required", "/age required"}, []string{"name", "age"}},
		{"wrong type", `{"name":"Ada","age":"old"}`, false, []string{"/age type"}, nil},
		{"bad enum", `{"name":"Ada","age":1,"color":"blue"}`, false, []string{"/color enum"}, nil},
		{"below minimum", `{"name":"Ada","age":-1}`, false, []string{"/age minimum"}, nil},
		{"nested required", `{"name":"Ada","age":1,"address":{}}`, false, []string{"/address/city required"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := validate(ctx, cs, "up__person", tt.args)
			if err != nil {
				t.Fatal(err)
			}
			if res.Valid != tt.valid || res.Tool != "up__person" {
				t.Fatalf("valid=%v tool=%q, want %v: %+v", res.Valid, res.Tool, tt.valid, res)
			}
			var got []string
			for _, is := range res.Errors {
				if is.Message == "" {
					t.Errorf("issue %+v has no message", is)
				}
				got = append(got, is.Path+" "+is.Keyword)
			}
			for _, w := range tt.wantIssues {
				if !slices.Contains(got, w) {
					t.Errorf("issues %q lack %q", got, w)
				}
			}
			if tt.valid && len(got) > 0 {
				t.Errorf("valid arguments got issues %q", got)
			}
			if !slices.Equal(res.Missing, tt.wantMissing) && !(len(res.Missing) == 0 && len(tt.wantMissing) == 0) {
				t.Errorf("missing = %q, want %q", res.Missing, tt.wantMissing)
			}
		})
	}
}

func TestValidateErrors(t *testing.T) {
	p := &staticProvider{name: "up", tools: []*mcp.Tool{rawTool("up__person", personSchema)}}
	r := newRouterWith(t, p)
	cs := connect(t, r, nil)
	ctx := context.Background()
	for _, tc := range []struct{ name, tool, args string }{
		{"unknown tool", "nope", `{}`},
		{"missing name", "", `{}`},
		{"arguments not an object", "up__person", `[1,2]`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := validate(ctx, cs, tc.tool, tc.args)
			var werr *jsonrpc.Error
			if !errors.As(err, &werr) || werr.Code != jsonrpc.CodeInvalidParams {
				t.Fatalf("err = %v, want JSON-RPC %d", err, jsonrpc.CodeInvalidParams)
			}
		})
	}
}

func TestCallToolValidatesBeforeDispatch(t *testing.T) {
	p := &staticProvider{name: "up", tools: []*mcp.Tool{rawTool("up__person", personSchema), rawTool("up__fail", `{"type":"object"}`)}}
	r := newRouterWith(t, p)
	cs := connect(t, r, nil)
	ctx := context.Background()

	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "up__person", Arguments: map[string]any{"name": "Ada", "age": "x"}})
	if err != nil {
		t.Fatal(err)
	}
	if !res.IsError || !strings.Contains(textOf(res), "/age") {
		t.Fatalf("invalid call: isError=%v text=%q, want an error naming /age", res.IsError, textOf(res))
	}
	if len(p.calls) != 0 {
		t.Fatalf("provider was called with invalid arguments: %q", p.calls)
	}

	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "up__person", Arguments: map[string]any{"name": "Ada", "age": 3}})
	if err != nil || res.IsError {
		t.Fatalf("valid call: err=%v result=%+v", err, res)
	}
	if got := textOf(res); got != "up ran up__person" {
		t.Errorf("text = %q", got)
	}

	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "up__fail", Arguments: map[string]any{}})
	if err != nil {
		t.Fatal(err)
	}
	if !res.IsError || strings.Contains(textOf(res), "secret detail") {
		t.Errorf("failing tool: isError=%v text=%q; want isError without internal details", res.IsError, textOf(res))
	}

	_, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "missing_tool", Arguments: map[string]any{}})
	var werr *jsonrpc.Error
	if !errors.As(err, &werr) || werr.Code != jsonrpc.CodeInvalidParams {
		t.Errorf("unknown tool: err = %v, want %d", err, jsonrpc.CodeInvalidParams)
	}
}

func TestCollisionsAreReportedAndFirstProviderWins(t *testing.T) {
	a := &staticProvider{name: "a", tools: []*mcp.Tool{rawTool("shared", `{"type":"object"}`), rawTool("a_only", `{"type":"object"}`)}}
	b := &staticProvider{name: "b", tools: []*mcp.Tool{rawTool("shared", `{"type":"object"}`), rawTool("bad name!", `{"type":"object"}`), rawTool("no_object", `{"type":"string"}`)}}
	r := newRouterWith(t, a)
	err := r.AddProvider(context.Background(), b)
	if agentsmcp.ErrorCode(err) != agentsmcp.ECONFLICT {
		t.Fatalf("AddProvider(b) = %v, want a conflict", err)
	}
	if src, _ := r.ToolSource("shared"); src != "a" {
		t.Errorf("shared served by %q, want a", src)
	}
	probs := r.Problems()["b"]
	if len(probs) != 3 {
		t.Fatalf("problems of b = %q, want 3 (collision, bad name, non-object schema)", probs)
	}
	names := []string{}
	for _, tool := range r.Tools() {
		names = append(names, tool.Name)
	}
	if !slices.Equal(names, []string{"a_only", "shared"}) {
		t.Errorf("tools = %q", names)
	}
	if err := r.AddProvider(context.Background(), &staticProvider{name: "a"}); agentsmcp.ErrorCode(err) != agentsmcp.ECONFLICT {
		t.Errorf("duplicate provider name: err = %v", err)
	}
}

func TestRefreshInvalidatesCompiledSchemaAndNotifiesClients(t *testing.T) {
	p := &staticProvider{name: "up", tools: []*mcp.Tool{rawTool("up__t", `{"type":"object","properties":{"n":{"type":"integer"}}}`)}}
	r := newRouterWith(t, p)
	changed := make(chan struct{}, 10)
	cs := connect(t, r, &mcp.ClientOptions{ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
		changed <- struct{}{}
	}})
	ctx := context.Background()
	res, err := validate(ctx, cs, "up__t", `{"n":"five"}`)
	if err != nil || res.Valid {
		t.Fatalf("before change: %+v, %v; want invalid", res, err)
	}

	// The same name now takes a string: the old compiled schema must go.
	p.setTools(rawTool("up__t", `{"type":"object","properties":{"n":{"type":"string"}}}`), rawTool("up__new", `{"type":"object"}`))
	select {
	case <-changed:
	case <-time.After(5 * time.Second):
		t.Fatal("no notifications/tools/list_changed after the provider changed")
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		res, err = validate(ctx, cs, "up__t", `{"n":"five"}`)
		if err == nil && res.Valid {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after change: %+v, %v; want valid under the new schema", res, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	list, err := cs.ListTools(ctx, nil)
	if err != nil || len(list.Tools) != 2 {
		t.Fatalf("tools after change: %v, %v", list, err)
	}

	p.setTools() // everything removed
	deadline = time.Now().Add(5 * time.Second)
	for len(r.Tools()) != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("tools not removed: %v", r.Tools())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if _, err := validate(ctx, cs, "up__t", `{}`); err == nil {
		t.Error("validate of a removed tool succeeded")
	}
}

func TestToolsListPaginates(t *testing.T) {
	var tools []*mcp.Tool
	for i := range 25 {
		tools = append(tools, rawTool("t"+strings.Repeat("x", i), `{"type":"object"}`))
	}
	r := router.New(router.Options{PageSize: 10})
	if err := r.AddProvider(context.Background(), &staticProvider{name: "p", tools: tools}); err != nil {
		t.Fatal(err)
	}
	cs := connect(t, r, nil)
	var pages, total int
	cursor := ""
	for {
		res, err := cs.ListTools(context.Background(), &mcp.ListToolsParams{Cursor: cursor})
		if err != nil {
			t.Fatal(err)
		}
		pages++
		total += len(res.Tools)
		if res.NextCursor == "" {
			break
		}
		cursor = res.NextCursor
	}
	if pages != 3 || total != 25 {
		t.Errorf("pages=%d total=%d, want 3 pages with 25 tools", pages, total)
	}
}

func TestDrainWaitsForInFlightAndRefusesNew(t *testing.T) {
	release := make(chan struct{})
	started := make(chan struct{})
	local := localtools.New()
	err := localtools.Add(local, &mcp.Tool{Name: "slow"}, func(ctx context.Context, _ *mcp.CallToolRequest, _ any) (*mcp.CallToolResult, any, error) {
		close(started)
		<-release
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "done"}}}, nil, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	r := newRouterWith(t, local)
	cs := connect(t, r, nil)
	ctx := context.Background()

	callDone := make(chan *mcp.CallToolResult, 1)
	go func() {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "slow"})
		if err != nil {
			t.Errorf("in-flight call failed: %v", err)
		}
		callDone <- res
	}()
	<-started
	drained := make(chan int, 1)
	go func() { drained <- r.Drain(ctx) }()
	deadline := time.Now().Add(5 * time.Second)
	for !r.Draining() {
		if time.Now().After(deadline) {
			t.Fatal("router never started draining")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if _, err := cs.ListTools(ctx, nil); err == nil {
		t.Error("a new request was accepted while draining")
	}
	select {
	case <-drained:
		t.Fatal("Drain returned while a call was in flight")
	case <-time.After(50 * time.Millisecond):
	}
	close(release)
	if left := <-drained; left != 0 {
		t.Errorf("Drain left %d requests", left)
	}
	if res := <-callDone; res == nil || textOf(res) != "done" {
		t.Errorf("in-flight call result = %+v", res)
	}
}

func TestDrainGivesUpAtDeadline(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	started := make(chan struct{})
	local := localtools.New()
	_ = localtools.Add(local, &mcp.Tool{Name: "stuck"}, func(ctx context.Context, _ *mcp.CallToolRequest, _ any) (*mcp.CallToolResult, any, error) {
		close(started)
		<-release
		return nil, nil, nil
	})
	r := newRouterWith(t, local)
	cs := connect(t, r, nil)
	go func() { _, _ = cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "stuck"}) }()
	<-started
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if left := r.Drain(ctx); left != 1 {
		t.Errorf("Drain = %d, want 1 request left at the deadline", left)
	}
}

// TestCloseSessionsIsBoundedByAPingInFlight: a go-sdk session's Close waits
// for its outgoing calls, so a keepalive ping to a client that no longer
// answers would hold shutdown for half the keepalive interval. CloseSessions
// must still close the other sessions and return at its deadline.
func TestCloseSessionsIsBoundedByAPingInFlight(t *testing.T) {
	r := newRouterWith(t)
	ctx := context.Background()

	// A client that stops answering pings, as one whose process froze.
	pingSeen := make(chan struct{}, 1)
	release := make(chan struct{})
	silentClient := mcp.NewClient(&mcp.Implementation{Name: "silent", Version: "1"}, nil)
	silentClient.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method == "ping" {
				pingSeen <- struct{}{}
				<-release
			}
			return next(ctx, method, req)
		}
	})
	st, ct := mcp.NewInMemoryTransports()
	silent, err := r.Server().Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	silentSession, err := silentClient.Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer silentSession.Close()
	defer close(release) // before the Close above, which waits for the handler
	pingCtx, cancelPing := context.WithTimeout(ctx, 30*time.Second)
	defer cancelPing()
	pinged := make(chan error, 1)
	go func() { pinged <- silent.Ping(pingCtx, nil) }()
	select {
	case <-pingSeen:
	case <-time.After(5 * time.Second):
		t.Fatal("the ping did not reach the client")
	}

	// A well-behaved client, whose session must end.
	cs := connect(t, r, nil)
	ended := make(chan error, 1)
	go func() { ended <- cs.Wait() }()

	closeCtx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	open := r.CloseSessions(closeCtx)
	if took := time.Since(start); took > 5*time.Second {
		t.Fatalf("CloseSessions took %v; want it bounded by its 200ms deadline", took)
	}
	if open != 1 {
		t.Errorf("CloseSessions = %d sessions still open, want 1 (the silent one)", open)
	}
	select {
	case <-ended:
	case <-time.After(5 * time.Second):
		t.Fatal("the well-behaved session did not end")
	}
	cancelPing()
	if err := <-pinged; err == nil {
		t.Error("the unanswered ping succeeded")
	}
}

func textOf(res *mcp.CallToolResult) string {
	var sb strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			sb.WriteString(tc.Text)
		}
	}
	return sb.String()
}

func TestOnToolCallSeesEveryCallAndWhyItWasRefused(t *testing.T) {
	ctx := context.Background()
	var mu sync.Mutex
	var got []router.ToolCallRecord
	r := router.New(router.Options{OnToolCall: func(c router.ToolCallRecord) {
		mu.Lock()
		got = append(got, c)
		mu.Unlock()
	}})
	p := &staticProvider{name: "up", tools: []*mcp.Tool{rawTool("up__person", personSchema), rawTool("up__fail", `{"type":"object"}`)}}
	if err := r.AddProvider(ctx, p); err != nil {
		t.Fatal(err)
	}
	cs := connect(t, r, nil)
	for _, c := range []struct{ name, args string }{
		{"up__person", `{"name":"Ada","age":36}`},
		{"up__person", `{"age":-1}`}, // invalid: refused before the provider
		{"up__fail", `{}`},
	} {
		if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: c.name, Arguments: json.RawMessage(c.args)}); err != nil {
			t.Fatal(err)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 3 || got[1].Refused == "" || got[1].Source != "" {
		t.Fatalf("records = %+v, want the two calls that reached the provider and the refused one between them", got)
	}
	got = ran(got)
	if got[0].Tool != "up__person" || got[0].Source != "up" || got[0].Error != "" || got[0].Duration <= 0 {
		t.Errorf("success record = %+v", got[0])
	}
	if got[1].Tool != "up__fail" || got[1].Error != "internal error" {
		t.Errorf("failure record = %+v, want the generic error text (never the provider's internals)", got[1])
	}
}

type rawJSONIn struct {
	Data json.RawMessage `json:"data"`
}

type rawJSONOut struct {
	Echo json.RawMessage `json:"echo"`
}

// A json.RawMessage field is any JSON value, not the byte array its Go type
// would suggest: clients send objects there and validate results by the
// output schema.
func TestLocalToolRawJSONFieldsAcceptAnyValue(t *testing.T) {
	local := localtools.New()
	if err := localtools.Add(local, &mcp.Tool{Name: "raw"}, func(_ context.Context, _ *mcp.CallToolRequest, in rawJSONIn) (*mcp.CallToolResult, rawJSONOut, error) {
		return nil, rawJSONOut{Echo: in.Data}, nil
	}); err != nil {
		t.Fatal(err)
	}
	r := router.New(router.Options{})
	if err := r.AddProvider(context.Background(), local); err != nil {
		t.Fatal(err)
	}
	tool := r.Tools()[0]
	for name, schema := range map[string]any{"input": tool.InputSchema, "output": tool.OutputSchema} {
		b, _ := json.Marshal(schema)
		// A byte array has items of 0..255 (any JSON value is spelled
		// with an "array" branch, but no items).
		if strings.Contains(string(b), `"items"`) || strings.Contains(string(b), "255") {
			t.Errorf("%s schema %s describes a json.RawMessage as a byte array", name, b)
		}
	}
	res, err := r.CallTool(context.Background(), &mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{Name: "raw", Arguments: json.RawMessage(`{"data":{"a":[1,"x"]}}`)}})
	if err != nil || res.IsError {
		t.Fatalf("an object for a json.RawMessage field: %v %+v", err, res)
	}
	if got, _ := json.Marshal(res.StructuredContent); string(got) != `{"echo":{"a":[1,"x"]}}` {
		t.Errorf("structured content %s", got)
	}
}
