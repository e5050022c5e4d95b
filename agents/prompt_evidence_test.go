package agents_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/agents"
	"github.com/agents-mcp/agents-mcp/memory/sqlite"
)

// scriptedModel is a FAKE LLM: it answers each request with the next of
// its scripted answers, and keeps every request it received.
type scriptedModel struct {
	mu       sync.Mutex
	answers  []string
	received []*agentsmcp.LLMRequest
}

func (m *scriptedModel) Complete(_ context.Context, req *agentsmcp.LLMRequest) (*agentsmcp.LLMResponse, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.received = append(m.received, req)
	if len(m.answers) == 0 {
		return nil, agentsmcp.Errorf(agentsmcp.EUNAVAILABLE, "the script has no more answers")
	}
	a := m.answers[0]
	m.answers = m.answers[1:]
	return &agentsmcp.LLMResponse{Text: a, Backend: "scripted"}, nil
}

// prompt is the user message of the i-th request, and the last message
// of it (what was sent back, for a repair).
func (m *scriptedModel) prompt(i int) (first, last string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	msgs := m.received[i].Messages
	return msgs[0].Content, msgs[len(msgs)-1].Content
}

// TestModelPromptsCarryTheUnderstanding: the thought and plan prompts
// show a model what the builtin planner acts on: each candidate with why
// it matched, the values the request gives for each tool (composed where
// the parameter shows a composed shape) and those it would ask for, and
// the values of specific kinds every plan must use. Before, they listed the
// tools and their records only.
func TestModelPromptsCarryTheUnderstanding(t *testing.T) {
	p := wordedPlanner(t, wordedCatalogTools)
	th := &agents.Thinker{Gatherer: p.Gatherer, Thoughts: p.Plans.(*sqlite.DB)}
	model := &scriptedModel{answers: []string{
		`{"subGoals":["Find the cheapest fares from LHR to JFK"],"reasoning":"one call","confidence":0.7,"recommendedTools":[{"tool":"search_fares","reason":"fares"}]}`,
	}}
	request := "Find the cheapest fares from LHR to JFK"
	if _, _, err := th.Think(t.Context(), request, model); err != nil {
		t.Fatal(err)
	}
	prompt, _ := model.prompt(0)
	for _, want := range []string{
		"Why each candidate matched",
		"search_fares (score ",
		"search_fares: the request gives route = 'LHR-JFK' composed from 'LHR' and 'JFK' in the request",
		"ask the user for",
	} {
		if !strings.Contains(prompt, want) {
			t.Errorf("thought prompt lacks %q:\n%s", want, prompt)
		}
	}
	// A tool the search cannot find by words: the request sends, and the
	// mail tool sends; the lookup of the address it needs, with the value
	// the request gives for it.
	model.answers = []string{`{"subGoals":["Drop Samuel Okafor a line that lunch is on us"],"reasoning":"two calls","confidence":0.7}`}
	if _, _, err := th.Think(t.Context(), "Drop Samuel Okafor a line that lunch is on us", model); err != nil {
		t.Fatal(err)
	}
	prompt, _ = model.prompt(1)
	for _, want := range []string{
		"the request asks to send a message, and this tool sends)",
		"find_person: the request gives name = Samuel Okafor",
		"- find_person — look up a person",
	} {
		if !strings.Contains(prompt, want) {
			t.Errorf("thought prompt lacks %q:\n%s", want, prompt)
		}
	}
}

// TestModelPlanLeavingAValueUnusedIsSentBack: a model plan that does one
// part of a two-part request (shorten the link, never post it to the
// channel the request names) goes back to the model with why, like any
// invalid plan; the prompt named the values every plan must use. Before,
// the plan was accepted and its task reported success.
func TestModelPlanLeavingAValueUnusedIsSentBack(t *testing.T) {
	p := wordedPlanner(t, wordedCatalogTools)
	request := "Post a shortened version of https://example.org/blog/launch in #marketing"
	model := &scriptedModel{answers: []string{
		`{"goal":"shorten","steps":[{"id":"short","tool":"shorten_url","arguments":{"url":"https://example.org/blog/launch"}}]}`,
		`{"goal":"shorten and post","steps":[{"id":"short","tool":"shorten_url","arguments":{"url":"https://example.org/blog/launch"}},` +
			`{"id":"post","tool":"post_to_channel","arguments":{"channel":"#marketing","text":"{{steps.short.output.short_link}}"},"dependsOn":["short"]}]}`,
	}}
	plan, report, err := p.Plan(t.Context(), agents.PlanRequest{Request: request, LLM: model})
	if err != nil {
		t.Fatal(err)
	}
	if report.Attempts != 2 || len(plan.Steps) != 2 {
		t.Fatalf("attempts %d, plan %s; want the second answer", report.Attempts, planSummary(plan))
	}
	prompt, _ := model.prompt(0)
	if !strings.Contains(prompt, "each of which a step must use") || !strings.Contains(prompt, "#marketing") {
		t.Errorf("the plan prompt does not name the values every plan must use:\n%s", prompt)
	}
	if _, back := model.prompt(1); !strings.Contains(back, "#marketing, which no step takes") {
		t.Errorf("the plan sent back does not say why: %s", back)
	}
}
