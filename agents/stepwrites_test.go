package agents_test

import (
	"context"
	"encoding/json"
	"sync"
	"testing"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/agents"
	"github.com/agents-mcp/agents-mcp/router/toolsearch"
)

// TestRunnerWritesTransitionsPerStep: on a store with UpdateTaskSteps (the
// SQLite store), every transition of a task after its creation is written
// as a change, none whole (a 200-step task is not rewritten per step), and the task as stored at
// the end is the one the runner ended with. The store runs behind the
// OnChange reporter, as in the server, so the change passes through it.
func TestRunnerWritesTransitionsPerStep(t *testing.T) {
	steps, _ := benchDAG(40, 8)
	nt, r := newNoopRouter(t, 0)
	var counting *countingTasks
	var (
		mu       sync.Mutex
		reported []int64
	)
	h := newHarness(t, func(o *agents.ExecutorOptions) {
		o.Tools, o.Catalog = r, toolsearch.NewCatalog(r, nil, nil)
		o.MaxParallel = 8
		counting = &countingTasks{TaskService: o.Tasks}
		o.Tasks = counting
		o.OnChange = func(t *agentsmcp.Task) {
			mu.Lock()
			defer mu.Unlock()
			reported = append(reported, t.Version)
		}
	})
	p := h.plan("", steps...)
	task, err := h.exec.Start(context.Background(), p, nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	done := h.wait(task.ID)
	checkBenchTask(t, done, len(steps))
	if n := nt.calls.Load(); n != int64(len(steps)) {
		t.Errorf("the tool was called %d times for %d steps", n, len(steps))
	}
	if w, u := counting.whole.Load(), counting.updates.Load(); w != 0 || u == 0 {
		t.Errorf("%d writes whole of %d; want every write per step", w, u)
	}
	stored, err := h.store.FindTaskByID(context.Background(), task.ID)
	if err != nil {
		t.Fatal(err)
	}
	if stored.Version != done.Version || stored.Version != counting.updates.Load()+1 {
		t.Errorf("stored version %d, the runner's %d, after %d writes", stored.Version, done.Version, counting.updates.Load())
	}
	got, _ := json.Marshal(stored.Steps)
	want, _ := json.Marshal(done.Steps)
	if string(got) != string(want) || len(stored.History) != len(done.History) {
		t.Errorf("stored steps\n%s\nwant the runner's\n%s\n(%d events, want %d)", got, want, len(stored.History), len(done.History))
	}
	mu.Lock()
	defer mu.Unlock()
	for i, v := range reported {
		if v != int64(i+1) {
			t.Fatalf("OnChange reported versions %v; want every one from 1", reported)
		}
	}
}
