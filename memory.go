package agentsmcp

import (
	"context"
	"time"
)

// Common contract of the Find* methods: newest first (ties by id,
// descending), at most internal/storedform.PageSize(Limit) items, and a
// cursor (when not empty) for the next page of the same filter that visits
// each unchanged match once; a bad cursor is EINVALID. Times are UTC, millisecond
// precision. Text filters match plain words case-insensitively, never
// patterns; a text without a letter or digit matches nothing.

// MemoryVisibility says which records (learnings, insights, plan patterns)
// a principal may read; each carries the Principal that produced it.
type MemoryVisibility string

const (
	// VisibilityPrincipal (the default) confines each principal to its own
	// records.
	VisibilityPrincipal MemoryVisibility = "principal"
	// VisibilityShared lets every principal read every record.
	VisibilityShared MemoryVisibility = "shared"
)

// MemoryOwner returns id, or AnonymousPrincipal for "".
func MemoryOwner(id string) string {
	if id == "" {
		return AnonymousPrincipal
	}
	return id
}

// MemoryOwnerFrom is MemoryOwner of ctx's principal.
func MemoryOwnerFrom(ctx context.Context) string { return MemoryOwner(PrincipalIDFrom(ctx)) }

// Page sizes of every Find* method.
const (
	DefaultPageSize = 20
	MaxPageSize     = 200
)

// Limits on stored text, so one caller cannot bloat the store.
const (
	MaxInsightTextBytes = 16 << 10
	MaxQueryTextBytes   = 8 << 10
	MaxListItems        = 100 // tags, evidence, errors, steps…
	MaxCommonErrors     = 5   // ToolPerformance.CommonErrors
)

// Insight is a reusable piece of knowledge. Invariants: internal/validate.Insight.
type Insight struct {
	ID   string      `json:"id"`
	Text string      `json:"text"`
	Type InsightType `json:"type"`
	// AppliesTo names tools, upstreams or tags; Evidence task or learning ids.
	AppliesTo  []string `json:"appliesTo"`
	Confidence float64  `json:"confidence"`
	Evidence   []string `json:"evidence"`
	Source     string   `json:"source,omitempty"` // who recorded it: "agent", "user", a principal
	// Principal produced it (see MemoryVisibility).
	Principal string    `json:"principal"`
	CreatedAt time.Time `json:"createdAt"`
}

// InsightType classifies insights.
type InsightType string

const (
	InsightObservation  InsightType = "observation"
	InsightBestPractice InsightType = "best_practice"
	InsightPitfall      InsightType = "pitfall"
	InsightPreference   InsightType = "preference"
)

// InsightTypes lists every valid InsightType.
var InsightTypes = []InsightType{InsightObservation, InsightBestPractice, InsightPitfall, InsightPreference}

// InsightFilter selects insights; zero fields select everything.
type InsightFilter struct {
	Type      InsightType
	AppliesTo string // exact match on one AppliesTo entry
	Text      string // all words must occur in Text
	Principal string // produced by this principal
	Cursor    string
	Limit     int
}

// InsightService stores insights.
type InsightService interface {
	// CreateInsight validates in, assigns ID and CreatedAt when empty, and
	// stores it. EINVALID, ECONFLICT for a taken ID.
	CreateInsight(ctx context.Context, in *Insight) error
	// FindInsightByID returns ENOTFOUND for an unknown id.
	FindInsightByID(ctx context.Context, id string) (*Insight, error)
	// FindInsights lists insights matching f.
	FindInsights(ctx context.Context, f InsightFilter) (items []*Insight, next string, err error)
	// DeleteInsight returns ENOTFOUND for an unknown id.
	DeleteInsight(ctx context.Context, id string) error
}

// Learning is what one finished task taught; written once. Invariants:
// internal/validate.Learning.
type Learning struct {
	ID     string `json:"id"`
	TaskID string `json:"taskId,omitempty"`
	// PlanID is the plan the task ran unchanged; empty once a step was repaired.
	PlanID string `json:"planId,omitempty"`
	Query  string `json:"query"`          // the user's request
	Goal   string `json:"goal,omitempty"` // the generalised goal
	// Steps are the tools of the plan's steps in execution order.
	Steps    []string      `json:"steps"`
	Tools    []string      `json:"tools"`     // distinct tools used
	Sources  []string      `json:"upstreams"` // distinct sources of the tools used (see doc.go, Vocabulary)
	Outcome  Outcome       `json:"outcome"`
	Duration time.Duration `json:"durationNs"`
	Errors   []string      `json:"errors"`
	Retries  int           `json:"retries"`
	// Principal is whose task it was.
	Principal string    `json:"principal"`
	CreatedAt time.Time `json:"createdAt"`
}

// Outcome is how a task ended.
type Outcome string

const (
	OutcomeSuccess   Outcome = "success"
	OutcomePartial   Outcome = "partial"
	OutcomeFailure   Outcome = "failure"
	OutcomeCancelled Outcome = "cancelled"
)

// Outcomes lists every valid Outcome.
var Outcomes = []Outcome{OutcomeSuccess, OutcomePartial, OutcomeFailure, OutcomeCancelled}

