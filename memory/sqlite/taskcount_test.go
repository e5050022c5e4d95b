package sqlite

import (
	"context"
	"maps"
	"testing"

	agentsmcp "github.com/agents-mcp/agents-mcp"
)

func TestCountTasksByStatus(t *testing.T) {
	ctx := t.Context()
	db := openTest(t)

	checkTaskCounts(t, db, map[agentsmcp.TaskStatus]int64{}) // an empty store: every status at 0

	created := map[agentsmcp.TaskStatus]int{agentsmcp.TaskPending: 3, agentsmcp.TaskRunning: 2, agentsmcp.TaskSucceeded: 1}
	var first *agentsmcp.Task
	for status, n := range created {
		for range n {
			tk := &agentsmcp.Task{Request: "count me", Status: status}
			if err := db.CreateTask(ctx, tk); err != nil {
				t.Fatalf("CreateTask: %v", err)
			}
			if status == agentsmcp.TaskPending && first == nil {
				first = tk
			}
		}
	}
	// A status change moves the task from one count to the other.
	first.Status, first.Error = agentsmcp.TaskFailed, "boom"
	if err := db.UpdateTask(ctx, first); err != nil {
		t.Fatalf("UpdateTask: %v", err)
	}
	checkTaskCounts(t, db, map[agentsmcp.TaskStatus]int64{
		agentsmcp.TaskPending: 2, agentsmcp.TaskRunning: 2, agentsmcp.TaskSucceeded: 1, agentsmcp.TaskFailed: 1,
	})

	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := db.CountTasksByStatus(cancelled); err == nil {
		t.Error("CountTasksByStatus with a cancelled context: no error")
	}
}

// checkTaskCounts compares the store's counts with want, in which missing
// statuses mean 0.
func checkTaskCounts(t *testing.T, db *DB, want map[agentsmcp.TaskStatus]int64) {
	t.Helper()
	got, err := db.CountTasksByStatus(t.Context())
	if err != nil {
		t.Fatalf("CountTasksByStatus: %v", err)
	}
	full := make(map[agentsmcp.TaskStatus]int64, len(agentsmcp.TaskStatuses))
	for _, s := range agentsmcp.TaskStatuses {
		full[s] = want[s]
	}
	if !maps.Equal(got, full) {
		t.Errorf("CountTasksByStatus = %v, want %v", got, full)
	}
}
