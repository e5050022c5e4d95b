package remote

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/internal/testutil"
	"github.com/agents-mcp/agents-mcp/router"
)

// The tests in this package use no mocks: upstreams are real go-sdk servers
// (streamable HTTP and legacy SSE on httptest listeners, and this test
// binary re-executed as a stdio server), the registry is a real router, and
// callers are go-sdk clients connected to the router's server.

// stdioServerEnv makes this test binary run as an MCP stdio server (see
// TestMain and runStdioServer in stdio_test.go).
const stdioServerEnv = "REMOTE_TEST_STDIO_SERVER"

func TestMain(m *testing.M) {
	switch os.Getenv(stdioServerEnv) {
	case "1":
		os.Exit(runStdioServer())
	case "tasks":
		os.Exit(runTaskStdioServer())
	}
	os.Exit(m.Run())
}

// callerVersion is the protocol version test callers pin: the newest one
// with server-to-client requests (sampling, elicitation) and logging/setLevel,
// which is what agent clients speak today.
const callerVersion = "2025-11-25"

// testCtx is a context that ends with the test (and after at most d).
func testCtx(t *testing.T, d time.Duration) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// ---------------------------------------------------------------------------
// Upstream fixture: a real go-sdk MCP server with tools for every behaviour
// the pool has to relay.

// Schemas that exercise what a lossy client would drop or rewrite.
const (
	personInputSchema = `{
		"$schema": "https://json-schema.org/draft/2020-12/schema",
		"title": "Person input",
		"type": "object",
		"$defs": {
			"address": {
				"type": "object",
				"title": "Address",
				"properties": {
					"city": {"type": "string", "minLength": 1},
					"geo": {"$ref": "#/$defs/geo"}
				},
				"required": ["city"]
			},
			"geo": {
				"type": "object",
				"properties": {"lat": {"type": "number"}, "lon": {"type": "number"}},
				"required": ["lat", "lon"]
			}
		},
		"properties": {
			"name": {"type": "string", "description": "full name"},
			"age": {"type": "integer", "minimum": 0},
			"home": {"$ref": "#/$defs/address"},
			"contact": {
				"oneOf": [
					{"type": "object", "title": "Email", "properties": {"email": {"type": "string"}}, "required": ["email"]},
					{"type": "object", "title": "Phone", "properties": {"phone": {"type": "string"}}, "required": ["phone"]}
				]
			}
		},
		"required": ["name", "age"],
		"additionalProperties": false
	}`
	personOutputSchema = `{
		"$schema": "https://json-schema.org/draft/2020-12/schema",
		"title": "Person card",
		"type": "object",
		"properties": {"greeting": {"type": "string"}, "adult": {"type": "boolean"}},
		"required": ["greeting", "adult"]
	}`
	echoSchema = `{"type":"object","properties":{"text":{"type":"string"},"n":{"type":"integer"},"nested":{"type":"object"}},"required":["text"]}`
	anySchema  = `{"type":"object"}`
)

// fixture is one upstream MCP server plus what its tool handlers observed.
type fixture struct {
	server *mcp.Server

	started   chan string // "block" and "slow" calls that began (with their "id" argument)
	cancelled chan string // such calls whose context ended before release
	release   chan struct{}
	progTok   chan any // progress tokens seen by the "progress" tool

	inBlock    atomic.Int32 // "block" calls running now
	maxInBlock atomic.Int32 // the most "block" calls running at once
}

