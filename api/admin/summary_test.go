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
