package router_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agents-mcp/agents-mcp/router"
	"github.com/agents-mcp/agents-mcp/router/internal/routertest"
)

// TestUseReachesEveryEntryPoint: a middleware added with Router.Use sees
// the tools/call of every entry point of the router, each once: go-sdk's
// streamable HTTP and legacy SSE sessions, their tools/call fast paths, the
// REST bridge, stdio and in-process calls.
func TestUseReachesEveryEntryPoint(t *testing.T) {
	f := newFastFixture(t, router.HTTPOptions{})
	// The one way to add one: the server handed out has no
	// AddReceivingMiddleware, not even behind a type assertion.
	if _, ok := f.r.Server().(interface{ AddReceivingMiddleware(...mcp.Middleware) }); ok {
		t.Fatal("Router.Server hands out AddReceivingMiddleware, which the fast paths would not run")
	}
	var mu sync.Mutex
	var seen []string // "method tool", one per request the middleware saw
	f.r.Use(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if call, ok := req.(*mcp.CallToolRequest); ok && call.Params != nil {
				mu.Lock()
				seen = append(seen, method+" "+call.Params.Name)
				mu.Unlock()
			}
			return next(ctx, method, req)
		}
	})
	// sees runs one call through an entry point and checks that the
	// middleware saw it, once.
	sees := func(t *testing.T, call func(t *testing.T)) {
		t.Helper()
		mu.Lock()
		seen = nil
		mu.Unlock()
		call(t)
		mu.Lock()
		defer mu.Unlock()
		if len(seen) != 1 || seen[0] != "tools/call up__echo" {
			t.Errorf("the middleware saw %q, want one tools/call of up__echo", seen)
		}
	}
	const echo = `{"name":"up__echo","arguments":{"message":"hi"}}`
	answered := func(t *testing.T, answer string) {
		t.Helper()
		if !strings.Contains(answer, "Echo: hi") {
			t.Errorf("answer %s", answer)
		}
	}

	sid := f.open(t, "alice", `{}`)
	t.Run("streamable", func(t *testing.T) {
		sees(t, func(t *testing.T) {
			_, answer, fast := f.call(t, "alice", sid, toolCall(3, withMeta(echo)))
			if fast {
				t.Fatal("the fast path took a call with _meta")
			}
			answered(t, answer)
		})
	})
	t.Run("streamable fast path", func(t *testing.T) {
		sees(t, func(t *testing.T) {
			_, answer, fast := f.call(t, "alice", sid, toolCall(4, echo))
			if !fast {
				t.Fatal("the fast path did not take the call")
			}
			answered(t, answer)
		})
	})
	c := f.openSSE(t, "alice", `{}`, true)
	t.Run("SSE", func(t *testing.T) {
		sees(t, func(t *testing.T) {
			answer, fast := c.call(t, toolCall(5, withMeta(echo)))
			if fast {
				t.Fatal("the fast path took a call with _meta")
			}
			answered(t, answer)
		})
	})
	t.Run("SSE fast path", func(t *testing.T) {
		sees(t, func(t *testing.T) {
			answer, fast := c.call(t, toolCall(6, echo))
			if !fast {
				t.Fatal("the fast path did not take the call")
			}
			answered(t, answer)
		})
	})
	t.Run("REST bridge", func(t *testing.T) {
		sees(t, func(t *testing.T) {
			req, _ := http.NewRequest(http.MethodPost, strings.TrimSuffix(f.url, "/mcp")+router.RESTBridgePath,
				strings.NewReader(`{"tool":"up__echo","params":{"message":"hi"}}`))
			req.Header.Set("Authorization", "Bearer alice")
			req.Header.Set("Content-Type", "application/json")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			if answer := readAll(t, resp); resp.StatusCode != http.StatusOK {
				t.Errorf("status %d: %s", resp.StatusCode, answer)
			} else {
				answered(t, answer)
			}
		})
	})
	t.Run("stdio", func(t *testing.T) {
		sees(t, func(t *testing.T) {
			input := strings.Join([]string{
				`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`,
				`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
				toolCall(2, echo),
			}, "\n") + "\n"
			outR, outW := io.Pipe()
			transport := &router.StdioTransport{
				Grace: 5 * time.Second,
				Inner: &mcp.IOTransport{Reader: io.NopCloser(strings.NewReader(input)), Writer: routertest.NopWriteCloser{Writer: outW}},
			}
			runDone := make(chan error, 1)
			go func() {
				runDone <- f.r.Server().Run(context.Background(), transport)
				outW.Close()
			}()
			var out strings.Builder
			sc := bufio.NewScanner(outR)
			for sc.Scan() {
				out.WriteString(sc.Text() + "\n")
			}
			<-runDone
			answered(t, out.String())
		})
	})
	t.Run("in-process", func(t *testing.T) {
		sees(t, func(t *testing.T) {
			res, err := f.r.CallTool(context.Background(), &mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{
				Name: "up__echo", Arguments: json.RawMessage(`{"message":"hi"}`)}})
			if err != nil {
				t.Fatal(err)
			}
			b, _ := json.Marshal(res)
			answered(t, string(b))
		})
	})
}
