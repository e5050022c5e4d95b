package storetest

import (
	"encoding/json"
	"fmt"
	"syscall"
	"testing"
	"time"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/internal/storedform"
)

// Bench measures the operations the agents run most on the store open
// returns, seeded with rows learnings, so that two stores (SQLite and
// MongoDB/FerretDB) are compared on the same work:
//
//   - FindLearnings/*: one page (limit 20) of filtered learnings;
//   - FindLearningByID: a point read;
//   - RecordToolCall: an update of counters by key, the hot write, one
//     transaction per call; RecordToolCalls/batch=256 the same calls in
//     the recorder's batches (ns/op per call);
//   - CreateLearning: an insert with its list fields.
//
// The reads run first, so they see exactly rows learnings. Learning i
// used tool "tool_<i%10>" and upstream "up_<i%3>", ended with outcome i%4,
// and was created i seconds after a fixed time.
func Bench(b *testing.B, open func(b *testing.B) Services, rows int) {
	s := open(b)
	ctx := b.Context()
	var ids []string
	for i := range rows {
		l := benchLearning(i)
		if err := s.Learnings.CreateLearning(ctx, l); err != nil {
			b.Fatalf("seed learning %d: %v", i, err)
		}
		ids = append(ids, l.ID)
	}
	find := func(name string, f agentsmcp.LearningFilter) {
		b.Run("FindLearnings/"+name, func(b *testing.B) {
			f.Limit = 20
			for b.Loop() {
				items, _, err := s.Learnings.FindLearnings(ctx, f)
				if err != nil || len(items) == 0 {
					b.Fatalf("FindLearnings(%+v): %d items, %v", f, len(items), err)
				}
			}
		})
	}
	find("All", agentsmcp.LearningFilter{})
	find("Tool", agentsmcp.LearningFilter{Tool: "tool_3"})
	find("Tool+Outcome", agentsmcp.LearningFilter{Tool: "tool_3", Outcome: agentsmcp.OutcomeFailure})
	find("Upstream+Since", agentsmcp.LearningFilter{Source: "up_1", Since: base.Add(time.Duration(rows/2) * time.Second)})
	find("Outcome+Range", agentsmcp.LearningFilter{Outcome: agentsmcp.OutcomeSuccess, Since: base.Add(time.Duration(rows/4) * time.Second), Until: base.Add(time.Duration(rows/2) * time.Second)})
	find("Text", agentsmcp.LearningFilter{Text: "report weekly"})
	b.Run("FindLearningByID", func(b *testing.B) {
		i := 0
		for b.Loop() {
			if _, err := s.Learnings.FindLearningByID(ctx, ids[i%len(ids)]); err != nil {
				b.Fatal(err)
			}
			i += 7919 // a prime: spread the reads
		}
	})
	b.Run("RecordToolCall", func(b *testing.B) {
		i := 0
		for b.Loop() {
			c := agentsmcp.ToolCall{Tool: fmt.Sprint("tool_", i%10), Duration: time.Duration(i%500) * time.Millisecond, At: at(i)}
			if i%10 == 0 {
				c.Error = fmt.Sprint("error ", i%7)
			}
			if err := s.ToolPerformance.RecordToolCall(ctx, c); err != nil {
				b.Fatal(err)
			}
			i++
		}
	})
	b.Run("RecordToolCalls/batch=256", func(b *testing.B) {
		// The same calls as RecordToolCall, in the batches the tool
		// performance recorder writes; ns/op is per call.
		batch := make([]agentsmcp.ToolCall, 0, 256)
		i := 0
		write := func() {
			if err := s.ToolPerformance.RecordToolCalls(ctx, batch); err != nil {
				b.Fatal(err)
			}
			batch = batch[:0]
		}
		for b.Loop() {
			c := agentsmcp.ToolCall{Tool: fmt.Sprint("tool_", i%10), Duration: time.Duration(i%500) * time.Millisecond, At: at(i)}
			if i%10 == 0 {
				c.Error = fmt.Sprint("error ", i%7)
			}
			if batch = append(batch, c); len(batch) == cap(batch) {
				write()
			}
			i++
		}
		if len(batch) > 0 {
			write()
		}
	})
	b.Run("CreateLearning", func(b *testing.B) {
		i := rows
		for b.Loop() {
			if err := s.Learnings.CreateLearning(ctx, benchLearning(i)); err != nil {
				b.Fatal(err)
			}
			i++
		}
	})
}

// benchWords make up the queries of the seeded learnings.
var benchWords = []string{"list", "issues", "write", "weekly", "report", "deploy", "service", "read", "design", "search"}

