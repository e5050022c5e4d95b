package agents

import (
	"encoding/json"
	"testing"

	agentsmcp "github.com/agents-mcp/agents-mcp"
)

// TestFittingToolsTakeWhatTheRequestDrives: a tool that shares no word with
// the request becomes a candidate when the request gives every one of its
// two or more required parameters, and not on one value alone.
func TestFittingToolsTakeWhatTheRequestDrives(t *testing.T) {
	tool := func(name, schema string) *agentsmcp.ToolInfo {
		return &agentsmcp.ToolInfo{Name: name, InputSchema: json.RawMessage(schema)}
	}
	catalog := []*agentsmcp.ToolInfo{
		tool("post_direct_note", `{"type":"object","properties":{"colleague":{"type":"string","description":"who gets the note"},"note":{"type":"string","description":"what it says"}},"required":["colleague","note"]}`),
		tool("current_weather", `{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`),
		tool("list_everything", `{"type":"object","properties":{}}`),
		tool("run_task", `{"type":"object","properties":{"request":{"type":"string"},"note":{"type":"string"}},"required":["request","note"]}`),
	}
	for _, c := range []struct {
		goal string
		want []string
	}{
		{"Let Priya know the build is green", []string{"post_direct_note"}},
		{"Book a flight to Rome on Friday", nil},
	} {
		got := fittingTools(catalog, c.goal, nil, 0.01, 5)
		var names []string
		for _, m := range got {
			names = append(names, m.Name)
			if m.Score != 0.01 || m.Why == "" {
				t.Errorf("%q: %s scored %v (%q), want 0.01 with a reason", c.goal, m.Name, m.Score, m.Why)
			}
		}
		if len(names) != len(c.want) || (len(names) > 0 && names[0] != c.want[0]) {
			t.Errorf("%q: fitting tools %v, want %v", c.goal, names, c.want)
		}
	}
}
