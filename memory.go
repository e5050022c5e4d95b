package agentsmcp

import (
	"context"
	"time"
)

// This file holds the aggregates of memory: what agents-mcp learns from
// every finished task, and the services that store them. Each service is
// implemented by memory/sqlite (the embedded default) and memory/mongo
// (production), and both pass the same behavioural suite, memory/storetest.
//
// Common contract of the Find* methods: results are ordered newest first
// (ties by id, higher id first), at most Limit of them (default
// [DefaultPageSize] when Limit ≤ 0, capped at [MaxPageSize]), and the
// returned cursor, when not empty, fetches the next page with the same
// filter; paging visits exactly once every item that matches throughout
// and whose sort key does not change meanwhile. Times are kept at
// millisecond precision and returned in UTC. A cursor that does not parse is
// EINVALID. Text filters are matched as plain words, never as patterns:
// characters such as '*', '"', '(' or '.*' have no special meaning. Words
// are separated by white space and matched case-insensitively; a filter
// text without any letter or digit matches nothing.

// Who sees what is remembered. Every learning, insight and plan pattern
// records its Principal: the ID of the principal whose call or task
// produced it, AnonymousPrincipal when there was none (a server without
// credentials, or a task created before tasks recorded their creator).
// Records stored before
// principals were recorded belong to AnonymousPrincipal too. The stores keep
// it and filter by it; which principal a reader is confined to is the
// MemoryVisibility of the server, applied by the readers that serve
// principals (the memory tools and the agents' recall). The admin API is
// not confined: it sees every record and may filter by principal.

// MemoryVisibility says which learnings, insights and plan patterns a
// principal may read.
type MemoryVisibility string

// The memory visibilities.
const (
	// VisibilityPrincipal confines every principal to what its own calls
	// and tasks produced: the safe default. Records of AnonymousPrincipal
	// (including those from before principals were recorded) are read only
	// by the anonymous principal (a server without credentials) and the
	// admin API.
	VisibilityPrincipal MemoryVisibility = "principal"
	// VisibilityShared lets every principal read every record: one team
	// sharing what its agents learn.
	VisibilityShared MemoryVisibility = "shared"
)

// MemoryVisibilities lists every MemoryVisibility.
var MemoryVisibilities = []MemoryVisibility{VisibilityPrincipal, VisibilityShared}

// MemoryOwner returns the principal a record of principal ID id belongs to:
// id, or AnonymousPrincipal for an empty id.
func MemoryOwner(id string) string {
	if id == "" {
		return AnonymousPrincipal
	}
	return id
}

// MemoryOwnerFrom returns the principal the records written in ctx belong
// to: MemoryOwner of the ID of ctx's Principal.
func MemoryOwnerFrom(ctx context.Context) string { return MemoryOwner(PrincipalIDFrom(ctx)) }

// ReaderScope returns the Principal filter of a reader in ctx under v: ""
// (every principal) under VisibilityShared, MemoryOwnerFrom(ctx) otherwise,
// so that the zero value is as safe as VisibilityPrincipal.
func (v MemoryVisibility) ReaderScope(ctx context.Context) string {
	if v == VisibilityShared {
		return ""
	}
	return MemoryOwnerFrom(ctx)
}

// Page sizes of every Find* method.
const (
	DefaultPageSize = 20
	MaxPageSize     = 200
)

// PageSize applies the Find* contract to a requested limit: zero or less
// means DefaultPageSize, more than MaxPageSize is capped.
func PageSize(limit int) int {
	switch {
	case limit <= 0:
		return DefaultPageSize
	case limit > MaxPageSize:
		return MaxPageSize
	}
	return limit
}

// Limits on stored text, so one caller cannot bloat the store.
const (
	MaxInsightTextBytes = 16 << 10
	MaxQueryTextBytes   = 8 << 10
	MaxListItems        = 100 // tags, evidence, errors, steps…
)

// MaxCommonErrors caps ToolPerformance.CommonErrors: only the most frequent
// error classes of a tool are reported.
const MaxCommonErrors = 5

