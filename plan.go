package agentsmcp

import (
	"context"
	"encoding/json"
	"regexp"
	"time"
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
// Invariants (checked by internal/validate.Plan): ThoughtID is empty or a thought id; Request
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
