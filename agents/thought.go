package agents

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/internal/storedform"
	"github.com/agents-mcp/agents-mcp/internal/validate"
)

// Thinker is the thought agent: it analyses a request into a stored
// Thought, from what the tools, memory and tool performance say, with a
// model when one is given and deterministically otherwise.
type Thinker struct {
	Gatherer *Gatherer
	Thoughts agentsmcp.ThoughtService
	// Attempts bounds the model's tries at a valid answer; default 3.
	Attempts int
}

// ThoughtReport says how a thought was made.
type ThoughtReport struct {
	Backend   string             `json:"backend"` // "builtin" or the LLM backend
	Attempts  int                `json:"attempts,omitempty"`
	Usage     agentsmcp.LLMUsage `json:"usage"`
	Knowledge *Knowledge         `json:"-"`
}

// Think analyses request and stores the thought. llm nil means builtin.
func (th *Thinker) Think(ctx context.Context, request string, llm agentsmcp.LLM) (*agentsmcp.Thought, *ThoughtReport, error) {
	request = strings.TrimSpace(request)
	if request == "" {
		return nil, nil, agentsmcp.Errorf(agentsmcp.EINVALID, "request is required")
	}
	if len(request) > agentsmcp.MaxQueryTextBytes {
		return nil, nil, agentsmcp.Errorf(agentsmcp.EINVALID, "request is %d bytes; the limit is %d", len(request), agentsmcp.MaxQueryTextBytes)
	}
	k, err := th.Gatherer.Gather(ctx, request, nil)
	if err != nil {
		return nil, nil, err
	}
	thought := builtinThought(k)
	report := &ThoughtReport{Backend: LLMBuiltin, Knowledge: k}
	if llm != nil {
		var answer agentsmcp.Thought
		req := &agentsmcp.LLMRequest{
			System:   thoughtSystemPrompt,
			Messages: []agentsmcp.LLMMessage{{Role: agentsmcp.LLMRoleUser, Content: render(thoughtContext, promptData(k))}},
			Purpose:  "thought",
		}
		usage, attempts, err := completeJSON(ctx, llm, req, th.attempts(), &answer, func() error { return th.checkAnswer(ctx, &answer, request) })
		report.Usage, report.Attempts = usage, attempts
		if err != nil {
			return nil, report, err
		}
		answer.Request = request
		thought = &answer
		report.Backend = backendOf(llm)
	}
	thought.Principal = agentsmcp.PrincipalIDFrom(ctx)
	if err := th.Thoughts.CreateThought(ctx, thought); err != nil {
		return nil, report, err
	}
	return thought, report, nil
}

func (th *Thinker) attempts() int {
	if th.Attempts <= 0 {
		return 3
	}
	return th.Attempts
}

// checkAnswer rejects a model's thought that names tools that do not exist
// or breaks the Thought invariants.
func (th *Thinker) checkAnswer(ctx context.Context, t *agentsmcp.Thought, request string) error {
	t.Request = request
	if err := validate.Thought(t); err != nil {
		return err
	}
	var unknown []string
	for _, r := range t.RecommendedTools {
		if _, err := th.Gatherer.Catalog.Tool(ctx, r.Tool); err != nil {
			unknown = append(unknown, r.Tool)
		}
	}
	if len(unknown) > 0 {
		return agentsmcp.Errorf(agentsmcp.EINVALID, "recommendedTools names tools that do not exist: %s; use only the listed tools", strings.Join(unknown, ", "))
	}
	return nil
}

func backendOf(llm agentsmcp.LLM) string {
	if n, ok := llm.(interface{ Name() string }); ok {
		return n.Name()
	}
	if _, ok := llm.(*SamplingLLM); ok {
		return LLMSampling
	}
	return fmt.Sprintf("%T", llm)
}

