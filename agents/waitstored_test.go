package agents_test

import (
	"context"
	"reflect"
	"testing"
	"time"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/agents"
	"github.com/agents-mcp/agents-mcp/internal/agentstest"
	"github.com/agents-mcp/agents-mcp/internal/testutil"
)

type readCountingTasks = agentstest.ReadCountingTasks

// TestWaitReturnsTheStoredTaskWithoutReading: when the runner of this
// process stored a task's end or pause, Wait (and Cancel) return what
// FindTaskByID returns on SQLite, field for field, without reading it
// (saving the read of a large task); with a store that does not store tasks verbatim
// (the secrets wrapper), they read it.
func TestWaitReturnsTheStoredTaskWithoutReading(t *testing.T) {
	cases := []struct {
		name   string
		steps  []agentsmcp.PlanStep
		status agentsmcp.TaskStatus
		cancel bool
	}{
		{"succeeded", []agentsmcp.PlanStep{
			step("a", "echo", `{"value":"<x> & \"y\""}`),
			step("b", "echo", `{"value":"{{steps.a.output.value}}"}`, "a"),
			step("c", "echo", `{"value":"{{inputs.n}}"}`, "a"),
		}, agentsmcp.TaskSucceeded, false},
		{"failed", []agentsmcp.PlanStep{
			step("a", "echo", `{"value":1}`),
			step("bad", "broken", "", "a"),
			step("after", "echo", `{"value":2}`, "bad"),
		}, agentsmcp.TaskFailed, false},
		{"paused", []agentsmcp.PlanStep{
			step("a", "echo", `{"value":1}`),
			step("gated", "delete_all", "", "a"),
		}, agentsmcp.TaskPaused, false},
		{"cancelled", []agentsmcp.PlanStep{
			step("block", "block", ""),
			step("later", "echo", `{"value":1}`, "block"),
			step("free", "echo", `{"value":2}`),
		}, agentsmcp.TaskCancelled, true},
	}
	for _, verbatim := range []bool{true, false} {
		for _, tc := range cases {
			t.Run(tc.name+map[bool]string{true: "/verbatim", false: "/not-verbatim"}[verbatim], func(t *testing.T) {
				var counting *readCountingTasks
				h := newHarness(t, func(o *agents.ExecutorOptions) {
					counting = &readCountingTasks{TaskService: o.Tasks, Verbatim: verbatim}
					o.Tasks = counting
					o.OnChange = func(*agentsmcp.Task) {} // as in the server: the reporter passes the answer on
				})
				ctx := agentsmcp.WithPrincipal(context.Background(),
					&agentsmcp.Principal{ID: "alice", Scopes: []string{agentsmcp.ScopeMCP}, Tools: []string{"echo", "broken", "delete_all", "block"}})
				p := h.plan(`{"type":"object","properties":{"n":{"type":"integer"}}}`, tc.steps...)
				task, err := h.exec.Start(ctx, p, []byte(`{"n": 7}`), nil, nil)
				if err != nil {
					t.Fatal(err)
				}
				before := counting.Reads.Load()
				var got *agentsmcp.Task
				if tc.cancel {
					testutil.Eventually(t, 10*time.Second, "block is called", func() bool { return h.tools.CallsOf("block") == 1 })
					ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
					defer cancel()
					if got, err = h.exec.Cancel(ctx, task.ID); err != nil {
						t.Fatal(err)
					}
				} else {
					got = h.wait(task.ID)
				}
				reads := counting.Reads.Load() - before
				if got.Status != tc.status {
					t.Fatalf("status %s (%s), want %s", got.Status, got.Error, tc.status)
				}
				switch {
				case verbatim && reads != 0:
					t.Errorf("the task was read %d times; want none", reads)
				case !verbatim && reads == 0:
					t.Error("the task was not read back from a store that does not store it verbatim")
				}
				stored, err := h.store.FindTaskByID(context.Background(), task.ID)
				if err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(got, stored) {
					t.Errorf("returned\n%+v\nFindTaskByID\n%+v", got, stored)
				}
				// A Wait after the runner has gone reads the store.
				again, err := h.exec.Wait(context.Background(), task.ID)
				if err != nil || !reflect.DeepEqual(again, stored) {
					t.Errorf("a later Wait returned %+v (%v), want the stored task", again, err)
				}
			})
		}
	}
}
