package agentsmcp

import (
	"context"
	"time"
)

// Usage is what one principal holds of one kind of record: how many, and
// their StoredBytes. memory/quota bounds it.
type Usage struct {
	Count int64 `json:"count"`
	Bytes int64 `json:"bytes"`
}

// UsageService reports what each principal holds, from sizes recorded at
// each write.
type UsageService interface {
	// InsightUsage counts the insights of principal ("" is AnonymousPrincipal).
	InsightUsage(ctx context.Context, principal string) (Usage, error)
	// TaskUsage counts the tasks created by principal ("": without one).
	TaskUsage(ctx context.Context, principal string) (Usage, error)
}

// InsightPruner is the retention of insights.
type InsightPruner interface {
	// DeleteInsightsCreatedBefore deletes at most limit insights created before
	// createdBefore, oldest first (vectors too), and reports how many;
	// idempotent.
	DeleteInsightsCreatedBefore(ctx context.Context, createdBefore time.Time, limit int) (int64, error)
}
