package storetest

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/internal/storedform"
)

// The tests of agentsmcp.UsageService and agentsmcp.InsightPruner: what
// the quotas per principal and the retention of insights rely on (issue
// 25, item 10).

func init() {
	suite["Usage/InsightsByPrincipal"] = testUsageInsights
	suite["Usage/TasksByPrincipalFollowWrites"] = testUsageTasks
	suite["Usage/InsightRetentionDeletesOldestInBatches"] = testInsightRetention
}

// usage returns s's UsageService, skipping the test when it has none.
func usage(t *testing.T, s Services) agentsmcp.UsageService {
	t.Helper()
	if s.Usage == nil {
		t.Skip("the store reports no usage")
	}
	return s.Usage
}

func wantUsage(t *testing.T, what string, got agentsmcp.Usage, err error, want agentsmcp.Usage) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	if got != want {
		t.Errorf("%s = %+v, want %+v", what, got, want)
	}
}

func testUsageInsights(t *testing.T, s Services) {
	u := usage(t, s)
	ctx := t.Context()
	got, err := u.InsightUsage(ctx, "key:alice")
	wantUsage(t, "InsightUsage of an empty store", got, err, agentsmcp.Usage{})

	var alice agentsmcp.Usage
	var aliceIDs []string
	for i, text := range []string{"short", strings.Repeat("long text ", 100), "with lists"} {
		in := &agentsmcp.Insight{Text: text, Type: agentsmcp.InsightObservation, Principal: "key:alice", Source: "key:alice",
			AppliesTo: []string{"files__read", "goal:" + strings.Repeat("x", i)}, Evidence: []string{"tsk_1"}, CreatedAt: at(i)}
		if err := s.Insights.CreateInsight(ctx, in); err != nil {
			t.Fatal(err)
		}
		alice.Count++
		alice.Bytes += storedform.InsightBytes(in)
		aliceIDs = append(aliceIDs, in.ID)
	}
	bob := &agentsmcp.Insight{Text: "bob's", Type: agentsmcp.InsightPitfall, Principal: "key:bob", CreatedAt: at(10)}
	anon := &agentsmcp.Insight{Text: "nobody's", Type: agentsmcp.InsightPitfall, CreatedAt: at(11)}
	for _, in := range []*agentsmcp.Insight{bob, anon} {
		if err := s.Insights.CreateInsight(ctx, in); err != nil {
			t.Fatal(err)
		}
	}
	got, err = u.InsightUsage(ctx, "key:alice")
	wantUsage(t, "InsightUsage(alice)", got, err, alice)
	got, err = u.InsightUsage(ctx, "key:bob")
	wantUsage(t, "InsightUsage(bob)", got, err, agentsmcp.Usage{Count: 1, Bytes: storedform.InsightBytes(bob)})
	// An empty principal is the anonymous one, as for the records.
	got, err = u.InsightUsage(ctx, "")
	wantUsage(t, `InsightUsage("")`, got, err, agentsmcp.Usage{Count: 1, Bytes: storedform.InsightBytes(anon)})
	got, err = u.InsightUsage(ctx, agentsmcp.AnonymousPrincipal)
	wantUsage(t, "InsightUsage(anonymous)", got, err, agentsmcp.Usage{Count: 1, Bytes: storedform.InsightBytes(anon)})

	// A deleted insight no longer counts.
	first, err := s.Insights.FindInsightByID(ctx, aliceIDs[1])
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Insights.DeleteInsight(ctx, first.ID); err != nil {
		t.Fatal(err)
	}
	got, err = u.InsightUsage(ctx, "key:alice")
	wantUsage(t, "InsightUsage(alice) after a delete", got, err, agentsmcp.Usage{Count: 2, Bytes: alice.Bytes - storedform.InsightBytes(first)})
}

