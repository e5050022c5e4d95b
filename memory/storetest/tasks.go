package storetest

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/internal/storedform"
)

func init() {
	suite["TaskRoundTrip"] = testTaskRoundTrip
	suite["TaskConflict"] = testTaskConflict
	suite["TaskInvalid"] = testTaskInvalid
	suite["TaskLimitsAccepted"] = testTaskLimitsAccepted
	suite["TaskNotFound"] = testTaskNotFound
	suite["TaskUpdate"] = testTaskUpdate
	suite["TaskUpdateConcurrent"] = testTaskUpdateConcurrent
	suite["TaskHistoryBound"] = testTaskHistoryBound
	suite["TaskHistoryKeepsLongestWait"] = testTaskHistoryKeepsLongestWait
	suite["TaskLease"] = testTaskLease
	suite["TaskLeaseExpires"] = testTaskLeaseExpires
	suite["TaskCreatedLeased"] = testTaskCreatedLeased
	suite["TaskLeaseConcurrent"] = testTaskLeaseConcurrent
	suite["TaskLeaseAndVersionIndependent"] = testTaskLeaseAndVersionIndependent
	suite["TaskFindToResume"] = testTaskFindToResume
	suite["TaskFiltersAndPaging"] = testTaskFiltersAndPaging
	suite["TaskBadCursor"] = testTaskBadCursor
	suite["TaskCountsByStatus"] = testTaskCountsByStatus
	suite["TaskDeleteEnded"] = testTaskDeleteEnded
}

// testTaskDeleteEnded checks the retention of tasks: only ended tasks
// that ended before the cut are deleted, in batches of limit, earliest
// ended first; a task that has not ended is kept whatever its times, even
// one carrying an EndedAt (the store must go by the status).
func testTaskDeleteEnded(t *testing.T, s Services) {
	ctx := t.Context()
	cut := time.Now().UTC().Truncate(time.Millisecond).Add(-time.Hour)
	mk := func(status agentsmcp.TaskStatus, ended time.Time) *agentsmcp.Task {
		tk := &agentsmcp.Task{Request: "retain me", Status: status, EndedAt: ended}
		createTask(t, s, tk)
		return tk
	}
	var old []*agentsmcp.Task // ended before the cut, earliest first
	for i, st := range []agentsmcp.TaskStatus{agentsmcp.TaskSucceeded, agentsmcp.TaskFailed, agentsmcp.TaskCancelled, agentsmcp.TaskSucceeded, agentsmcp.TaskFailed} {
		old = append(old, mk(st, cut.Add(-time.Duration(5-i)*time.Minute)))
	}
	kept := []*agentsmcp.Task{
		mk(agentsmcp.TaskSucceeded, cut),               // ended at the cut, not before it
		mk(agentsmcp.TaskFailed, cut.Add(time.Minute)), // ended after it
		mk(agentsmcp.TaskSucceeded, time.Time{}),       // no EndedAt: never known to have ended
		mk(agentsmcp.TaskPending, cut.Add(-time.Hour)), // not ended, whatever EndedAt says
		mk(agentsmcp.TaskRunning, cut.Add(-time.Hour)), // not ended
		mk(agentsmcp.TaskPaused, cut.Add(-time.Hour)),  // not ended
		mk(agentsmcp.TaskRunning, time.Time{}),         // not ended
	}

	// One batch of 2 takes the two that ended first.
	n, err := s.Tasks.DeleteEndedTasks(ctx, cut, 2)
	if err != nil || n != 2 {
		t.Fatalf("DeleteEndedTasks(limit 2) = %d, %v; want 2", n, err)
	}
	for i, tk := range old {
		_, err := s.Tasks.FindTaskByID(ctx, tk.ID)
		if gone := agentsmcp.ErrorCode(err) == agentsmcp.ENOTFOUND; gone != (i < 2) {
			t.Errorf("after one batch, task %d (ended %v) gone = %v, err %v", i, tk.EndedAt, gone, err)
		}
	}
	// The next batch takes the other three: fewer than the limit, so the
	// sweep is done.
	if n, err = s.Tasks.DeleteEndedTasks(ctx, cut, 10); err != nil || n != 3 {
		t.Fatalf("DeleteEndedTasks(limit 10) = %d, %v; want 3", n, err)
	}
	// Idempotent: nothing left to delete.
	if n, err = s.Tasks.DeleteEndedTasks(ctx, cut, 10); err != nil || n != 0 {
		t.Fatalf("DeleteEndedTasks again = %d, %v; want 0", n, err)
	}
	for _, tk := range old {
		if _, err := s.Tasks.FindTaskByID(ctx, tk.ID); agentsmcp.ErrorCode(err) != agentsmcp.ENOTFOUND {
			t.Errorf("task ended %v before the cut: FindTaskByID err %v, want ENOTFOUND", tk.EndedAt, err)
		}
	}
	for _, tk := range kept {
		findTask(t, s, tk.ID)
	}
	// A cut far in the future still spares every task that has not ended.
	if n, err = s.Tasks.DeleteEndedTasks(ctx, cut.Add(24*time.Hour), 0); err != nil || n != 2 {
		t.Fatalf("DeleteEndedTasks(tomorrow) = %d, %v; want 2 (the two ended at or after the cut)", n, err)
	}
	for _, tk := range kept[2:] {
		findTask(t, s, tk.ID)
	}

	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := s.Tasks.DeleteEndedTasks(cancelled, cut, 10); err == nil {
		t.Error("DeleteEndedTasks with a cancelled context: no error")
	}
}

