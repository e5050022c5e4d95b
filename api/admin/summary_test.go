package admin_test

import (
	"context"
	"net/http"
	"reflect"
	"testing"
	"time"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/api/admin"
)

// TestWhoami: any authenticated caller learns its id and scopes (the
// console's check before it offers a page); no principal is a 401.
func TestWhoami(t *testing.T) {
	e := newEnv(t)
	var got admin.Whoami
	e.expect(http.StatusOK, request{method: "GET", path: admin.Prefix + "/whoami", as: readOnly}).decode(t, &got)
	if got.ID != readOnly.id || !reflect.DeepEqual(got.Scopes, readOnly.scopes) {
		t.Errorf("whoami = %+v, want %s with %v", got, readOnly.id, readOnly.scopes)
	}
	// Without admin:read too: this is how the console tells the person why
	// it shows nothing.
	bare := mcpOnly
	e.expect(http.StatusOK, request{method: "GET", path: admin.Prefix + "/whoami", as: bare}).decode(t, &got)
	if got.ID != bare.id || !reflect.DeepEqual(got.Scopes, bare.scopes) {
		t.Errorf("whoami = %+v, want %s with %v", got, bare.id, bare.scopes)
	}
	e.expectError(http.StatusUnauthorized, admin.CodeUnauthenticated, request{method: "GET", path: admin.Prefix + "/whoami"})
}

// TestSummary counts the stored tasks by status and the outbox backlog
// from the real store; without admin:read it is refused.
func TestSummary(t *testing.T) {
	e := newEnv(t, envOptions{edit: func(o *admin.Options) {
		o.TaskCounter = o.Tasks.(agentsmcp.TaskCounter)
	}})
	ctx := context.Background()
	for _, st := range []agentsmcp.TaskStatus{agentsmcp.TaskSucceeded, agentsmcp.TaskSucceeded, agentsmcp.TaskFailed} {
		if err := e.db.CreateTask(ctx, &agentsmcp.Task{Request: "r", Status: st}); err != nil {
			t.Fatal(err)
		}
	}
	var s admin.Summary
	e.expect(http.StatusOK, request{method: "GET", path: admin.Prefix + "/summary", as: readOnly}).decode(t, &s)
	if s.Tasks[agentsmcp.TaskSucceeded] != 2 || s.Tasks[agentsmcp.TaskFailed] != 1 || s.Tasks[agentsmcp.TaskRunning] != 0 {
		t.Errorf("tasks = %v, want 2 succeeded, 1 failed", s.Tasks)
	}
	if s.Outbox != nil || len(s.Problems) != 1 {
		t.Errorf("outbox = %+v, problems %q: want null and one problem without a source", s.Outbox, s.Problems)
	}

	// With the store's backlog: an insight written enqueues an entry that
	// no syncer runs here.
	e2 := newEnv(t, envOptions{edit: func(o *admin.Options) { o.OutboxBacklog = o.Tasks.(agentsmcp.OutboxService).OutboxBacklog }})
	if err := e2.db.CreateInsight(ctx, &agentsmcp.Insight{Text: "pending", Type: agentsmcp.InsightObservation, Confidence: 0.5}); err != nil {
		t.Fatal(err)
	}
	e2.expect(http.StatusOK, request{method: "GET", path: admin.Prefix + "/summary", as: readOnly}).decode(t, &s)
	if s.Outbox == nil || s.Outbox.Pending < 1 || s.Outbox.Oldest == nil || time.Since(*s.Outbox.Oldest) > time.Minute {
		t.Errorf("outbox = %+v, want at least one recent pending entry", s.Outbox)
	}
	if s.Tasks != nil {
		t.Errorf("tasks = %v, want null without a counter", s.Tasks)
	}
	bare := mcpOnly
	e.expectError(http.StatusForbidden, admin.CodeForbidden, request{method: "GET", path: admin.Prefix + "/summary", as: bare})
}

// TestToolCatalog lists the tools of a real upstream, filters by scope,
// and ranks a query as the router's search index does.
func TestToolCatalog(t *testing.T) {
	e := newEnv(t)
	e.addFixtureUpstream("fx")
	var all admin.ToolPage
	e.expect(http.StatusOK, request{method: "GET", path: admin.Prefix + "/tools", as: readOnly}).decode(t, &all)
	names := map[string]string{}
	for _, x := range all.Items {
		names[x.Name] = x.Source
	}
	if names["fx__echo"] != "fx" || names["fx__block"] != "fx" || all.Mode != "" {
		t.Errorf("catalog %+v, want the fixture's tools from fx and no mode", all)
	}
	var local admin.ToolPage
	e.expect(http.StatusOK, request{method: "GET", path: admin.Prefix + "/tools?scope=local", as: readOnly}).decode(t, &local)
	for _, x := range local.Items {
		if x.Source != "local" {
			t.Errorf("scope=local lists %+v", x)
		}
	}
	var ranked admin.ToolPage
	e.expect(http.StatusOK, request{method: "GET", path: admin.Prefix + "/tools?q=echo+the+text+back&limit=2", as: readOnly}).decode(t, &ranked)
	if len(ranked.Items) == 0 || len(ranked.Items) > 2 || ranked.Items[0].Name != "fx__echo" || ranked.Items[0].Why == "" || ranked.Mode != "lexical" {
		t.Errorf("ranked %+v, want fx__echo first, explained, lexical", ranked)
	}
	e.expectError(http.StatusBadRequest, admin.CodeInvalid, request{method: "GET", path: admin.Prefix + "/tools?scope=nearby", as: readOnly})
	e.expectError(http.StatusForbidden, admin.CodeForbidden, request{method: "GET", path: admin.Prefix + "/tools", as: mcpOnly})
}