// builtinThought analyses a request without a model: the best tool of each
// sub-goal, adjusted by its record and health, what past tasks and
// insights say, and what is uncertain.
func builtinThought(k *Knowledge) *agentsmcp.Thought {
	t := &agentsmcp.Thought{Request: k.Request, SubGoals: k.SubGoals}
	var scores []float64
	for _, goal := range k.SubGoals {
		best, score := bestTool(k, goal)
		if best == nil {
			t.Uncertainties = append(t.Uncertainties, fmt.Sprintf("no tool found for %q", goal))
			continue
		}
		scores = append(scores, score)
		if !slices.ContainsFunc(t.RecommendedTools, func(r agentsmcp.ToolRecommendation) bool { return r.Tool == best.Name }) {
			reason := fmt.Sprintf("best match for %q; %s", goal, best.Performance())
			t.RecommendedTools = append(t.RecommendedTools, agentsmcp.ToolRecommendation{Tool: best.Name, Reason: clip(reason)})
		}
		if best.Calls >= 3 && best.SuccessRate < 0.5 {
			t.Uncertainties = append(t.Uncertainties, clip(fmt.Sprintf("%s often fails (%s)", best.Name, best.Performance())))
		}
		for _, p := range best.Pitfalls {
			t.Constraints = append(t.Constraints, clip(p))
		}
	}
	for _, f := range k.Tools {
		if f.FailedInFamily != "" && !f.Reliability.ProbeDue {
			t.Constraints = append(t.Constraints, clip(fmt.Sprintf("avoid %s for this kind of request: %s", f.Name, f.FailedInFamily)))
		}
		if !f.Usable() {
			t.Constraints = append(t.Constraints, clip(fmt.Sprintf("%s is unavailable: its upstream %s is down", f.Name, f.Source)))
		}
		if r := f.Reliability; r.CoolingDown {
			t.Constraints = append(t.Constraints, clip(fmt.Sprintf("avoid %s while another tool can serve: it failed its last %d calls (%s); on cool-down until %s",
				f.Name, r.ConsecutiveFailures, r.LastErrorClass, r.CoolDownUntil.UTC().Format(time.RFC3339))))
		}
	}
	slices.Sort(t.Constraints)
	t.Constraints = slices.Compact(t.Constraints)
	var succeeded, failed int
	for _, l := range k.PastTasks {
		switch l.Outcome {
		case agentsmcp.OutcomeSuccess:
			succeeded++
			if succeeded == 1 {
				t.Approaches = append(t.Approaches, clip(fmt.Sprintf("reuse the plan of %q, which succeeded with %s", l.Query, strings.Join(l.Steps, " → "))))
			}
		case agentsmcp.OutcomeFailure, agentsmcp.OutcomePartial:
			failed++
		}
	}
	names := make([]string, 0, len(t.RecommendedTools))
	for _, r := range t.RecommendedTools {
		names = append(names, r.Tool)
	}
	if len(names) > 0 {
		t.Approaches = append(t.Approaches, clip("compose "+strings.Join(names, ", ")))
	}
	t.Assumptions = append(t.Assumptions, "values the request does not give are asked from the user, not guessed")
	if failed > 0 {
		t.Uncertainties = append(t.Uncertainties, fmt.Sprintf("%d similar past task(s) did not fully succeed", failed))
	}
	if len(k.Patterns) > 0 {
		p := k.Patterns[0]
		t.Approaches = append(t.Approaches, clip(fmt.Sprintf("follow the plan pattern %s, which succeeded %d of %d times for this kind of request", strings.Join(p.Steps, " → "), p.Successes, p.Uses)))
	}
	t.Confidence = confidence(scores, len(k.SubGoals), succeeded > 0 || len(k.Patterns) > 0)
	t.Reasoning = clip(fmt.Sprintf("%s %d sub-goal(s); %d with a matching tool; %d similar past task(s), %d successful; %d insight(s) considered.",
		k.Family.Describe(), len(k.SubGoals), len(scores), len(k.PastTasks), succeeded, len(k.Insights)))
	return t
}

