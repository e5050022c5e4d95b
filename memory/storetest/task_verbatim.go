package storetest

import (
	"reflect"
	"testing"
	"time"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/internal/storedform"
)

// The test of agentsmcp.VerbatimTaskStore, for the stores that say they
// store tasks verbatim: after each kind of write, the task read back is
// the StoredForm of the task written, which the executor returns from
// Wait without reading it.
func init() {
	suite["TaskReadsBackVerbatim"] = testTaskReadsBackVerbatim
}

func testTaskReadsBackVerbatim(t *testing.T, s Services) {
	if !storedform.TasksVerbatim(s.Tasks) {
		t.Skip("the store does not store tasks verbatim")
	}
	ctx := t.Context()
	tk := fullTask()
	tk.Lease = agentsmcp.TaskLease{Owner: "replica-1", ExpiresAt: time.Now().Add(time.Minute)}
	createTask(t, s, &tk)
	check := func(what string, written *agentsmcp.Task) {
		t.Helper()
		want := storedform.Task(written)
		if want == nil {
			t.Fatalf("%s: StoredForm is nil for valid UTF-8", what)
		}
		if got := findTask(t, s, tk.ID); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: read back\n%+v\nwant the stored form of the task written\n%+v", what, got, want)
		}
	}
	check("CreateTask", &tk)

	if u, ok := s.Tasks.(agentsmcp.TaskStepUpdater); ok {
		c := transition(&tk, 3, 1, 1)
		tk.Steps[3].Error = ""
		if err := u.UpdateTaskSteps(ctx, &tk, c); err != nil {
			t.Fatal(err)
		}
		check("UpdateTaskSteps", &tk)
	}

	tk.Status, tk.EndedAt, tk.Error, tk.ErrorCode = agentsmcp.TaskFailed, time.Now(), "1 step(s) failed", agentsmcp.EINTERNAL
	tk.Steps[1].Status, tk.Steps[1].EndedAt = agentsmcp.StepFailed, time.Now()
	tk.Steps[1].Output = nil
	tk.Inputs = nil
	storedform.AddEvent(&tk, agentsmcp.TaskEvent{At: time.Now(), Type: "failed", Message: tk.Error})
	if err := s.Tasks.UpdateTask(ctx, &tk); err != nil {
		t.Fatal(err)
	}
	check("UpdateTask", &tk)

	if err := s.Tasks.ReleaseTaskLease(ctx, tk.ID, "replica-1"); err != nil {
		t.Fatal(err)
	}
	tk.Lease = agentsmcp.TaskLease{}
	check("ReleaseTaskLease", &tk)
}
