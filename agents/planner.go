package agents

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/agents/planlang"
	"github.com/agents-mcp/agents-mcp/internal/storedform"
	"github.com/agents-mcp/agents-mcp/internal/validate"
)

// Planner composes a stored Plan for a request: a DAG of tool calls over
// every local and remote tool, each step's arguments checked against its
// tool's schema before the plan is accepted. With a model, invalid answers
// go back to it with the problems (bounded); without one, the builtin
// planner reuses the plan of a similar request that succeeded, or composes
// one from the best tool of each sub-goal.
type Planner struct {
	Gatherer  *Gatherer
	Validator agentsmcp.ToolValidator
	Plans     agentsmcp.PlanService
	// Tasks leads from a past learning to the plan it ran; nil disables
	// plan reuse.
	Tasks agentsmcp.TaskService
	// Attempts bounds the model's tries at a valid plan; default 3.
	Attempts int
}

// PlanRequest is what a plan is made for. Thought is optional: without
// one the request's sub-goals are found again.
type PlanRequest struct {
	Request string
	Thought *agentsmcp.Thought
	LLM     agentsmcp.LLM // nil: builtin
	// Knowledge is what the thought was made from (ThoughtReport.Knowledge)
	// when the plan follows it at once, in the same call: the planner
	// plans on it instead of gathering the same knowledge again, provided
	// it was gathered for this request and these sub-goals (see
	// Knowledge.gatheredFor). Nil: gathered here.
	Knowledge *Knowledge
}

// PlanReport says how a plan was made.
type PlanReport struct {
	Backend  string             `json:"backend"`
	Attempts int                `json:"attempts,omitempty"`
	Usage    agentsmcp.LLMUsage `json:"usage"`
	// ReusedPlan is the id of the past plan the builtin planner reused.
	ReusedPlan string `json:"reusedPlan,omitempty"`
	// Pattern is the id of the plan pattern whose tools the builtin
	// planner followed.
	Pattern string `json:"pattern,omitempty"`
	// FamilyJoined is the past request whose task family the request
	// joined (see Families); the plan's goal is that family.
	FamilyJoined string `json:"familyJoined,omitempty"`
	// ReuseRefused are the past plans and patterns of the family the
	// builtin planner did not reuse because their tools do not do what the
	// request asks (see changesIntent), each with why.
	ReuseRefused []string `json:"reuseRefused,omitempty"`
}

// Plan composes, checks and stores a plan. EINVALID when no valid plan
// could be made (the message says why), with nothing stored.
func (p *Planner) Plan(ctx context.Context, req PlanRequest) (*agentsmcp.Plan, *PlanReport, error) {
	request := strings.TrimSpace(req.Request)
	if request == "" && req.Thought != nil {
		request = req.Thought.Request
	}
	if request == "" {
		return nil, nil, agentsmcp.Errorf(agentsmcp.EINVALID, "request or thought is required")
	}
	var goals []string
	if req.Thought != nil {
		goals = req.Thought.SubGoals
	}
	k := req.Knowledge
	if !k.gatheredFor(request, goals) {
		gathered, err := p.Gatherer.Gather(ctx, request, goals)
		if err != nil {
			return nil, nil, err
		}
		k = gathered
	}
	var err error
	report := &PlanReport{Backend: LLMBuiltin, FamilyJoined: k.Family.Joined}
	var plan *agentsmcp.Plan
	if req.LLM != nil {
		plan, err = p.modelPlan(ctx, k, req, report)
	} else {
		plan, err = p.builtinPlan(ctx, k, report)
	}
	if err != nil {
		return nil, report, err
	}
	plan.Request = request
	// The goal is the key of plan patterns and family insights: always the
	// request's task family, whatever a model called it.
	plan.Goal = k.Family.Family
	if req.Thought != nil {
		plan.ThoughtID = req.Thought.ID
	}
	plan.Principal = agentsmcp.PrincipalIDFrom(ctx)
	if err := p.Plans.CreatePlan(ctx, plan); err != nil {
		return nil, report, err
	}
	return plan, report, nil
}

// planAnswer is the JSON a model answers with.
type planAnswer struct {
	Goal  string `json:"goal"`
	Steps []struct {
		ID                string          `json:"id"`
		Tool              string          `json:"tool"`
		Arguments         json.RawMessage `json:"arguments"`
		DependsOn         []string        `json:"dependsOn"`
		Description       string          `json:"description"`
		NeedsConfirmation bool            `json:"needsConfirmation"`
		TimeoutMs         int64           `json:"timeoutMs"`
		MaxAttempts       int             `json:"maxAttempts"`
	} `json:"steps"`
	Inputs json.RawMessage `json:"inputs"`
}

