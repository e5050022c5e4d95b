package storetest

import (
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/internal/storedform"
)

// The tests of agentsmcp.TaskStepUpdater, for the stores that have it:
// a step transition written as the steps and events that changed must
// read back as if the whole task had been written, and keep UpdateTask's
// compare-and-set.
func init() {
	suite["TaskStepsRoundTrip"] = testTaskStepsRoundTrip
	suite["TaskStepsStaleWriterLoses"] = testTaskStepsStaleWriterLoses
	suite["TaskStepsConcurrent"] = testTaskStepsConcurrent
	suite["TaskStepsInvalid"] = testTaskStepsInvalid
	suite["TaskStepsDeleted"] = testTaskStepsDeleted
}

// stepUpdater returns the store's TaskStepUpdater, skipping the test when
// it has none.
func stepUpdater(t *testing.T, s Services) agentsmcp.TaskStepUpdater {
	t.Helper()
	u, ok := s.Tasks.(agentsmcp.TaskStepUpdater)
	if !ok {
		t.Skip("the store does not implement agentsmcp.TaskStepUpdater")
	}
	return u
}

// transition changes tk as a runner does between two writes: step i ends
// with an output, step j starts, two events are appended and the task's
// own fields change. It returns the change.
func transition(tk *agentsmcp.Task, i, j int, n int) agentsmcp.TaskChange {
	tk.Steps = slices.Clone(tk.Steps)
	tk.Steps[i].Status, tk.Steps[i].EndedAt = agentsmcp.StepSucceeded, at(100+n)
	tk.Steps[i].Output = json.RawMessage(fmt.Sprintf(` {"n": %d, "s": "☕ \"q\""} `, n))
	tk.Steps[i].Error = ""
	tk.Steps[j].Status, tk.Steps[j].StartedAt = agentsmcp.StepRunning, at(100+n)
	tk.Steps[j].Attempts++
	tk.History = slices.Clone(tk.History)
	storedform.AddEvent(tk, agentsmcp.TaskEvent{At: at(100 + n), Type: "step_succeeded", StepID: tk.Steps[i].StepID})
	storedform.AddEvent(tk, agentsmcp.TaskEvent{At: at(100 + n), Type: "step_started", StepID: tk.Steps[j].StepID, Message: fmt.Sprint("write ", n)})
	tk.Error = fmt.Sprint("transition ", n)
	tk.Inputs = json.RawMessage(fmt.Sprintf(`{"repo": "r%d"}`, n))
	return agentsmcp.TaskChange{Steps: []int{i, j}, Events: 2}
}

func testTaskStepsRoundTrip(t *testing.T, s Services) {
	up := stepUpdater(t, s)
	ctx := t.Context()
	tk := fullTask()
	createTask(t, s, &tk)
	created := tk

	// Two transitions written as changes, then one written whole, then
	// one more change: each reads back as the whole task.
	u := tk
	for n, move := range [][2]int{{1, 3}, {3, 0}, {0, 2}, {2, 1}} {
		c := transition(&u, move[0], move[1], n)
		before := time.Now()
		if n == 2 {
			u.Steps = u.Steps[:3] // only a whole write may change the number of steps
			u.Status, u.EndedAt = agentsmcp.TaskFailed, at(200)
			if err := s.Tasks.UpdateTask(ctx, &u); err != nil {
				t.Fatalf("UpdateTask between changes: %v", err)
			}
		} else if err := up.UpdateTaskSteps(ctx, &u, c); err != nil {
			t.Fatalf("UpdateTaskSteps %d: %v", n, err)
		}
		after := time.Now()
		if u.Version != int64(n+2) {
			t.Errorf("write %d set Version %d, want %d", n, u.Version, n+2)
		}
		checkRecent(t, "UpdatedAt", u.UpdatedAt, before, after)
		want := u
		want.CreatedAt, want.Lease = created.CreatedAt, agentsmcp.TaskLease{}
		checkTask(t, findTask(t, s, tk.ID), &want)
		items, _, err := s.Tasks.FindTasks(ctx, agentsmcp.TaskFilter{PlanID: tk.PlanID})
		if err != nil || len(items) != 1 {
			t.Fatalf("FindTasks by plan: %d items, %v", len(items), err)
		}
		checkTask(t, items[0], &want)
		leased := acquire(t, s, tk.ID, "owner-a", time.Minute)
		want.Lease = leased.Lease
		checkTask(t, leased, &want)
		if err := s.Tasks.ReleaseTaskLease(ctx, tk.ID, "owner-a"); err != nil {
			t.Fatal(err)
		}
	}

	// A change of no step and no event writes the task's own fields.
	u.Status, u.ErrorCode, u.Error = agentsmcp.TaskFailed, agentsmcp.EINTERNAL, "nothing else"
	if err := up.UpdateTaskSteps(ctx, &u, agentsmcp.TaskChange{}); err != nil {
		t.Fatalf("UpdateTaskSteps of the task alone: %v", err)
	}
	want := u
	want.CreatedAt, want.Lease = created.CreatedAt, agentsmcp.TaskLease{}
	checkTask(t, findTask(t, s, tk.ID), &want)
}

