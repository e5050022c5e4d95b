package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	mgoclient "github.com/mark3labs/mcp-go/client"
	mgotransport "github.com/mark3labs/mcp-go/client/transport"
	mgo "github.com/mark3labs/mcp-go/mcp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agents-mcp/agents-mcp/router"
)

// This file drives the real `serve` and `stdio` with the MCP clients people
// use, the way their users use them: connected for minutes, calling now and
// then, with their libraries' default options. A session must outlive the
// server's keepalive rounds whether or not the client answers pings, and a
// task that needs input must come back (paused, or asking) rather than hang.

// clientRunFor is how long each client stays connected, calling every
// clientCallEvery. Five keepalive intervals: a session the keepalive ends
// (three unanswered pings) ends well within it. AGENTS_MCP_TEST_CLIENT_SECONDS
// shortens it for a local run; the default is what proves the behaviour.
const (
	clientRunFor    = 150 * time.Second
	clientCallEvery = 10 * time.Second
)

// clientsEnv gates TestRealClientsStayConnected. Its clients are connected
// for minutes and mostly idle, so `make test` runs it in test-cluster, side
// by side with the replicas behind HAProxy (both are parallel tests),
// rather than adding its minutes to the serial part of `go test -race`.
const clientsEnv = "AGENTS_MCP_TEST_CLIENTS"

func clientRunDuration(t *testing.T) time.Duration {
	if s := os.Getenv("AGENTS_MCP_TEST_CLIENT_SECONDS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n <= 0 {
			t.Fatalf("AGENTS_MCP_TEST_CLIENT_SECONDS=%q: want a positive number of seconds", s)
		}
		return time.Duration(n) * time.Second
	}
	return clientRunFor
}

// checkClient is what the check list needs of a client library.
type checkClient interface {
	tools(ctx context.Context) ([]string, error)
	// call returns the text of the result, whether it is an error result,
	// and whether it asks for input (an input_required result of MCP
	// 2026-07-28).
	call(ctx context.Context, name string, args map[string]any) (text string, isError, asks bool, err error)
	// validate sends tools/validate as a raw request.
	validate(ctx context.Context, name string, args map[string]any) (json.RawMessage, error)
	prompts(ctx context.Context) (int, error)
	close()
}

// clientsServer is a real go-sdk upstream with an echo tool and a
// destructive tool no request gives the argument of, so that run_task has a
// request it completes and one that needs input.
func clientsUpstream(t *testing.T) string {
	t.Helper()
	s := mcp.NewServer(&mcp.Implementation{Name: "storage", Version: "1.0.0"}, nil)
	s.AddTool(&mcp.Tool{Name: "echo", Description: "Echo a message back",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"message":{"type":"string","description":"the message to echo"}},"required":["message"]}`),
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var args struct{ Message string }
			_ = json.Unmarshal(req.Params.Arguments, &args)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: args.Message}}}, nil
		})
	s.AddTool(&mcp.Tool{Name: "wipe_bucket", Description: "Wipe every object of a storage bucket",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"bucket":{"type":"string","description":"name of the bucket to wipe"}},"required":["bucket"]}`),
		Annotations: &mcp.ToolAnnotations{DestructiveHint: new(true)}},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "wiped"}}}, nil
		})
	srv := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
	t.Cleanup(srv.Close)
	configFile := filepath.Join(t.TempDir(), "agents-mcp.yaml")
	cfg := fmt.Sprintf("upstreams:\n  - name: storage\n    transport: streamable\n    url: %s\n", srv.URL)
	if err := os.WriteFile(configFile, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return configFile
}