func (a *planAnswer) plan(request string) *agentsmcp.Plan {
	pl := &agentsmcp.Plan{Request: request, Goal: storedform.TruncateUTF8(a.Goal, agentsmcp.MaxQueryTextBytes)}
	if len(a.Inputs) > 0 && string(a.Inputs) != "null" {
		pl.Inputs = a.Inputs
	}
	for _, s := range a.Steps {
		st := agentsmcp.PlanStep{ID: s.ID, Tool: s.Tool, Arguments: s.Arguments, DependsOn: s.DependsOn, Description: s.Description, NeedsConfirmation: s.NeedsConfirmation}
		if string(st.Arguments) == "null" {
			st.Arguments = nil
		}
		if s.TimeoutMs > 0 {
			st.Timeout = time.Duration(s.TimeoutMs) * time.Millisecond
		}
		if s.MaxAttempts > 0 {
			st.Retry = &agentsmcp.RetryPolicy{MaxAttempts: s.MaxAttempts, InitialBackoff: 500 * time.Millisecond, MaxBackoff: 10 * time.Second}
		}
		pl.Steps = append(pl.Steps, st)
	}
	return pl
}

func (p *Planner) modelPlan(ctx context.Context, k *Knowledge, req PlanRequest, report *PlanReport) (*agentsmcp.Plan, error) {
	data := promptData(k)
	data["Thought"] = req.Thought
	data["Plans"] = p.pastPlans(ctx, k, 3)
	llmReq := &agentsmcp.LLMRequest{
		System:   planSystemPrompt,
		Messages: []agentsmcp.LLMMessage{{Role: agentsmcp.LLMRoleUser, Content: render(planContext, data)}},
		Purpose:  "plan",
	}
	var answer planAnswer
	var plan *agentsmcp.Plan
	attempts := p.Attempts
	if attempts <= 0 {
		attempts = 3
	}
	usage, n, err := completeJSON(ctx, req.LLM, llmReq, attempts, &answer, func() error {
		plan = answer.plan(k.Request)
		if err := p.Check(ctx, plan); err != nil {
			return err
		}
		if err := p.checkValuesTaken(ctx, plan, k.Request); err != nil {
			return err
		}
		return p.checkEvidence(ctx, k, plan)
	})
	report.Backend, report.Attempts, report.Usage = backendOf(req.LLM), n, usage
	if err != nil {
		return nil, err
	}
	return plan, nil
}

// pastPlan is a plan that worked, as the plan prompt shows it.
type pastPlan struct {
	Request string
	Steps   string
	plan    *agentsmcp.Plan
}

// pastPlans returns the plans of similar past tasks that succeeded, most
// similar first. A plan is found through the learning's task, which
// carries the repairs made while it ran; once the task is deleted
// (tasks.retention), through the learning's PlanID, which is set only for
// a plan that ran unrepaired.
func (p *Planner) pastPlans(ctx context.Context, k *Knowledge, max int) []pastPlan {
	if p.Tasks == nil {
		return nil
	}
	var out []pastPlan
	for _, l := range k.PastTasks {
		if l.Outcome != agentsmcp.OutcomeSuccess || l.TaskID == "" {
			continue
		}
		pl := p.planOf(ctx, l)
		if pl == nil {
			continue
		}
		steps, _ := json.Marshal(pl.Steps)
		out = append(out, pastPlan{Request: l.Query, Steps: storedform.TruncateUTF8(string(steps), 4<<10), plan: pl})
		if len(out) == max {
			break
		}
	}
	return out
}

// planOf is the plan that learning l's task ran, with its repairs, when
// it is the caller's own: another's may hold values it gave (arguments,
// secrets) that are not this caller's to use. Nil when there is none.
func (p *Planner) planOf(ctx context.Context, l *agentsmcp.Learning) *agentsmcp.Plan {
	caller := agentsmcp.PrincipalIDFrom(ctx)
	t, err := p.Tasks.FindTaskByID(ctx, l.TaskID)
	if err == nil {
		if t.PlanID == "" || t.Principal != caller {
			return nil
		}
		pl, err := p.Plans.FindPlanByID(ctx, t.PlanID)
		if err != nil {
			return nil
		}
		return repairedPlan(pl, t)
	}
	if agentsmcp.ErrorCode(err) != agentsmcp.ENOTFOUND || l.PlanID == "" {
		return nil
	}
	pl, err := p.Plans.FindPlanByID(ctx, l.PlanID)
	if err != nil || pl.Principal != caller {
		return nil
	}
	return pl
}

