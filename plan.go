package agentsmcp

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode/utf8"
)

// This file holds what the thought agent and the planner produce: a
// Thought (the analysis of a request) and a Plan (a DAG of tool calls).
// Both are written once and never updated; a task (task.go) executes a
// plan.

// Limits on thoughts and plans.
const (
	MaxThoughtTextBytes   = 64 << 10 // a thought's Reasoning
	MaxListEntryBytes     = 4 << 10  // one entry of a thought's lists, a reason
	MaxStepArgumentsBytes = 64 << 10 // a step's Arguments
	MaxPlanInputsBytes    = 64 << 10 // a plan's Inputs schema, a task's Inputs
	MaxRetryAttempts      = 20
	MaxPlanSteps          = 256 // steps of a plan, step states of a task
)

// Thought is the thought agent's analysis of a request, from which a plan
// is made.
//
// Invariants: Request is non-empty and at most MaxQueryTextBytes; Reasoning
// is at most MaxThoughtTextBytes; each list holds at most MaxListItems
// entries of at most MaxListEntryBytes; Confidence is in [0, 1]; every
// RecommendedTools entry names a tool.
type Thought struct {
	ID string `json:"id"`
	// Principal is the ID of the caller that created the thought, "" when
	// none was known; only it, or an admin, may read it over MCP.
	Principal        string               `json:"principal,omitempty"`
	Request          string               `json:"request"`
	SubGoals         []string             `json:"subGoals"`
	Reasoning        string               `json:"reasoning,omitempty"`
	Approaches       []string             `json:"approaches"`
	Constraints      []string             `json:"constraints"`
	Assumptions      []string             `json:"assumptions"`
	Uncertainties    []string             `json:"uncertainties"`
	Confidence       float64              `json:"confidence"`
	RecommendedTools []ToolRecommendation `json:"recommendedTools"`
	CreatedAt        time.Time            `json:"createdAt"`
}

// ToolRecommendation is a tool the thought agent suggests, and why.
type ToolRecommendation struct {
	Tool   string `json:"tool"`
	Reason string `json:"reason,omitempty"`
}

// ThoughtFilter selects thoughts; zero fields select everything.
type ThoughtFilter struct {
	Text      string // all words occur in Request
	Principal string // created by this principal
	Cursor    string
	Limit     int
}

// ThoughtService stores thoughts.
type ThoughtService interface {
	// CreateThought validates th, assigns ID and CreatedAt when empty, and
	// stores it. EINVALID for a broken invariant, ECONFLICT for a taken ID.
	CreateThought(ctx context.Context, th *Thought) error
	// FindThoughtByID returns ENOTFOUND for an unknown id.
	FindThoughtByID(ctx context.Context, id string) (*Thought, error)
	// FindThoughts lists thoughts matching f, newest first (see memory.go).
	FindThoughts(ctx context.Context, f ThoughtFilter) (items []*Thought, next string, err error)
}

// Plan is a DAG of tool calls that serves a request: each step runs once
// all the steps it depends on have succeeded, steps without a dependency
// between them may run in parallel.
//
// Invariants (see Validate): ThoughtID is empty or a thought id; Request
// and Goal are at most MaxQueryTextBytes, Request is non-empty; Steps holds
// 1 to MaxPlanSteps valid steps with distinct IDs whose dependencies exist
// and form no cycle; Inputs is empty or a JSON object (a JSON Schema) of at
// most MaxPlanInputsBytes.
type Plan struct {
	ID string `json:"id"`
	// Principal is the ID of the caller that created the plan, "" when
	// none was known; only it, or an admin, may read or execute it over
	// MCP.
	Principal string     `json:"principal,omitempty"`
	ThoughtID string     `json:"thoughtId,omitempty"`
	Request   string     `json:"request"`
	Goal      string     `json:"goal,omitempty"`
	Steps     []PlanStep `json:"steps"`
	// Inputs is a JSON Schema (type object) of the values the user must
	// supply before the plan can run; empty when none.
	Inputs    json.RawMessage `json:"inputs,omitempty"`
	CreatedAt time.Time       `json:"createdAt"`
}