func benchLearning(i int) *agentsmcp.Learning {
	return &agentsmcp.Learning{
		Query:     fmt.Sprintf("%s the %s and %s, task %d", benchWords[i%10], benchWords[i*3%10], benchWords[i*7%10], i),
		Goal:      benchWords[i%10] + " " + benchWords[(i+1)%10],
		Steps:     []string{fmt.Sprint("tool_", i%10), fmt.Sprint("tool_", (i+1)%10)},
		Tools:     []string{fmt.Sprint("tool_", i%10), fmt.Sprint("tool_", (i+1)%10)},
		Sources:   []string{fmt.Sprint("up_", i%3)},
		Outcome:   agentsmcp.Outcomes[i%4],
		Duration:  time.Duration(i%1000) * time.Millisecond,
		CreatedAt: at(i),
	}
}

// BenchTaskWrites measures the write of one step transition of a 200-step
// task, as the executor stores it: UpdateTask, which
// writes the whole task, against UpdateTaskSteps (when the store has it),
// which writes a layer of 16 step states and their 32 events. Each
// iteration ends 16 steps and starts 16 others; a task is replaced by a
// fresh one before its history could be trimmed, so both write the same
// work, and its history holds 200 to 600 events.
func BenchTaskWrites(b *testing.B, open func(b *testing.B) Services) {
	s := open(b)
	ctx := b.Context()
	const steps, layer = 200, 16
	fresh := func(b *testing.B) *agentsmcp.Task {
		t := &agentsmcp.Task{Request: "benchmark task", Status: agentsmcp.TaskRunning, Steps: make([]agentsmcp.StepState, steps)}
		for i := range t.Steps {
			t.Steps[i] = agentsmcp.StepState{StepID: fmt.Sprintf("s%03d", i), Status: agentsmcp.StepPending}
		}
		for i := range steps {
			storedform.AddEvent(t, agentsmcp.TaskEvent{At: at(i), Type: "step_started", StepID: t.Steps[i].StepID, Message: "noop"})
		}
		if err := s.Tasks.CreateTask(ctx, t); err != nil {
			b.Fatal(err)
		}
		return t
	}
	transition := func(t *agentsmcp.Task, n int) agentsmcp.TaskChange {
		c := agentsmcp.TaskChange{Steps: make([]int, 0, 2*layer), Events: 2 * layer}
		for k := range layer {
			i, j := (n*layer+k)%steps, ((n+1)*layer+k)%steps
			t.Steps[i].Status, t.Steps[i].EndedAt = agentsmcp.StepSucceeded, at(n)
			t.Steps[i].Output = json.RawMessage(fmt.Sprintf(`{"v":%d}`, n))
			t.Steps[j].Status, t.Steps[j].StartedAt = agentsmcp.StepRunning, at(n)
			t.Steps[j].Attempts++
			storedform.AddEvent(t, agentsmcp.TaskEvent{At: at(n), Type: "step_succeeded", StepID: t.Steps[i].StepID, Message: "1 attempt(s)"})
			storedform.AddEvent(t, agentsmcp.TaskEvent{At: at(n), Type: "step_started", StepID: t.Steps[j].StepID, Message: "noop"})
			c.Steps = append(c.Steps, i, j)
		}
		return c
	}
	run := func(name string, write func(*agentsmcp.Task, agentsmcp.TaskChange) error) {
		b.Run(name, func(b *testing.B) {
			t := fresh(b)
			n := 0
			cpu0 := processCPU()
			for b.Loop() {
				if len(t.History)+2*layer >= agentsmcp.MaxTaskHistory {
					b.StopTimer()
					t, n = fresh(b), 0
					b.StartTimer()
				}
				if err := write(t, transition(t, n)); err != nil {
					b.Fatal(err)
				}
				n++
			}
			// CPU time tells the cost of a write apart from the waits
			// of a machine shared with other work.
			b.ReportMetric(float64(processCPU()-cpu0)/float64(time.Microsecond)/float64(b.N), "cpu-µs/op")
		})
	}
	// The executor's Start: a task of 200 pending steps and one event.
	b.Run("CreateTask", func(b *testing.B) {
		cpu0 := processCPU()
		for b.Loop() {
			t := &agentsmcp.Task{Request: "benchmark task", Status: agentsmcp.TaskPending, Steps: make([]agentsmcp.StepState, steps)}
			for i := range t.Steps {
				t.Steps[i] = agentsmcp.StepState{StepID: fmt.Sprintf("s%03d", i), Status: agentsmcp.StepPending}
			}
			storedform.AddEvent(t, agentsmcp.TaskEvent{At: at(0), Type: "created", Message: "plan p, 200 steps"})
			if err := s.Tasks.CreateTask(ctx, t); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(processCPU()-cpu0)/float64(time.Microsecond)/float64(b.N), "cpu-µs/op")
	})
	run("UpdateTask", func(t *agentsmcp.Task, _ agentsmcp.TaskChange) error { return s.Tasks.UpdateTask(ctx, t) })
	if u, ok := s.Tasks.(agentsmcp.TaskStepUpdater); ok {
		run("UpdateTaskSteps", func(t *agentsmcp.Task, c agentsmcp.TaskChange) error { return u.UpdateTaskSteps(ctx, t, c) })
	}
}

// processCPU is the CPU time of the process so far, user and system.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
