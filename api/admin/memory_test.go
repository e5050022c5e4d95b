package admin_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/api/admin"
	"github.com/agents-mcp/agents-mcp/internal/testutil"
)

type learningPage struct {
	Items []admin.LearningItem `json:"items"`
	Next  string               `json:"next"`
	Mode  string               `json:"mode"`
}

func (e *env) learnings(query string) learningPage {
	e.t.Helper()
	var p learningPage
	e.expect(http.StatusOK, request{method: "GET", path: admin.Prefix + "/learnings" + query, as: readOnly}).decode(e.t, &p)
	return p
}

func learningIDs(p learningPage) []string {
	var ids []string
	for _, l := range p.Items {
		ids = append(ids, l.ID)
	}
	return ids
}

// seedLearnings stores learnings an hour apart, oldest first, and returns
// them.
func (e *env) seedLearnings(base time.Time) []*agentsmcp.Learning {
	e.t.Helper()
	specs := []struct {
		query   string
		tools   []string
		ups     []string
		outcome agentsmcp.Outcome
	}{
		{"list the files of the shared folder", []string{"files__list_directory"}, []string{"files"}, agentsmcp.OutcomeSuccess},
		{"summarise yesterday's incident report", []string{"docs__read", "summarise"}, []string{"docs"}, agentsmcp.OutcomeFailure},
		{"search the files for invoices from March", []string{"files__search_files"}, []string{"files"}, agentsmcp.OutcomeSuccess},
		{"translate the release notes to French", []string{"translate"}, nil, agentsmcp.OutcomePartial},
		{"delete the temporary build folders", []string{"files__delete"}, []string{"files"}, agentsmcp.OutcomeCancelled},
	}
	var out []*agentsmcp.Learning
	for i, s := range specs {
		l := &agentsmcp.Learning{Query: s.query, Tools: s.tools, Sources: s.ups, Steps: s.tools, Outcome: s.outcome,
			Duration: time.Duration(i+1) * time.Second, CreatedAt: base.Add(time.Duration(i) * time.Hour)}
		if err := e.db.CreateLearning(context.Background(), l); err != nil {
			e.t.Fatal(err)
		}
		out = append(out, l)
	}
	return out
}