// testTaskStepsStaleWriterLoses checks the compare-and-set: a writer of
// changes whose version is stale loses to one that wrote first, whether
// the winner wrote changes or the whole task, and nothing of the loser's
// is stored or applied to its task.
func testTaskStepsStaleWriterLoses(t *testing.T, s Services) {
	up := stepUpdater(t, s)
	ctx := t.Context()
	tk := fullTask()
	createTask(t, s, &tk)

	winner, loser := tk, tk
	transition(&winner, 1, 3, 1)
	if err := up.UpdateTaskSteps(ctx, &winner, agentsmcp.TaskChange{Steps: []int{1, 3}, Events: 2}); err != nil {
		t.Fatalf("first writer: %v", err)
	}
	c := transition(&loser, 3, 0, 2)
	loser.Status = agentsmcp.TaskCancelled
	lost := loser
	wantCode(t, up.UpdateTaskSteps(ctx, &loser, c), agentsmcp.ECONFLICT, "UpdateTaskSteps with a stale version")
	if loser.Version != lost.Version || !loser.UpdatedAt.Equal(lost.UpdatedAt) || len(loser.History) != len(lost.History) {
		t.Errorf("a refused UpdateTaskSteps changed the task: version %d, updatedAt %v, %d events", loser.Version, loser.UpdatedAt, len(loser.History))
	}
	want := winner
	want.Lease = agentsmcp.TaskLease{}
	checkTask(t, findTask(t, s, tk.ID), &want)

	// The whole write of another writer makes the changes of the first
	// one stale too.
	other := winner
	other.Error = "written whole"
	if err := s.Tasks.UpdateTask(ctx, &other); err != nil {
		t.Fatal(err)
	}
	c = transition(&winner, 3, 0, 3)
	wantCode(t, up.UpdateTaskSteps(ctx, &winner, c), agentsmcp.ECONFLICT, "UpdateTaskSteps after a whole write")
	want = other
	want.Lease = agentsmcp.TaskLease{}
	checkTask(t, findTask(t, s, tk.ID), &want)

	// A lease change is not a write of the task: the current version
	// still goes through.
	acquire(t, s, tk.ID, "owner-b", time.Minute)
	c = transition(&other, 3, 0, 4)
	if err := up.UpdateTaskSteps(ctx, &other, c); err != nil {
		t.Fatalf("UpdateTaskSteps after a lease change: %v", err)
	}
	if got := findTask(t, s, tk.ID); got.Version != 4 || got.Lease.Owner != "owner-b" || got.Steps[3].Status != agentsmcp.StepSucceeded {
		t.Errorf("after a lease change: version %d, lease %q, step 3 %s", got.Version, got.Lease.Owner, got.Steps[3].Status)
	}
}

func testTaskStepsConcurrent(t *testing.T, s Services) {
	up := stepUpdater(t, s)
	ctx := t.Context()
	tk := fullTask()
	createTask(t, s, &tk)
	const n = 8
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		winners []int
		written = map[int]*agentsmcp.Task{}
		codes   = map[string]int{}
	)
	for i := range n {
		wg.Go(func() {
			u := tk
			c := transition(&u, i%4, (i+1)%4, i)
			err := up.UpdateTaskSteps(ctx, &u, c)
			mu.Lock()
			defer mu.Unlock()
			codes[agentsmcp.ErrorCode(err)]++
			if err == nil {
				winners = append(winners, i)
				written[i] = &u
			}
		})
	}
	wg.Wait()
	if len(winners) != 1 || codes[agentsmcp.ECONFLICT] != n-1 {
		t.Fatalf("%d writers of changes with the same version: winners %v, error codes %v; want exactly one winner and %d ECONFLICT", n, winners, codes, n-1)
	}
	want := *written[winners[0]]
	want.Lease = agentsmcp.TaskLease{}
	checkTask(t, findTask(t, s, tk.ID), &want)
}

