package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	agenttools "github.com/agents-mcp/agents-mcp/agents/mcptools"
)

// clearedCalls counts the calls of the weather upstream's destructive
// tool, clear_alerts, of the latest startWeatherUpstream.
var clearedCalls *atomic.Int32

// startWeatherUpstream serves a go-sdk upstream with three tools over
// loopback streamable HTTP and returns its endpoint.
func startWeatherUpstream(t *testing.T) string {
	t.Helper()
	srv := mcp.NewServer(&mcp.Implementation{Name: "weather-upstream", Version: "1"}, nil)
	type cityArgs struct {
		City string `json:"city,omitempty" jsonschema:"the city"`
	}
	mcp.AddTool(srv, &mcp.Tool{Name: "forecast", Description: "Weather forecast for the coming days.", Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		func(_ context.Context, _ *mcp.CallToolRequest, a cityArgs) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "sunny in " + a.City}}}, nil, nil
		})
	mcp.AddTool(srv, &mcp.Tool{Name: "alerts", Description: "Severe weather alerts in force."},
		func(context.Context, *mcp.CallToolRequest, cityArgs) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "no alerts"}}}, nil, nil
		})
	var cleared atomic.Int32
	mcp.AddTool(srv, &mcp.Tool{Name: "clear_alerts", Description: "Delete every weather alert of a city.", Annotations: &mcp.ToolAnnotations{DestructiveHint: new(true)}},
		func(context.Context, *mcp.CallToolRequest, cityArgs) (*mcp.CallToolResult, any, error) {
			cleared.Add(1)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "alerts deleted"}}}, nil, nil
		})
	clearedCalls = &cleared
	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	t.Cleanup(hs.Close)
	return hs.URL + "/mcp"
}

func promptText(t *testing.T, cs *mcp.ClientSession, name string, args map[string]string) string {
	t.Helper()
	res, err := cs.GetPrompt(context.Background(), &mcp.GetPromptParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("prompts/get %s %v: %v", name, args, err)
	}
	var sb strings.Builder
	for _, m := range res.Messages {
		if tc, ok := m.Content.(*mcp.TextContent); ok {
			sb.WriteString(tc.Text)
		}
	}
	return sb.String()
}

