package router_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/localtools"
	"github.com/agents-mcp/agents-mcp/memory/embed"
	"github.com/agents-mcp/agents-mcp/memory/mcptools"
	"github.com/agents-mcp/agents-mcp/memory/recall"
	"github.com/agents-mcp/agents-mcp/memory/sqlite"
	"github.com/agents-mcp/agents-mcp/memory/vectors"
	"github.com/agents-mcp/agents-mcp/remote"
	"github.com/agents-mcp/agents-mcp/router"
	"github.com/agents-mcp/agents-mcp/router/internal/routertest"
)

// The huge-number attack: one number whose exponent math/big
// refuses (beyond 10^6) crashed the process through the validator
// (santhosh-tekuri/jsonschema v6.0.3 dereferences the nil big.Rat) on a
// go-sdk goroutine without recover.
const hugeInsight = `{"text":"x","confidence":1e9999999}`

// crashFixture is a router assembled as serve assembles it, with the parts
// the attack goes through: the real store_insight (the memory tools on
// SQLite), an upstream "up" (a go-sdk server over streamable HTTP, joined
// through the remote pool) whose tool "rate" bounds a number, so that its
// calls take the fast paths, and "trap", a provider whose tool panics, a
// stand-in for any bug under a handler. It is served over HTTP to the key
// "alice", and its log is kept.
type crashFixture struct {
	r    *router.Router
	h    *router.HTTPHandler
	base string // the server's URL
	logs *lockedBuffer
}

// rateSchema bounds a number as store_insight's confidence does.
const rateSchema = `{"type":"object","properties":{"confidence":{"type":"number","minimum":0,"maximum":1}},"required":["confidence"]}`

// trapProvider's tool panics; it reports its calls quiet, so that the fast
// paths take them as they take a relayed upstream's.
type trapProvider struct{}

func (trapProvider) Name() string { return "trap" }
func (trapProvider) Tools(context.Context) ([]*mcp.Tool, error) {
	return []*mcp.Tool{rawTool("trap__boom", `{"type":"object"}`)}, nil
}
func (trapProvider) CallTool(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	panic("a bug: the tool dereferenced nil")
}
func (trapProvider) QuietCall(string) bool { return true }

func newCrashFixture(t *testing.T) *crashFixture {
	t.Helper()
	ctx := t.Context()
	f := &crashFixture{logs: &lockedBuffer{}}
	f.r = router.New(router.Options{Version: "test", Logger: slog.New(slog.NewJSONHandler(f.logs, nil))})

	db, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "m.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	memory := &mcptools.MemoryTools{
		Recall:          &recall.Searcher{Index: vectors.NewFlat(embed.HashDimensions), Embedder: embed.Hash{}, Learnings: db, Insights: db, Patterns: db},
		ToolPerformance: db,
	}
	local := localtools.New()
	if err := memory.Register(local); err != nil {
		t.Fatal(err)
	}
	if err := f.r.AddProvider(ctx, local); err != nil {
		t.Fatal(err)
	}
	if err := f.r.AddProvider(ctx, trapProvider{}); err != nil {
		t.Fatal(err)
	}
	f.r.AddTaskBackend(&ownedTasks{hub: router.NewTaskHub()}) // as serve has: its middleware joins the chain

	up := mcp.NewServer(&mcp.Implementation{Name: "up", Version: "1"}, nil)
	up.AddTool(rawTool("rate", rateSchema), func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "rated"}}}, nil
	})
	upSrv := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return up }, nil))
	t.Cleanup(upSrv.Close)
	pool := remote.NewPool(remote.Options{Registry: f.r})
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = pool.Close(ctx)
	})
	if err := pool.AddFromConfig(ctx, agentsmcp.UpstreamConfig{Name: "up", Transport: remote.TransportStreamable, URL: upSrv.URL, Timeout: 5 * time.Second}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for st, _ := pool.Status("up"); st.State != remote.StateReady || st.Tools != 1; st, _ = pool.Status("up") {
		if time.Now().After(deadline) {
			t.Fatal("upstream up never became ready")
		}
		time.Sleep(10 * time.Millisecond)
	}

	alice := &agentsmcp.Principal{ID: "key:alice"}
	verify := func(_ context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
		if token != "alice" {
			return nil, auth.ErrInvalidToken
		}
		return &auth.TokenInfo{UserID: alice.ID, Expiration: time.Now().Add(time.Hour), Extra: map[string]any{agentsmcp.TokenInfoPrincipal: alice}}, nil
	}
	f.h = f.r.HTTPHandler(router.HTTPOptions{Authenticate: auth.RequireBearerToken(verify, nil)})
	srv := httptest.NewServer(f.h)
	t.Cleanup(func() {
		f.h.Close()
		f.r.CloseSessions(context.Background())
		srv.CloseClientConnections()
		srv.Close()
	})
	f.base = srv.URL
	return f
}

