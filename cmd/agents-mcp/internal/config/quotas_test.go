package config

import (
	"strings"
	"testing"
	"time"
)

func TestQuotaSettings(t *testing.T) {
	c := mustLoad(t, nil, nil)
	if c.QuotaInsightsMaxCount != 10_000 || c.QuotaInsightsMaxBytes != 64<<20 || c.QuotaTasksMaxCount != 10_000 ||
		c.QuotaTasksMaxBytes != 512<<20 || c.QuotaListenTaskIDs != 1000 || c.InsightRetention != 0 {
		t.Errorf("defaults: %+v", c)
	}
	file := writeYAML(t, `
quotas:
  insights: { max_count: 5, max_bytes: 4096 }
  tasks: { max_count: 3, max_bytes: 0 }
  listen_task_ids: 7
memory:
  insight_retention: 720h
`)
	c = mustLoad(t, []string{"--config", file}, map[string]string{"AGENTS_MCP_QUOTA_TASKS_MAX_COUNT": "9"})
	if c.QuotaInsightsMaxCount != 5 || c.QuotaInsightsMaxBytes != 4096 || c.QuotaTasksMaxBytes != 0 || c.QuotaListenTaskIDs != 7 ||
		c.InsightRetention != 720*time.Hour || c.Source("quotas.insights.max_count") != SourceFile {
		t.Errorf("file: %+v", c)
	}
	if c.QuotaTasksMaxCount != 9 || c.Source("quotas.tasks.max_count") != "env:AGENTS_MCP_QUOTA_TASKS_MAX_COUNT" {
		t.Errorf("env over file: %d from %q", c.QuotaTasksMaxCount, c.Source("quotas.tasks.max_count"))
	}
	for _, name := range []string{"quotas.insights.max_count", "quotas.insights.max_bytes", "quotas.tasks.max_count",
		"quotas.tasks.max_bytes", "quotas.listen_task_ids", "memory.insight_retention"} {
		if !strings.Contains(c.String(), name) {
			t.Errorf("%s is not described: %s", name, c.String())
		}
	}
	for env, want := range map[string]string{
		"AGENTS_MCP_QUOTA_INSIGHTS_MAX_BYTES": "quotas.insights.max_bytes: must not be negative",
		"AGENTS_MCP_QUOTA_LISTEN_TASK_IDS":    "quotas.listen_task_ids: must not be negative",
	} {
		if _, err := Load(nil, envOf(map[string]string{env: "-1"})); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s=-1: %v", env, err)
		}
	}
	if _, err := Load(nil, envOf(map[string]string{"AGENTS_MCP_QUOTA_TASKS_MAX_BYTES": "lots"})); err == nil ||
		!strings.Contains(err.Error(), `AGENTS_MCP_QUOTA_TASKS_MAX_BYTES: invalid integer "lots"`) {
		t.Errorf("not a number: %v", err)
	}
	if _, err := Load(nil, envOf(map[string]string{"AGENTS_MCP_INSIGHT_RETENTION": "30s"})); err == nil ||
		!strings.Contains(err.Error(), "memory.insight_retention: must be 0 (keep insights forever) or at least 1m0s") {
		t.Errorf("short retention: %v", err)
	}
}