// TestRealClientsStayConnected connects mark3labs/mcp-go (legacy SSE,
// streamable HTTP with its default options and with continuous listening,
// stdio) and go-sdk (legacy SSE, streamable HTTP, stdio) to the real
// server, all at once, for clientRunFor each: the check list passes at the
// start, a call every clientCallEvery succeeds throughout, and the check
// list passes again at the end.
func TestRealClientsStayConnected(t *testing.T) {
	if os.Getenv(clientsEnv) != "1" {
		t.Skip("set " + clientsEnv + "=1 (make test-cluster does): real clients connected for minutes")
	}
	t.Parallel()
	configFile := clientsUpstream(t)
	base, stop, code, logs := startServe(t, map[string]string{"AGENTS_MCP_LLM": "builtin"}, "--config", configFile)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("serve's log:\n%s", logs.String())
		}
		stop()
		select {
		case <-code:
		case <-time.After(30 * time.Second):
			t.Errorf("serve did not stop: %s", logs.String())
		}
	})
	runFor := clientRunDuration(t)
	stdioArgs := []string{"-test.run=^$", "--", "stdio", "--data-dir", t.TempDir(), "--config", configFile}
	stdioEnv := []string{childEnv + "=1", "AGENTS_MCP_LLM=builtin"}
	ctx := t.Context()

	clients := map[string]func() (checkClient, error){
		"mcp-go/sse": func() (checkClient, error) {
			c, err := mgoclient.NewSSEMCPClient(base + "/sse")
			return startMCPGo(ctx, c, err)
		},
		// A client that declares elicitation over a transport that drops
		// the server's requests: its run_task must not wait on them.
		"mcp-go/sse-elicitation": func() (checkClient, error) {
			tr, err := mgotransport.NewSSE(base + "/sse")
			if err != nil {
				return nil, err
			}
			return startMCPGo(ctx, mgoclient.NewClient(tr, mgoclient.WithElicitationHandler(declineAll{})), nil)
		},
		// The revision the issue saw: a stateful session without a GET
		// stream, which the server's pings cannot reach.
		"mcp-go/streamable-2025-11-25": func() (checkClient, error) {
			tr, err := mgotransport.NewStreamableHTTP(base + "/mcp")
			if err != nil {
				return nil, err
			}
			return startMCPGo(ctx, mgoclient.NewClient(tr, mgoclient.WithProtocolVersion("2025-11-25")), nil)
		},
		"mcp-go/streamable": func() (checkClient, error) {
			c, err := mgoclient.NewStreamableHttpClient(base + "/mcp")
			return startMCPGo(ctx, c, err)
		},
		"mcp-go/streamable-listening": func() (checkClient, error) {
			c, err := mgoclient.NewStreamableHttpClient(base+"/mcp", mgotransport.WithContinuousListening())
			return startMCPGo(ctx, c, err)
		},
		"mcp-go/stdio": func() (checkClient, error) {
			// mcp-go first probes server/discover and, after 5 s without an
			// answer, falls back to initialize on the same pipe, which go-sdk
			// then refuses as a second initialize once the probe is answered.
			// The 5 s count from the process's start, so on a loaded machine
			// with the replicas of the cluster test starting beside it the
			// probe measured start-up, not liveness: give it 30 s.
			c := mgoclient.NewClient(mgotransport.NewStdio(os.Args[0], stdioEnv, stdioArgs...),
				mgoclient.WithDiscoverTimeout(30*time.Second))
			return startMCPGo(ctx, c, nil)
		},
		"go-sdk/sse": func() (checkClient, error) {
			return startGoSDK(ctx, &mcp.SSEClientTransport{Endpoint: base + "/sse"}, nil)
		},
		"go-sdk/streamable": func() (checkClient, error) {
			return startGoSDK(ctx, &mcp.StreamableClientTransport{Endpoint: base + "/mcp"}, nil)
		},
		"go-sdk/streamable-2025-11-25": func() (checkClient, error) {
			return startGoSDK(ctx, &mcp.StreamableClientTransport{Endpoint: base + "/mcp"}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
		},
		"go-sdk/stdio": func() (checkClient, error) {
			cmd := exec.Command(os.Args[0], stdioArgs...)
			cmd.Env = append(os.Environ(), stdioEnv...)
			return startGoSDK(ctx, &mcp.CommandTransport{Command: cmd}, nil)
		},
	}
	// Goroutines rather than parallel subtests: -parallel defaults to the
	// number of CPUs, and every client must be connected at once for the
	// test to last clientRunFor.
	failures := map[string]error{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for name, start := range clients {
		wg.Go(func() {
			err := runClient(ctx, start, runFor)
			mu.Lock()
			failures[name] = err
			mu.Unlock()
		})
	}
	wg.Wait()
	var names []string
	for name := range failures {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			if err := failures[name]; err != nil {
				t.Fatal(err)
			}
		})
	}
}

// runClient connects a client, runs the check list, calls every
// clientCallEvery for runFor, and runs the check list again.
func runClient(ctx context.Context, start func() (checkClient, error), runFor time.Duration) error {
	began := time.Now()
	c, err := start()
	if err != nil {
		return err
	}
	defer c.close()
	if err := checkList(ctx, c, "start"); err != nil {
		return err
	}
	end := time.Now().Add(runFor)
	for n := 1; time.Now().Before(end); n++ {
		time.Sleep(min(clientCallEvery, time.Until(end)))
		cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		text, isErr, _, err := c.call(cctx, "search_tools", map[string]any{"query": "echo a message"})
		if err != nil && connectionLost(err.Error()) {
			// A keep-alive connection that the server closed for idling
			// (api.DefaultIdleTimeout) just as the client reused it: HTTP's
			// own race, which net/http retries for idempotent requests only.
			// The session must survive it: the same call again must work.
			text, isErr, _, err = c.call(cctx, "search_tools", map[string]any{"query": "echo a message"})
		}
		cancel()
		if err != nil || isErr {
			return fmt.Errorf("call %d, %s after connecting: %v %s", n, time.Since(began).Round(time.Second), err, text)
		}
	}
	return checkList(ctx, c, "end")
}