// bestTool picks the usable candidate of goal that can do what goal asks
// (its effect: read, write, remove, send; see intent.go) with the best search score
// weighed by its estimated success and by how much of its required input
// the goal gives (requestFit). A tool on cool-down is not picked
// while another candidate is usable; one whose cool-down ended (a probe)
// is weighed as a tool without a record, so that a tool that ranks best
// by its description gets one try at showing it recovered. A candidate on
// weak evidence loses weight while the goal drives another whole (see
// fit_evidence.go), and is not picked while a candidate served a request
// with the same entities (see entity_evidence.go).
func bestTool(k *Knowledge, goal string) (*ToolFacts, float64) {
	alternative := false // a usable candidate not on cool-down
	for _, m := range k.Candidates[goal] {
		if f := k.Tools[m.Name]; f != nil && f.Usable() && !f.Reliability.CoolingDown {
			alternative = true
			break
		}
	}
	var best *ToolFacts
	var bestScore float64
	want := requestEffect(goal)
	senders := sendersOnly(k, goal)
	whole := wholeCandidate(k, goal, want)
	evidenced := entityEvidence(k, goal, want, senders)
	for _, m := range k.Candidates[goal] {
		f := k.Tools[m.Name]
		if f == nil || !f.Usable() || (alternative && f.Reliability.CoolingDown) {
			continue
		}
		if outrankedByEntities(k, f, goal, want, evidenced) {
			continue // a tool that served a request with the same entities serves (see entity_evidence.go)
		}
		if senders && toolEffects(f.Name, f.Description)&effectSend == 0 {
			continue // a request to send is served by a tool that sends
		}
		if !servesIntent(want, toolEffects(f.Name, f.Description)) {
			// A tool of another effect "succeeds" without doing what was
			// asked ("Create an entity …" run as read_graph): better no
			// tool, which names the closest, than that.
			continue
		}
		estimate := f.SuccessRate
		switch {
		case f.Reliability.ProbeDue:
			estimate = k.prior
		case f.InFamily != nil:
			// Overall and within the family, equally: a tool may serve
			// other requests well and this kind badly, or the reverse.
			estimate = (estimate + f.InFamily.Estimate) / 2
		}
		// Fit: a tool whose required values the sub-goal gives is the one
		// it is about; one that would have everything asked is not.
		score := m.Score * estimate * requestFit(f.InputSchema, goal) * toolWeight(f.Description)
		if f.FailedInFamily != "" && !f.Reliability.ProbeDue {
			// It failed on a request of this family before. A probe is the
			// one call that may show it recovered: weighed as untried.
			score *= 0.2
		}
		if k.inPattern(f.Name) {
			score *= 1.5 // it is part of a plan that worked for this family
		}
		if whole != "" && f.Name != whole && weakEvidence(f, goal) {
			score *= weakEvidenceWeight // the request drives another candidate whole (see fit_evidence.go)
		}
		if best == nil || score > bestScore {
			best, bestScore = f, score
		}
	}
	return best, bestScore
}

func confidence(scores []float64, goals int, provenPattern bool) float64 {
	if goals == 0 {
		return 0
	}
	c := float64(len(scores)) / float64(goals) * 0.6
	if provenPattern {
		c += 0.3
	}
	return min(c, 0.95)
}

func clip(s string) string { return storedform.TruncateUTF8(s, agentsmcp.MaxListEntryBytes) }

// promptToolData is a tool as the prompts show it.
type promptToolData struct {
	Name, Description, Health, Performance, Schema string
	// Values is what the request gives for its parameters and what would
	// be asked (see toolValues).
	Values string
}

func promptData(k *Knowledge) map[string]any {
	names := make([]string, 0, len(k.Tools))
	for n := range k.Tools {
		names = append(names, n)
	}
	slices.Sort(names)
	tools := make([]promptToolData, 0, len(names))
	for _, n := range names {
		f := k.Tools[n]
		tools = append(tools, promptToolData{Name: n, Description: storedform.TruncateUTF8(f.Description, 500), Health: f.Health, Performance: f.Performance(), Schema: string(f.InputSchema),
			Values: toolValues(k, f)})
	}
	return map[string]any{"Request": k.Request, "Family": k.Family.Family, "SubGoals": k.SubGoals, "Tools": tools, "PastTasks": k.PastTasks, "Insights": k.Insights, "Patterns": k.Patterns,
		"Candidates": candidatesWhy(k), "RequestValues": requestValuesText(k.Request), "Joined": k.Family.Joined, "JoinedTool": k.Family.Tool}
}