func testTaskStepsInvalid(t *testing.T, s Services) {
	up := stepUpdater(t, s)
	ctx := t.Context()
	tk := fullTask()
	createTask(t, s, &tk)
	stored := tk
	for _, tt := range []struct {
		name   string
		change func(u *agentsmcp.Task) agentsmcp.TaskChange
	}{
		{"a step out of range", func(u *agentsmcp.Task) agentsmcp.TaskChange { return agentsmcp.TaskChange{Steps: []int{4}} }},
		{"a negative step", func(u *agentsmcp.Task) agentsmcp.TaskChange { return agentsmcp.TaskChange{Steps: []int{-1}} }},
		{"more new events than the history", func(u *agentsmcp.Task) agentsmcp.TaskChange { return agentsmcp.TaskChange{Events: 3} }},
		{"a changed step that is invalid", func(u *agentsmcp.Task) agentsmcp.TaskChange {
			u.Steps = slices.Clone(u.Steps)
			u.Steps[2].Status = "exploded"
			return agentsmcp.TaskChange{Steps: []int{2}}
		}},
		{"a changed step with another's id", func(u *agentsmcp.Task) agentsmcp.TaskChange {
			u.Steps = slices.Clone(u.Steps)
			u.Steps[2].StepID = u.Steps[0].StepID
			return agentsmcp.TaskChange{Steps: []int{2}}
		}},
		{"a new event too large", func(u *agentsmcp.Task) agentsmcp.TaskChange {
			u.History = append(slices.Clone(u.History), agentsmcp.TaskEvent{At: at(1), Type: "x", Message: string(make([]byte, agentsmcp.MaxTaskEventBytes))})
			return agentsmcp.TaskChange{Events: 1}
		}},
		{"a history that may have been trimmed", func(u *agentsmcp.Task) agentsmcp.TaskChange {
			u.History = slices.Clone(u.History)
			for len(u.History) < agentsmcp.MaxTaskHistory {
				u.History = append(u.History, agentsmcp.TaskEvent{At: at(1), Type: "x"})
			}
			return agentsmcp.TaskChange{Events: 1}
		}},
		{"no status", func(u *agentsmcp.Task) agentsmcp.TaskChange { u.Status = ""; return agentsmcp.TaskChange{} }},
		{"an error code on a running task", func(u *agentsmcp.Task) agentsmcp.TaskChange {
			u.ErrorCode = agentsmcp.EINTERNAL
			return agentsmcp.TaskChange{}
		}},
	} {
		u := tk
		c := tt.change(&u)
		wantCode(t, up.UpdateTaskSteps(ctx, &u, c), agentsmcp.EINVALID, "UpdateTaskSteps with "+tt.name)
		if u.Version != 1 {
			t.Errorf("%s: a refused UpdateTaskSteps set version %d", tt.name, u.Version)
		}
	}
	checkTask(t, findTask(t, s, tk.ID), &stored)
	missing := tk
	missing.ID = agentsmcp.NewID(agentsmcp.TaskIDPrefix)
	wantCode(t, up.UpdateTaskSteps(ctx, &missing, agentsmcp.TaskChange{Steps: []int{0}}), agentsmcp.ENOTFOUND, "UpdateTaskSteps of an unknown task")
}

// testTaskStepsDeleted checks that the step states and events written as
// changes go with their task: a task created later with the same id has
// only its own.
func testTaskStepsDeleted(t *testing.T, s Services) {
	up := stepUpdater(t, s)
	ctx := t.Context()
	tk := fullTask()
	createTask(t, s, &tk)
	c := transition(&tk, 1, 3, 1)
	tk.Status, tk.EndedAt = agentsmcp.TaskSucceeded, at(300)
	if err := up.UpdateTaskSteps(ctx, &tk, c); err != nil {
		t.Fatal(err)
	}
	if n, err := s.Tasks.DeleteEndedTasks(ctx, at(301), 10); err != nil || n != 1 {
		t.Fatalf("DeleteEndedTasks: %d, %v; want 1", n, err)
	}
	again := agentsmcp.Task{ID: tk.ID, Request: "same id", Status: agentsmcp.TaskRunning, CreatedAt: at(400),
		Steps: []agentsmcp.StepState{{StepID: "only", Status: agentsmcp.StepPending}}}
	createTask(t, s, &again)
	checkTask(t, findTask(t, s, tk.ID), &again)
}