// StepIDPattern is what a step id looks like: it appears in argument
// references such as {{steps.<id>.output}}.
var StepIDPattern = regexp.MustCompile(`^[a-z0-9_-]{1,64}$`)

// IsStepID reports whether id matches StepIDPattern. Stores check every
// step of a task on every write; this is that check without the regexp
// machinery (a tenth of the executor's CPU on a 200-step task).
func IsStepID(id string) bool {
	if len(id) == 0 || len(id) > 64 {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// PlanStep is one tool call of a plan.
//
// Invariants: ID matches StepIDPattern; Tool matches ToolNamePattern;
// Arguments is empty or a JSON object of at most MaxStepArgumentsBytes;
// DependsOn names other steps of the plan, each once; Timeout is not
// negative; Retry, when set, is valid; Description is at most
// MaxQueryTextBytes.
type PlanStep struct {
	ID   string `json:"id"`
	Tool string `json:"tool"`
	// Arguments of the tool call. Values may hold references to the
	// outputs of earlier steps, such as "{{steps.search.output.items}}",
	// which the executor resolves; stores keep the bytes as given.
	Arguments         json.RawMessage `json:"arguments,omitempty"`
	DependsOn         []string        `json:"dependsOn,omitempty"`
	Retry             *RetryPolicy    `json:"retry,omitempty"`
	Timeout           time.Duration   `json:"timeoutNs,omitempty"` // 0: the executor's default
	NeedsConfirmation bool            `json:"needsConfirmation,omitempty"`
	Description       string          `json:"description,omitempty"`
}

// RetryPolicy says how a failed step is tried again: at most MaxAttempts
// attempts in all (the first included), waiting InitialBackoff after the
// first failure, doubling up to MaxBackoff (0: no cap).
//
// Invariants: MaxAttempts is in [1, MaxRetryAttempts]; backoffs are not
// negative, and MaxBackoff, when set, is at least InitialBackoff.
type RetryPolicy struct {
	MaxAttempts    int           `json:"maxAttempts"`
	InitialBackoff time.Duration `json:"initialBackoffNs,omitempty"`
	MaxBackoff     time.Duration `json:"maxBackoffNs,omitempty"`
}

// PlanFilter selects plans; zero fields select everything.
type PlanFilter struct {
	ThoughtID string // made from this thought
	Principal string // created by this principal
	Cursor    string
	Limit     int
}

// PlanService stores plans.
type PlanService interface {
	// CreatePlan validates p, assigns ID and CreatedAt when empty, and
	// stores it. EINVALID for a broken invariant, ECONFLICT for a taken ID.
	// The thought named by ThoughtID need not exist.
	CreatePlan(ctx context.Context, p *Plan) error
	// FindPlanByID returns ENOTFOUND for an unknown id.
	FindPlanByID(ctx context.Context, id string) (*Plan, error)
	// FindPlans lists plans matching f, newest first (see memory.go).
	FindPlans(ctx context.Context, f PlanFilter) (items []*Plan, next string, err error)
}

// Validate checks the invariants of a Thought (ID and CreatedAt may be
// empty: the store assigns them).
func (th *Thought) Validate() error {
	switch {
	case th == nil:
		return Errorf(EINVALID, "thought is required")
	case strings.TrimSpace(th.Request) == "":
		return Errorf(EINVALID, "thought request is required")
	case len(th.Request) > MaxQueryTextBytes:
		return Errorf(EINVALID, "thought request is %d bytes; the limit is %d", len(th.Request), MaxQueryTextBytes)
	case len(th.Reasoning) > MaxThoughtTextBytes:
		return Errorf(EINVALID, "thought reasoning is %d bytes; the limit is %d", len(th.Reasoning), MaxThoughtTextBytes)
	case th.Confidence < 0 || th.Confidence > 1 || math.IsNaN(th.Confidence):
		return Errorf(EINVALID, "thought confidence %v is not in [0, 1]", th.Confidence)
	case len(th.RecommendedTools) > MaxListItems:
		return Errorf(EINVALID, "thought recommends %d tools; the limit is %d", len(th.RecommendedTools), MaxListItems)
	case th.ID != "" && !validID(th.ID, ThoughtIDPrefix):
		return Errorf(EINVALID, "thought id %q is malformed", th.ID)
	}
	if err := checkPrincipal(th.Principal, nil, "thought"); err != nil {
		return err
	}
	for _, r := range th.RecommendedTools {
		switch {
		case r.Tool == "" || len(r.Tool) > MaxListEntryBytes:
			return Errorf(EINVALID, "a recommended tool has no name, or a name over %d bytes", MaxListEntryBytes)
		case len(r.Reason) > MaxListEntryBytes:
			return Errorf(EINVALID, "the reason to use %q is %d bytes; the limit is %d", r.Tool, len(r.Reason), MaxListEntryBytes)
		}
	}
	lists := map[string][]string{
		"subGoals": th.SubGoals, "approaches": th.Approaches, "constraints": th.Constraints,
		"assumptions": th.Assumptions, "uncertainties": th.Uncertainties,
	}
	if err := checkLists(lists); err != nil {
		return err
	}
	for name, list := range lists {
		for _, v := range list {
			if len(v) > MaxListEntryBytes {
				return Errorf(EINVALID, "an entry of %s is %d bytes; the limit is %d", name, len(v), MaxListEntryBytes)
			}
		}
	}
	return nil
}

// Validate checks the invariants of a Plan (ID and CreatedAt may be empty:
// the store assigns them). A dependency cycle is reported with its path,
// "a → b → a".
func (p *Plan) Validate() error {
	switch {
	case p == nil:
		return Errorf(EINVALID, "plan is required")
	case strings.TrimSpace(p.Request) == "":
		return Errorf(EINVALID, "plan request is required")
	case len(p.Request) > MaxQueryTextBytes || len(p.Goal) > MaxQueryTextBytes:
		return Errorf(EINVALID, "plan request and goal are limited to %d bytes", MaxQueryTextBytes)
	case p.ID != "" && !validID(p.ID, PlanIDPrefix):
		return Errorf(EINVALID, "plan id %q is malformed", p.ID)
	case p.ThoughtID != "" && !validID(p.ThoughtID, ThoughtIDPrefix):
		return Errorf(EINVALID, "plan thought id %q is malformed", p.ThoughtID)
	case len(p.Steps) == 0:
		return Errorf(EINVALID, "plan has no steps")
	case len(p.Steps) > MaxPlanSteps:
		return Errorf(EINVALID, "plan has %d steps; the limit is %d", len(p.Steps), MaxPlanSteps)
	}
	if err := checkJSONObject(p.Inputs, MaxPlanInputsBytes, "plan inputs"); err != nil {
		return err
	}
	if err := checkPrincipal(p.Principal, nil, "plan"); err != nil {
		return err
	}
	index := make(map[string]int, len(p.Steps))
	for i := range p.Steps {
		s := &p.Steps[i]
		if err := s.validate(); err != nil {
			return err
		}
		if _, dup := index[s.ID]; dup {
			return Errorf(EINVALID, "plan step id %q is used twice", s.ID)
		}
		index[s.ID] = i
	}
	for _, s := range p.Steps {
		for _, d := range s.DependsOn {
			if _, ok := index[d]; !ok {
				return Errorf(EINVALID, "plan step %q depends on %q, which is not a step of the plan", s.ID, d)
			}
		}
	}
	if cycle := findCycle(p.Steps, index); cycle != nil {
		return Errorf(EINVALID, "plan steps depend on each other in a cycle: %s", strings.Join(cycle, " → "))
	}
	return nil
}

func (s *PlanStep) validate() error {
	switch {
	case !IsStepID(s.ID):
		return Errorf(EINVALID, "plan step id %q does not match %v", s.ID, StepIDPattern)
	case !ToolNamePattern.MatchString(s.Tool):
		return Errorf(EINVALID, "plan step %q: tool %q does not match %v", s.ID, s.Tool, ToolNamePattern)
	case s.Timeout < 0:
		return Errorf(EINVALID, "plan step %q: timeout %v is negative", s.ID, s.Timeout)
	case len(s.Description) > MaxQueryTextBytes:
		return Errorf(EINVALID, "plan step %q: description is %d bytes; the limit is %d", s.ID, len(s.Description), MaxQueryTextBytes)
	case len(s.DependsOn) > MaxListItems:
		return Errorf(EINVALID, "plan step %q has %d dependencies; the limit is %d", s.ID, len(s.DependsOn), MaxListItems)
	}
	for i, d := range s.DependsOn {
		if slices.Contains(s.DependsOn[:i], d) {
			return Errorf(EINVALID, "plan step %q depends on %q twice", s.ID, d)
		}
	}
	if r := s.Retry; r != nil {
		switch {
		case r.MaxAttempts < 1 || r.MaxAttempts > MaxRetryAttempts:
			return Errorf(EINVALID, "plan step %q: retry maxAttempts %d is not in [1, %d]", s.ID, r.MaxAttempts, MaxRetryAttempts)
		case r.InitialBackoff < 0 || r.MaxBackoff < 0:
			return Errorf(EINVALID, "plan step %q: retry backoffs must not be negative", s.ID)
		case r.MaxBackoff > 0 && r.MaxBackoff < r.InitialBackoff:
			return Errorf(EINVALID, "plan step %q: retry maxBackoff %v is below initialBackoff %v", s.ID, r.MaxBackoff, r.InitialBackoff)
		}
	}
	return checkJSONObject(s.Arguments, MaxStepArgumentsBytes, "plan step "+s.ID+" arguments")
}

// findCycle returns a dependency cycle of steps as the ids along it, the
// first repeated at the end ("a", "b", "a"), or nil when there is none.
// Every dependency must be in index. Depth-first search, iterative so that
// no input can exhaust the stack; steps are visited in plan order, so the
// cycle reported is deterministic.
func findCycle(steps []PlanStep, index map[string]int) []string {
	const (
		unvisited = iota
		onPath
		done
	)
	state := make([]int, len(steps))
	type frame struct{ step, next int } // next: the next dependency to follow
	for root := range steps {
		if state[root] != unvisited {
			continue
		}
		path := []frame{{root, 0}}
		state[root] = onPath
		for len(path) > 0 {
			top := &path[len(path)-1]
			deps := steps[top.step].DependsOn
			if top.next == len(deps) {
				state[top.step] = done
				path = path[:len(path)-1]
				continue
			}
			d := index[deps[top.next]]
			top.next++
			switch state[d] {
			case onPath:
				var cycle []string
				start := slices.IndexFunc(path, func(f frame) bool { return f.step == d })
				for _, f := range path[start:] {
					cycle = append(cycle, steps[f.step].ID)
				}
				return append(cycle, steps[d].ID)
			case unvisited:
				state[d] = onPath
				path = append(path, frame{d, 0})
			}
		}
	}
	return nil
}

// checkPrincipal checks the creator recorded with a thought, a plan or a
// task.
func checkPrincipal(id string, tools []string, what string) error {
	switch {
	case len(id) > MaxPrincipalIDBytes:
		return Errorf(EINVALID, "%s principal is %d bytes; the limit is %d", what, len(id), MaxPrincipalIDBytes)
	case len(tools) > MaxListItems:
		return Errorf(EINVALID, "%s principal allowlist has %d patterns; the limit is %d", what, len(tools), MaxListItems)
	}
	for _, t := range tools {
		if t == "" || len(t) > MaxListEntryBytes {
			return Errorf(EINVALID, "%s principal allowlist has an empty pattern or one over %d bytes", what, MaxListEntryBytes)
		}
	}
	return nil
}

// validID reports whether id is a well-formed id of the aggregate with the
// given prefix.
func validID(id, prefix string) bool {
	return IDPattern.MatchString(id) && strings.HasPrefix(id, prefix+"_")
}

// checkJSONObject accepts an empty raw, or a JSON object of at most limit
// bytes.
func checkJSONObject(raw json.RawMessage, limit int, what string) error {
	if len(raw) == 0 {
		return nil
	}
	if len(raw) > limit {
		return Errorf(EINVALID, "%s is %d bytes; the limit is %d", what, len(raw), limit)
	}
	if !json.Valid(raw) || !utf8.Valid(raw) {
		return Errorf(EINVALID, "%s is not valid JSON", what)
	}
	if trimmed := bytes.TrimLeft(raw, " \t\r\n"); trimmed[0] != '{' {
		return Errorf(EINVALID, "%s is not a JSON object", what)
	}
	return nil
}
