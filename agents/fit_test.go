package agents

import (
	"encoding/json"
	"testing"

	agentsmcp "github.com/agents-mcp/agents-mcp"
)

func TestRequestFit(t *testing.T) {
	location := json.RawMessage(`{"type":"object","properties":{"location":{"type":"string","description":"where"}},"required":["location"]}`)
	track := json.RawMessage(`{"type":"object","properties":{"tracking_number":{"type":"string","description":"the tracking number"}},"required":["tracking_number"]}`)
	quote := json.RawMessage(`{"type":"object","properties":{"sum":{"type":"number"},"source":{"type":"string","description":"currency to convert from"},"target":{"type":"string","description":"currency to convert to"}},"required":["sum","source","target"]}`)
	for _, tc := range []struct {
		schema json.RawMessage
		text   string
		want   float64
	}{
		{location, "What is the weather in Oslo today?", 1},
		{location, "What is the weather today?", 0.5},
		{quote, "Convert 100 USD to EUR", 1},
		{track, "Track the parcel JD0146000062", 1},
		{track, "Track JD0146000062 and LX4410938DE", 0.5}, // which one is asked
		{track, "Convert 100 USD to EUR", 0.5},
		{json.RawMessage(`{"type":"object","properties":{}}`), "anything", 1},
		{json.RawMessage(`not json`), "anything", 1},
	} {
		if got := requestFit(tc.schema, tc.text); got != tc.want {
			t.Errorf("requestFit(%s, %q) = %v, want %v", tc.schema, tc.text, got, tc.want)
		}
	}
	if got := requestFit(quote, "What is the weather in Oslo today?"); got > 0.5 {
		t.Errorf("a currency quote fits the weather in Oslo %v, want at most 0.5", got)
	}
}

// TestBestToolPrefersTheToolTheRequestFills: a currency tool that ranks
// above the weather tool by its words (as after the best weather tool went
// on cool-down) loses to the tool whose required value the request gives.
func TestBestToolPrefersTheToolTheRequestFills(t *testing.T) {
	goal := "What is the weather in Oslo today?"
	outlook := agentsmcp.ToolInfo{Name: "conditions_outlook", Description: "conditions and temperature outlook for a location",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"location":{"type":"string","description":"where"}},"required":["location"]}`)}
	quote := agentsmcp.ToolInfo{Name: "fx_quote", Description: "quote a sum in another currency",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"sum":{"type":"number"},"source":{"type":"string"},"target":{"type":"string"}},"required":["sum","source","target"]}`)}
	k := &Knowledge{
		Request: goal, SubGoals: []string{goal},
		Candidates: map[string][]*agentsmcp.ToolMatch{goal: {{ToolInfo: quote, Score: 0.30}, {ToolInfo: outlook, Score: 0.25}}},
		Tools: map[string]*ToolFacts{
			"fx_quote":           {ToolInfo: quote, SuccessRate: 0.5},
			"conditions_outlook": {ToolInfo: outlook, SuccessRate: 0.5},
		},
		prior: 0.5,
	}
	if best, _ := bestTool(k, goal); best == nil || best.Name != "conditions_outlook" {
		t.Fatalf("best tool %v, want conditions_outlook", best)
	}
}
