package agents_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/agents"
	"github.com/agents-mcp/agents-mcp/localtools"
	"github.com/agents-mcp/agents-mcp/remote"
)

type slotCityIn struct {
	City string `json:"city" jsonschema:"the city to report on"`
}

type messageIn struct {
	Message string `json:"message" jsonschema:"the message to send back"`
}

type convertIn struct {
	Amount float64 `json:"amount" jsonschema:"how much to convert"`
	From   string  `json:"from" jsonschema:"ISO 4217 code of the currency to convert from"`
	To     string  `json:"to" jsonschema:"ISO 4217 code of the currency to convert to"`
}

type parcelIn struct {
	TrackingNumber string `json:"tracking_number" jsonschema:"the tracking number"`
}

type noteIn struct {
	Colleague string `json:"colleague" jsonschema:"who receives the note"`
	Note      string `json:"note" jsonschema:"what to tell them"`
}

// slotUpstream is a real go-sdk MCP server behind streamable HTTP on
// loopback, published to s's router through a remote pool: tools that
// need a city; a message; an amount and two currencies; a colleague and a
// note; a tracking number.
func slotUpstream(t *testing.T, s *stack) {
	t.Helper()
	ctx := context.Background()
	srv := mcp.NewServer(&mcp.Implementation{Name: "slots", Version: "1.0.0"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "current_weather", Description: "current weather conditions today in a city"},
		func(_ context.Context, _ *mcp.CallToolRequest, in slotCityIn) (*mcp.CallToolResult, map[string]any, error) {
			return nil, map[string]any{"city": in.City, "conditions": "sunny"}, nil
		})
	mcp.AddTool(srv, &mcp.Tool{Name: "echo", Description: "echo a message back unchanged"},
		func(_ context.Context, _ *mcp.CallToolRequest, in messageIn) (*mcp.CallToolResult, map[string]any, error) {
			return nil, map[string]any{"echoed": in.Message}, nil
		})
	mcp.AddTool(srv, &mcp.Tool{Name: "convert_currency", Description: "convert an amount of money from one currency to another"},
		func(_ context.Context, _ *mcp.CallToolRequest, in convertIn) (*mcp.CallToolResult, map[string]any, error) {
			return nil, map[string]any{"pair": in.From + "/" + in.To, "amount": in.Amount}, nil
		})
	mcp.AddTool(srv, &mcp.Tool{Name: "post_direct_note", Description: "post a direct note to a colleague"},
		func(_ context.Context, _ *mcp.CallToolRequest, in noteIn) (*mcp.CallToolResult, map[string]any, error) {
			return nil, map[string]any{"delivered": in.Colleague + ": " + in.Note}, nil
		})
	mcp.AddTool(srv, &mcp.Tool{Name: "track_parcel", Description: "track a parcel by its tracking number"},
		func(_ context.Context, _ *mcp.CallToolRequest, in parcelIn) (*mcp.CallToolResult, map[string]any, error) {
			return nil, map[string]any{"tracking_number": in.TrackingNumber, "status": "in transit"}, nil
		})
	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	t.Cleanup(hs.Close)
	pool := remote.NewPool(remote.Options{Registry: s.router})
	t.Cleanup(func() { _ = pool.Close(context.Background()) })
	if err := pool.AddFromConfig(ctx, agentsmcp.UpstreamConfig{Name: "up", Transport: remote.TransportStreamable, URL: hs.URL}); err != nil {
		t.Fatal(err)
	}
	if st, _ := pool.Status("up"); st.Tools != 5 {
		t.Fatalf("upstream status %+v, want 5 tools", st)
	}
}