func testTaskCountsByStatus(t *testing.T, s Services) {
	if s.TaskCounts == nil {
		t.Fatal("Services.TaskCounts is nil: the store must count tasks by status")
	}
	ctx := t.Context()
	check := func(want map[agentsmcp.TaskStatus]int64) {
		t.Helper()
		got, err := s.TaskCounts.CountTasksByStatus(ctx)
		if err != nil {
			t.Fatalf("CountTasksByStatus: %v", err)
		}
		full := make(map[agentsmcp.TaskStatus]int64, len(agentsmcp.TaskStatuses))
		for _, st := range agentsmcp.TaskStatuses {
			full[st] = want[st]
		}
		if !maps.Equal(got, full) {
			t.Errorf("CountTasksByStatus = %v, want %v", got, full)
		}
	}
	check(nil) // an empty store: every status at 0

	var first *agentsmcp.Task
	for status, n := range map[agentsmcp.TaskStatus]int{agentsmcp.TaskPending: 3, agentsmcp.TaskRunning: 2, agentsmcp.TaskSucceeded: 1} {
		for range n {
			tk := &agentsmcp.Task{Request: "count me", Status: status}
			if err := s.Tasks.CreateTask(ctx, tk); err != nil {
				t.Fatalf("CreateTask: %v", err)
			}
			if status == agentsmcp.TaskPending && first == nil {
				first = tk
			}
		}
	}
	// A status change moves the task from one count to the other.
	first.Status, first.Error = agentsmcp.TaskFailed, "boom"
	if err := s.Tasks.UpdateTask(ctx, first); err != nil {
		t.Fatalf("UpdateTask: %v", err)
	}
	check(map[agentsmcp.TaskStatus]int64{agentsmcp.TaskPending: 2, agentsmcp.TaskRunning: 2, agentsmcp.TaskSucceeded: 1, agentsmcp.TaskFailed: 1})

	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := s.TaskCounts.CountTasksByStatus(cancelled); err == nil {
		t.Error("CountTasksByStatus with a cancelled context: no error")
	}
}

// checkTask compares every field of got with want: times at millisecond
// precision in UTC (zero stays zero), JSON byte for byte, nil and empty
// lists alike.
func checkTask(t *testing.T, got, want *agentsmcp.Task) {
	t.Helper()
	if got == nil {
		t.Fatalf("task %s: nil", want.ID)
	}
	g, w := *got, *want
	id := "task " + w.ID
	checkTime(t, id+" CreatedAt", g.CreatedAt, w.CreatedAt)
	checkTime(t, id+" UpdatedAt", g.UpdatedAt, w.UpdatedAt)
	checkTimeOrZero(t, id+" EndedAt", g.EndedAt, w.EndedAt)
	checkTimeOrZero(t, id+" Lease.ExpiresAt", g.Lease.ExpiresAt, w.Lease.ExpiresAt)
	checkRaw(t, id+" Inputs", g.Inputs, w.Inputs)
	if len(g.Steps) != len(w.Steps) {
		t.Fatalf("%s: %d steps, want %d", id, len(g.Steps), len(w.Steps))
	}
	g.Steps, w.Steps = slices.Clone(g.Steps), slices.Clone(w.Steps)
	for i := range w.Steps {
		what := fmt.Sprintf("%s step %d", id, i)
		checkRaw(t, what+" Output", g.Steps[i].Output, w.Steps[i].Output)
		checkTimeOrZero(t, what+" StartedAt", g.Steps[i].StartedAt, w.Steps[i].StartedAt)
		checkTimeOrZero(t, what+" EndedAt", g.Steps[i].EndedAt, w.Steps[i].EndedAt)
		for _, s := range []*agentsmcp.StepState{&g.Steps[i], &w.Steps[i]} {
			s.Output, s.StartedAt, s.EndedAt = nil, time.Time{}, time.Time{}
		}
	}
	if len(g.History) != len(w.History) {
		t.Fatalf("%s: %d events, want %d", id, len(g.History), len(w.History))
	}
	g.History, w.History = slices.Clone(g.History), slices.Clone(w.History)
	for i := range w.History {
		checkTime(t, fmt.Sprintf("%s event %d At", id, i), g.History[i].At, w.History[i].At)
		g.History[i].At, w.History[i].At = time.Time{}, time.Time{}
	}
	for _, x := range []*agentsmcp.Task{&g, &w} {
		x.CreatedAt, x.UpdatedAt, x.EndedAt, x.Lease.ExpiresAt, x.Inputs = time.Time{}, time.Time{}, time.Time{}, time.Time{}, nil
		if len(x.Steps) == 0 {
			x.Steps = nil
		}
		if len(x.History) == 0 {
			x.History = nil
		}
	}
	sameJSON(t, id, g, w)
}

func taskID(tk *agentsmcp.Task) string { return tk.ID }

// fullTask has every field set.
func fullTask() agentsmcp.Task {
	cet := time.FixedZone("CET", 3600)
	return agentsmcp.Task{
		PlanID:         agentsmcp.NewID(agentsmcp.PlanIDPrefix),
		Principal:      "key:0123456789ab",
		PrincipalTools: []string{"everything__*", "search_tools"},
		Request:        "Summarise the open issues — naïve ☕ \"q\" \\ $where",
		Status:         agentsmcp.TaskRunning,
		Steps: []agentsmcp.StepState{
			{StepID: "list", Status: agentsmcp.StepSucceeded, Attempts: 2,
				Output:    json.RawMessage("{\"items\": [ {\"number\": 1, \"a.b\": {\"$gt\": \"<&>\"}} ],\n \"e\": \"\\u00e9\"}"),
				Error:     "first attempt: rate limited",
				StartedAt: time.Date(2026, 10, 3, 9, 8, 7, 654321987, cet), EndedAt: time.Date(2026, 10, 3, 9, 8, 9, 1, cet)},
			{StepID: "read-1", Status: agentsmcp.StepRunning, Attempts: 1, Confirmed: true, Asks: 1, StartedAt: at(10)},
			{StepID: "count", Status: agentsmcp.StepSucceeded, Attempts: 1, Output: json.RawMessage(`42`), StartedAt: at(11), EndedAt: at(12),
				RepairedTool: "everything__add", RepairedArguments: json.RawMessage(`{"a": "{{inputs.repo}}", "n": 12345678901234567890, "k": "\u00e9"}`)},
			{StepID: "write_report", Status: agentsmcp.StepWaitingConfirmation, Asks: 3},
		},
		Inputs: json.RawMessage(`{"repo": "agents-mcp/agents-mcp"}`),
		History: []agentsmcp.TaskEvent{
			{At: time.Date(2026, 10, 3, 9, 8, 7, 123456789, cet), Type: "task_started"},
			{At: at(10), Type: "step_started", StepID: "read-1", Message: "attempt 1 ☕"},
		},
		Error:     "",
		CreatedAt: time.Date(2026, 10, 3, 9, 8, 6, 999999999, cet),
	}
}