// checkList runs the steps every client must pass, each bounded, and
// returns the first failure.
func checkList(ctx context.Context, c checkClient, when string) error {
	var failed error
	step := func(name string, f func(ctx context.Context) error) {
		if failed != nil {
			return
		}
		sctx, cancel := context.WithTimeout(ctx, 45*time.Second)
		defer cancel()
		start := time.Now()
		if err := f(sctx); err != nil {
			failed = fmt.Errorf("%s: %s (after %s): %w", when, name, time.Since(start).Round(time.Millisecond), err)
		}
	}
	step("tools/list", func(ctx context.Context) error {
		names, err := c.tools(ctx)
		if err != nil {
			return err
		}
		if !strings.Contains(strings.Join(names, ","), "storage__echo") {
			return fmt.Errorf("no storage__echo in %v", names)
		}
		return nil
	})
	step("tools/call", func(ctx context.Context) error {
		text, isErr, _, err := c.call(ctx, "storage__echo", map[string]any{"message": "hello"})
		if err != nil || isErr || !strings.Contains(text, "hello") {
			return fmt.Errorf("%v %v %q", err, isErr, text)
		}
		return nil
	})
	step("bad arguments", func(ctx context.Context) error {
		text, isErr, _, err := c.call(ctx, "storage__echo", map[string]any{"message": 42})
		if err == nil && !isErr {
			return fmt.Errorf("a number for a string was accepted: %q", text)
		}
		return nil
	})
	step("tools/validate", func(ctx context.Context) error {
		raw, err := c.validate(ctx, "storage__echo", map[string]any{})
		if err != nil {
			return err
		}
		var res router.ValidateResult
		if err := json.Unmarshal(raw, &res); err != nil || res.Valid || !strings.Contains(string(raw), "message") {
			return fmt.Errorf("missing message judged %s (%v)", raw, err)
		}
		return nil
	})
	step("prompts/list", func(ctx context.Context) error {
		n, err := c.prompts(ctx)
		if err == nil && n == 0 {
			err = fmt.Errorf("no prompts")
		}
		return err
	})
	step("run_task", func(ctx context.Context) error {
		text, isErr, asks, err := c.call(ctx, "run_task", map[string]any{"request": `echo the words "hello there"`})
		if err != nil || isErr || asks || !strings.Contains(text, `"status":"succeeded"`) {
			return fmt.Errorf("%v error=%v asks=%v %s", err, isErr, asks, text)
		}
		return nil
	})
	step("run_task that needs input", func(ctx context.Context) error {
		text, isErr, asks, err := c.call(ctx, "run_task", map[string]any{"request": "wipe a storage bucket"})
		if err != nil || isErr {
			return fmt.Errorf("%v error=%v %s", err, isErr, text)
		}
		if !asks && !strings.Contains(text, `"status":"paused"`) {
			return fmt.Errorf("neither paused nor asking: %s", text)
		}
		return nil
	})
	return failed
}

// mcpGoClient is a mark3labs/mcp-go client with its default options.
type mcpGoClient struct {
	c       *mgoclient.Client
	version string // negotiated
	id      int
}

func startMCPGo(ctx context.Context, c *mgoclient.Client, err error) (checkClient, error) {
	if err != nil {
		return nil, err
	}
	// The streams of both transports live as long as the context they
	// start with: the test's, not a bounded one.
	if err := c.Start(ctx); err != nil {
		return nil, fmt.Errorf("start: %w", err)
	}
	ictx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	res, err := c.Initialize(ictx, mgo.InitializeRequest{Params: mgo.InitializeParams{
		ClientInfo: mgo.Implementation{Name: "mcp-go-liveness", Version: "1"},
	}})
	if err != nil {
		c.Close()
		return nil, fmt.Errorf("initialize: %w", err)
	}
	return &mcpGoClient{c: c, version: res.ProtocolVersion}, nil
}

func (m *mcpGoClient) tools(ctx context.Context) ([]string, error) {
	res, err := m.c.ListTools(ctx, mgo.ListToolsRequest{})
	if err != nil {
		return nil, err
	}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
	}
	return names, nil
}