// LearningFilter selects learnings; zero fields select everything.
type LearningFilter struct {
	Tool    string  // used this tool
	Source  string  // used a tool of this source ("local" or an upstream)
	Outcome Outcome // ended this way
	Since   time.Time
	Until   time.Time // exclusive
	Text    string    // all words occur in Query or Goal
	// Principal selects the learnings of this principal's tasks.
	Principal string
	Cursor    string
	Limit     int
}

// LearningService stores learnings.
type LearningService interface {
	// CreateLearning validates l, assigns ID and CreatedAt when empty, and
	// stores it durably. EINVALID, ECONFLICT (never overwritten).
	CreateLearning(ctx context.Context, l *Learning) error
	// FindLearningByID returns ENOTFOUND for an unknown id.
	FindLearningByID(ctx context.Context, id string) (*Learning, error)
	FindLearnings(ctx context.Context, f LearningFilter) (items []*Learning, next string, err error)
}

// LatencyBucketBounds bound the latency histogram; one more bucket is slower.
var LatencyBucketBounds = []time.Duration{
	5 * time.Millisecond, 10 * time.Millisecond, 25 * time.Millisecond, 50 * time.Millisecond,
	100 * time.Millisecond, 250 * time.Millisecond, 500 * time.Millisecond,
	time.Second, 2500 * time.Millisecond, 5 * time.Second, 10 * time.Second, 30 * time.Second, time.Minute,
}

// MaxToolCallBatch bounds one RecordToolCalls.
const MaxToolCallBatch = 1000

// ToolCall is one observed tool call, the input of tool performance.
type ToolCall struct {
	Tool     string
	Duration time.Duration
	Error    string // empty on success; normalised to a short class by the store
	At       time.Time
}

// ToolPerformance aggregates the calls of one tool.
type ToolPerformance struct {
	Tool   string `json:"tool"`
	Calls  int64  `json:"calls"`
	Errors int64  `json:"errors"`
	// Buckets has len(LatencyBucketBounds)+1 non-cumulative counts.
	Buckets []int64 `json:"buckets"`
	// CommonErrors counts the MaxCommonErrors most frequent error classes.
	CommonErrors map[string]int64 `json:"commonErrors"`
	LastCallAt   time.Time        `json:"lastCallAt"` // the latest ToolCall.At recorded

	// Recent are the outcomes weighed by age, the reliability evidence.
	Recent DecayedCounts `json:"recent"`
	// ConsecutiveFailures counts failures since the last success.
	ConsecutiveFailures int64     `json:"consecutiveFailures"`
	LastSuccessAt       time.Time `json:"lastSuccessAt,omitzero"` // the latest ToolCall.At of a success
	LastFailureAt       time.Time `json:"lastFailureAt,omitzero"` // the latest ToolCall.At of a failure
	// LastErrorClass is the error class of the failure recorded last.
	LastErrorClass string `json:"lastErrorClass,omitempty"`
}

// ToolPerformanceService keeps per-tool counters, updated atomically.
type ToolPerformanceService interface {
	// RecordToolCall counts c (zero At: now). EINVALID for no Tool or a
	// negative Duration.
	RecordToolCall(ctx context.Context, c ToolCall) error
	// RecordToolCalls counts calls as one batch. EINVALID, with nothing
	// counted, past MaxToolCallBatch or for an invalid call.
	RecordToolCalls(ctx context.Context, calls []ToolCall) error
	// FindToolPerformance returns ENOTFOUND for a tool never recorded.
	FindToolPerformance(ctx context.Context, tool string) (*ToolPerformance, error)
	// ListToolPerformance returns every tool's figures, most called first.
	ListToolPerformance(ctx context.Context) ([]*ToolPerformance, error)
}

// PlanPattern is a plan shape that worked for a goal, per principal.
type PlanPattern struct {
	ID        string    `json:"id"`
	Principal string    `json:"principal"` // whose tasks used it; with Goal and Steps, the key
	Goal      string    `json:"goal"`      // generalised goal
	Steps     []string  `json:"steps"`     // tools in order
	Uses      int64     `json:"uses"`
	Successes int64     `json:"successes"`
	LastUsed  time.Time `json:"lastUsed"` // the latest use recorded
}

// SuccessRate is Successes/Uses, 0 when never used.
func (p *PlanPattern) SuccessRate() float64 {
	if p.Uses == 0 {
		return 0
	}
	return float64(p.Successes) / float64(p.Uses)
}

// PatternFilter selects plan patterns.
type PatternFilter struct {
	Text      string // all words occur in Goal
	Principal string // used by this principal's tasks
	Cursor    string
	Limit     int
}

// PatternService stores plan patterns.
type PatternService interface {
	// RecordPatternUse atomically adds one use of principal's (goal, steps)
	// pattern (id internal/storedform.PatternID), creating it, and returns it; a zero at is now.
	// EINVALID for a bad goal or too many steps.
	RecordPatternUse(ctx context.Context, principal, goal string, steps []string, success bool, at time.Time) (*PlanPattern, error)
	// FindPatternByID returns ENOTFOUND for an unknown id.
	FindPatternByID(ctx context.Context, id string) (*PlanPattern, error)
	// FindPatterns lists patterns by Successes, highest first.
	FindPatterns(ctx context.Context, f PatternFilter) (items []*PlanPattern, next string, err error)
}