func createTask(t *testing.T, s Services, tk *agentsmcp.Task) {
	t.Helper()
	if err := s.Tasks.CreateTask(t.Context(), tk); err != nil {
		t.Fatalf("CreateTask: %v", err)
	}
}

func findTask(t *testing.T, s Services, id string) *agentsmcp.Task {
	t.Helper()
	got, err := s.Tasks.FindTaskByID(t.Context(), id)
	if err != nil {
		t.Fatalf("FindTaskByID(%s): %v", id, err)
	}
	return got
}

func testTaskRoundTrip(t *testing.T, s Services) {
	ctx := t.Context()
	t.Run("every field", func(t *testing.T) {
		tk := fullTask()
		want := tk
		tk.Version, tk.UpdatedAt = 42, at(77) // assigned by the store
		createTask(t, s, &tk)
		checkID(t, "ID", tk.ID, agentsmcp.TaskIDPrefix)
		want.ID, want.Version, want.UpdatedAt = tk.ID, 1, want.CreatedAt
		if tk.Version != 1 || !tk.UpdatedAt.Equal(want.CreatedAt.Truncate(time.Millisecond)) || tk.Lease != (agentsmcp.TaskLease{}) {
			t.Errorf("CreateTask left Version %d, UpdatedAt %v, Lease %+v; want 1, CreatedAt, free", tk.Version, tk.UpdatedAt, tk.Lease)
		}
		checkTask(t, findTask(t, s, tk.ID), &want)
		items, _, err := s.Tasks.FindTasks(ctx, agentsmcp.TaskFilter{PlanID: want.PlanID})
		if err != nil || len(items) != 1 {
			t.Fatalf("FindTasks by plan: %d items, %v", len(items), err)
		}
		checkTask(t, items[0], &want)
	})
	t.Run("assigned", func(t *testing.T) {
		tk := agentsmcp.Task{Request: "minimal"}
		before := time.Now()
		createTask(t, s, &tk)
		after := time.Now()
		checkID(t, "ID", tk.ID, agentsmcp.TaskIDPrefix)
		checkRecent(t, "CreatedAt", tk.CreatedAt, before, after)
		if tk.Status != agentsmcp.TaskPending || tk.Version != 1 || !tk.UpdatedAt.Equal(tk.CreatedAt) {
			t.Errorf("CreateTask assigned status %q, version %d, updatedAt %v", tk.Status, tk.Version, tk.UpdatedAt)
		}
		want := tk
		checkTask(t, findTask(t, s, tk.ID), &want)
	})
	t.Run("failed by the executor", func(t *testing.T) {
		tk := fullTask()
		tk.Status, tk.EndedAt = agentsmcp.TaskFailed, at(30)
		tk.Error, tk.ErrorCode = "cannot resume: its plan cannot be read", agentsmcp.EUNAVAILABLE
		createTask(t, s, &tk)
		want := tk
		got := findTask(t, s, tk.ID)
		if got.ErrorCode != agentsmcp.EUNAVAILABLE || got.Steps[3].Asks != 3 {
			t.Errorf("read back error code %q, asks %d", got.ErrorCode, got.Steps[3].Asks)
		}
		checkTask(t, got, &want)
	})
	t.Run("explicit id", func(t *testing.T) {
		tk := agentsmcp.Task{ID: agentsmcp.NewID(agentsmcp.TaskIDPrefix), Request: "explicit", Status: agentsmcp.TaskPaused, CreatedAt: at(5)}
		want := tk
		createTask(t, s, &tk)
		want.Version, want.UpdatedAt = 1, at(5)
		checkTask(t, findTask(t, s, want.ID), &want)
	})
}

func testTaskConflict(t *testing.T, s Services) {
	first := agentsmcp.Task{ID: agentsmcp.NewID(agentsmcp.TaskIDPrefix), Request: "first", CreatedAt: at(0)}
	createTask(t, s, &first)
	second := agentsmcp.Task{ID: first.ID, Request: "second", CreatedAt: at(1)}
	wantCode(t, s.Tasks.CreateTask(t.Context(), &second), agentsmcp.ECONFLICT, "CreateTask with a taken id")
	checkTask(t, findTask(t, s, first.ID), &first)
}

