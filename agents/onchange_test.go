package agents_test

import (
	"context"
	"encoding/json"
	"slices"
	"sync"
	"testing"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/agents"
)

// ExecutorOptions.OnChange reports every stored transition of a task
// (ADR 0010, D5), whichever path stored it: Start, the runner, Resume and
// Cancel. Real executor, real SQLite store.
func TestOnChangeReportsEveryStoredTransition(t *testing.T) {
	type report struct {
		id      string
		status  agentsmcp.TaskStatus
		version int64
	}
	var mu sync.Mutex
	var reports []report
	h := newHarness(t, func(o *agents.ExecutorOptions) {
		o.OnChange = func(t *agentsmcp.Task) {
			mu.Lock()
			defer mu.Unlock()
			reports = append(reports, report{t.ID, t.Status, t.Version})
		}
	})
	of := func(id string) (statuses []agentsmcp.TaskStatus, versions []int64) {
		mu.Lock()
		defer mu.Unlock()
		for _, r := range reports {
			if r.id == id {
				statuses = append(statuses, r.status)
				versions = append(versions, r.version)
			}
		}
		return statuses, versions
	}

	p := h.plan(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`,
		step("use", "echo", `{"value":"{{inputs.path}}"}`))
	task := h.run(p, "", nil)
	if task.Status != agentsmcp.TaskPaused {
		t.Fatalf("status %s, want paused", task.Status)
	}
	if _, err := h.exec.Resume(context.Background(), task.ID, agents.ResumeRequest{Inputs: json.RawMessage(`{"path":"/x"}`)}, nil); err != nil {
		t.Fatal(err)
	}
	done := h.wait(task.ID)
	stored, err := h.store.FindTaskByID(context.Background(), task.ID)
	if err != nil {
		t.Fatal(err)
	}
	statuses, versions := of(task.ID)
	// Each stored version is reported once, in order, up to the last: no
	// transition is missed (lease writes do not change the version).
	want := make([]int64, stored.Version)
	for i := range want {
		want[i] = int64(i) + 1
	}
	if !slices.Equal(versions, want) {
		t.Errorf("versions reported %v, want %v", versions, want)
	}
	if i, j := slices.Index(statuses, agentsmcp.TaskPaused), slices.Index(statuses, agentsmcp.TaskSucceeded); done.Status != agentsmcp.TaskSucceeded || i < 0 || j < i || j != len(statuses)-1 {
		t.Errorf("statuses reported %v for a task that ended %s", statuses, done.Status)
	}

	// A cancel stored by Cancel is reported too.
	p = h.plan(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`,
		step("use", "echo", `{"value":"{{inputs.path}}"}`))
	task = h.run(p, "", nil)
	if _, err := h.exec.Cancel(context.Background(), task.ID); err != nil {
		t.Fatal(err)
	}
	if statuses, _ := of(task.ID); statuses[len(statuses)-1] != agentsmcp.TaskCancelled {
		t.Errorf("statuses reported %v, want cancelled last", statuses)
	}
}