// crashTransport is a way a client reaches the router, and whether its
// calls of a quiet tool take a fast path.
type crashTransport struct {
	name    string
	connect func(t *testing.T, f *crashFixture, c *mcp.Client) *mcp.ClientSession
	// sampling: the client declares sampling, so that go-sdk, not the
	// fast path, serves its calls.
	sampling bool
	fast     bool
}

func crashTransports() []crashTransport {
	hc := &http.Client{Transport: routertest.Bearer{Token: "alice", Base: http.DefaultTransport}}
	over := func(tr func(f *crashFixture) mcp.Transport, version string) func(*testing.T, *crashFixture, *mcp.Client) *mcp.ClientSession {
		return func(t *testing.T, f *crashFixture, c *mcp.Client) *mcp.ClientSession {
			t.Helper()
			var opts *mcp.ClientSessionOptions
			if version != "" {
				opts = &mcp.ClientSessionOptions{ProtocolVersion: version}
			}
			cs, err := c.Connect(t.Context(), tr(f), opts)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { cs.Close() })
			return cs
		}
	}
	streamable := func(f *crashFixture) mcp.Transport {
		return &mcp.StreamableClientTransport{Endpoint: f.base + "/mcp", HTTPClient: hc}
	}
	sse := func(f *crashFixture) mcp.Transport {
		return &mcp.SSEClientTransport{Endpoint: f.base + "/sse", HTTPClient: hc}
	}
	stdio := func(t *testing.T, f *crashFixture, c *mcp.Client) *mcp.ClientSession {
		t.Helper()
		st, ct := mcp.NewInMemoryTransports()
		ss, err := f.r.Server().Connect(t.Context(), &router.StdioTransport{Inner: st}, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ss.Close() })
		cs, err := c.Connect(t.Context(), ct, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cs.Close() })
		return cs
	}
	return []crashTransport{
		{name: "streamable 2025 fast path", connect: over(streamable, "2025-11-25"), fast: true},
		{name: "streamable 2025 go-sdk path", connect: over(streamable, "2025-11-25"), sampling: true},
		{name: "legacy SSE fast path", connect: over(sse, ""), fast: true},
		{name: "legacy SSE go-sdk path", connect: over(sse, ""), sampling: true},
		{name: "stdio", connect: stdio},
	}
}

// client returns a go-sdk client that can also call tools/validate, and
// that declares sampling when asked to.
func crashClient(t *testing.T, sampling bool) *mcp.Client {
	t.Helper()
	var opts *mcp.ClientOptions
	if sampling {
		opts = &mcp.ClientOptions{CreateMessageHandler: func(context.Context, *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			return nil, errors.New("no model here")
		}}
	}
	c := mcp.NewClient(&mcp.Implementation{Name: "crash-test", Version: "1"}, opts)
	if err := mcp.AddSendingCustomMethod[*validateParams, *validateResult](c, router.MethodValidate); err != nil {
		t.Fatal(err)
	}
	return c
}

// wantRPCError fails unless err is a JSON-RPC error of code whose message
// contains want.
func wantRPCError(t *testing.T, what string, err error, code int64, want string) {
	t.Helper()
	var werr *jsonrpc.Error
	if !errors.As(err, &werr) || werr.Code != code || !strings.Contains(werr.Message, want) {
		t.Errorf("%s: err = %v, want JSON-RPC %d with %q", what, err, code, want)
	}
}

// stillServes fails unless cs's server still answers a call, on the
// go-sdk path (store_insight) and on the fast one (up__rate).
func stillServes(t *testing.T, cs *mcp.ClientSession) {
	t.Helper()
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: mcptools.StoreInsightName, Arguments: json.RawMessage(`{"text":"still here","confidence":0.5}`)})
	if err != nil || res.IsError {
		t.Fatalf("store_insight after the attack: %v %+v", err, res)
	}
	res, err = cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "up__rate", Arguments: json.RawMessage(`{"confidence":1e-300}`)})
	if err != nil || res.IsError {
		t.Fatalf("up__rate after the attack: %v %+v", err, res)
	}
}