func testTaskInvalid(t *testing.T, s Services) {
	ctx := t.Context()
	tests := []struct {
		name   string
		change func(tk *agentsmcp.Task)
	}{
		{"no request", func(tk *agentsmcp.Task) { tk.Request = "" }},
		{"bad status", func(tk *agentsmcp.Task) { tk.Status = "done" }},
		{"bad id", func(tk *agentsmcp.Task) { tk.ID = agentsmcp.NewID(agentsmcp.PlanIDPrefix) }},
		{"bad plan id", func(tk *agentsmcp.Task) { tk.PlanID = "$where" }},
		{"bad step id", func(tk *agentsmcp.Task) { tk.Steps[0].StepID = "List" }},
		{"two states of a step", func(tk *agentsmcp.Task) { tk.Steps[1].StepID = "list" }},
		{"bad step status", func(tk *agentsmcp.Task) { tk.Steps[0].Status = "ok" }},
		{"negative attempts", func(tk *agentsmcp.Task) { tk.Steps[0].Attempts = -1 }},
		{"output not JSON", func(tk *agentsmcp.Task) { tk.Steps[0].Output = json.RawMessage(`{"a":`) }},
		{"output too large", func(tk *agentsmcp.Task) {
			tk.Steps[0].Output = json.RawMessage(`"` + strings.Repeat("x", agentsmcp.MaxStepOutputBytes-1) + `"`)
		}},
		{"inputs not an object", func(tk *agentsmcp.Task) { tk.Inputs = json.RawMessage(`[]`) }},
		{"huge event", func(tk *agentsmcp.Task) {
			tk.History = []agentsmcp.TaskEvent{{Type: "x", Message: strings.Repeat("m", agentsmcp.MaxTaskEventBytes)}}
		}},
		{"huge error", func(tk *agentsmcp.Task) { tk.Error = strings.Repeat("e", agentsmcp.MaxTaskErrorBytes+1) }},
		{"negative asks", func(tk *agentsmcp.Task) { tk.Steps[3].Asks = -1 }},
		{"error code on a running task", func(tk *agentsmcp.Task) { tk.ErrorCode = agentsmcp.EINTERNAL }},
		{"malformed error code", func(tk *agentsmcp.Task) { tk.Status, tk.ErrorCode = agentsmcp.TaskFailed, "$where" }},
	}
	for _, tt := range tests {
		tk := fullTask()
		tk.Steps = slices.Clone(tk.Steps)
		tt.change(&tk)
		wantCode(t, s.Tasks.CreateTask(ctx, &tk), agentsmcp.EINVALID, tt.name)
	}
	wantCode(t, s.Tasks.CreateTask(ctx, nil), agentsmcp.EINVALID, "nil task")
	items, _, err := s.Tasks.FindTasks(ctx, agentsmcp.TaskFilter{})
	if err != nil || len(items) != 0 {
		t.Fatalf("invalid tasks were stored: %d items, %v", len(items), err)
	}

	// The same checks apply to UpdateTask, which also needs a status and
	// a stored version.
	tk := fullTask()
	createTask(t, s, &tk)
	for _, tt := range append(tests[:len(tests):len(tests)],
		struct {
			name   string
			change func(tk *agentsmcp.Task)
		}{"no status", func(tk *agentsmcp.Task) { tk.Status = "" }},
		struct {
			name   string
			change func(tk *agentsmcp.Task)
		}{"version 0", func(tk *agentsmcp.Task) { tk.Version = 0 }},
	) {
		if tt.name == "bad id" {
			continue // would be ENOTFOUND-or-EINVALID; covered by the create
		}
		u := tk
		u.Steps = slices.Clone(tk.Steps)
		tt.change(&u)
		wantCode(t, s.Tasks.UpdateTask(ctx, &u), agentsmcp.EINVALID, "UpdateTask: "+tt.name)
	}
	if got := findTask(t, s, tk.ID); got.Version != 1 {
		t.Errorf("invalid updates changed the version to %d", got.Version)
	}
}

func testTaskLimitsAccepted(t *testing.T, s Services) {
	tk := agentsmcp.Task{Request: "big output", Status: agentsmcp.TaskRunning, CreatedAt: at(0), Steps: []agentsmcp.StepState{
		{StepID: "big", Status: agentsmcp.StepSucceeded, Output: json.RawMessage(`"` + strings.Repeat("é", (agentsmcp.MaxStepOutputBytes-2)/2) + `"`)},
		{StepID: strings.Repeat("s", 64), Status: agentsmcp.StepPending},
	}}
	if n := len(tk.Steps[0].Output); n != agentsmcp.MaxStepOutputBytes {
		t.Fatalf("test output is %d bytes, want the limit", n)
	}
	createTask(t, s, &tk)
	checkTask(t, findTask(t, s, tk.ID), &tk)
}

func testTaskNotFound(t *testing.T, s Services) {
	ctx := t.Context()
	tk := agentsmcp.Task{Request: "present"}
	createTask(t, s, &tk)
	for _, id := range []string{agentsmcp.NewID(agentsmcp.TaskIDPrefix), "", "nope", tk.ID + "x"} {
		_, err := s.Tasks.FindTaskByID(ctx, id)
		wantCode(t, err, agentsmcp.ENOTFOUND, fmt.Sprintf("FindTaskByID(%q)", id))
		_, err = s.Tasks.AcquireTaskLease(ctx, id, "owner", time.Minute)
		wantCode(t, err, agentsmcp.ENOTFOUND, fmt.Sprintf("AcquireTaskLease(%q)", id))
		wantCode(t, s.Tasks.ReleaseTaskLease(ctx, id, "owner"), agentsmcp.ENOTFOUND, fmt.Sprintf("ReleaseTaskLease(%q)", id))
	}
	u := tk
	u.ID = agentsmcp.NewID(agentsmcp.TaskIDPrefix)
	wantCode(t, s.Tasks.UpdateTask(ctx, &u), agentsmcp.ENOTFOUND, "UpdateTask of an unknown id")
	if u.Version != 1 {
		t.Errorf("a failed UpdateTask changed Version to %d", u.Version)
	}
}

