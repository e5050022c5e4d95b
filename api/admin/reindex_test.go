package admin_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/api/admin"
)

func TestReindexReportsProgress(t *testing.T) {
	e := newEnv(t)
	e.seedLearnings(time.Date(2026, 3, 1, 8, 0, 0, 0, time.UTC))
	if err := e.db.CreateInsight(context.Background(), &agentsmcp.Insight{Text: "check quotas first", Type: agentsmcp.InsightBestPractice}); err != nil {
		t.Fatal(err)
	}

	r := e.expect(http.StatusAccepted, request{method: "POST", path: admin.Prefix + "/reindex", as: writeOnly})
	var accepted struct {
		Operation admin.Operation `json:"operation"`
	}
	r.decode(t, &accepted)
	if accepted.Operation.Kind != admin.OperationReindex {
		t.Fatalf("accepted %+v", accepted)
	}
	op := e.waitOperation(r.header.Get("Location"))
	if op.Status != admin.OperationSucceeded || op.Total == 0 || op.Progress != op.Total || op.Message != "the vector index is rebuilt" {
		t.Fatalf("reindex %+v", op)
	}
	// The index was rebuilt from the store: semantic search finds what
	// was never drained from the outbox.
	var found struct {
		Items []admin.LearningItem `json:"items"`
		Mode  string               `json:"mode"`
	}
	e.expect(http.StatusOK, request{method: "GET", path: admin.Prefix + "/learnings?q=" + url.QueryEscape("invoices from March"), as: readOnly}).decode(t, &found)
	if found.Mode != "semantic" || len(found.Items) == 0 || !strings.Contains(found.Items[0].Query, "invoices") {
		t.Fatalf("after reindex: %+v", found)
	}

	var list struct {
		Items []admin.Operation `json:"items"`
		Next  string            `json:"next"`
	}
	e.expect(http.StatusOK, request{method: "GET", path: admin.Prefix + "/operations", as: readOnly}).decode(t, &list)
	if len(list.Items) != 1 || list.Items[0].ID != op.ID {
		t.Fatalf("operations %+v", list)
	}
	e.expectError(http.StatusNotFound, admin.CodeNotFound, request{method: "GET", path: admin.Prefix + "/operations/" + agentsmcp.NewID("op"), as: readOnly})
	e.expectError(http.StatusBadRequest, admin.CodeInvalid, request{method: "POST", path: admin.Prefix + "/reindex?full=1", as: writeOnly})
}

// TestReindexCanBeCancelled runs a reindex that waits for its context,
// cancels it through the API, and checks that Close stops the next one.
func TestReindexCanBeCancelled(t *testing.T) {
	started := make(chan struct{}, 2)
	e := newEnv(t, envOptions{edit: func(o *admin.Options) {
		o.Reindex = func(ctx context.Context, report func(admin.Progress)) error {
			report(admin.Progress{Stage: "learnings", Done: 0, Total: 10})
			started <- struct{}{}
			<-ctx.Done()
			return ctx.Err()
		}
	}})
	r := e.expect(http.StatusAccepted, request{method: "POST", path: admin.Prefix + "/reindex", as: writeOnly})
	<-started
	// A second reindex while one runs is the same operation.
	r2 := e.expect(http.StatusAccepted, request{method: "POST", path: admin.Prefix + "/reindex", as: writeOnly})
	if r.header.Get("Location") != r2.header.Get("Location") {
		t.Fatalf("two reindexes at once: %s, %s", r.header.Get("Location"), r2.header.Get("Location"))
	}
	var running admin.Operation
	e.expect(http.StatusOK, request{method: "GET", path: r.header.Get("Location"), as: readOnly}).decode(t, &running)
	if running.Status != admin.OperationRunning || running.Stage != "learnings" || running.Total != 10 || !strings.Contains(running.Message, "0 of 10") {
		t.Fatalf("running %+v", running)
	}
	var cancelled admin.Operation
	e.expect(http.StatusOK, request{method: "POST", path: r.header.Get("Location") + "/cancel", as: writeOnly}).decode(t, &cancelled)
	if cancelled.Status != admin.OperationCancelled {
		t.Fatalf("cancelled %+v", cancelled)
	}

	r3 := e.expect(http.StatusAccepted, request{method: "POST", path: admin.Prefix + "/reindex", as: writeOnly})
	<-started
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := e.handler.Close(ctx); err != nil {
		t.Fatal(err)
	}
	var stopped admin.Operation
	e.expect(http.StatusOK, request{method: "GET", path: r3.header.Get("Location"), as: readOnly}).decode(t, &stopped)
	if stopped.Status != admin.OperationCancelled || !strings.Contains(stopped.Message, "shutting down") {
		t.Fatalf("after Close %+v", stopped)
	}
	e.expectError(http.StatusServiceUnavailable, admin.CodeUnavailable, request{method: "POST", path: admin.Prefix + "/reindex", as: writeOnly})
}