func TestLearnings(t *testing.T) {
	e := newEnv(t)
	base := time.Date(2026, 3, 1, 8, 0, 0, 0, time.UTC)
	ls := e.seedLearnings(base)
	e.drain()

	t.Run("newest first, paged by cursor", func(t *testing.T) {
		var seen []string
		cursor := ""
		for pages := 0; ; pages++ {
			if pages > 5 {
				t.Fatal("paging does not end")
			}
			q := "?limit=2"
			if cursor != "" {
				q += "&cursor=" + url.QueryEscape(cursor)
			}
			p := e.learnings(q)
			if len(p.Items) > 2 || p.Mode != "" {
				t.Fatalf("page %+v", p)
			}
			seen = append(seen, learningIDs(p)...)
			if cursor = p.Next; cursor == "" {
				break
			}
		}
		want := []string{ls[4].ID, ls[3].ID, ls[2].ID, ls[1].ID, ls[0].ID}
		if !slices.Equal(seen, want) {
			t.Fatalf("paged %v, want %v", seen, want)
		}
	})

	t.Run("filters", func(t *testing.T) {
		for _, c := range []struct {
			query string
			want  []string
		}{
			{"?tool=files__search_files", []string{ls[2].ID}},
			{"?upstream=files", []string{ls[4].ID, ls[2].ID, ls[0].ID}},
			{"?status=success", []string{ls[2].ID, ls[0].ID}},
			{"?status=success&upstream=files&tool=files__list_directory", []string{ls[0].ID}},
			{"?since=" + url.QueryEscape(base.Add(time.Hour).Format(time.RFC3339)) + "&until=" + url.QueryEscape(base.Add(3*time.Hour).Format(time.RFC3339)),
				[]string{ls[2].ID, ls[1].ID}},
			{"?tool=nothing-used-it", nil},
		} {
			if got := learningIDs(e.learnings(c.query)); !slices.Equal(got, c.want) {
				t.Errorf("%s: %v, want %v", c.query, got, c.want)
			}
		}
	})

	t.Run("one by id", func(t *testing.T) {
		var got agentsmcp.Learning
		e.expect(http.StatusOK, request{method: "GET", path: admin.Prefix + "/learnings/" + ls[1].ID, as: readOnly}).decode(t, &got)
		if got.ID != ls[1].ID || got.Query != ls[1].Query || got.Outcome != agentsmcp.OutcomeFailure || got.Duration != 2*time.Second {
			t.Fatalf("got %+v", got)
		}
		e.expectError(http.StatusNotFound, admin.CodeNotFound, request{method: "GET", path: admin.Prefix + "/learnings/" + agentsmcp.NewID("lrn"), as: readOnly})
	})

	t.Run("q searches by meaning", func(t *testing.T) {
		p := e.learnings("?q=" + url.QueryEscape("search files for invoices"))
		if p.Mode != "semantic" || len(p.Items) == 0 {
			t.Fatalf("page %+v", p)
		}
		if p.Items[0].ID != ls[2].ID || p.Items[0].Score == nil || *p.Items[0].Score <= 0 {
			t.Fatalf("best match %s (score %v), want %s", p.Items[0].ID, p.Items[0].Score, ls[2].ID)
		}
		// Filters apply to ranked results too.
		p = e.learnings("?q=" + url.QueryEscape("files folder") + "&status=cancelled")
		if got := learningIDs(p); !slices.Equal(got, []string{ls[4].ID}) {
			t.Fatalf("q with status: %v", got)
		}
		// Ranked results page through rank cursors.
		first := e.learnings("?q=files&limit=2")
		if len(first.Items) != 2 || first.Next == "" {
			t.Fatalf("first ranked page %+v", first)
		}
		second := e.learnings("?q=files&limit=2&cursor=" + url.QueryEscape(first.Next))
		if len(second.Items) == 0 || slices.Contains(learningIDs(first), second.Items[0].ID) {
			t.Fatalf("second ranked page %v after %v", learningIDs(second), learningIDs(first))
		}
	})

	t.Run("bad input", func(t *testing.T) {
		for _, q := range []string{
			"?cursor=not-a-cursor",
			"?q=files&cursor=" + url.QueryEscape("r0"),
			"?q=files&cursor=not-a-rank",
			"?since=yesterday",
			"?until=2026-13-01T00:00:00Z",
			"?since=2026-03-02T00:00:00Z&until=2026-03-01T00:00:00Z",
			"?status=won",
			"?limit=0",
			"?limit=201",
			"?limit=ten",
			"?outcome=success", // the parameter is status
			"?tool=a&tool=b",
			"?q=" + strings.Repeat("x", agentsmcp.MaxQueryTextBytes+1),
		} {
			eb := e.expectError(http.StatusBadRequest, admin.CodeInvalid, request{method: "GET", path: admin.Prefix + "/learnings" + q, as: readOnly})
			if eb.Message == "" {
				t.Errorf("%s: empty message", q)
			}
		}
	})
}

func TestLearningsWithoutRecallFallBackToWords(t *testing.T) {
	e := newEnv(t, envOptions{noRecall: true})
	ls := e.seedLearnings(time.Date(2026, 3, 1, 8, 0, 0, 0, time.UTC))
	p := e.learnings("?q=invoices")
	if p.Mode != "lexical" || !slices.Equal(learningIDs(p), []string{ls[2].ID}) {
		t.Fatalf("page %+v", p)
	}
}