func testTaskUpdate(t *testing.T, s Services) {
	ctx := t.Context()
	tk := fullTask()
	createTask(t, s, &tk)
	created := tk

	// One step ends, another starts: every field may change but ID,
	// CreatedAt and Lease.
	u := tk
	u.Steps = slices.Clone(tk.Steps)
	u.Steps[1] = agentsmcp.StepState{StepID: "read-1", Status: agentsmcp.StepFailed, Attempts: 3, Error: "boom", StartedAt: at(10), EndedAt: at(20),
		Output: json.RawMessage(` {"partial" : true} `)}
	u.Steps = u.Steps[:3]
	u.Status, u.Error, u.ErrorCode, u.EndedAt = agentsmcp.TaskFailed, "step read-1 failed", agentsmcp.EINTERNAL, at(21)
	u.Steps[2].Asks = 7
	u.Inputs = nil
	u.Request, u.PlanID = "changed request", agentsmcp.NewID(agentsmcp.PlanIDPrefix)
	storedform.AddEvent(&u, agentsmcp.TaskEvent{At: at(20), Type: "step_failed", StepID: "read-1", Message: "boom"})
	u.CreatedAt = at(1000)                                                 // ignored
	u.Lease = agentsmcp.TaskLease{Owner: "sneaky", ExpiresAt: at(1 << 20)} // ignored
	before := time.Now()
	if err := s.Tasks.UpdateTask(ctx, &u); err != nil {
		t.Fatalf("UpdateTask: %v", err)
	}
	after := time.Now()
	if u.Version != 2 {
		t.Errorf("UpdateTask set Version %d, want 2", u.Version)
	}
	checkRecent(t, "UpdatedAt", u.UpdatedAt, before, after)
	want := u
	want.CreatedAt, want.Lease = created.CreatedAt, agentsmcp.TaskLease{}
	checkTask(t, findTask(t, s, tk.ID), &want)

	// A stale version (the task as created) is refused and changes
	// nothing, neither the store nor the caller's task.
	stale := created
	stale.Status = agentsmcp.TaskSucceeded
	wantCode(t, s.Tasks.UpdateTask(ctx, &stale), agentsmcp.ECONFLICT, "UpdateTask with a stale version")
	if stale.Version != 1 || !stale.UpdatedAt.Equal(created.UpdatedAt) {
		t.Errorf("a refused UpdateTask changed the task: version %d, updatedAt %v", stale.Version, stale.UpdatedAt)
	}
	future := u
	future.Version = 3
	wantCode(t, s.Tasks.UpdateTask(ctx, &future), agentsmcp.ECONFLICT, "UpdateTask with a version never stored")
	checkTask(t, findTask(t, s, tk.ID), &want)

	// The current version goes through, again, and clears the error
	// code and a step's asks.
	u.Status, u.ErrorCode, u.Steps[2].Asks = agentsmcp.TaskCancelled, "", 0
	if err := s.Tasks.UpdateTask(ctx, &u); err != nil || u.Version != 3 {
		t.Fatalf("second UpdateTask: %v, version %d; want 3", err, u.Version)
	}
	if got := findTask(t, s, tk.ID); got.Status != agentsmcp.TaskCancelled || got.Version != 3 || got.ErrorCode != "" || got.Steps[2].Asks != 0 {
		t.Errorf("after the second update: status %q version %d error code %q asks %d", got.Status, got.Version, got.ErrorCode, got.Steps[2].Asks)
	}
}

func testTaskUpdateConcurrent(t *testing.T, s Services) {
	ctx := t.Context()
	tk := agentsmcp.Task{Request: "contended", Status: agentsmcp.TaskRunning}
	createTask(t, s, &tk)
	const n = 8
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		winners []int
		codes   = map[string]int{}
	)
	for i := range n {
		wg.Go(func() {
			u := tk
			u.Error = fmt.Sprint("updater ", i)
			err := s.Tasks.UpdateTask(ctx, &u)
			mu.Lock()
			defer mu.Unlock()
			codes[agentsmcp.ErrorCode(err)]++
			if err == nil {
				winners = append(winners, i)
			}
		})
	}
	wg.Wait()
	if len(winners) != 1 || codes[agentsmcp.ECONFLICT] != n-1 {
		t.Fatalf("%d updaters with the same version: winners %v, error codes %v; want exactly one winner and %d ECONFLICT", n, winners, codes, n-1)
	}
	got := findTask(t, s, tk.ID)
	if got.Version != 2 || got.Error != fmt.Sprint("updater ", winners[0]) {
		t.Errorf("stored version %d error %q; want 2 and the winner's (%d)", got.Version, got.Error, winners[0])
	}
}

func testTaskHistoryBound(t *testing.T, s Services) {
	tk := agentsmcp.Task{Request: "chatty", Status: agentsmcp.TaskRunning}
	for i := range agentsmcp.MaxTaskHistory + 7 {
		tk.History = append(tk.History, agentsmcp.TaskEvent{At: at(i), Type: "tick", Message: fmt.Sprint(i)})
	}
	createTask(t, s, &tk)
	check := func(first, count int) {
		t.Helper()
		if len(tk.History) != count {
			t.Fatalf("the caller's history has %d events, want %d", len(tk.History), count)
		}
		got := findTask(t, s, tk.ID)
		if len(got.History) != count {
			t.Fatalf("stored %d events, want %d", len(got.History), count)
		}
		for i, e := range got.History {
			if e.Message != fmt.Sprint(first+i) {
				t.Fatalf("stored event %d is %q, want %d: the newest are kept, in order", i, e.Message, first+i)
			}
			checkTime(t, "event At", e.At, at(first+i))
		}
	}
	check(7, agentsmcp.MaxTaskHistory)
	// Appended events beyond the bound push the oldest out.
	for i := range 5 {
		n := agentsmcp.MaxTaskHistory + 7 + i
		tk.History = append(tk.History, agentsmcp.TaskEvent{At: at(n), Type: "tick", Message: fmt.Sprint(n)})
	}
	if err := s.Tasks.UpdateTask(t.Context(), &tk); err != nil {
		t.Fatalf("UpdateTask: %v", err)
	}
	check(12, agentsmcp.MaxTaskHistory)
}