// Insight is a piece of knowledge worth reusing: "server-filesystem's
// search_files is slow on large trees; prefer list_directory first".
//
// Invariants: Text is non-empty and at most MaxInsightTextBytes; Type is one
// of the InsightType values; Confidence is in [0, 1]; AppliesTo and Evidence
// hold at most MaxListItems entries each.
type Insight struct {
	ID   string      `json:"id"`
	Text string      `json:"text"`
	Type InsightType `json:"type"`
	// AppliesTo names what the insight is about: tool names
	// ("files__search_files"), upstream names, or free tags ("goal:report").
	AppliesTo  []string `json:"appliesTo"`
	Confidence float64  `json:"confidence"`
	// Evidence are ids of the tasks or learnings that support the insight.
	Evidence []string `json:"evidence"`
	Source   string   `json:"source,omitempty"` // who recorded it: "agent", "user", a principal
	// Principal is whose call or task produced it (see MemoryVisibility);
	// stores record AnonymousPrincipal for an empty one.
	Principal string    `json:"principal"`
	CreatedAt time.Time `json:"createdAt"`
}

// InsightType classifies insights.
type InsightType string

// The insight types.
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
	// stores it. EINVALID for a broken invariant, ECONFLICT for a taken ID.
	CreateInsight(ctx context.Context, in *Insight) error
	// FindInsightByID returns ENOTFOUND for an unknown id.
	FindInsightByID(ctx context.Context, id string) (*Insight, error)
	// FindInsights lists insights matching f.
	FindInsights(ctx context.Context, f InsightFilter) (items []*Insight, next string, err error)
	// DeleteInsight returns ENOTFOUND for an unknown id.
	DeleteInsight(ctx context.Context, id string) error
}

// Learning is what one finished task taught: written once when the task
// ends, never updated.
//
// Invariants: Query is non-empty, at most MaxQueryTextBytes; Outcome is one
// of the Outcome values; list fields hold at most MaxListItems entries;
// Duration and Retries are not negative.
type Learning struct {
	ID     string `json:"id"`
	TaskID string `json:"taskId,omitempty"`
	// PlanID is the plan the task ran unchanged, so that the plan can be
	// reused once the task is deleted (tasks.retention); empty when the
	// executor repaired a step, since the plan alone is then not what
	// worked.
	PlanID string `json:"planId,omitempty"`
	Query  string `json:"query"`          // the user's request
	Goal   string `json:"goal,omitempty"` // the generalised goal
	// Steps is the plan's shape: the tools of its steps in execution order.
	Steps    []string      `json:"steps"`
	Tools    []string      `json:"tools"`     // distinct tools used
	Sources  []string      `json:"upstreams"` // distinct sources of the tools used (see doc.go, Vocabulary)
	Outcome  Outcome       `json:"outcome"`
	Duration time.Duration `json:"durationNs"`
	Errors   []string      `json:"errors"`
	Retries  int           `json:"retries"`
	// Principal is whose task it was (see MemoryVisibility); stores record
	// AnonymousPrincipal for an empty one.
	Principal string    `json:"principal"`
	CreatedAt time.Time `json:"createdAt"`
}

// Outcome is how a task ended.
type Outcome string

// The outcomes.
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
	// stores it durably before returning. EINVALID for a broken invariant,
	// ECONFLICT for a taken ID: a learning is never overwritten.
	CreateLearning(ctx context.Context, l *Learning) error
	// FindLearningByID returns ENOTFOUND for an unknown id.
	FindLearningByID(ctx context.Context, id string) (*Learning, error)
	FindLearnings(ctx context.Context, f LearningFilter) (items []*Learning, next string, err error)
}

// LatencyBucketBounds are the upper bounds of the tool-latency histogram;
// the last bucket counts everything slower. Percentiles come from the
// histogram, so no store needs $avg or $max.
var LatencyBucketBounds = []time.Duration{
	5 * time.Millisecond, 10 * time.Millisecond, 25 * time.Millisecond, 50 * time.Millisecond,
	100 * time.Millisecond, 250 * time.Millisecond, 500 * time.Millisecond,
	time.Second, 2500 * time.Millisecond, 5 * time.Second, 10 * time.Second, 30 * time.Second, time.Minute,
}

