package agents

import (
	"encoding/json"
	"testing"

	agentsmcp "github.com/agents-mcp/agents-mcp"
)

// The tools of TestWeakEvidenceLosesToAToolTheRequestDrives: a fare search
// whose one parameter is composed of two airport codes, an airport tool
// that takes one, and a repository tool the search relates to "ticket"
// (ticket → issue) that needs a value no fare request holds.
var (
	fareSearch = &agentsmcp.ToolInfo{Name: "flights__search_fares", Description: "cheapest fares for a flight route", Health: agentsmcp.HealthReady,
		InputSchema: json.RawMessage(`{"type":"object","properties":{"route":{"type":"string","description":"route as origin-destination airport codes, such as LHR-JFK"}},"required":["route"]}`)}
	airportInfo = &agentsmcp.ToolInfo{Name: "flights__airport_info", Description: "facts about an airport: terminals, lounges, transport", Health: agentsmcp.HealthReady,
		InputSchema: json.RawMessage(`{"type":"object","properties":{"airport":{"type":"string","description":"IATA code of the airport, such as LHR"}},"required":["airport"]}`)}
	repoIssues = &agentsmcp.ToolInfo{Name: "repos__repo_open_issues", Description: "count the open issues of a code repository", Health: agentsmcp.HealthReady,
		InputSchema: json.RawMessage(`{"type":"object","properties":{"repository":{"type":"string","description":"repository as owner/name, such as golang/go"}},"required":["repository"]}`)}
)

// TestFittingToolsCountComposedParts: a tool whose one required parameter
// the request gives composed of two of its values ("AMS-SIN" for a route
// "such as LHR-JFK") is a fitting tool, as one with two required
// parameters is; one value alone (one airport code) is still too weak.
func TestFittingToolsCountComposedParts(t *testing.T) {
	catalog := []*agentsmcp.ToolInfo{airportInfo, repoIssues, fareSearch}
	for _, c := range []struct {
		goal string
		want []string
	}{
		{"Price a ticket AMS to SIN", []string{"flights__search_fares"}},
		{"Lounges at AMS?", nil},
		{"Price a ticket to SIN", nil},
	} {
		var got []string
		for _, m := range fittingTools(catalog, c.goal, nil, 0.01, 5) {
			got = append(got, m.Name)
		}
		if len(got) != len(c.want) || len(got) > 0 && got[0] != c.want[0] {
			t.Errorf("%q: fitting tools %v, want %v", c.goal, got, c.want)
		}
	}
}

// TestWeakEvidenceLosesToAToolTheRequestDrives: a candidate that shares
// no word with the request and needs a value it does not give (it would
// ask for a repository to price a ticket) loses to a candidate that the
// request drives whole, however much better the search ranked it; without
// such a candidate, or when the candidate shares a word with the request,
// the ranking stands.
func TestWeakEvidenceLosesToAToolTheRequestDrives(t *testing.T) {
	facts := func(info *agentsmcp.ToolInfo) *ToolFacts {
		return &ToolFacts{ToolInfo: *info, SuccessRate: 0.5}
	}
	tools := map[string]*ToolFacts{fareSearch.Name: facts(fareSearch), repoIssues.Name: facts(repoIssues), airportInfo.Name: facts(airportInfo)}
	for _, c := range []struct {
		goal   string
		ranked []string
		scores []float64
		want   string
	}{
		// The search's related words lift the repository tool fourfold.
		{"Price a ticket AMS to SIN", []string{repoIssues.Name, fareSearch.Name}, []float64{0.8, 0.19}, fareSearch.Name},
		// No candidate the request drives whole: the ranking stands.
		{"Price a ticket to SIN", []string{repoIssues.Name, airportInfo.Name}, []float64{0.8, 0.19}, repoIssues.Name},
		// A word in common ("issues") is no weak evidence.
		{"Open issues and fares AMS to SIN", []string{repoIssues.Name, fareSearch.Name}, []float64{0.8, 0.19}, repoIssues.Name},
	} {
		k := &Knowledge{Candidates: map[string][]*agentsmcp.ToolMatch{}, Tools: tools}
		for i, name := range c.ranked {
			k.Candidates[c.goal] = append(k.Candidates[c.goal], &agentsmcp.ToolMatch{ToolInfo: tools[name].ToolInfo, Score: c.scores[i]})
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
