package rest_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/mock"
	"github.com/agents-mcp/agents-mcp/router"
	"github.com/agents-mcp/agents-mcp/router/internal/routertest"
)

// TestRESTBridgeAnswersWhatTheProviderDid serves a scripted upstream-like
// provider through the bridge over real HTTP: each way a provider can end
// a call has its answer, the default principal's Admit limits the bridge
// as it limits stdio, and draining refuses new calls.
func TestRESTBridgeAnswersWhatTheProviderDid(t *testing.T) {
	var mu sync.Mutex
	var records []router.ToolCallRecord
	admit := true
	r := router.New(router.Options{Version: "test",
		OnToolCall: func(c router.ToolCallRecord) {
			mu.Lock()
			records = append(records, c)
			mu.Unlock()
		},
		Access: router.AccessOptions{
			Default: &agentsmcp.Principal{ID: "key:default", Scopes: []string{agentsmcp.ScopeMCP}},
			Admit: func(*agentsmcp.Principal) (bool, time.Duration) {
				mu.Lock()
				defer mu.Unlock()
				return admit, 1500 * time.Millisecond
			},
		},
	})
	tools := []*mcp.Tool{}
	for _, name := range []string{"up__ok", "up__rpc", "up__down", "up__links"} {
		tools = append(tools, &mcp.Tool{Name: name, InputSchema: json.RawMessage(`{"type":"object"}`)})
	}
	up := &mock.ToolProvider{
		NameFn:  func() string { return "up" },
		ToolsFn: func(context.Context) ([]*mcp.Tool, error) { return tools, nil },
		CallToolFn: func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			switch req.Params.Name {
			case "up__rpc":
				return nil, &jsonrpc.Error{Code: -32042, Message: "upstream says no"}
			case "up__down":
				return nil, agentsmcp.Errorf(agentsmcp.EUNAVAILABLE, "upstream %q is down", "up")
			case "up__links":
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "see"}, &mcp.ResourceLink{URI: "upstream://up/x", Name: "x"}}}, nil
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ran " + req.Params.Name + " " + string(req.Params.Arguments)}}}, nil
		},
	}
	if err := r.AddProvider(context.Background(), up); err != nil {
		t.Fatal(err)
	}
	h := r.HTTPHandler(router.HTTPOptions{})
	srv := httptest.NewServer(h)
	t.Cleanup(func() { h.Close(); srv.Close() })

	call := func(body string) (int, http.Header, map[string]any) {
		resp, data := routertest.Post(t, srv.URL+router.RESTBridgePath, []byte(body), nil)
		var out map[string]any
		if err := json.Unmarshal(data, &out); err != nil {
			t.Fatalf("%s: %d %s: not JSON", body, resp.StatusCode, data)
		}
		return resp.StatusCode, resp.Header, out
	}
	errCode := func(out map[string]any) string {
		e, _ := out["error"].(map[string]any)
		code, _ := e["code"].(string)
		return code
	}

	if status, _, out := call(`{"tool":"up__ok","params":{"a":1}}`); status != 200 || out["result"] != `ran up__ok {"a":1}` || out["isError"] != false {
		t.Errorf("a call that ran: %d %v", status, out)
	}
	if status, _, out := call(`{"tool":"up__rpc"}`); status != http.StatusBadGateway || errCode(out) != router.BridgeUpstreamError || !strings.Contains(out["error"].(map[string]any)["message"].(string), "-32042: upstream says no") {
		t.Errorf("a JSON-RPC error of the provider: %d %v; want 502 with its code and message", status, out)
	}
	if status, _, out := call(`{"tool":"up__down"}`); status != 200 || out["isError"] != true || !strings.Contains(out["result"].(string), `upstream "up" is down`) {
		t.Errorf("a provider that failed: %d %v; want 200 isError with the message, as tools/call answers", status, out)
	}
	if status, _, out := call(`{"tool":"up__links"}`); status != 200 || len(out["result"].([]any)) != 2 {
		t.Errorf("content that is not only text: %d %v; want the content array", status, out)
	}

	mu.Lock()
	admit = false
	mu.Unlock()
	if status, hdr, out := call(`{"tool":"up__ok"}`); status != http.StatusTooManyRequests || hdr.Get("Retry-After") != "2" || errCode(out) != router.BridgeRateLimited {
		t.Errorf("over the default principal's limit: %d Retry-After %q %v", status, hdr.Get("Retry-After"), out)
	}
	mu.Lock()
	admit = true
	var limited, ran bool
	for _, rec := range records {
		limited = limited || rec.Refused == "rate limited" && rec.Principal == "key:default"
		ran = ran || rec.Tool == "up__ok" && rec.Refused == "" && rec.ClientProfile == router.ProfileREST && rec.Principal == "key:default"
	}
	mu.Unlock()
	if !limited || !ran {
		t.Errorf("records: rate-limited %v, ran with the rest profile %v: %+v", limited, ran, records)
	}

	if left := r.Drain(context.Background()); left != 0 {
		t.Fatalf("Drain left %d requests", left)
	}
	if status, _, out := call(`{"tool":"up__ok"}`); status != http.StatusServiceUnavailable || errCode(out) != router.BridgeUnavailable {
		t.Errorf("while draining: %d %v", status, out)
	}
}
