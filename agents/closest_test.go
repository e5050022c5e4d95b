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

// TestBestToolDoesWhatTheRequestAsks: a tool of another effect than the
// request's verb is never the first plan's pick, however well it ranks: it
// would "succeed" without doing what was asked ("Create an entity …" run
// as read_graph, "Email Dana …" run as the directory lookup alone). With no
// tool of the right effect, none is picked (the planner then names the
// closest) rather than a wrong one; a verb of unknown effect keeps the
// ranking.
func TestBestToolDoesWhatTheRequestAsks(t *testing.T) {
	facts := func(name, description string) *ToolFacts {
		return &ToolFacts{ToolInfo: agentsmcp.ToolInfo{Name: name, Description: description, Health: agentsmcp.HealthReady,
			InputSchema: json.RawMessage(`{"type":"object","properties":{"q":{"type":"string"}}}`)}, SuccessRate: 0.9}
	}
	tools := map[string]*ToolFacts{
		"memory__read_graph":      facts("memory__read_graph", "Read the entire knowledge graph"),
		"memory__create_entities": facts("memory__create_entities", "Create multiple new entities in the knowledge graph"),
		"directory__find_person":  facts("directory__find_person", "look up a person by name and return their email address"),
	}
	for _, c := range []struct {
		goal   string
		ranked []string // best search score first
		want   string   // "" for none
	}{
		{"Create an entity named demo-project", []string{"memory__read_graph", "memory__create_entities"}, "memory__create_entities"},
		{"Show the knowledge graph", []string{"memory__read_graph", "memory__create_entities"}, "memory__read_graph"},
		{"Email Dana Whitfield that the lab is booked", []string{"directory__find_person"}, ""},
		{"What is in the knowledge graph?", []string{"memory__create_entities", "memory__read_graph"}, "memory__create_entities"},
	} {
		k := &Knowledge{Candidates: map[string][]*agentsmcp.ToolMatch{}, Tools: tools}
		for i, name := range c.ranked {
			k.Candidates[c.goal] = append(k.Candidates[c.goal], &agentsmcp.ToolMatch{ToolInfo: tools[name].ToolInfo, Score: 1 - 0.1*float64(i)})
		}
		got, _ := bestTool(k, c.goal)
		name := ""
		if got != nil {
			name = got.Name
		}
		if name != c.want {
			t.Errorf("%q: picked %q, want %q", c.goal, name, c.want)
		}
	}
}