func (m *mcpGoClient) call(ctx context.Context, name string, args map[string]any) (string, bool, bool, error) {
	res, err := m.c.CallTool(ctx, mgo.CallToolRequest{Params: mgo.CallToolParams{Name: name, Arguments: args}})
	if err != nil {
		return "", false, false, err
	}
	var text []string
	for _, c := range res.Content {
		if tc, ok := c.(mgo.TextContent); ok {
			text = append(text, tc.Text)
		}
	}
	return strings.Join(text, "\n"), res.IsError, len(res.InputRequests) > 0, nil
}

func (m *mcpGoClient) validate(ctx context.Context, name string, args map[string]any) (json.RawMessage, error) {
	m.id++
	params := map[string]any{"name": name, "arguments": args}
	if m.version >= "2026-07-28" {
		// A raw request of the stateless revision carries what the
		// client's own requests do.
		params["_meta"] = map[string]any{
			mcp.MetaKeyProtocolVersion:    m.version,
			mcp.MetaKeyClientInfo:         map[string]any{"name": "mcp-go-liveness", "version": "1"},
			mcp.MetaKeyClientCapabilities: map[string]any{},
		}
	}
	resp, err := m.c.GetTransport().SendRequest(ctx, mgotransport.JSONRPCRequest{
		JSONRPC: "2.0", ID: mgo.NewRequestId(fmt.Sprintf("validate-%d", m.id)), Method: router.MethodValidate,
		Params: params, Header: http.Header{"Mcp-Method": {router.MethodValidate}},
	})
	if err != nil {
		return nil, err
	}
	if resp.Error != nil {
		return nil, fmt.Errorf("tools/validate: %d %s", resp.Error.Code, resp.Error.Message)
	}
	return resp.Result, nil
}

func (m *mcpGoClient) prompts(ctx context.Context) (int, error) {
	res, err := m.c.ListPrompts(ctx, mgo.ListPromptsRequest{})
	if err != nil {
		return 0, err
	}
	return len(res.Prompts), nil
}

func (m *mcpGoClient) close() { _ = m.c.Close() }

// declineAll declines every elicitation (the task then pauses); over
// mcp-go's legacy SSE transport it is never asked.
type declineAll struct{}

func (declineAll) Elicit(context.Context, mgo.ElicitationRequest) (*mgo.ElicitationResult, error) {
	return &mgo.ElicitationResult{ElicitationResponse: mgo.ElicitationResponse{Action: mgo.ElicitationResponseActionDecline}}, nil
}

// goSDKClient is a go-sdk client with its default options (it proposes
// the newest revision, and answers input_required rounds itself when it
// can).
type goSDKClient struct{ cs *mcp.ClientSession }

func startGoSDK(ctx context.Context, transport mcp.Transport, opts *mcp.ClientSessionOptions) (checkClient, error) {
	c := mcp.NewClient(&mcp.Implementation{Name: "go-sdk-liveness", Version: "1"}, nil)
	if err := mcp.AddSendingCustomMethod[*router.ValidateParams, *router.ValidateResult](c, router.MethodValidate); err != nil {
		return nil, err
	}
	// The legacy SSE stream lives as long as the context it connects
	// with: the test's, not a bounded one.
	cs, err := c.Connect(ctx, transport, opts)
	if err != nil {
		return nil, fmt.Errorf("connect: %w", err)
	}
	return &goSDKClient{cs: cs}, nil
}

func (g *goSDKClient) tools(ctx context.Context) ([]string, error) {
	var names []string
	for tool, err := range g.cs.Tools(ctx, nil) {
		if err != nil {
			return nil, err
		}
		names = append(names, tool.Name)
	}
	return names, nil
}

func (g *goSDKClient) call(ctx context.Context, name string, args map[string]any) (string, bool, bool, error) {
	res, err := g.cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		return "", false, false, err
	}
	var text []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			text = append(text, tc.Text)
		}
	}
	return strings.Join(text, "\n"), res.IsError, len(res.InputRequests) > 0, nil
}

func (g *goSDKClient) validate(ctx context.Context, name string, args map[string]any) (json.RawMessage, error) {
	raw, _ := json.Marshal(args)
	res, err := mcp.CallCustomMethod[*router.ValidateParams, *router.ValidateResult](ctx, g.cs, router.MethodValidate,
		&router.ValidateParams{Name: name, Arguments: raw})
	if err != nil {
		return nil, err
	}
	return json.Marshal(res)
}

func (g *goSDKClient) prompts(ctx context.Context) (int, error) {
	n := 0
	for _, err := range g.cs.Prompts(ctx, nil) {
		if err != nil {
			return 0, err
		}
		n++
	}
	return n, nil
}

func (g *goSDKClient) close() { _ = g.cs.Close() }