// TestBuiltinPlanTakesValuesTheRequestGives runs requests through the
// builtin planner and the executor against a real upstream: the values the
// request names reach the tool, and nothing is asked of the user.
func TestBuiltinPlanTakesValuesTheRequestGives(t *testing.T) {
	s := newStack(t, func(*localtools.Provider) {})
	slotUpstream(t, s)

	for _, c := range []struct {
		request, tool, arg, value, outField, out string
	}{
		{"What is the weather in Paris today?", "up__current_weather", "city", "Paris", "city", "Paris"},
		{"What is the weather in Lisbon today?", "up__current_weather", "city", "Lisbon", "city", "Lisbon"},
		{"Echo the message hello", "up__echo", "message", "hello", "echoed", "hello"},
		{"Convert 100 USD to EUR", "up__convert_currency", "to", "EUR", "pair", "USD/EUR"},
		{"Send a direct note to Bob saying the release is out", "up__post_direct_note", "colleague", "Bob", "delivered", "Bob: the release is out"},
		// Worded unlike every description: the search's intent phrases
		// find the tool, slot filling its values.
		{"Let Priya know the build is green", "up__post_direct_note", "colleague", "Priya", "delivered", "Priya: the build is green"},
		// The request's one code, for the tool's one identifier.
		{"Track the parcel JD0146000062", "up__track_parcel", "tracking_number", "JD0146000062", "tracking_number", "JD0146000062"},
	} {
		t.Run(c.value, func(t *testing.T) {
			_, plan, report, task := s.runRequest(t, c.request, nil)
			if len(plan.Steps) != 1 || plan.Steps[0].Tool != c.tool {
				t.Fatalf("plan steps %+v, want one step with %s", plan.Steps, c.tool)
			}
			if len(plan.Inputs) != 0 {
				t.Errorf("the plan asks for inputs %s although the request gives them", plan.Inputs)
			}
			var args map[string]any
			if err := json.Unmarshal(plan.Steps[0].Arguments, &args); err != nil || args[c.arg] != c.value {
				t.Errorf("arguments %s, want %s = %q", plan.Steps[0].Arguments, c.arg, c.value)
			}
			// A composed step says where its values came from (a reused
			// plan keeps its steps' descriptions).
			if d := plan.Steps[0].Description; report.ReusedPlan == "" && (!strings.Contains(d, c.arg+" = "+c.value) || !strings.Contains(d, "from the request")) {
				t.Errorf("step description %q does not say that %s = %s was taken from the request", d, c.arg, c.value)
			}
			if task.Status != agentsmcp.TaskSucceeded {
				t.Fatalf("task %s: %s", task.Status, task.Error)
			}
			var out map[string]any
			if err := json.Unmarshal(task.Steps[0].Output, &out); err != nil || out[c.outField] != c.out {
				t.Errorf("tool output %s, want %s = %q", task.Steps[0].Output, c.outField, c.out)
			}
		})
	}
}

// TestBuiltinPlanNamesTheClosestToolsWhenNoneFits asks for what no tool of
// a real upstream does: the planner refuses, and names the closest tools
// with why each was turned down, so that the user knows what to connect or
// how to rephrase.
func TestBuiltinPlanNamesTheClosestToolsWhenNoneFits(t *testing.T) {
	s := newStack(t, func(*localtools.Provider) {})
	slotUpstream(t, s)
	ctx := context.Background()
	for _, request := range []string{"Book a flight to Rome on Friday", "Order two pizzas"} {
		th, _, err := s.thinker.Think(ctx, request, nil)
		if err != nil {
			t.Fatal(err)
		}
		plan, _, err := s.planner.Plan(ctx, agents.PlanRequest{Request: request, Thought: th})
		if err == nil {
			t.Fatalf("%q: planned %+v, want no usable tool", request, plan.Steps)
		}
		t.Logf("%q: %v", request, err)
		msg := err.Error()
		if !strings.Contains(msg, "no usable tool matches") || !strings.Contains(msg, "closest: ") {
			t.Errorf("%q: %q does not name the closest tools", request, msg)
		}
		if !strings.Contains(msg, "up__post_direct_note: needs colleague and note, which the request does not give") &&
			!strings.Contains(msg, "up__convert_currency: needs amount, from and to, which the request does not give") {
			t.Errorf("%q: %q gives no reason naming the parameters the request lacks", request, msg)
		}
	}
}
