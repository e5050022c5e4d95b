package agentsmcp

import (
	"context"
	"time"
)

// Quotas bound what one principal may keep in the store: without them a
// single credential fills the store at the speed of its rate limit, and
// keeps it filled forever. They are enforced against the store, so that
// every replica sees the same usage: a create first reads the principal's
// [Usage] ([UsageService]) and is refused with
// EQUOTA when one more record would go past the [Quota]. Records that
// exist are never deleted for a quota: retention does that, by age.

// Usage is what one principal holds of one kind of record: how many, and
// their stored size in bytes ([Insight.StoredBytes], [Task.StoredBytes]).
type Usage struct {
	Count int64 `json:"count"`
	Bytes int64 `json:"bytes"`
}

// Quota bounds the Usage of each principal; a zero field is no bound.
type Quota struct {
	MaxCount int64 `json:"maxCount,omitempty"`
	MaxBytes int64 `json:"maxBytes,omitempty"`
}

// Admit reports whether one more record of size bytes may join u: nil, or
// an EQUOTA error whose message names the principal, what is counted (a
// plural noun: "insights"), the quota and the setting that configures it
// (a prefix such as "quotas.insights", to which .max_count or .max_bytes
// is added).
func (q Quota) Admit(u Usage, size int64, principal, what, setting string) error {
	switch {
	case q.MaxCount > 0 && u.Count+1 > q.MaxCount:
		return Errorf(EQUOTA, "quota exceeded: principal %q holds %d %s, and its quota (%s.max_count) is %d; delete some, or wait for their retention",
			principal, u.Count, what, setting, q.MaxCount)
	case q.MaxBytes > 0 && u.Bytes+size > q.MaxBytes:
		return Errorf(EQUOTA, "quota exceeded: principal %q holds %d bytes of %s and this one is %d bytes more; its quota (%s.max_bytes) is %d bytes; delete some, or wait for their retention",
			principal, u.Bytes, what, size, setting, q.MaxBytes)
	}
	return nil
}

// UsageService reports what each principal holds in a store. Both stores
// implement it, from a size recorded with each record at each write, so
// that neither reads the records themselves.
type UsageService interface {
	// InsightUsage counts the insights of principal (see MemoryOwner: ""
	// is AnonymousPrincipal) and sums their StoredBytes.
	InsightUsage(ctx context.Context, principal string) (Usage, error)
	// TaskUsage counts the tasks created by principal ("" selects the
	// tasks created without one) and sums their StoredBytes as last
	// stored.
	TaskUsage(ctx context.Context, principal string) (Usage, error)
}

// InsightPruner deletes old insights: the retention of insights
// (memory.insight_retention).
type InsightPruner interface {
	// DeleteInsightsCreatedBefore deletes at most limit (see PageSize)
	// insights created before createdBefore, the oldest first, as
	// DeleteInsight does each (their vectors go too), and reports how
	// many it deleted; a caller repeats it until fewer than limit are
	// deleted. Deleting is idempotent, so that every replica may sweep.
	DeleteInsightsCreatedBefore(ctx context.Context, createdBefore time.Time, limit int) (int64, error)
}

// StoredBytes is the size of what in holds, as the insight quotas count
// it: its text and source and the entries of its lists.
func (in *Insight) StoredBytes() int64 {
	size := len(in.Text) + len(in.Source)
	for _, v := range in.AppliesTo {
		size += len(v)
	}
	for _, v := range in.Evidence {
		size += len(v)
	}
	return int64(size)
}