// TestServeDiscoveryPrompts runs the real serve command with a real
// upstream, makes calls and a task that memory records, then reads the
// discovery prompts: they name the upstream's tools, the tools that work,
// and the learning of the task.
func TestServeDiscoveryPrompts(t *testing.T) {
	dir := t.TempDir()
	cfgFile := filepath.Join(dir, "agents-mcp.yaml")
	if err := os.WriteFile(cfgFile, fmt.Appendf(nil, "upstreams:\n  - name: weather\n    transport: streamable\n    url: %s\n", startWeatherUpstream(t)), 0o600); err != nil {
		t.Fatal(err)
	}
	base, stop, code, _ := startServe(t, nil, "--config", cfgFile)
	// The server has ended before its data dir is removed.
	t.Cleanup(func() { stop(); <-code })
	c := mcp.NewClient(&mcp.Implementation{Name: "discovery-test", Version: "1"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: base + "/mcp"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })

	prompts, err := cs.ListPrompts(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{agenttools.PromptHelpMeStart, agenttools.PromptHelpWithAPI, agenttools.PromptHelpMeLearn} {
		if !slices.ContainsFunc(prompts.Prompts, func(p *mcp.Prompt) bool { return p.Name == want }) {
			t.Errorf("prompts/list lacks %s", want)
		}
	}

	for range 3 {
		if res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "weather__forecast", Arguments: map[string]any{"city": "Porto"}}); err != nil || res.IsError {
			t.Fatalf("weather__forecast: %v %+v", err, res)
		}
	}
	// The task calls weather__forecast once more: 4 calls in all.
	const request = "get the weather forecast for Lisbon"
	if res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "run_task", Arguments: map[string]any{"request": request}}); err != nil || res.IsError {
		t.Fatalf("run_task: %v %+v", err, res)
	}

	start := promptText(t, cs, agenttools.PromptHelpMeStart, nil)
	for _, want := range []string{"- weather (3 tools, ready): weather__alerts weather__clear_alerts weather__forecast", "- local (", "weather__forecast: 100% of 4 calls succeeded", "search_tools"} {
		if !strings.Contains(start, want) {
			t.Errorf("help-me-start lacks %q:\n%s", want, start)
		}
	}

	api := promptText(t, cs, agenttools.PromptHelpWithAPI, map[string]string{"api": "weather"})
	for _, want := range []string{"weather__forecast [read-only]: Weather forecast for the coming days.", "weather__alerts: Severe weather alerts in force.",
		"weather__clear_alerts [destructive: asks for a confirmation in tasks]"} {
		if !strings.Contains(api, want) {
			t.Errorf("help-with-api lacks %q:\n%s", want, api)
		}
	}
	if strings.Contains(api, "search_tools") {
		t.Errorf("help-with-api weather names a local tool:\n%s", api)
	}
	if _, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: agenttools.PromptHelpWithAPI, Arguments: map[string]string{"api": "nowhere"}}); err == nil || !strings.Contains(err.Error(), "weather") {
		t.Errorf("help-with-api of an unknown source: %v; want an error naming the sources", err)
	}
	done, err := cs.Complete(ctx, &mcp.CompleteParams{
		Ref:      &mcp.CompleteReference{Type: "ref/prompt", Name: agenttools.PromptHelpWithAPI},
		Argument: mcp.CompleteParamsArgument{Name: agenttools.PromptArgAPI, Value: "wea"},
	})
	if err != nil || !slices.Equal(done.Completion.Values, []string{"weather"}) {
		t.Errorf("completion of api \"wea\": %v %+v; want [weather]", err, done)
	}

	learn := promptText(t, cs, agenttools.PromptHelpMeLearn, map[string]string{"topic": "weather forecast"})
	for _, want := range []string{"## Similar past tasks", request, "weather__forecast"} {
		if !strings.Contains(learn, want) {
			t.Errorf("help-me-learn lacks %q:\n%s", want, learn)
		}
	}
}

// bridgeStep is what TestServeRESTBridgeKeepsTheConfirmationGate reads of
// a task's step.
type bridgeStep struct {
	StepID string `json:"stepId"`
	Status string `json:"status"`
	Error  string `json:"error"`
}

// TestServeRESTBridgeKeepsTheConfirmationGate: the bridge has no session,
// so nothing can be asked of its caller. A task that reaches a step of a
// destructive tool pauses with the step waiting for a confirmation, as for
// an MCP client without elicitation; the tool is not called.
func TestServeRESTBridgeKeepsTheConfirmationGate(t *testing.T) {
	dir := t.TempDir()
	cfgFile := filepath.Join(dir, "agents-mcp.yaml")
	if err := os.WriteFile(cfgFile, fmt.Appendf(nil, "upstreams:\n  - name: weather\n    transport: streamable\n    url: %s\n", startWeatherUpstream(t)), 0o600); err != nil {
		t.Fatal(err)
	}
	base, stop, code, _ := startServe(t, nil, "--config", cfgFile)
	// The server has ended before its data dir is removed.
	t.Cleanup(func() { stop(); <-code })
	a := bridgePost(t, base, "", "application/json", `{"tool":"run_task","params":{"request":"delete every weather alert of Lisbon"}}`)
	var res struct {
		Task struct {
			Status string       `json:"status"`
			Steps  []bridgeStep `json:"steps"`
		} `json:"task"`
	}
	if a.status != http.StatusOK || a.IsError || json.Unmarshal(a.Result, &res) != nil {
		t.Fatalf("run_task over the bridge: %d %s", a.status, a.raw)
	}
	waiting := slices.ContainsFunc(res.Task.Steps, func(s bridgeStep) bool {
		return s.Status == "waiting_confirmation" && strings.Contains(s.Error, "calls weather__clear_alerts, and the tool is marked destructive")
	})
	if res.Task.Status != "paused" || !waiting {
		t.Errorf("run_task of a destructive tool over the bridge: %s; want the task paused with the step waiting_confirmation", a.raw)
	}
	if n := clearedCalls.Load(); n != 0 {
		t.Errorf("the destructive tool was called %d times without a confirmation", n)
	}
}