func TestToolPerformance(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	at := time.Date(2026, 3, 1, 8, 0, 0, 0, time.UTC)
	for i, c := range []struct {
		tool  string
		calls int
		fails int
	}{{"alpha", 5, 1}, {"beta", 3, 0}, {"gamma", 1, 1}} {
		for n := range c.calls {
			call := agentsmcp.ToolCall{Tool: c.tool, Duration: time.Duration(n+1) * 3 * time.Millisecond, At: at.Add(time.Duration(i) * time.Minute)}
			if n < c.fails {
				call.Error = "timeout talking to upstream"
			}
			if err := e.db.RecordToolCall(ctx, call); err != nil {
				t.Fatal(err)
			}
		}
	}
	type page struct {
		Items []admin.ToolStats `json:"items"`
		Next  string            `json:"next"`
	}
	var all page
	e.expect(http.StatusOK, request{method: "GET", path: admin.Prefix + "/tools/performance", as: readOnly}).decode(t, &all)
	if len(all.Items) != 3 || all.Items[0].Tool != "alpha" || all.Items[0].Calls != 5 || all.Items[0].SuccessRate != 0.8 || all.Next != "" {
		t.Fatalf("all: %+v", all)
	}
	if all.Items[0].P50Ms <= 0 || all.Items[0].P95Ms < all.Items[0].P50Ms || len(all.Items[0].CommonErrors) != 1 {
		t.Fatalf("derived figures: %+v", all.Items[0])
	}
	var first, second page
	e.expect(http.StatusOK, request{method: "GET", path: admin.Prefix + "/tools/performance?limit=2", as: readOnly}).decode(t, &first)
	e.expect(http.StatusOK, request{method: "GET", path: admin.Prefix + "/tools/performance?limit=2&cursor=" + first.Next, as: readOnly}).decode(t, &second)
	if len(first.Items) != 2 || len(second.Items) != 1 || second.Items[0].Tool != "gamma" || second.Next != "" {
		t.Fatalf("pages %+v then %+v", first, second)
	}
	var one page
	e.expect(http.StatusOK, request{method: "GET", path: admin.Prefix + "/tools/performance?tool=beta", as: readOnly}).decode(t, &one)
	if len(one.Items) != 1 || one.Items[0].Tool != "beta" || one.Items[0].SuccessRate != 1 {
		t.Fatalf("beta: %+v", one)
	}
	var none page
	e.expect(http.StatusOK, request{method: "GET", path: admin.Prefix + "/tools/performance?tool=never-called", as: readOnly}).decode(t, &none)
	if len(none.Items) != 0 {
		t.Fatalf("never-called: %+v", none)
	}
	e.expectError(http.StatusBadRequest, admin.CodeInvalid, request{method: "GET", path: admin.Prefix + "/tools/performance?cursor=xyz", as: readOnly})
	e.expectError(http.StatusBadRequest, admin.CodeInvalid, request{method: "GET", path: admin.Prefix + "/tools/performance?tool=beta&cursor=o2", as: readOnly})
}

func TestPatterns(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	record := func(goal string, steps []string, successes, failures int) {
		for i := range successes + failures {
			if _, err := e.db.RecordPatternUse(ctx, "", goal, steps, i < successes, time.Time{}); err != nil {
				t.Fatal(err)
			}
		}
	}
	record("archive old log files", []string{"files__list", "files__move"}, 4, 0)
	record("send the weekly status email", []string{"mail__send"}, 2, 2)
	record("translate a document", []string{"translate"}, 1, 3)
	record("never worked goal", []string{"broken"}, 0, 2)
	e.drain()

	type page struct {
		Items []admin.PatternItem `json:"items"`
		Next  string              `json:"next"`
		Mode  string              `json:"mode"`
	}
	goals := func(p page) []string {
		var g []string
		for _, it := range p.Items {
			g = append(g, it.Goal)
		}
		return g
	}
	get := func(q string) page {
		var p page
		e.expect(http.StatusOK, request{method: "GET", path: admin.Prefix + "/patterns" + q, as: readOnly}).decode(t, &p)
		return p
	}
	if got := goals(get("")); !slices.Equal(got, []string{"archive old log files", "send the weekly status email", "translate a document", "never worked goal"}) {
		t.Fatalf("all patterns by successes: %v", got)
	}
	// minSuccessRate skips patterns across store pages, and the cursor
	// resumes after the last one examined.
	p1 := get("?minSuccessRate=0.5&limit=1")
	p2 := get("?minSuccessRate=0.5&limit=1&cursor=" + url.QueryEscape(p1.Next))
	if !slices.Equal(goals(p1), []string{"archive old log files"}) || !slices.Equal(goals(p2), []string{"send the weekly status email"}) {
		t.Fatalf("filtered pages %v, %v", goals(p1), goals(p2))
	}
	if p3 := get("?minSuccessRate=0.5&limit=1&cursor=" + url.QueryEscape(p2.Next)); len(p3.Items) != 0 || p3.Next != "" {
		t.Fatalf("third filtered page %+v", p3)
	}
	if p := get("?minSuccessRate=0.5"); p.Items[1].SuccessRate != 0.5 || p.Items[0].SuccessRate != 1 {
		t.Fatalf("success rates %+v", p.Items)
	}

	sem := get("?q=" + url.QueryEscape("archive the log files"))
	if sem.Mode != "semantic" || len(sem.Items) == 0 || sem.Items[0].Goal != "archive old log files" || sem.Items[0].Score == nil {
		t.Fatalf("semantic: %+v", sem)
	}
	if slices.Contains(goals(sem), "never worked goal") {
		t.Fatalf("q returned a pattern that never succeeded: %v", goals(sem))
	}
	e.expectError(http.StatusBadRequest, admin.CodeInvalid, request{method: "GET", path: admin.Prefix + "/patterns?minSuccessRate=2", as: readOnly})
	e.expectError(http.StatusBadRequest, admin.CodeInvalid, request{method: "GET", path: admin.Prefix + "/patterns?minSuccessRate=NaN", as: readOnly})
	e.expectError(http.StatusBadRequest, admin.CodeInvalid, request{method: "GET", path: admin.Prefix + "/patterns?cursor=%%%", as: readOnly})
}