// testTaskHistoryKeepsLongestWait: the trimming of a task's history keeps
// how long the task waited for an answer (the MCP view of the task ends
// it by that), through a create and through later updates.
func testTaskHistoryKeepsLongestWait(t *testing.T, s Services) {
	tk := agentsmcp.Task{Request: "asks, then chats", Status: agentsmcp.TaskRunning}
	tk.History = []agentsmcp.TaskEvent{{At: at(0), Type: "paused"}, {At: at(3600), Type: "resumed"}}
	ticks := 0
	tick := func() {
		tk.History = append(tk.History, agentsmcp.TaskEvent{At: at(3601 + ticks), Type: "tick", Message: fmt.Sprint(ticks)})
		ticks++
	}
	for range agentsmcp.MaxTaskHistory {
		tick()
	}
	longest := func(what string) {
		t.Helper()
		got := findTask(t, s, tk.ID)
		if len(got.History) != agentsmcp.MaxTaskHistory || got.History[len(got.History)-1].Message != fmt.Sprint(ticks-1) {
			t.Fatalf("%s: stored %d events, the last %+v; want the newest %d", what, len(got.History), got.History[len(got.History)-1], agentsmcp.MaxTaskHistory)
		}
		waits, open := storedform.Waits(got.History)
		if len(waits) != 1 || !waits[0].Began.Equal(at(0)) || waits[0].Lasted != time.Hour || !open.IsZero() {
			t.Errorf("%s: the stored history records the waits %+v (open %v); want the hour from %v", what, waits, open, at(0))
		}
	}
	createTask(t, s, &tk)
	longest("created")
	for range 3 {
		tick()
	}
	if err := s.Tasks.UpdateTask(t.Context(), &tk); err != nil {
		t.Fatalf("UpdateTask: %v", err)
	}
	longest("updated")
}

// acquire takes the lease and checks the task returned.
func acquire(t *testing.T, s Services, id, owner string, ttl time.Duration) *agentsmcp.Task {
	t.Helper()
	before := time.Now()
	got, err := s.Tasks.AcquireTaskLease(t.Context(), id, owner, ttl)
	after := time.Now()
	if err != nil {
		t.Fatalf("AcquireTaskLease(%s, %q): %v", id, owner, err)
	}
	if got.ID != id || got.Lease.Owner != owner {
		t.Fatalf("AcquireTaskLease returned task %s with lease %+v, want %s held by %q", got.ID, got.Lease, id, owner)
	}
	checkRecent(t, "lease expiry - ttl", got.Lease.ExpiresAt.Add(-ttl), before, after)
	return got
}

func testTaskLease(t *testing.T, s Services) {
	ctx := t.Context()
	tk := fullTask()
	createTask(t, s, &tk)
	other := agentsmcp.Task{Request: "other task"}
	createTask(t, s, &other)

	held := acquire(t, s, tk.ID, "replica-a", time.Hour)
	want := tk
	want.Lease = held.Lease
	checkTask(t, held, &want) // the whole task comes back
	checkTask(t, findTask(t, s, tk.ID), &want)

	_, err := s.Tasks.AcquireTaskLease(ctx, tk.ID, "replica-b", time.Hour)
	wantCode(t, err, agentsmcp.ECONFLICT, "AcquireTaskLease of a held lease")
	// Another task's lease is independent.
	acquire(t, s, other.ID, "replica-b", time.Hour)

	// Renewal by the holder moves the expiry, both ways.
	renewed := acquire(t, s, tk.ID, "replica-a", 2*time.Hour)
	if !renewed.Lease.ExpiresAt.After(held.Lease.ExpiresAt) {
		t.Errorf("renewal kept expiry %v (was %v)", renewed.Lease.ExpiresAt, held.Lease.ExpiresAt)
	}
	shortened := acquire(t, s, tk.ID, "replica-a", time.Minute)
	if !shortened.Lease.ExpiresAt.Before(renewed.Lease.ExpiresAt) {
		t.Errorf("a shorter renewal kept expiry %v", shortened.Lease.ExpiresAt)
	}

	// Release by another owner does nothing; by the holder frees.
	if err := s.Tasks.ReleaseTaskLease(ctx, tk.ID, "replica-b"); err != nil {
		t.Fatalf("ReleaseTaskLease by a non-holder: %v", err)
	}
	if got := findTask(t, s, tk.ID); got.Lease.Owner != "replica-a" {
		t.Fatalf("a non-holder's release changed the lease to %+v", got.Lease)
	}
	if err := s.Tasks.ReleaseTaskLease(ctx, tk.ID, "replica-a"); err != nil {
		t.Fatalf("ReleaseTaskLease: %v", err)
	}
	if got := findTask(t, s, tk.ID); got.Lease != (agentsmcp.TaskLease{}) {
		t.Fatalf("after release the lease is %+v, want free", got.Lease)
	}
	if err := s.Tasks.ReleaseTaskLease(ctx, tk.ID, "replica-a"); err != nil {
		t.Fatalf("second ReleaseTaskLease: %v", err)
	}
	acquire(t, s, tk.ID, "replica-b", time.Hour)
	if got := findTask(t, s, other.ID); got.Lease.Owner != "replica-b" {
		t.Errorf("the other task's lease is %+v", got.Lease)
	}

	for name, call := range map[string]func() error{
		"empty owner": func() error { _, err := s.Tasks.AcquireTaskLease(ctx, tk.ID, "", time.Hour); return err },
		"zero ttl":    func() error { _, err := s.Tasks.AcquireTaskLease(ctx, tk.ID, "replica-b", 0); return err },
		"tiny ttl": func() error {
			_, err := s.Tasks.AcquireTaskLease(ctx, tk.ID, "replica-b", time.Microsecond)
			return err
		},
		"long owner": func() error {
			_, err := s.Tasks.AcquireTaskLease(ctx, tk.ID, strings.Repeat("o", agentsmcp.MaxLeaseOwnerBytes+1), time.Hour)
			return err
		},
	} {
		wantCode(t, call(), agentsmcp.EINVALID, name)
	}
	if got := findTask(t, s, tk.ID); got.Lease.Owner != "replica-b" || got.Version != 1 {
		t.Errorf("after invalid calls: lease %+v, version %d", got.Lease, got.Version)
	}
}

