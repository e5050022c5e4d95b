package main

import (
	"context"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	agentsmcp "github.com/agents-mcp/agents-mcp"
)

// TestRunTaskPausesForAClientThatDeclaresElicitationButDropsRequests: a
// client of 2025-11-25 over legacy SSE declares elicitation, but its
// transport never delivers the server's requests (mark3labs/mcp-go's SSE
// client does so). run_task needing an input answers the paused task in
// seconds, as for a client without elicitation, instead of waiting for an
// answer that cannot come.
func TestRunTaskPausesForAClientThatDeclaresElicitationButDropsRequests(t *testing.T) {
	up := startWipeUpstream(t)
	base, stop := mrtrServer(t, t.TempDir(), up, nil)
	defer stop()
	drop := make(chan struct{})
	c := mcp.NewClient(&mcp.Implementation{Name: "drops-requests", Version: "1"}, &mcp.ClientOptions{
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			t.Error("the elicitation reached the handler")
			return &mcp.ElicitResult{Action: "decline"}, nil
		},
	})
	c.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method == "ping" || method == "elicitation/create" {
				<-drop // never answered, as if never received
				return nil, ctx.Err()
			}
			return next(ctx, method, req)
		}
	})
	cs, err := c.Connect(t.Context(), &mcp.SSEClientTransport{Endpoint: base + "/sse"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	defer close(drop) // before the Close above, which waits for the handlers
	start := time.Now()
	task := taskOf(t, callRunTask(t, cs, &mcp.CallToolParams{}))
	if took := time.Since(start); task.Status != agentsmcp.TaskPaused || took > 20*time.Second {
		t.Fatalf("task %s after %s, want paused within 20 s", task.Status, took.Round(time.Millisecond))
	}
}