func TestInsights(t *testing.T) {
	e := newEnv(t)
	path := admin.Prefix + "/insights"

	r := e.expect(http.StatusCreated, request{method: "POST", path: path, as: writeOnly,
		header: map[string]string{"X-Request-Id": "req-insight-1"},
		body:   map[string]any{"text": "search_files is slow on large trees; list the directory first", "type": "pitfall", "appliesTo": []string{"files__search_files"}, "confidence": 0.8}})
	var created agentsmcp.Insight
	r.decode(t, &created)
	if !strings.HasPrefix(created.ID, "ins_") || created.Source != writeOnly.id || created.Type != agentsmcp.InsightPitfall || created.Confidence != 0.8 {
		t.Fatalf("created %+v", created)
	}
	if loc := r.header.Get("Location"); loc != path+"/"+created.ID {
		t.Fatalf("Location %q", loc)
	}
	// Defaults, as for the store_insight tool.
	var defaulted agentsmcp.Insight
	e.expect(http.StatusCreated, request{method: "POST", path: path, as: adminAll, body: map[string]any{"text": "prefer the French translator for legal texts"}}).decode(t, &defaulted)
	if defaulted.Type != agentsmcp.InsightObservation || defaulted.Confidence != 0.5 {
		t.Fatalf("defaults %+v", defaulted)
	}

	var got agentsmcp.Insight
	e.expect(http.StatusOK, request{method: "GET", path: path + "/" + created.ID, as: readOnly}).decode(t, &got)
	if got.Text != created.Text {
		t.Fatalf("got %+v", got)
	}
	type page struct {
		Items []admin.InsightItem `json:"items"`
		Next  string              `json:"next"`
		Mode  string              `json:"mode"`
	}
	var byType page
	e.expect(http.StatusOK, request{method: "GET", path: path + "?type=pitfall", as: readOnly}).decode(t, &byType)
	if len(byType.Items) != 1 || byType.Items[0].ID != created.ID {
		t.Fatalf("type filter %+v", byType)
	}
	var byTool page
	e.expect(http.StatusOK, request{method: "GET", path: path + "?appliesTo=files__search_files", as: readOnly}).decode(t, &byTool)
	if len(byTool.Items) != 1 {
		t.Fatalf("appliesTo filter %+v", byTool)
	}
	testutil.Eventually(t, 5*time.Second, "the insights are indexed", func() bool {
		e.drain()
		var sem page
		e.expect(http.StatusOK, request{method: "GET", path: path + "?q=" + url.QueryEscape("translator for legal texts"), as: readOnly}).decode(t, &sem)
		return sem.Mode == "semantic" && len(sem.Items) > 0 && sem.Items[0].ID == defaulted.ID
	})

	e.expect(http.StatusNoContent, request{method: "DELETE", path: path + "/" + created.ID, as: writeOnly})
	e.expectError(http.StatusNotFound, admin.CodeNotFound, request{method: "GET", path: path + "/" + created.ID, as: readOnly})
	e.expectError(http.StatusNotFound, admin.CodeNotFound, request{method: "DELETE", path: path + "/" + created.ID, as: writeOnly})

	t.Run("bad bodies", func(t *testing.T) {
		for _, c := range []struct {
			name   string
			req    request
			status int
			says   string
		}{
			{"unknown field", request{body: map[string]any{"text": "x", "colour": "blue"}}, 400, `unknown field "colour"`},
			{"no body", request{}, 400, "body is required"},
			{"not JSON", request{body: "{text"}, 400, "not valid JSON"},
			{"two values", request{body: `{"text":"a"} {"text":"b"}`}, 400, "more than one JSON value"},
			{"wrong type", request{body: map[string]any{"text": 5}}, 400, "text must be a string"},
			{"bad insight type", request{body: map[string]any{"text": "x", "type": "rumour"}}, 400, "rumour"},
			{"confidence out of range", request{body: map[string]any{"text": "x", "confidence": 3}}, 400, "confidence"},
			{"empty text", request{body: map[string]any{"text": ""}}, 400, "text is required"},
			{"form post", request{body: "text=x", contentType: "application/x-www-form-urlencoded"}, 415, "Content-Type: application/json"},
			{"oversized", request{body: map[string]any{"text": strings.Repeat("x", 1<<20)}}, 413, "exceeds"},
		} {
			c.req.method, c.req.path, c.req.as = "POST", path, writeOnly
			r := e.expect(c.status, c.req)
			if eb := r.errorBody(t); eb.Code != admin.CodeInvalid || !strings.Contains(eb.Message, c.says) {
				t.Errorf("%s: %+v, want code invalid saying %q", c.name, eb, c.says)
			}
		}
	})

	// Every write was audited with its outcome.
	var audit struct {
		Items []agentsmcp.AuditEntry `json:"items"`
	}
	e.expect(http.StatusOK, request{method: "GET", path: admin.Prefix + "/audit?requestId=req-insight-1", as: readOnly}).decode(t, &audit)
	if len(audit.Items) != 1 {
		t.Fatalf("audit by request id: %+v", audit.Items)
	}
	a := audit.Items[0]
	if a.Target != "POST /admin/v1/insights" || a.Principal != writeOnly.id || a.Outcome != agentsmcp.AuditOK || a.Kind != agentsmcp.AuditAdminWrite ||
		!strings.Contains(string(a.Arguments), "pitfall") || a.Latency <= 0 {
		t.Fatalf("audit entry %+v (arguments %s)", a, a.Arguments)
	}
	e.expect(http.StatusOK, request{method: "GET", path: admin.Prefix + "/audit?target=" + url.QueryEscape("DELETE /admin/v1/insights/{id}"), as: readOnly}).decode(t, &audit)
	outcomes := map[agentsmcp.AuditOutcome]int{}
	for _, a := range audit.Items {
		outcomes[a.Outcome]++
	}
	if outcomes[agentsmcp.AuditOK] != 1 || outcomes[agentsmcp.AuditError] != 1 {
		t.Fatalf("DELETE outcomes %v", outcomes)
	}
	e.expect(http.StatusOK, request{method: "GET", path: admin.Prefix + "/audit?target=" + url.QueryEscape("POST /admin/v1/insights") + "&outcome=error&limit=200", as: readOnly}).decode(t, &audit)
	if len(audit.Items) != 10 {
		t.Fatalf("%d failed POST /insights audited, want 10", len(audit.Items))
	}
	for _, a := range audit.Items {
		if !strings.HasPrefix(a.Error, "invalid: ") {
			t.Errorf("failed write audited with error %q", a.Error)
		}
	}
	if n := fmt.Sprint(len(e.audit.all())); n == "0" {
		t.Fatal("nothing recorded")
	}
}