func testTaskLeaseExpires(t *testing.T, s Services) {
	ctx := t.Context()
	tk := agentsmcp.Task{Request: "short lease", Status: agentsmcp.TaskRunning}
	createTask(t, s, &tk)
	const ttl = 150 * time.Millisecond
	held := acquire(t, s, tk.ID, "replica-a", ttl)
	_, err := s.Tasks.AcquireTaskLease(ctx, tk.ID, "replica-b", time.Minute)
	wantCode(t, err, agentsmcp.ECONFLICT, "AcquireTaskLease before expiry")
	time.Sleep(time.Until(held.Lease.ExpiresAt) + 20*time.Millisecond)
	acquire(t, s, tk.ID, "replica-b", time.Minute)
	// The former holder lost it: renewing is now a conflict, and its
	// release does nothing.
	_, err = s.Tasks.AcquireTaskLease(ctx, tk.ID, "replica-a", ttl)
	wantCode(t, err, agentsmcp.ECONFLICT, "renewal of an expired lease taken by another")
	if err := s.Tasks.ReleaseTaskLease(ctx, tk.ID, "replica-a"); err != nil {
		t.Fatal(err)
	}
	if got := findTask(t, s, tk.ID); got.Lease.Owner != "replica-b" {
		t.Errorf("lease %+v, want replica-b's", got.Lease)
	}
}

// testTaskCreatedLeased: an executor creates the task it is about to run
// with its lease, so that no other replica resumes it in between.
func testTaskCreatedLeased(t *testing.T, s Services) {
	ctx := t.Context()
	expires := time.Now().Add(time.Hour)
	tk := agentsmcp.Task{Request: "leased from the start", Lease: agentsmcp.TaskLease{Owner: "replica-a", ExpiresAt: expires}}
	createTask(t, s, &tk)
	if tk.Lease.Owner != "replica-a" || !tk.Lease.ExpiresAt.Equal(expires.Truncate(time.Millisecond)) {
		t.Errorf("CreateTask returned lease %+v, want replica-a's until %v", tk.Lease, expires)
	}
	if got := findTask(t, s, tk.ID); got.Lease != tk.Lease {
		t.Errorf("stored lease %+v, want %+v", got.Lease, tk.Lease)
	}
	resumable, err := s.Tasks.FindTasksToResume(ctx, time.Now(), agentsmcp.MaxPageSize)
	if err != nil {
		t.Fatal(err)
	}
	if slices.ContainsFunc(resumable, func(x *agentsmcp.Task) bool { return x.ID == tk.ID }) {
		t.Error("FindTasksToResume offers a task created with an unexpired lease")
	}
	_, err = s.Tasks.AcquireTaskLease(ctx, tk.ID, "replica-b", time.Minute)
	wantCode(t, err, agentsmcp.ECONFLICT, "AcquireTaskLease of a task created leased by another")
	acquire(t, s, tk.ID, "replica-a", time.Minute)
	long := agentsmcp.Task{Request: "r", Lease: agentsmcp.TaskLease{Owner: strings.Repeat("o", agentsmcp.MaxLeaseOwnerBytes+1), ExpiresAt: expires}}
	wantCode(t, s.Tasks.CreateTask(ctx, &long), agentsmcp.EINVALID, "CreateTask with an overlong lease owner")
}

func testTaskLeaseConcurrent(t *testing.T, s Services) {
	ctx := t.Context()
	tk := agentsmcp.Task{Request: "contended lease", Status: agentsmcp.TaskRunning}
	createTask(t, s, &tk)
	const n = 8
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		winners []string
		codes   = map[string]int{}
	)
	for i := range n {
		wg.Go(func() {
			owner := fmt.Sprint("replica-", i)
			got, err := s.Tasks.AcquireTaskLease(ctx, tk.ID, owner, time.Hour)
			mu.Lock()
			defer mu.Unlock()
			codes[agentsmcp.ErrorCode(err)]++
			if err == nil {
				winners = append(winners, owner)
				if got.Lease.Owner != owner {
					t.Errorf("%s won, but the task returned has lease %+v", owner, got.Lease)
				}
			}
		})
	}
	wg.Wait()
	if len(winners) != 1 || codes[agentsmcp.ECONFLICT] != n-1 {
		t.Fatalf("%d acquirers: winners %v, error codes %v; want exactly one winner and %d ECONFLICT", n, winners, codes, n-1)
	}
	if got := findTask(t, s, tk.ID); got.Lease.Owner != winners[0] {
		t.Errorf("stored lease %+v, want the winner %s", got.Lease, winners[0])
	}
}

func testTaskLeaseAndVersionIndependent(t *testing.T, s Services) {
	ctx := t.Context()
	tk := agentsmcp.Task{Request: "independent", Status: agentsmcp.TaskPending}
	createTask(t, s, &tk)
	held := acquire(t, s, tk.ID, "replica-a", time.Hour)
	if held.Version != 1 || !held.UpdatedAt.Equal(tk.UpdatedAt) {
		t.Errorf("acquiring changed version to %d, updatedAt to %v", held.Version, held.UpdatedAt)
	}
	// The executor updates the task read before renewing: the renewal did
	// not change the version, and the update does not touch the lease.
	acquire(t, s, tk.ID, "replica-a", 2*time.Hour)
	tk.Status = agentsmcp.TaskRunning
	tk.Lease = agentsmcp.TaskLease{}
	if err := s.Tasks.UpdateTask(ctx, &tk); err != nil {
		t.Fatalf("UpdateTask after a renewal: %v", err)
	}
	got := findTask(t, s, tk.ID)
	if got.Lease.Owner != "replica-a" || got.Version != 2 || got.Status != agentsmcp.TaskRunning {
		t.Errorf("after update: lease %+v, version %d, status %q", got.Lease, got.Version, got.Status)
	}
	if err := s.Tasks.ReleaseTaskLease(ctx, tk.ID, "replica-a"); err != nil {
		t.Fatal(err)
	}
	if got := findTask(t, s, tk.ID); got.Version != 2 {
		t.Errorf("release changed version to %d", got.Version)
	}
}