func TestAuditTrail(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	at := time.Date(2026, 3, 1, 8, 0, 0, 0, time.UTC)
	if err := e.db.CreateAuditEntries(ctx, []*agentsmcp.AuditEntry{
		{At: at, Principal: "key:a", Kind: agentsmcp.AuditToolCall, Target: "fx__echo", Outcome: agentsmcp.AuditOK, RequestID: "r1", Transport: "streamable"},
		{At: at.Add(time.Minute), Principal: "key:b", Kind: agentsmcp.AuditToolCall, Target: "fx__echo", Outcome: agentsmcp.AuditError, Error: "unavailable: down"},
		{At: at.Add(2 * time.Minute), Principal: "none", Kind: agentsmcp.AuditAuthFailure, Target: "POST /mcp", Outcome: agentsmcp.AuditDenied},
	}); err != nil {
		t.Fatal(err)
	}
	type page struct {
		Items []agentsmcp.AuditEntry `json:"items"`
		Next  string                 `json:"next"`
	}
	get := func(q string) page {
		var p page
		e.expect(http.StatusOK, request{method: "GET", path: admin.Prefix + "/audit" + q, as: readOnly}).decode(t, &p)
		return p
	}
	for q, want := range map[string]int{
		"":                 3,
		"?principal=key:a": 1,
		"?kind=tool_call":  2,
		"?target=fx__echo": 2,
		"?outcome=denied":  1,
		"?requestId=r1":    1,
		"?since=" + url.QueryEscape(at.Add(time.Minute).Format(time.RFC3339)): 2,
		"?until=" + url.QueryEscape(at.Add(time.Minute).Format(time.RFC3339)): 1,
		"?kind=tool_call&outcome=error":                                       1,
	} {
		if got := get(q); len(got.Items) != want {
			t.Errorf("%q: %d entries, want %d", q, len(got.Items), want)
		}
	}
	p1 := get("?limit=2")
	p2 := get("?limit=2&cursor=" + url.QueryEscape(p1.Next))
	if len(p1.Items) != 2 || len(p2.Items) != 1 || p2.Next != "" || p2.Items[0].Target != "fx__echo" || p2.Items[0].Principal != "key:a" {
		t.Fatalf("pages %+v, %+v", p1, p2)
	}
	for _, q := range []string{"?kind=admin", "?outcome=fine", "?cursor=zzz", "?since=2026", "?user=x"} {
		e.expectError(http.StatusBadRequest, admin.CodeInvalid, request{method: "GET", path: admin.Prefix + "/audit" + q, as: readOnly})
	}
}

// TestInternalErrorsDoNotLeak closes the store under the API: the store's
// own error text must stay in the log.
func TestInternalErrorsDoNotLeak(t *testing.T) {
	e := newEnv(t)
	e.audit.storeFails.Store(true)
	if err := e.db.Close(); err != nil {
		t.Fatal(err)
	}
	for _, r := range []request{
		{method: "GET", path: "/insights"},
		{method: "GET", path: "/learnings"},
		{method: "POST", path: "/insights", body: map[string]any{"text": "x"}},
	} {
		r.path, r.as = admin.Prefix+r.path, adminAll
		resp := e.expect(http.StatusInternalServerError, r)
		if eb := resp.errorBody(t); eb != (admin.ErrorBody{Code: admin.CodeInternal, Message: "internal error"}) {
			t.Errorf("%s %s: %s", r.method, r.path, resp.body)
		}
	}
}
