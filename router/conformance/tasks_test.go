package conformance_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agents-mcp/agents-mcp/localtools"
	"github.com/agents-mcp/agents-mcp/router"
	"github.com/agents-mcp/agents-mcp/router/conformance"
)

// The Tasks fixtures without the extension: their synchronous path, checked
// here through the handlers as registered. Their task path is tested through
// the router in router/tasks_test.go, and by the suite (conformance.sh).
func newFixtures(t *testing.T) *localtools.Provider {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel) // stops the watched-resource updater
	r := router.New(router.Options{})
	l := localtools.New()
	if err := conformance.Register(ctx, r, l); err != nil {
		t.Fatal(err)
	}
	return l
}

func call(t *testing.T, ctx context.Context, l *localtools.Provider, name string, args any, responses mcp.InputResponseMap, state string) (*mcp.CallToolResult, error) {
	t.Helper()
	data, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	return l.CallTool(ctx, &mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{
		Name: name, Arguments: data, InputResponses: responses, RequestState: state,
	}})
}

func text(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

func accept(content map[string]any) *mcp.ElicitResult {
	return &mcp.ElicitResult{Action: "accept", Content: content}
}

func TestTaskFixtures(t *testing.T) {
	l := newFixtures(t)
	ctx := context.Background()

	if res, err := call(t, ctx, l, "greet", map[string]any{"name": "World"}, nil, ""); err != nil || text(res) != "Hello, World!" {
		t.Errorf("greet: %v %+v", err, res)
	}
	if res, err := call(t, ctx, l, "slow_compute", map[string]any{"seconds": 0, "label": "now"}, nil, ""); err != nil || res.IsError || !strings.Contains(text(res), `"now"`) {
		t.Errorf("slow_compute 0s: %v %+v", err, res)
	}
	// A cancelled slow_compute stops at once (with the context's error as a
	// tool error), so a task runner can settle it as cancelled.
	cctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	start := time.Now()
	res, err := call(t, cctx, l, "slow_compute", map[string]any{"seconds": 60}, nil, "")
	cancel()
	if err != nil || !res.IsError || !strings.Contains(text(res), context.DeadlineExceeded.Error()) || time.Since(start) > 5*time.Second {
		t.Errorf("cancelled slow_compute: %v %+v after %v", err, res, time.Since(start))
	}
	if res, err := call(t, ctx, l, "failing_job", map[string]any{}, nil, ""); err != nil || !res.IsError {
		t.Errorf("failing_job must be a tool execution error: %v %+v", err, res)
	}
	var werr *jsonrpc.Error
	if _, err := call(t, ctx, l, "protocol_error_job", map[string]any{}, nil, ""); !errors.As(err, &werr) {
		t.Errorf("protocol_error_job must be a protocol error: %v", err)
	}

	res, err = call(t, ctx, l, "confirm_delete", map[string]any{"filename": "a.txt"}, nil, "")
	if err != nil || len(res.InputRequests) != 1 || res.InputRequests["confirm"] == nil {
		t.Fatalf("confirm_delete round 1 must ask for confirm: %v %+v", err, res)
	}
	res, err = call(t, ctx, l, "confirm_delete", map[string]any{"filename": "a.txt"}, mcp.InputResponseMap{"confirm": accept(map[string]any{"confirm": true})}, "")
	if err != nil || len(res.InputRequests) != 0 || !strings.Contains(text(res), "Deleted a.txt") {
		t.Errorf("confirm_delete round 2: %v %+v", err, res)
	}

	res, err = call(t, ctx, l, "test_tool_with_task", map[string]any{}, nil, "")
	if err != nil || res.InputRequests["user_name"] == nil {
		t.Fatalf("test_tool_with_task round 1 must ask for user_name: %v %+v", err, res)
	}
	res, err = call(t, ctx, l, "test_tool_with_task", map[string]any{}, mcp.InputResponseMap{"user_name": accept(map[string]any{"name": "Alice"})}, "")
	if err != nil || !strings.Contains(text(res), "Alice") {
		t.Errorf("test_tool_with_task round 2 must contain the name: %v %+v", err, res)
	}
}

// multi_input asks for two inputs at once; answering one leaves exactly the
// other pending, across MRTR retries that carry only the latest answer.
func TestMultiInputPartialAnswers(t *testing.T) {
	l := newFixtures(t)
	ctx := context.Background()
	res, err := call(t, ctx, l, "multi_input", map[string]any{}, nil, "")
	if err != nil || len(res.InputRequests) != 2 {
		t.Fatalf("round 1 must ask for two inputs: %v %+v", err, res)
	}
	var first, second string
	for k := range res.InputRequests {
		if first == "" {
			first = k
		} else {
			second = k
		}
	}
	res, err = call(t, ctx, l, "multi_input", map[string]any{}, mcp.InputResponseMap{first: accept(map[string]any{"name": "p1", "confirm": true})}, res.RequestState)
	if err != nil || len(res.InputRequests) != 1 || res.InputRequests[second] == nil {
		t.Fatalf("after answering %s, only %s must remain: %v %+v", first, second, err, res)
	}
	res, err = call(t, ctx, l, "multi_input", map[string]any{}, mcp.InputResponseMap{second: accept(map[string]any{"name": "p2", "confirm": true})}, res.RequestState)
	if err != nil || len(res.InputRequests) != 0 || !strings.Contains(text(res), "both inputs") {
		t.Errorf("after both answers it must complete: %v %+v", err, res)
	}
}
