package admin_test

import (
	"net/http"
	"strings"
	"testing"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/api/admin"
	"github.com/agents-mcp/agents-mcp/memory/quota"
)

// POST /insights past the quota of the principal the insight belongs to:
// 429 quota_exceeded naming the quota, as the OpenAPI document says;
// another principal still stores.
func TestCreateInsightPastTheQuotaIs429(t *testing.T) {
	e := newEnv(t, envOptions{edit: func(o *admin.Options) {
		store := o.Insights // the SQLite store
		o.Insights = &quota.Insights{InsightService: store, Usage: store.(agentsmcp.UsageService), Quota: quota.Quota{MaxCount: 2}}
	}})
	path := admin.Prefix + "/insights"
	for range 2 {
		e.expect(http.StatusCreated, request{method: "POST", path: path, as: writeOnly, body: map[string]any{"text": "kept"}})
	}
	eb := e.expectError(http.StatusTooManyRequests, admin.CodeQuotaExceeded,
		request{method: "POST", path: path, as: writeOnly, body: map[string]any{"text": "one too many"}})
	if !strings.Contains(eb.Message, "quotas.insights.max_count") || !strings.Contains(eb.Message, writeOnly.id) {
		t.Fatalf("refusal %q does not name the quota and the principal", eb.Message)
	}
	e.expect(http.StatusCreated, request{method: "POST", path: path, as: adminAll, body: map[string]any{"text": "another principal's"}})
}