// TestHugeNumberIsRefusedOnEveryPath: the huge number in a
// tools/call of store_insight (go-sdk's path) or of an upstream tool (the
// fast paths, when the client can take them) and in tools/validate is
// refused with -32602 naming it, on every transport, and the server goes
// on serving. Without the bound, the first call ends the test process.
func TestHugeNumberIsRefusedOnEveryPath(t *testing.T) {
	f := newCrashFixture(t)
	for _, tr := range crashTransports() {
		t.Run(tr.name, func(t *testing.T) {
			cs := tr.connect(t, f, crashClient(t, tr.sampling))
			if err := cs.Ping(t.Context(), nil); err != nil {
				t.Fatal(err) // once answered, notifications/initialized was handled (see fastFixture.open)
			}
			const want = "the number 1e9999999 at /confidence is out of range"

			_, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: mcptools.StoreInsightName, Arguments: json.RawMessage(hugeInsight)})
			wantRPCError(t, "store_insight", err, jsonrpc.CodeInvalidParams, want)

			before := f.h.FastPathCalls()
			_, err = cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "up__rate", Arguments: json.RawMessage(`{"confidence":1e9999999}`)})
			wantRPCError(t, "up__rate", err, jsonrpc.CodeInvalidParams, want)
			if fast := f.h.FastPathCalls() > before; fast != tr.fast {
				t.Errorf("the fast path took the call: %v, want %v", fast, tr.fast)
			}

			_, err = mcp.CallCustomMethod[*validateParams, *validateResult](t.Context(), cs, router.MethodValidate,
				&validateParams{Name: mcptools.StoreInsightName, Arguments: json.RawMessage(hugeInsight)})
			wantRPCError(t, "tools/validate", err, jsonrpc.CodeInvalidParams, want)

			stillServes(t, cs)
		})
	}
}

// TestHugeNumberIsRefusedOnTheStatelessPath: on MCP 2026-07-28 (go-sdk's
// stateless handler, which a go-sdk client cannot even send this number
// to: it decodes the params with float64 numbers to set Mcp-Name), a raw
// client's tools/call and tools/validate get -32602 naming the number,
// and the next call is served.
func TestHugeNumberIsRefusedOnTheStatelessPath(t *testing.T) {
	f := newCrashFixture(t)
	send := func(method, name, params string) routertest.RPCReply {
		t.Helper()
		headers := map[string]string{"Authorization": "Bearer alice", "Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": method, "Mcp-Name": name}
		if method != "tools/call" {
			delete(headers, "Mcp-Name")
		}
		resp, data := routertest.Post(t, f.base+"/mcp", []byte(`{"jsonrpc":"2.0","id":3,"method":"`+method+`","params":{`+sessionlessMeta+`,`+params+`}}`), headers)
		return routertest.DecodeReply(t, resp, data)
	}
	const want = "the number 1e9999999 at /confidence is out of range"
	for _, tool := range []string{mcptools.StoreInsightName, "up__rate"} {
		reply := send("tools/call", tool, `"name":"`+tool+`","arguments":`+hugeInsight)
		if reply.Error == nil || reply.Error.Code != jsonrpc.CodeInvalidParams || !strings.Contains(reply.Error.Message, want) {
			t.Errorf("tools/call %s: %+v, want -32602 naming the number", tool, reply.Error)
		}
	}
	reply := send(router.MethodValidate, "", `"name":"store_insight","arguments":`+hugeInsight)
	if reply.Error == nil || reply.Error.Code != jsonrpc.CodeInvalidParams || !strings.Contains(reply.Error.Message, want) {
		t.Errorf("tools/validate: %+v, want -32602 naming the number", reply.Error)
	}
	if reply := send("tools/call", "store_insight", `"name":"store_insight","arguments":{"text":"still here"}`); reply.Error != nil {
		t.Errorf("the next call: %+v", reply.Error)
	}
}