func newFixture(name string) *fixture {
	fx := &fixture{
		started:   make(chan string, 100),
		cancelled: make(chan string, 100),
		release:   make(chan struct{}),
		progTok:   make(chan any, 100),
	}
	s := mcp.NewServer(&mcp.Implementation{Name: "fixture-" + name, Version: "1.2.3"}, &mcp.ServerOptions{
		Capabilities: &mcp.ServerCapabilities{
			Logging:   &mcp.LoggingCapabilities{},
			Tools:     &mcp.ToolCapabilities{ListChanged: true},
			Resources: &mcp.ResourceCapabilities{ListChanged: true},
			Prompts:   &mcp.PromptCapabilities{ListChanged: true},
		},
	})
	fx.server = s

	text := func(s string) *mcp.CallToolResult {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
	}
	argID := func(req *mcp.CallToolRequest) string {
		var a struct {
			ID string `json:"id"`
		}
		_ = json.Unmarshal(req.Params.Arguments, &a)
		return a.ID
	}

	s.AddTool(&mcp.Tool{Name: "echo", Description: "Returns its arguments as text", InputSchema: json.RawMessage(echoSchema)},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return text(string(req.Params.Arguments)), nil
		})
	s.AddTool(&mcp.Tool{
		Name: "person", Title: "Person card", Description: "Builds a person card",
		InputSchema: json.RawMessage(personInputSchema), OutputSchema: json.RawMessage(personOutputSchema),
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, Title: "Person"},
	}, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var in struct {
			Name string `json:"name"`
			Age  int    `json:"age"`
		}
		if err := json.Unmarshal(req.Params.Arguments, &in); err != nil {
			return nil, err
		}
		out := map[string]any{"greeting": "Hello, " + in.Name, "adult": in.Age >= 18}
		b, _ := json.Marshal(out)
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(b)}}, StructuredContent: out}, nil
	})
	s.AddTool(&mcp.Tool{Name: "fail", InputSchema: json.RawMessage(anySchema)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "the tool failed on purpose"}}}, nil
		})
	s.AddTool(&mcp.Tool{Name: "rpcerr", InputSchema: json.RawMessage(anySchema)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return nil, &jsonrpc.Error{Code: -32042, Message: "upstream refuses", Data: json.RawMessage(`{"why":"test"}`)}
		})
	s.AddTool(&mcp.Tool{Name: "progress", InputSchema: json.RawMessage(anySchema)},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			tok := req.Params.GetProgressToken()
			fx.progTok <- tok
			if tok == nil {
				return text("no progress token"), nil
			}
			for i := 1; i <= 3; i++ {
				if err := req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{
					ProgressToken: tok, Progress: float64(i), Total: 3, Message: fmt.Sprintf("step %d", i),
				}); err != nil {
					return nil, err
				}
			}
			return text("progressed"), nil
		})
	s.AddTool(&mcp.Tool{Name: "block", Description: "Blocks until released or cancelled", InputSchema: json.RawMessage(anySchema)},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			n := fx.inBlock.Add(1)
			defer fx.inBlock.Add(-1)
			for {
				m := fx.maxInBlock.Load()
				if n <= m || fx.maxInBlock.CompareAndSwap(m, n) {
					break
				}
			}
			id := argID(req)
			fx.started <- id
			select {
			case <-ctx.Done():
				fx.cancelled <- id
				return nil, ctx.Err()
			case <-fx.release:
				return text("released " + id), nil
			}
		})
	s.AddTool(&mcp.Tool{Name: "sample", InputSchema: json.RawMessage(anySchema)},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			res, err := req.Session.CreateMessage(ctx, &mcp.CreateMessageParams{
				MaxTokens: 50,
				Messages:  []*mcp.SamplingMessage{{Role: "user", Content: &mcp.TextContent{Text: "what is 2+2?"}}},
			})
			if err != nil {
				return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "sampling failed: " + err.Error()}}}, nil
			}
			t, _ := res.Content.(*mcp.TextContent)
			if t == nil {
				return text("sampled non-text from " + res.Model), nil
			}
			return text("model " + res.Model + " said " + t.Text), nil
		})
	s.AddTool(&mcp.Tool{Name: "elicit", InputSchema: json.RawMessage(anySchema)},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			res, err := req.Session.Elicit(ctx, &mcp.ElicitParams{
				Message:         "What is your name?",
				RequestedSchema: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}`),
			})
			if err != nil {
				return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "elicitation failed: " + err.Error()}}}, nil
			}
			b, _ := json.Marshal(res.Content)
			return text(res.Action + " " + string(b)), nil
		})
	s.AddTool(&mcp.Tool{Name: "log", InputSchema: json.RawMessage(anySchema)},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			if err := req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: "warning", Logger: "fx", Data: "hello from upstream " + argID(req)}); err != nil {
				return nil, err
			}
			return text("logged"), nil
		})

	s.AddResource(&mcp.Resource{URI: "test://a", Name: "a", Title: "Resource A", MIMEType: "text/plain"},
		func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, MIMEType: "text/plain", Text: "content of A"}}}, nil
		})
	s.AddResourceTemplate(&mcp.ResourceTemplate{URITemplate: "test://items/{id}", Name: "item", MIMEType: "text/plain"},
		func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, MIMEType: "text/plain", Text: "item at " + req.Params.URI}}}, nil
		})
	s.AddPrompt(&mcp.Prompt{Name: "p", Description: "Greets", Arguments: []*mcp.PromptArgument{{Name: "who", Required: true}}},
		func(_ context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{
				Description: "greeting for " + req.Params.Arguments["who"],
				Messages:    []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: "Say hello to " + req.Params.Arguments["who"]}}},
			}, nil
		})
	return fx
}

// releaseAll lets every blocked "block" call return.
func (fx *fixture) releaseAll() {
	select {
	case <-fx.release:
	default:
		close(fx.release)
	}
}

// waitStarted waits for n "block" calls to begin upstream and returns their ids.
func (fx *fixture) waitStarted(t *testing.T, n int, timeout time.Duration) []string {
	t.Helper()
	var ids []string
	deadline := time.After(timeout)
	for len(ids) < n {
		select {
		case id := <-fx.started:
			ids = append(ids, id)
		case <-deadline:
			t.Fatalf("only %d of %d blocking calls started upstream within %s", len(ids), n, timeout)
		}
	}
	return ids
}

// ---------------------------------------------------------------------------
// HTTP upstreams that can be stopped and started again on the same address,
// and whose handler can be swapped (to make the upstream forget sessions).

type httpUpstream struct {
	t       *testing.T
	addr    string
	handler atomic.Pointer[http.Handler]
	newH    func() http.Handler // builds a fresh handler (fresh sessions)

	mu  sync.Mutex
	srv *http.Server
}

// serveStreamable serves s over streamable HTTP; the endpoint is URL().
func serveStreamable(t *testing.T, s *mcp.Server) *httpUpstream {
	return serveHTTP(t, func() http.Handler {
		return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil)
	})
}

// serveSSE serves s over legacy HTTP+SSE; the endpoint is URL().
func serveSSE(t *testing.T, s *mcp.Server) *httpUpstream {
	return serveHTTP(t, func() http.Handler {
		return mcp.NewSSEHandler(func(*http.Request) *mcp.Server { return s }, nil)
	})
}

func serveHTTP(t *testing.T, newH func() http.Handler) *httpUpstream {
	t.Helper()
	u := &httpUpstream{t: t, newH: newH, addr: "127.0.0.1:0"}
	h := newH()
	u.handler.Store(&h)
	u.start()
	t.Cleanup(u.stop)
	return u
}

func (u *httpUpstream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	(*u.handler.Load()).ServeHTTP(w, r)
}

// URL is the MCP endpoint.
func (u *httpUpstream) URL() string { return "http://" + u.addr + "/mcp" }

// start serves on the upstream's address (a fresh one the first time).
func (u *httpUpstream) start() {
	u.t.Helper()
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.srv != nil {
		return
	}
	var l net.Listener
	var err error
	for range 100 { // the port may take a moment to be free again
		if l, err = net.Listen("tcp", u.addr); err == nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err != nil {
		u.t.Fatalf("listen on %s: %v", u.addr, err)
	}
	u.addr = l.Addr().String()
	srv := &http.Server{Handler: u}
	u.srv = srv
	go func() { _ = srv.Serve(l) }()
}

// stop closes the listener and every connection at once, as a crashed
// upstream would; it does not wait for handlers to return.
func (u *httpUpstream) stop() {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.srv == nil {
		return
	}
	_ = u.srv.Close()
	u.srv = nil
}

// forgetSessions swaps in a new handler for the same server: sessions
// established before are unknown to it (HTTP 404), as after an upstream
// restart.
func (u *httpUpstream) forgetSessions() {
	h := u.newH()
	u.handler.Store(&h)
}

// ---------------------------------------------------------------------------
// The registry (a real router), the pool and callers.

// env is one router with a pool publishing to it.
type env struct {
	t      *testing.T
	router *router.Router
	pool   *Pool
	logs   *syncBuffer
}

// fastOptions are pool options with short intervals so that failure
// handling is observable within a test.
func fastOptions() Options {
	return Options{
		HealthInterval:   250 * time.Millisecond,
		ListChangedDelay: 20 * time.Millisecond,
		BreakerFailures:  3,
		BreakerCooldown:  30 * time.Second,
		MinBackoff:       50 * time.Millisecond,
	}
}

func newEnv(t *testing.T, opts Options) *env {
	t.Helper()
	logs := &syncBuffer{}
	r := router.New(router.Options{Version: "test"})
	opts.Registry = r
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	p := NewPool(opts)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		defer cancel()
		if err := p.Close(ctx); err != nil {
			t.Errorf("pool close: %v", err)
		}
	})
	return &env{t: t, router: r, pool: p, logs: logs}
}

// streamableConfig is an upstream config with test-sized limits.
func streamableConfig(name, url string) agentsmcp.UpstreamConfig {
	return agentsmcp.UpstreamConfig{Name: name, Transport: TransportStreamable, URL: url, Timeout: 5 * time.Second, MaxBackoff: 300 * time.Millisecond}
}

// add adds an upstream and waits until it is ready.
func (e *env) add(cfg agentsmcp.UpstreamConfig) {
	e.t.Helper()
	ctx := testCtx(e.t, 10*time.Second)
	if err := e.pool.AddFromConfig(ctx, cfg); err != nil {
		e.t.Fatalf("add %s: %v", cfg.Name, err)
	}
	e.waitState(cfg.Name, StateReady, 10*time.Second)
}

func (e *env) status(name string) Status {
	e.t.Helper()
	st, ok := e.pool.Status(name)
	if !ok {
		e.t.Fatalf("no upstream %q", name)
	}
	return st
}

func (e *env) waitState(name string, want State, timeout time.Duration) Status {
	e.t.Helper()
	var st Status
	testutil.Eventually(e.t, timeout, fmt.Sprintf("upstream %s is %s", name, want), func() bool {
		st = e.status(name)
		return st.State == want
	})
	return st
}

// routerToolNames lists the router's tools with the given prefix.
func (e *env) routerToolNames(prefix string) []string {
	var out []string
	for _, t := range e.router.Tools() {
		if strings.HasPrefix(t.Name, prefix) {
			out = append(out, t.Name)
		}
	}
	return out
}

// caller connects a go-sdk client to the router's server over in-memory
// transports, at the given protocol version ("" negotiates).
func (e *env) caller(opts *mcp.ClientOptions, version string) *mcp.ClientSession {
	e.t.Helper()
	ctx := context.Background()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := e.router.Server().Connect(ctx, st, nil)
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { _ = ss.Close() })
	c := mcp.NewClient(&mcp.Implementation{Name: "test-caller", Version: "1"}, opts)
	cs, err := c.Connect(ctx, ct, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { _ = cs.Close() })
	return cs
}

// directClient connects a go-sdk client straight to an upstream endpoint.
func directClient(t *testing.T, transport mcp.Transport) *mcp.ClientSession {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "direct", Version: "1"}, nil)
	cs, err := c.Connect(testCtx(t, 10*time.Second), transport, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

// call calls a tool through a caller session with JSON arguments.
func call(ctx context.Context, cs *mcp.ClientSession, name, args string) (*mcp.CallToolResult, error) {
	p := &mcp.CallToolParams{Name: name}
	if args != "" {
		p.Arguments = json.RawMessage(args)
	}
	return cs.CallTool(ctx, p)
}

// resultText joins the text contents of a result.
func resultText(res *mcp.CallToolResult) string {
	if res == nil {
		return ""
	}
	var parts []string
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, t.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// mustText calls a tool and requires a successful result; it returns the text.
func mustText(t *testing.T, cs *mcp.ClientSession, name, args string) string {
	t.Helper()
	res, err := call(testCtx(t, 15*time.Second), cs, name, args)
	if err != nil {
		t.Fatalf("call %s: %v", name, err)
	}
	if res.IsError {
		t.Fatalf("call %s: error result: %s", name, resultText(res))
	}
	return resultText(res)
}

// errorText calls a tool and requires a failure (error result or error);
// it returns the message.
func errorText(t *testing.T, cs *mcp.ClientSession, name, args string) string {
	t.Helper()
	res, err := call(testCtx(t, 15*time.Second), cs, name, args)
	if err != nil {
		return err.Error()
	}
	if !res.IsError {
		t.Fatalf("call %s: want a failure, got %q", name, resultText(res))
	}
	return resultText(res)
}

// asJSON decodes JSON (bytes, RawMessage or any value, re-encoded) into
// generic values for comparison.
func asJSON(t *testing.T, v any) any {
	t.Helper()
	var b []byte
	switch x := v.(type) {
	case string:
		b = []byte(x)
	case json.RawMessage:
		b = x
	case []byte:
		b = x
	default:
		var err error
		if b, err = json.Marshal(v); err != nil {
			t.Fatal(err)
		}
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatalf("decode %s: %v", b, err)
	}
	return out
}

// syncBuffer is a goroutine-safe log sink.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// lines returns the log lines that contain every one of parts.
func (b *syncBuffer) lines(parts ...string) []string {
	var out []string
	for _, l := range strings.Split(b.String(), "\n") {
		if !slices.ContainsFunc(parts, func(p string) bool { return !strings.Contains(l, p) }) {
			out = append(out, l)
		}
	}
	return out
}

// errCode extracts the JSON-RPC code of an error returned by a go-sdk client.
func errCode(err error) (int64, bool) {
	var rpcErr *jsonrpc.Error
	if errors.As(err, &rpcErr) {
		return rpcErr.Code, true
	}
	return 0, false
}