func testUsageTasks(t *testing.T, s Services) {
	u := usage(t, s)
	ctx := t.Context()
	got, err := u.TaskUsage(ctx, "key:alice")
	wantUsage(t, "TaskUsage of an empty store", got, err, agentsmcp.Usage{})

	var tasks []*agentsmcp.Task
	for i := range 3 {
		tk := &agentsmcp.Task{Request: "export report " + strings.Repeat("r", i*10), Principal: "key:alice", Inputs: json.RawMessage(`{"month":"2026-11"}`),
			Steps:     []agentsmcp.StepState{{StepID: "s1", Status: agentsmcp.StepPending}, {StepID: "s2", Status: agentsmcp.StepPending}},
			CreatedAt: at(i)}
		if err := s.Tasks.CreateTask(ctx, tk); err != nil {
			t.Fatal(err)
		}
		tasks = append(tasks, tk)
	}
	other := &agentsmcp.Task{Request: "bob's", Principal: "key:bob", CreatedAt: at(5)}
	none := &agentsmcp.Task{Request: "nobody's", CreatedAt: at(6)}
	for _, tk := range []*agentsmcp.Task{other, none} {
		if err := s.Tasks.CreateTask(ctx, tk); err != nil {
			t.Fatal(err)
		}
	}
	sum := func() agentsmcp.Usage {
		var u agentsmcp.Usage
		for _, tk := range tasks {
			u.Count++
			u.Bytes += storedform.TaskBytes(tk)
		}
		return u
	}
	got, err = u.TaskUsage(ctx, "key:alice")
	wantUsage(t, "TaskUsage(alice)", got, err, sum())
	got, err = u.TaskUsage(ctx, "key:bob")
	wantUsage(t, "TaskUsage(bob)", got, err, agentsmcp.Usage{Count: 1, Bytes: storedform.TaskBytes(other)})
	// "" is the tasks created without a principal.
	got, err = u.TaskUsage(ctx, "")
	wantUsage(t, `TaskUsage("")`, got, err, agentsmcp.Usage{Count: 1, Bytes: storedform.TaskBytes(none)})

	// A task grows as its steps store outputs: the usage follows each
	// write, whole or per step.
	tk := tasks[0]
	tk.Status = agentsmcp.TaskRunning
	tk.Steps[0] = agentsmcp.StepState{StepID: "s1", Status: agentsmcp.StepSucceeded, Attempts: 1, Output: json.RawMessage(`"` + strings.Repeat("o", 5000) + `"`), StartedAt: at(1), EndedAt: at(2)}
	storedform.AddEvent(tk, agentsmcp.TaskEvent{At: at(2), Type: "step_succeeded", StepID: "s1"})
	if err := s.Tasks.UpdateTask(ctx, tk); err != nil {
		t.Fatal(err)
	}
	got, err = u.TaskUsage(ctx, "key:alice")
	wantUsage(t, "TaskUsage(alice) after UpdateTask", got, err, sum())
	if su, ok := s.Tasks.(agentsmcp.TaskStepUpdater); ok {
		tk.Steps[1] = agentsmcp.StepState{StepID: "s2", Status: agentsmcp.StepFailed, Attempts: 1, Error: strings.Repeat("e", 300), StartedAt: at(3), EndedAt: at(4)}
		storedform.AddEvent(tk, agentsmcp.TaskEvent{At: at(4), Type: "step_failed", StepID: "s2", Message: "boom"})
		if err := su.UpdateTaskSteps(ctx, tk, agentsmcp.TaskChange{Steps: []int{1}, Events: 1}); err != nil {
			t.Fatal(err)
		}
		got, err = u.TaskUsage(ctx, "key:alice")
		wantUsage(t, "TaskUsage(alice) after UpdateTaskSteps", got, err, sum())
	}

	// An ended task deleted by retention no longer counts.
	tk.Status, tk.EndedAt = agentsmcp.TaskFailed, at(5)
	if err := s.Tasks.UpdateTask(ctx, tk); err != nil {
		t.Fatal(err)
	}
	if n, err := s.Tasks.DeleteEndedTasks(ctx, at(6), 10); err != nil || n != 1 {
		t.Fatalf("DeleteEndedTasks = %d, %v", n, err)
	}
	tasks = tasks[1:]
	got, err = u.TaskUsage(ctx, "key:alice")
	wantUsage(t, "TaskUsage(alice) after retention", got, err, sum())
}