// MaxToolCallBatch bounds one call of
// [ToolPerformanceService.RecordToolCalls], and so the size of one store
// transaction.
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
	// Buckets has len(LatencyBucketBounds)+1 entries and is not cumulative:
	// Buckets[i] counts calls slower than LatencyBucketBounds[i-1] (or any
	// call, for i = 0) and no slower than LatencyBucketBounds[i]; the extra
	// last bucket counts the calls slower than every bound.
	Buckets []int64 `json:"buckets"`
	// CommonErrors maps error classes to their counts, for the at most
	// MaxCommonErrors most frequent classes.
	CommonErrors map[string]int64 `json:"commonErrors"`
	LastCallAt   time.Time        `json:"lastCallAt"` // the latest ToolCall.At recorded

	// Recent are the outcomes weighed by age (see ReliabilityHalfLife),
	// the evidence of the reliability estimate.
	Recent DecayedCounts `json:"recent"`
	// ConsecutiveFailures counts the failed calls recorded since the last
	// successful one, in the order they were recorded.
	ConsecutiveFailures int64     `json:"consecutiveFailures"`
	LastSuccessAt       time.Time `json:"lastSuccessAt,omitzero"` // the latest ToolCall.At of a success
	LastFailureAt       time.Time `json:"lastFailureAt,omitzero"` // the latest ToolCall.At of a failure
	// LastErrorClass is the error class of the failure recorded last.
	LastErrorClass string `json:"lastErrorClass,omitempty"`
}

// Evidence is the tool's overall reliability evidence.
func (p *ToolPerformance) Evidence() ReliabilityEvidence {
	return ReliabilityEvidence{Recent: p.Recent, ConsecutiveFailures: p.ConsecutiveFailures,
		LastSuccessAt: p.LastSuccessAt, LastFailureAt: p.LastFailureAt, LastErrorClass: p.LastErrorClass}
}

// SuccessRate is the share of calls without error, 0 with no calls.
func (p *ToolPerformance) SuccessRate() float64 {
	if p.Calls == 0 {
		return 0
	}
	return float64(p.Calls-p.Errors) / float64(p.Calls)
}

// ToolPerformanceService keeps per-tool counters. Recording is concurrent-
// safe across replicas: stores update counters atomically, never by
// read-modify-write.
type ToolPerformanceService interface {
	// RecordToolCall counts c; a zero c.At means now. EINVALID for an empty
	// Tool or a negative Duration.
	RecordToolCall(ctx context.Context, c ToolCall) error
	// RecordToolCalls counts every call of calls, with the same figures as
	// RecordToolCall on each in order, as one batch: SQLite writes it in
	// one transaction; MongoDB with one counter update per tool of the
	// batch (see internal/toolperf.SumCalls). EINVALID, with nothing counted, for more
	// than MaxToolCallBatch calls or an invalid one; an empty batch is a
	// no-op.
	RecordToolCalls(ctx context.Context, calls []ToolCall) error
	// FindToolPerformance returns ENOTFOUND for a tool never recorded.
	FindToolPerformance(ctx context.Context, tool string) (*ToolPerformance, error)
	// ListToolPerformance returns every tool's figures, most called first
	// (ties by tool name, ascending).
	ListToolPerformance(ctx context.Context) ([]*ToolPerformance, error)
}

// PlanPattern is a plan shape that worked for a kind of goal, as one
// principal's tasks used it: the same goal and steps used by two principals
// are two patterns, each with its own counters (see MemoryVisibility).
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
	// RecordPatternUse adds one use of principal's (goal, steps) pattern,
	// creating it on first use, atomically, and returns the pattern as
	// updated. The same principal, goal and steps (in the same order)
	// always give the same pattern, whose id is PatternID; an empty
	// principal is AnonymousPrincipal; a zero at means now. EINVALID for an
	// empty goal, a goal longer than MaxQueryTextBytes or more than
	// MaxListItems steps.
	RecordPatternUse(ctx context.Context, principal, goal string, steps []string, success bool, at time.Time) (*PlanPattern, error)
	// FindPatternByID returns ENOTFOUND for an unknown id.
	FindPatternByID(ctx context.Context, id string) (*PlanPattern, error)
	// FindPatterns lists patterns matching f ordered by Successes, highest
	// first (ties by id, higher id first), not newest first.
	FindPatterns(ctx context.Context, f PatternFilter) (items []*PlanPattern, next string, err error)
}
