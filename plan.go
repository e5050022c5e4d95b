package agentsmcp

import (
	"context"
	"encoding/json"
	"regexp"
	"time"
)

// Limits on thoughts and plans.
const (
	MaxThoughtTextBytes   = 64 << 10 // a thought's Reasoning
	MaxListEntryBytes     = 4 << 10  // one entry of a thought's lists, a reason
	MaxStepArgumentsBytes = 64 << 10 // a step's Arguments
	MaxPlanInputsBytes    = 64 << 10 // a plan's Inputs schema, a task's Inputs
	MaxRetryAttempts      = 20
	MaxPlanSteps          = 256 // steps of a plan, step states of a task
)

// Thought is the thought agent's analysis of a request (internal/validate.Thought).
type Thought struct {
	ID string `json:"id"`
	// Principal created it ("": none known); only it or an admin reads it.
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
	// CreateThought validates and stores th (ID, CreatedAt). EINVALID, ECONFLICT.
	CreateThought(ctx context.Context, th *Thought) error
	// FindThoughtByID returns ENOTFOUND for an unknown id.
	FindThoughtByID(ctx context.Context, id string) (*Thought, error)
	// FindThoughts lists thoughts matching f, newest first.
	FindThoughts(ctx context.Context, f ThoughtFilter) (items []*Thought, next string, err error)
}

// Plan is a DAG of tool calls: a step runs once its dependencies succeeded.
// Invariants: internal/validate.Plan.
type Plan struct {
	ID string `json:"id"`
	// Principal created it; only it or an admin reads or executes it.
	Principal string     `json:"principal,omitempty"`
	ThoughtID string     `json:"thoughtId,omitempty"`
	Request   string     `json:"request"`
	Goal      string     `json:"goal,omitempty"`
	Steps     []PlanStep `json:"steps"`
	// Inputs is a JSON Schema of the values the user must supply; empty: none.
	Inputs    json.RawMessage `json:"inputs,omitempty"`
	CreatedAt time.Time       `json:"createdAt"`
}

// StepIDPattern is what a step id looks like ({{steps.<id>.output}}).
var StepIDPattern = regexp.MustCompile(`^[a-z0-9_-]{1,64}$`)

// IsStepID is StepIDPattern.MatchString without the regexp, for hot paths.
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
type PlanStep struct {
	ID   string `json:"id"`
	Tool string `json:"tool"`
	// Arguments may reference earlier outputs: "{{steps.search.output.items}}".
	Arguments         json.RawMessage `json:"arguments,omitempty"`
	DependsOn         []string        `json:"dependsOn,omitempty"`
	Retry             *RetryPolicy    `json:"retry,omitempty"`
	Timeout           time.Duration   `json:"timeoutNs,omitempty"` // 0: the executor's default
	NeedsConfirmation bool            `json:"needsConfirmation,omitempty"`
	Description       string          `json:"description,omitempty"`
}

// RetryPolicy: at most MaxAttempts attempts in all, waiting InitialBackoff,
// doubling up to MaxBackoff (0: no cap).
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
	// CreatePlan validates and stores p (ID, CreatedAt). EINVALID, ECONFLICT.
	CreatePlan(ctx context.Context, p *Plan) error
	// FindPlanByID returns ENOTFOUND for an unknown id.
	FindPlanByID(ctx context.Context, id string) (*Plan, error)
	// FindPlans lists plans matching f, newest first.
	FindPlans(ctx context.Context, f PlanFilter) (items []*Plan, next string, err error)
}