func testInsightRetention(t *testing.T, s Services) {
	if s.InsightPruner == nil {
		t.Skip("the store has no insight retention")
	}
	ctx := t.Context()
	var ids []string
	for i, sec := range []int{5, 1, 3, 2, 4, 100} {
		in := &agentsmcp.Insight{Text: "insight kept until retention", Type: agentsmcp.InsightObservation,
			AppliesTo: []string{"tool:old"}, Principal: []string{"key:alice", "key:bob"}[i%2], CreatedAt: at(sec)}
		if err := s.Insights.CreateInsight(ctx, in); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, in.ID)
	}
	drainOutbox(t, s)
	// ids by age: at(1) ids[1], at(2) ids[3], at(3) ids[2], at(4) ids[4],
	// at(5) ids[0], at(100) ids[5].
	deleted := func() []string {
		var gone []string
		for _, id := range ids {
			if _, err := s.Insights.FindInsightByID(ctx, id); agentsmcp.ErrorCode(err) == agentsmcp.ENOTFOUND {
				gone = append(gone, id)
			} else if err != nil {
				t.Fatal(err)
			}
		}
		return gone
	}
	// Before at(4): the three oldest, two per batch, oldest first, for
	// every principal.
	n, err := s.InsightPruner.DeleteInsightsCreatedBefore(ctx, at(4), 2)
	if err != nil || n != 2 {
		t.Fatalf("first batch: %d, %v; want 2", n, err)
	}
	if got, want := deleted(), []string{ids[1], ids[3]}; !sameSet(got, want) {
		t.Fatalf("after the first batch %v are gone, want the two oldest %v", got, want)
	}
	n, err = s.InsightPruner.DeleteInsightsCreatedBefore(ctx, at(4), 2)
	if err != nil || n != 1 {
		t.Fatalf("second batch: %d, %v; want 1", n, err)
	}
	n, err = s.InsightPruner.DeleteInsightsCreatedBefore(ctx, at(4), 2)
	if err != nil || n != 0 {
		t.Fatalf("third batch: %d, %v; want 0", n, err)
	}
	if got, want := deleted(), []string{ids[1], ids[3], ids[2]}; !sameSet(got, want) {
		t.Fatalf("%v are gone, want %v", got, want)
	}
	// Their vectors are queued for removal, as DeleteInsight does.
	keys := drainOutbox(t, s)
	for _, id := range []string{ids[1], ids[3], ids[2]} {
		e := agentsmcp.OutboxEntry{Namespace: agentsmcp.NamespaceInsights, Op: agentsmcp.OutboxDelete, DocID: id}
		if want := e.Key(); !slices.Contains(keys, want) {
			t.Errorf("outbox %v lacks %s", keys, want)
		}
	}
	// Nor are they found by their lists any more.
	items, _, err := s.Insights.FindInsights(ctx, agentsmcp.InsightFilter{AppliesTo: "tool:old", Limit: 50})
	if err != nil {
		t.Fatal(err)
	}
	if len(items) != 3 {
		t.Errorf("FindInsights(appliesTo) found %d insights after retention, want the 3 kept", len(items))
	}
	if u := s.Usage; u != nil {
		a, errA := u.InsightUsage(ctx, "key:alice")
		b, errB := u.InsightUsage(ctx, "key:bob")
		if errA != nil || errB != nil || a.Count+b.Count != 3 {
			t.Errorf("usage after retention: alice %+v %v, bob %+v %v; want 3 insights in all", a, errA, b, errB)
		}
	}
}

func sameSet(a, b []string) bool {
	return slices.Equal(slices.Sorted(slices.Values(a)), slices.Sorted(slices.Values(b)))
}
