package config

import (
	"strconv"
	"time"
)

// Defaults of the quotas per principal, far above what
// one person's agents keep: they stop a runaway or hostile client, not a
// user. 0 means no quota.
const (
	DefaultQuotaInsightsMaxCount = 10_000
	DefaultQuotaInsightsMaxBytes = 64 << 20
	DefaultQuotaTasksMaxCount    = 10_000
	DefaultQuotaTasksMaxBytes    = 512 << 20
	// DefaultQuotaListenTaskIDs is router.DefaultMaxListenTaskIDsPerPrincipal:
	// the distinct task ids one principal's listen streams watch at once
	// on one replica.
	DefaultQuotaListenTaskIDs = 1000
)

// MinInsightRetention keeps the sweep (a tenth of the retention, at least
// a second) from running in a busy loop.
const MinInsightRetention = time.Minute

// fileQuotas is the `quotas:` section.
type fileQuotas struct {
	Insights      *fileQuota `yaml:"insights"`
	Tasks         *fileQuota `yaml:"tasks"`
	ListenTaskIDs *int       `yaml:"listen_task_ids"`
}

type fileQuota struct {
	MaxCount *int64 `yaml:"max_count"`
	MaxBytes *int64 `yaml:"max_bytes"`
}

// applyFileQuotas copies the quotas section and memory.insight_retention.
func (l *loader) applyFileQuotas(f *fileConfig) {
	if m := f.Memory; m != nil {
		l.fileDuration("memory.insight_retention", m.InsightRetention, &l.cfg.InsightRetention)
	}
	q := f.Quotas
	if q == nil {
		return
	}
	fileInt64 := func(name string, v *int64, dst *int64) {
		if v != nil {
			*dst = *v
			l.cfg.setSource(name, SourceFile)
		}
	}
	if i := q.Insights; i != nil {
		fileInt64("quotas.insights.max_count", i.MaxCount, &l.cfg.QuotaInsightsMaxCount)
		fileInt64("quotas.insights.max_bytes", i.MaxBytes, &l.cfg.QuotaInsightsMaxBytes)
	}
	if t := q.Tasks; t != nil {
		fileInt64("quotas.tasks.max_count", t.MaxCount, &l.cfg.QuotaTasksMaxCount)
		fileInt64("quotas.tasks.max_bytes", t.MaxBytes, &l.cfg.QuotaTasksMaxBytes)
	}
	if q.ListenTaskIDs != nil {
		l.cfg.QuotaListenTaskIDs = *q.ListenTaskIDs
		l.cfg.setSource("quotas.listen_task_ids", SourceFile)
	}
}

// applyEnvQuotas overrides the file with the quota variables.
func (l *loader) applyEnvQuotas() {
	envInt64 := func(name, env string, dst *int64) {
		v := l.env(env)
		if v == "" {
			return
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			l.errorf(env, "invalid integer %q", v)
			return
		}
		*dst = n
		l.cfg.setSource(name, envSource(env))
	}
	envInt64("quotas.insights.max_count", "AGENTS_MCP_QUOTA_INSIGHTS_MAX_COUNT", &l.cfg.QuotaInsightsMaxCount)
	envInt64("quotas.insights.max_bytes", "AGENTS_MCP_QUOTA_INSIGHTS_MAX_BYTES", &l.cfg.QuotaInsightsMaxBytes)
	envInt64("quotas.tasks.max_count", "AGENTS_MCP_QUOTA_TASKS_MAX_COUNT", &l.cfg.QuotaTasksMaxCount)
	envInt64("quotas.tasks.max_bytes", "AGENTS_MCP_QUOTA_TASKS_MAX_BYTES", &l.cfg.QuotaTasksMaxBytes)
	l.envInt("quotas.listen_task_ids", "AGENTS_MCP_QUOTA_LISTEN_TASK_IDS", &l.cfg.QuotaListenTaskIDs)
	l.envDuration("memory.insight_retention", "AGENTS_MCP_INSIGHT_RETENTION", &l.cfg.InsightRetention)
}

// validateQuotas checks the quota settings; bad is validate's reporter.
func (c *Config) validateQuotas(bad func(name, format string, args ...any)) {
	for _, q := range []struct {
		name string
		v    int64
	}{
		{"quotas.insights.max_count", c.QuotaInsightsMaxCount}, {"quotas.insights.max_bytes", c.QuotaInsightsMaxBytes},
		{"quotas.tasks.max_count", c.QuotaTasksMaxCount}, {"quotas.tasks.max_bytes", c.QuotaTasksMaxBytes},
		{"quotas.listen_task_ids", int64(c.QuotaListenTaskIDs)},
	} {
		if q.v < 0 {
			bad(q.name, "must not be negative (0 means no quota), got %d", q.v)
		}
	}
	if c.InsightRetention < 0 || (c.InsightRetention > 0 && c.InsightRetention < MinInsightRetention) {
		bad("memory.insight_retention", "must be 0 (keep insights forever) or at least %s, got %s", MinInsightRetention, c.InsightRetention)
	}
}

// describeQuotas adds the quota settings to Describe.
func (c *Config) describeQuotas(add func(name, value string)) {
	add("quotas.insights.max_count", strconv.FormatInt(c.QuotaInsightsMaxCount, 10))
	add("quotas.insights.max_bytes", strconv.FormatInt(c.QuotaInsightsMaxBytes, 10))
	add("quotas.tasks.max_count", strconv.FormatInt(c.QuotaTasksMaxCount, 10))
	add("quotas.tasks.max_bytes", strconv.FormatInt(c.QuotaTasksMaxBytes, 10))
	add("quotas.listen_task_ids", strconv.Itoa(c.QuotaListenTaskIDs))
	add("memory.insight_retention", c.InsightRetention.String())
}