// TestHugeNumberIsRefusedByTheRESTBridge: the same number on POST
// /mcp-json is a 400 invalid_params naming it, and the next call is
// served.
func TestHugeNumberIsRefusedByTheRESTBridge(t *testing.T) {
	f := newCrashFixture(t)
	bridge := func(body string) (int, router.BridgeError) {
		t.Helper()
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, f.base+router.RESTBridgePath, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer alice")
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var out router.BridgeError
		_ = json.Unmarshal([]byte(readAll(t, resp)), &out)
		return resp.StatusCode, out
	}
	for _, tool := range []string{mcptools.StoreInsightName, "up__rate"} {
		status, out := bridge(`{"tool":"` + tool + `","params":` + hugeInsight + `}`)
		if status != http.StatusBadRequest || out.Error.Code != router.BridgeInvalidParams ||
			!strings.Contains(out.Error.Message, "1e9999999 at /confidence is out of range") {
			t.Errorf("%s: %d %+v, want 400 %s naming the number", tool, status, out, router.BridgeInvalidParams)
		}
	}
	if status, out := bridge(`{"tool":"store_insight","params":{"text":"still here"}}`); status != http.StatusOK {
		t.Errorf("the next call: %d %+v", status, out)
	}
}

// TestHugeNumberIsRefusedInProcess: the executor's calls and its checks of
// a plan's steps (CallTool, ValidateToolArguments) get EINVALID.
func TestHugeNumberIsRefusedInProcess(t *testing.T) {
	f := newCrashFixture(t)
	_, err := f.r.CallTool(t.Context(), &mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{Name: mcptools.StoreInsightName, Arguments: json.RawMessage(hugeInsight)}})
	if agentsmcp.ErrorCode(err) != agentsmcp.EINVALID || !strings.Contains(err.Error(), "out of range") {
		t.Errorf("CallTool: %v, want EINVALID", err)
	}
	_, err = f.r.ValidateToolArguments(t.Context(), mcptools.StoreInsightName, []byte(hugeInsight))
	if agentsmcp.ErrorCode(err) != agentsmcp.EINVALID || !strings.Contains(err.Error(), "out of range") {
		t.Errorf("ValidateToolArguments: %v, want EINVALID", err)
	}
}

// TestNumbersRealClientsSendPass: the bounds refuse nothing a client
// writes from a float64 or an integer, nor what arbitrary-precision
// encoders write (1e700, which the arguments keep as written): each is
// validated (and refused by the schema's maximum when above 1, not by the
// bounds).
func TestNumbersRealClientsSendPass(t *testing.T) {
	f := newCrashFixture(t)
	for _, n := range []string{"0", "1", "0.5", "1e-300", "5e-324", "1.7976931348623157e308", "1e700", "1e-1000",
		"18446744073709551615", "0." + strings.Repeat("3", 4000)} {
		res, err := f.r.ValidateToolArguments(t.Context(), "up__rate", []byte(`{"confidence":`+n+`}`))
		if err != nil {
			t.Errorf("%.30s: %v", n, err)
			continue
		}
		tooLarge := n == "1.7976931348623157e308" || n == "1e700" || n == "18446744073709551615"
		if res.Valid == tooLarge || (tooLarge && res.Errors[0].Keyword != "maximum") {
			t.Errorf("%.30s: %+v", n, res)
		}
	}
}

// TestSchemaWithHugeNumberIsUnusable: a tool whose schema holds such a
// number (an upstream's) is treated as one whose schema does not compile:
// tools/validate says so, calls go to the provider unvalidated, but still
// without such a number in their arguments.
func TestSchemaWithHugeNumberIsUnusable(t *testing.T) {
	p := &staticProvider{name: "up", tools: []*mcp.Tool{rawTool("up__odd", `{"type":"object","properties":{"n":{"multipleOf":1e-999999}}}`)}}
	r := newRouterWith(t, p)
	_, err := r.ValidateToolArguments(t.Context(), "up__odd", []byte(`{"n":1}`))
	if agentsmcp.ErrorCode(err) != agentsmcp.EINVALID || !strings.Contains(err.Error(), "cannot be compiled") {
		t.Errorf("tools/validate: %v", err)
	}
	if _, err := r.CallTool(t.Context(), &mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{Name: "up__odd", Arguments: json.RawMessage(`{"n":1}`)}}); err != nil {
		t.Errorf("a call: %v", err)
	}
	if _, err := r.CallTool(t.Context(), &mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{Name: "up__odd", Arguments: json.RawMessage(`{"n":1e9999999}`)}}); agentsmcp.ErrorCode(err) != agentsmcp.EINVALID {
		t.Errorf("a call with a huge number: %v, want EINVALID", err)
	}
	if got := fmt.Sprint(p.calls); !strings.Contains(got, `{"n":1}`) || strings.Contains(got, "1e9999999") {
		t.Errorf("the provider got %s", got)
	}
}