func testTaskFindToResume(t *testing.T, s Services) {
	ctx := t.Context()
	mk := func(name string, status agentsmcp.TaskStatus, sec int) *agentsmcp.Task {
		tk := &agentsmcp.Task{Request: name, Status: status, CreatedAt: at(sec)}
		createTask(t, s, tk)
		return tk
	}
	// Created out of order: resume order is by CreatedAt, oldest first.
	runningFree := mk("running free", agentsmcp.TaskRunning, 3)
	pendingFree := mk("pending free", agentsmcp.TaskPending, 1)
	runningHeld := mk("running held", agentsmcp.TaskRunning, 0)
	runningReleased := mk("running released", agentsmcp.TaskRunning, 5)
	tie := mk("tie", agentsmcp.TaskRunning, 3)
	mk("paused", agentsmcp.TaskPaused, 2)
	mk("succeeded", agentsmcp.TaskSucceeded, 2)
	mk("failed", agentsmcp.TaskFailed, 2)
	mk("cancelled", agentsmcp.TaskCancelled, 2)
	endedHeld := mk("ended with an expired lease", agentsmcp.TaskFailed, 2)
	acquire(t, s, runningHeld.ID, "replica-a", time.Hour)
	acquire(t, s, runningReleased.ID, "replica-a", time.Hour)
	acquire(t, s, endedHeld.ID, "replica-a", time.Millisecond)
	if err := s.Tasks.ReleaseTaskLease(ctx, runningReleased.ID, "replica-a"); err != nil {
		t.Fatal(err)
	}
	ids := func(items []*agentsmcp.Task) []string {
		var out []string
		for _, it := range items {
			out = append(out, it.ID)
		}
		return out
	}
	tied := []string{runningFree.ID, tie.ID}
	slices.Sort(tied)
	now := time.Now()
	for _, tt := range []struct {
		name  string
		now   time.Time
		limit int
		want  []string
	}{
		{"now", now, 0, append(append([]string{pendingFree.ID}, tied...), runningReleased.ID)},
		{"limit", now, 2, []string{pendingFree.ID, tied[0]}},
		{"after the lease expires", now.Add(2 * time.Hour), 10, append(append([]string{runningHeld.ID, pendingFree.ID}, tied...), runningReleased.ID)},
	} {
		got, err := s.Tasks.FindTasksToResume(ctx, tt.now, tt.limit)
		if err != nil {
			t.Fatalf("%s: FindTasksToResume: %v", tt.name, err)
		}
		if !slices.Equal(ids(got), tt.want) {
			t.Errorf("%s: FindTasksToResume = %v, want %v", tt.name, ids(got), tt.want)
		}
	}
	got, err := s.Tasks.FindTasksToResume(ctx, now.Add(2*time.Hour), 1)
	if err != nil || len(got) != 1 {
		t.Fatalf("FindTasksToResume limit 1: %d, %v", len(got), err)
	}
	want := *runningHeld
	want.Lease = findTask(t, s, runningHeld.ID).Lease
	checkTask(t, got[0], &want)
}

func testTaskFiltersAndPaging(t *testing.T, s Services) {
	ctx := t.Context()
	plans := []string{agentsmcp.NewID(agentsmcp.PlanIDPrefix), agentsmcp.NewID(agentsmcp.PlanIDPrefix)}
	statuses := []agentsmcp.TaskStatus{agentsmcp.TaskRunning, agentsmcp.TaskSucceeded, agentsmcp.TaskPaused}
	var all []*agentsmcp.Task
	for i := range 19 {
		tk := &agentsmcp.Task{Request: fmt.Sprint("task ", i), Status: statuses[i%3], CreatedAt: at(i / 3)}
		if i%4 != 3 {
			tk.PlanID = plans[i%2]
		}
		createTask(t, s, tk)
		all = append(all, tk)
	}
	// A status change moves a task between status filters; its place in
	// the order (CreatedAt) stays.
	moved := *all[4]
	moved.Status = agentsmcp.TaskFailed
	if err := s.Tasks.UpdateTask(ctx, &moved); err != nil {
		t.Fatal(err)
	}
	all[4] = &moved
	key := func(tk *agentsmcp.Task) (time.Time, string) { return tk.CreatedAt, tk.ID }
	sel := func(f agentsmcp.TaskFilter) []string {
		var out []*agentsmcp.Task
		for _, tk := range all {
			if (f.Status == "" || tk.Status == f.Status) && (f.PlanID == "" || tk.PlanID == f.PlanID) {
				out = append(out, tk)
			}
		}
		return newestFirstIDs(out, key)
	}
	for _, f := range []agentsmcp.TaskFilter{
		{},
		{Status: agentsmcp.TaskRunning},
		{Status: agentsmcp.TaskFailed},
		{Status: agentsmcp.TaskCancelled},
		{PlanID: plans[0]},
		{PlanID: plans[1], Status: agentsmcp.TaskPaused},
		{PlanID: agentsmcp.NewID(agentsmcp.PlanIDPrefix)},
	} {
		want := sel(f)
		for _, limit := range pageLimits {
			find := func(ctx context.Context, cursor string, limit int) ([]*agentsmcp.Task, string, error) {
				g := f
				g.Cursor, g.Limit = cursor, limit
				return s.Tasks.FindTasks(ctx, g)
			}
			if got := pageAll(t, find, limit, taskID); !slices.Equal(got, want) {
				t.Errorf("FindTasks(%+v) limit %d:\n got %v\nwant %v", f, limit, got, want)
			}
		}
	}
	if len(sel(agentsmcp.TaskFilter{Status: agentsmcp.TaskFailed})) != 1 || len(sel(agentsmcp.TaskFilter{PlanID: plans[1], Status: agentsmcp.TaskPaused})) == 0 {
		t.Fatal("the test data does not exercise the filters")
	}
}

func testTaskBadCursor(t *testing.T, s Services) {
	tk := agentsmcp.Task{Request: "one"}
	createTask(t, s, &tk)
	for _, c := range badCursors {
		_, _, err := s.Tasks.FindTasks(t.Context(), agentsmcp.TaskFilter{Cursor: c})
		wantCode(t, err, agentsmcp.EINVALID, fmt.Sprintf("FindTasks(cursor %q)", c))
	}
}