// Check verifies a plan as the executor will run it: a valid DAG; tools
// that exist and whose upstream is not down when another tool could serve;
// references only to declared inputs and to steps the step depends on;
// arguments that satisfy each tool's schema, and have the shape each
// parameter shows (see shapeProblems). It reports every problem at
// once, as EINVALID.
func (p *Planner) Check(ctx context.Context, plan *agentsmcp.Plan) error {
	if err := validate.Plan(plan); err != nil {
		return err
	}
	declared := declaredInputs(plan.Inputs)
	var problems []string
	for _, s := range plan.Steps {
		info, err := p.Gatherer.Catalog.Tool(ctx, s.Tool)
		if err != nil {
			problems = append(problems, fmt.Sprintf("step %q: tool %q does not exist", s.ID, s.Tool))
			continue
		}
		if info.Health == agentsmcp.HealthDown {
			if alt := p.alternatives(ctx, info); len(alt) > 0 {
				problems = append(problems, fmt.Sprintf("step %q: the upstream of %s is down; use another tool such as %s", s.ID, s.Tool, strings.Join(alt, ", ")))
			}
		}
		refs, err := planlang.FindRefs(s.Arguments)
		if err != nil {
			problems = append(problems, fmt.Sprintf("step %q: %s", s.ID, agentsmcp.ErrorMessage(err)))
			continue
		}
		upstream := ancestors(plan, s.ID)
		for _, r := range refs {
			switch {
			case r.Kind == planlang.RefStep && !upstream[r.Name]:
				problems = append(problems, fmt.Sprintf("step %q references step %q, which it does not depend on", s.ID, r.Name))
			case r.Kind == planlang.RefInput && !declared[r.Name]:
				problems = append(problems, fmt.Sprintf("step %q references input %q, which inputs.properties does not declare", s.ID, r.Name))
			}
		}
		problems = append(problems, p.checkArguments(ctx, s)...)
		problems = append(problems, shapeProblems(s, info.InputSchema, p.Validator == nil)...)
	}
	if len(problems) > 0 {
		return agentsmcp.Errorf(agentsmcp.EINVALID, "%s", strings.Join(problems, "; "))
	}
	return nil
}

// checkArguments validates a step's arguments against its tool's schema,
// ignoring what references make unknowable before the run: anything at a
// whole-value reference, and all but type errors where a reference is
// embedded in text.
func (p *Planner) checkArguments(ctx context.Context, s agentsmcp.PlanStep) []string {
	if p.Validator == nil {
		return nil
	}
	args := s.Arguments
	if len(args) == 0 {
		args = json.RawMessage(`{}`)
	}
	doc, refAt, err := planlang.ArgumentsForValidation(args)
	if err != nil {
		return []string{fmt.Sprintf("step %q: %s", s.ID, agentsmcp.ErrorMessage(err))}
	}
	res, err := p.Validator.ValidateToolArguments(ctx, s.Tool, doc)
	if err != nil {
		return []string{fmt.Sprintf("step %q: %s", s.ID, agentsmcp.ErrorMessage(err))}
	}
	var problems []string
	for _, issue := range res.Errors {
		whole, isRef := refAt[issue.Path]
		if isRef && (whole || issue.Keyword != "type") {
			continue
		}
		problems = append(problems, fmt.Sprintf("step %q (%s) argument %s: %s", s.ID, s.Tool, cmp.Or(issue.Path, "/"), issue.Message))
	}
	return problems
}

// checkEvidence refuses a model's plan that calls a tool on cool-down
// while another candidate can serve: the prompt says so, and a model that
// ignores it would spend the task's attempts on a tool known to be
// failing. EINVALID naming the alternatives, so that the model repairs its
// answer like any other invalid plan. A probe (cool-down over) is allowed.
func (p *Planner) checkEvidence(ctx context.Context, k *Knowledge, plan *agentsmcp.Plan) error {
	var problems []string
	for _, s := range plan.Steps {
		f := p.toolFacts(ctx, k, s.Tool)
		if f == nil || !f.Reliability.CoolingDown {
			continue
		}
		if alt := k.alternativesTo(s.Tool); len(alt) > 0 {
			problems = append(problems, fmt.Sprintf("step %q: %s is ON COOL-DOWN (it failed its last %d calls, last error: %s); use another tool that can serve the step, such as %s",
				s.ID, s.Tool, f.Reliability.ConsecutiveFailures, cmp.Or(f.Reliability.LastErrorClass, "unknown"), strings.Join(alt, ", ")))
		}
	}
	if len(problems) > 0 {
		return agentsmcp.Errorf(agentsmcp.EINVALID, "%s", strings.Join(problems, "; "))
	}
	return nil
}

// alternatives names usable tools of other sources that do what info does.
func (p *Planner) alternatives(ctx context.Context, info *agentsmcp.ToolInfo) []string {
	matches, err := p.Gatherer.Catalog.SearchTools(ctx, cmp.Or(info.Description, info.Name), 5)
	if err != nil {
		return nil
	}
	var alt []string
	for _, m := range matches {
		if m.Health != agentsmcp.HealthDown && m.Source != info.Source && !isAgentTool(m.Name) {
			alt = append(alt, m.Name)
		}
	}
	return alt
}

// ancestors returns the steps that step id depends on, directly or not.
func ancestors(plan *agentsmcp.Plan, id string) map[string]bool {
	byID := make(map[string]*agentsmcp.PlanStep, len(plan.Steps))
	for i := range plan.Steps {
		byID[plan.Steps[i].ID] = &plan.Steps[i]
	}
	seen := map[string]bool{}
	stack := slices.Clone(byID[id].DependsOn)
	for len(stack) > 0 {
		d := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if seen[d] || byID[d] == nil {
			continue
		}
		seen[d] = true
		stack = append(stack, byID[d].DependsOn...)
	}
	return seen
}

func declaredInputs(schema json.RawMessage) map[string]bool {
	var doc struct {
		Properties map[string]json.RawMessage `json:"properties"`
	}
	_ = json.Unmarshal(schema, &doc)
	names := make(map[string]bool, len(doc.Properties))
	for n := range doc.Properties {
		names[n] = true
	}
	return names
}
