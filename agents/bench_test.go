//go:build unix

package agents_test

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/agents"
	"github.com/agents-mcp/agents-mcp/internal/storedform"
	"github.com/agents-mcp/agents-mcp/internal/validate"
	"github.com/agents-mcp/agents-mcp/localtools"
	"github.com/agents-mcp/agents-mcp/memory/storetest"
	"github.com/agents-mcp/agents-mcp/router"
	"github.com/agents-mcp/agents-mcp/router/toolsearch"
)

// The executor benchmarks (issue: executor overhead on a 200-step DAG of
// no-op tools, width 16, against the critical-path sum of tool latencies;
// 50 concurrent tasks). docs/benchmarks.md, "Executor overhead (agents)",
// has the results and how to read them.
//
//	go test -run '^$' -bench Executor -benchtime 5x -count 3 ./agents/
//
// Every variant runs against the real embedded SQLite store (memory/sqlite,
// the default) and against memTasks, an in-memory TaskService and
// PlanService kept in this file (TestMemTasksConformance runs the store
// suite's task and plan tests on it), so that the executor's own cost and
// the cost of persisting every step transition can be told apart in one
// run.

// Shape of the benchmark DAG: 200 steps in layers of 16 (13 layers, the
// last one of 8).
const (
	dagSteps = 200
	dagWidth = 16
)

// benchDAG returns a plan of n steps calling the tool "noop", in layers of
// width steps: step j of layer k > 0 depends on the step in its column of
// layer k-1 and, for two steps in three, on a second step of layer k-1. A
// quarter of the steps pass on a dependency's output whole
// ("{{steps.<dep>.output.v}}", its JSON type kept) and another quarter
// interpolate one into a string, so that every layer resolves references.
// deps[j] are the positions step j depends on.
func benchDAG(n, width int) (steps []agentsmcp.PlanStep, deps [][]int) {
	id := func(j int) string { return fmt.Sprintf("s%03d", j) }
	steps = make([]agentsmcp.PlanStep, n)
	deps = make([][]int, n)
	for j := range n {
		layer, col := j/width, j%width
		if layer > 0 {
			prev := (layer - 1) * width
			deps[j] = []int{prev + col}
			if other := prev + (col*5+3)%width; j%3 != 0 && other != prev+col {
				deps[j] = append(deps[j], other)
			}
		}
		var args string
		switch {
		case len(deps[j]) > 0 && j%4 == 0:
			args = fmt.Sprintf(`{"i":%d,"v":"{{steps.%s.output.v}}"}`, j, id(deps[j][0]))
		case len(deps[j]) > 1 && j%4 == 1:
			args = fmt.Sprintf(`{"i":%d,"v":"p{{ steps.%s.output.v }}"}`, j, id(deps[j][1]))
		default:
			args = fmt.Sprintf(`{"i":%d,"v":%d}`, j, j)
		}
		depIDs := make([]string, len(deps[j]))
		for k, d := range deps[j] {
			depIDs[k] = id(d)
		}
		steps[j] = step(id(j), "noop", args, depIDs...)
	}
	return steps, deps
}

// noopTools is the tool "noop": it waits latency (returns at once for 0)
// and answers {"v": <its argument v>}. It counts its calls and, while
// took is set, records how long each call of step i took (the tool's own
// latency, from which the critical path is computed).
type noopTools struct {
	latency time.Duration
	calls   atomic.Int64
	took    atomic.Pointer[[]atomic.Int64]
}

type noopIn struct {
	I int `json:"i"`
	V any `json:"v"`
}

func newNoopRouter(b testing.TB, latency time.Duration) (*noopTools, *router.Router) {
	b.Helper()
	nt := &noopTools{latency: latency}
	local := localtools.New()
	err := localtools.Add(local, &mcp.Tool{Name: "noop", Description: "waits a fixed latency and returns v", Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		func(_ context.Context, _ *mcp.CallToolRequest, in noopIn) (*mcp.CallToolResult, map[string]any, error) {
			start := time.Now()
			if nt.latency > 0 {
				time.Sleep(nt.latency)
			}
			if took := nt.took.Load(); took != nil && in.I >= 0 && in.I < len(*took) {
				(*took)[in.I].Store(int64(time.Since(start)))
			}
			nt.calls.Add(1)
			return nil, map[string]any{"v": in.V}, nil
		})
	if err != nil {
		b.Fatal(err)
	}
	r := router.New(router.Options{Version: "bench"})
	if err := r.AddProvider(context.Background(), local); err != nil {
		b.Fatal(err)
	}
	return nt, r
}

// countingTasks counts the UpdateTask calls (the writes of step
// transitions) of the TaskService it wraps.
type countingTasks struct {
	agentsmcp.TaskService
	updates atomic.Int64 // every write of a step transition, whole or per step
	whole   atomic.Int64 // those written whole (UpdateTask)
}

func (c *countingTasks) UpdateTask(ctx context.Context, t *agentsmcp.Task) error {
	c.updates.Add(1)
	c.whole.Add(1)
	return c.TaskService.UpdateTask(ctx, t)
}

// UpdateTaskSteps counts a per-step write as an update, and keeps the
// store's way of writing it.
func (c *countingTasks) UpdateTaskSteps(ctx context.Context, t *agentsmcp.Task, ch agentsmcp.TaskChange) error {
	c.updates.Add(1)
	return storedform.UpdateTaskSteps(ctx, c.TaskService, t, ch)
}

// TasksVerbatim passes the store's answer on.
func (c *countingTasks) TasksVerbatim() bool { return storedform.TasksVerbatim(c.TaskService) }

// benchExec is an executor with MaxParallel 16 over the store named
// ("sqlite" or "mem") and the noop tool, built on the tests' harness.
type benchExec struct {
	h     *harness
	tools *noopTools
	tasks *countingTasks
	plans agentsmcp.PlanService
}

func newBenchExec(b testing.TB, store string, latency time.Duration) *benchExec {
	b.Helper()
	nt, r := newNoopRouter(b, latency)
	be := &benchExec{tools: nt}
	be.h = newHarness(b, func(o *agents.ExecutorOptions) {
		o.Tools, o.Catalog = r, toolsearch.NewCatalog(r, nil, nil)
		o.MaxParallel = 16
		if store == "mem" {
			m := newMemTasks()
			o.Tasks, o.Plans = m, m
		}
		be.tasks = &countingTasks{TaskService: o.Tasks}
		o.Tasks, be.plans = be.tasks, o.Plans
	})
	return be
}

func (be *benchExec) plan(b testing.TB, steps []agentsmcp.PlanStep) *agentsmcp.Plan {
	b.Helper()
	p := &agentsmcp.Plan{Request: "benchmark DAG", Steps: steps}
	if err := be.plans.CreatePlan(context.Background(), p); err != nil {
		b.Fatal(err)
	}
	return p
}

// runOnce starts a task of p and waits for it, from the benchmark's
// goroutine: its wall time (Start to Wait's return) and the task.
func (be *benchExec) runOnce(b testing.TB, p *agentsmcp.Plan) (time.Duration, *agentsmcp.Task) {
	started := time.Now()
	t, err := be.h.exec.Start(context.Background(), p, nil, nil, nil)
	if err != nil {
		b.Fatal(err)
	}
	done := be.h.wait(t.ID)
	return time.Since(started), done
}

// checkBenchTask fails the benchmark unless the task succeeded with
// every step run exactly once.
func checkBenchTask(b testing.TB, t *agentsmcp.Task, steps int) {
	b.Helper()
	if t.Status != agentsmcp.TaskSucceeded {
		b.Fatalf("task %s %s: %s", t.ID, t.Status, t.Error)
	}
	if len(t.Steps) != steps {
		b.Fatalf("task %s has %d step states, want %d", t.ID, len(t.Steps), steps)
	}
	for _, s := range t.Steps {
		if s.Status != agentsmcp.StepSucceeded || s.Attempts != 1 {
			b.Fatalf("task %s step %s: %s after %d attempts, want succeeded after 1", t.ID, s.StepID, s.Status, s.Attempts)
		}
	}
}

// benchStores are the stores measured, the baseline first so that the
// SQLite run can report its ratio to it.
var benchStores = []string{"mem-baseline", "sqlite"}

func storeKind(name string) string { return strings.TrimSuffix(name, "-baseline") }

// dagBaseline holds, per tool latency, the mean overhead (ms) of the last
// mem-baseline run of BenchmarkExecutorDAG200 in this process.
var dagBaseline sync.Map

// BenchmarkExecutorDAG200 runs one task of the 200-step, width-16 DAG per
// iteration (the plan is stored once; each iteration starts a new task of
// it and waits for its end) with MaxParallel 16, for a tool latency of 0
// (pure overhead) and 1 ms, over the in-memory store (baseline) and SQLite.
// Metrics, means over the iterations:
//
//	wall-ms           Start to Wait's return (ns/op is the same, in ns)
//	cpu-ms/task       CPU time of the whole process (executor, router,
//	                  tool, store, GC) from Start to Wait's return
//	critical-path-ms  the sum of the tool's own latencies along the longest
//	                  path of the DAG, as measured in the tool (13 × L plus
//	                  the sleep's overshoot; the floor any executor has)
//	overhead-ms       wall-ms − critical-path-ms: the goal is ≤ 5
//	wall/path         wall-ms / critical-path-ms (L > 0 only)
//	overhead-nominal-ms  wall-ms − 13 × L (L > 0 only): the sleep's
//	                  overshoot counted as overhead
//	updates/task      writes of the task (UpdateTask and UpdateTaskSteps
//	                  calls: stored step transitions) per task
//	task-KB           size of the ended task as JSON: about what each
//	                  UpdateTask writes once the history is full
//	overhead/mem      overhead-ms / the mem-baseline's, same latency, same
//	                  process (sqlite only)
func BenchmarkExecutorDAG200(b *testing.B) {
	steps, deps := benchDAG(dagSteps, dagWidth)
	layers := (dagSteps + dagWidth - 1) / dagWidth // steps on the longest path
	for _, latency := range []time.Duration{0, time.Millisecond} {
		for _, store := range benchStores {
			b.Run(fmt.Sprintf("latency=%v/store=%s", latency, store), func(b *testing.B) {
				be := newBenchExec(b, storeKind(store), latency)
				p := be.plan(b, steps)
				took := make([]atomic.Int64, dagSteps)
				be.tools.took.Store(&took)
				var wall, path, cpu time.Duration
				var taskKB float64
				updates0 := be.tasks.updates.Load()
				b.ResetTimer()
				for range b.N {
					b.StopTimer()
					for i := range took {
						took[i].Store(-1)
					}
					calls0 := be.tools.calls.Load()
					b.StartTimer()
					cpu0 := processCPU()
					d, task := be.runOnce(b, p)
					cpu += processCPU() - cpu0
					b.StopTimer()
					wall += d
					checkBenchTask(b, task, dagSteps)
					if n := be.tools.calls.Load() - calls0; n != dagSteps {
						b.Fatalf("the tool was called %d times for %d steps", n, dagSteps)
					}
					path += criticalPath(b, took, deps)
					if enc, err := json.Marshal(task); err == nil {
						taskKB = float64(len(enc)) / 1024
					}
					b.StartTimer()
				}
				b.StopTimer()
				n := float64(b.N)
				wallMS, pathMS := ms(wall)/n, ms(path)/n
				overhead := wallMS - pathMS
				b.ReportMetric(wallMS, "wall-ms")
				b.ReportMetric(ms(cpu)/n, "cpu-ms/task")
				b.ReportMetric(pathMS, "critical-path-ms")
				b.ReportMetric(overhead, "overhead-ms")
				if latency > 0 {
					b.ReportMetric(wallMS/pathMS, "wall/path")
					b.ReportMetric(wallMS-ms(time.Duration(layers)*latency), "overhead-nominal-ms")
				}
				b.ReportMetric(float64(be.tasks.updates.Load()-updates0)/n, "updates/task")
				b.ReportMetric(taskKB, "task-KB")
				if store == "mem-baseline" {
					dagBaseline.Store(latency, overhead)
				} else if base, ok := dagBaseline.Load(latency); ok && base.(float64) > 0 {
					b.ReportMetric(overhead/base.(float64), "overhead/mem")
				}
			})
		}
	}
}

// criticalPath is the longest path of the DAG weighted by the tool's
// latency of each step, as recorded in took.
func criticalPath(b testing.TB, took []atomic.Int64, deps [][]int) time.Duration {
	longest := make([]time.Duration, len(deps))
	var most time.Duration
	for j := range deps { // deps point backwards: j's are done before j
		d := time.Duration(took[j].Load())
		if d < 0 {
			b.Fatalf("step %d did not call the tool", j)
		}
		var before time.Duration
		for _, k := range deps[j] {
			before = max(before, longest[k])
		}
		longest[j] = before + d
		most = max(most, longest[j])
	}
	return most
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// processCPU is the user+system CPU time this process has used.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// concTasks is the number of tasks BenchmarkExecutor50Concurrent starts at
// once.
const concTasks = 50

// BenchmarkExecutor50Concurrent starts 50 tasks at once per iteration and
// waits for all of them, for two plans built by benchDAG: 10 steps of width
// 4, and the 200-step, width-16 DAG of BenchmarkExecutorDAG200; tool latency
// 1 ms, one executor (MaxParallel 16, per task), both stores. Before each
// round, outside the timer, it runs one task of the same plan alone: the
// single-task baseline of the same run. Metrics:
//
//	tasks/s        tasks ended per second of the concurrent rounds
//	p50-ms p99-ms  latency of a task in a concurrent round (Start to Wait's
//	               return), over every task of every round
//	single-ms      median latency of the task run alone
//	p50/single     p50-ms / single-ms (p99/single likewise)
//	cpu-ms/task    CPU time of the process in the rounds, per task
//	updates/task   UpdateTask and UpdateTaskSteps calls per task
func BenchmarkExecutor50Concurrent(b *testing.B) {
	for _, shape := range []struct{ steps, width int }{{10, 4}, {dagSteps, dagWidth}} {
		steps, _ := benchDAG(shape.steps, shape.width)
		for _, store := range benchStores {
			b.Run(fmt.Sprintf("dag=%dx%d/store=%s", shape.steps, shape.width, store), func(b *testing.B) {
				be := newBenchExec(b, storeKind(store), time.Millisecond)
				p := be.plan(b, steps)
				var single, lat []time.Duration
				var elapsed, cpu time.Duration
				updates0 := be.tasks.updates.Load()
				b.ResetTimer()
				for range b.N {
					b.StopTimer()
					d, task := be.runOnce(b, p)
					checkBenchTask(b, task, len(steps))
					single = append(single, d)
					calls0 := be.tools.calls.Load()
					b.StartTimer()
					cpu0 := processCPU()
					round, took, tasks := be.concurrentRound(b, p)
					cpu += processCPU() - cpu0
					b.StopTimer()
					elapsed += round
					lat = append(lat, took...)
					for _, t := range tasks {
						checkBenchTask(b, t, len(steps))
					}
					if n := be.tools.calls.Load() - calls0; n != int64(concTasks*len(steps)) {
						b.Fatalf("the tool was called %d times for %d tasks of %d steps", n, concTasks, len(steps))
					}
					b.StartTimer()
				}
				b.StopTimer()
				slices.Sort(single)
				slices.Sort(lat)
				singleMS := ms(single[len(single)/2])
				p50, p99 := ms(percentile(lat, 0.50)), ms(percentile(lat, 0.99))
				b.ReportMetric(float64(len(lat))/elapsed.Seconds(), "tasks/s")
				b.ReportMetric(ms(cpu)/float64(len(lat)), "cpu-ms/task")
				b.ReportMetric(p50, "p50-ms")
				b.ReportMetric(p99, "p99-ms")
				b.ReportMetric(singleMS, "single-ms")
				b.ReportMetric(p50/singleMS, "p50/single")
				b.ReportMetric(p99/singleMS, "p99/single")
				b.ReportMetric(float64(be.tasks.updates.Load()-updates0)/float64(b.N*(concTasks+1)), "updates/task")
			})
		}
	}
}

// concurrentRound starts concTasks tasks of p at once and waits for all:
// the round's wall time, each task's latency, and the tasks as they ended.
func (be *benchExec) concurrentRound(b *testing.B, p *agentsmcp.Plan) (time.Duration, []time.Duration, []*agentsmcp.Task) {
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		lat     = make([]time.Duration, 0, concTasks)
		tasks   = make([]*agentsmcp.Task, 0, concTasks)
		errs    []error
		release = make(chan struct{})
	)
	for range concTasks {
		wg.Go(func() {
			<-release
			started := time.Now()
			t, err := be.h.exec.Start(context.Background(), p, nil, nil, nil)
			if err == nil {
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				t, err = be.h.exec.Wait(ctx, t.ID)
				if err == nil && ctx.Err() != nil {
					err = fmt.Errorf("task %s still %s after a minute", t.ID, t.Status)
				}
				cancel()
			}
			d := time.Since(started)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, err)
				return
			}
			lat, tasks = append(lat, d), append(tasks, t)
		})
	}
	round := time.Now()
	close(release)
	wg.Wait()
	elapsed := time.Since(round)
	if len(errs) > 0 {
		b.Fatalf("%d of %d tasks: %v", len(errs), concTasks, errs[0])
	}
	return elapsed, lat, tasks
}

// percentile of sorted durations (nearest rank).
func percentile(sorted []time.Duration, q float64) time.Duration {
	i := int(q*float64(len(sorted))+0.5) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}

// memTasks is an in-memory TaskService and PlanService: the baseline that
// separates the executor's own cost from the cost of persisting it. It
// keeps the contracts of task.go and plan.go that the executor relies on,
// as the SQLite store does: validation, UpdateTask as a compare-and-set on
// Version, leases compared and set atomically, times at millisecond
// precision in UTC, history trimmed, and deep copies in and out (a
// caller's later changes never reach the store). It does no encoding and
// no I/O. FindTasks and FindPlans filter and order but do not page (a
// cursor is EINVALID): the executor does not list.
type memTasks struct {
	mu    sync.Mutex
	tasks map[string]*agentsmcp.Task
	plans map[string]*agentsmcp.Plan
}

var (
	_ agentsmcp.TaskService     = (*memTasks)(nil)
	_ agentsmcp.TaskStepUpdater = (*memTasks)(nil)
	_ agentsmcp.PlanService     = (*memTasks)(nil)
)

func newMemTasks() *memTasks {
	return &memTasks{tasks: map[string]*agentsmcp.Task{}, plans: map[string]*agentsmcp.Plan{}}
}

// stored is a time as the SQLite store keeps it: milliseconds, UTC, zero
// staying zero.
func stored(t time.Time) time.Time {
	if t.IsZero() {
		return time.Time{}
	}
	return time.UnixMilli(t.UnixMilli()).UTC()
}

func nowStored() time.Time { return stored(time.Now()) }

func rawCopy(b []byte) []byte {
	if len(b) == 0 {
		return nil
	}
	return bytes.Clone(b)
}

// copyTask is a deep copy of t at the stored precision, its history
// trimmed.
func copyTask(t *agentsmcp.Task) *agentsmcp.Task {
	c := *t
	c.Steps = make([]agentsmcp.StepState, len(t.Steps))
	for i, s := range t.Steps {
		s.Output = rawCopy(s.Output)
		s.StartedAt, s.EndedAt = stored(s.StartedAt), stored(s.EndedAt)
		c.Steps[i] = s
	}
	h := storedform.TrimHistory(t.History)
	c.History = make([]agentsmcp.TaskEvent, len(h))
	for i, e := range h {
		e.At = stored(e.At)
		c.History[i] = e
	}
	c.Inputs = rawCopy(t.Inputs)
	c.CreatedAt, c.UpdatedAt, c.EndedAt = stored(t.CreatedAt), stored(t.UpdatedAt), stored(t.EndedAt)
	c.Lease.ExpiresAt = stored(t.Lease.ExpiresAt)
	return &c
}

func (m *memTasks) CreateTask(_ context.Context, t *agentsmcp.Task) error {
	if err := validate.Task(t); err != nil {
		return err
	}
	c := copyTask(t)
	c.ID = cmp.Or(t.ID, agentsmcp.NewID(agentsmcp.TaskIDPrefix))
	c.Status = cmp.Or(t.Status, agentsmcp.TaskPending)
	if c.CreatedAt.IsZero() {
		c.CreatedAt = nowStored()
	}
	c.UpdatedAt, c.Version = c.CreatedAt, 1
	if c.Lease.Owner == "" {
		c.Lease = agentsmcp.TaskLease{}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, taken := m.tasks[c.ID]; taken {
		return agentsmcp.Errorf(agentsmcp.ECONFLICT, "task %q already exists", c.ID)
	}
	m.tasks[c.ID] = c
	t.ID, t.Status, t.History, t.Lease, t.Version = c.ID, c.Status, storedform.TrimHistory(t.History), c.Lease, 1
	t.CreatedAt, t.UpdatedAt = c.CreatedAt, c.UpdatedAt
	return nil
}

func (m *memTasks) FindTaskByID(_ context.Context, id string) (*agentsmcp.Task, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	t, ok := m.tasks[id]
	if !ok {
		return nil, agentsmcp.Errorf(agentsmcp.ENOTFOUND, "task %q not found", id)
	}
	return copyTask(t), nil
}

func (m *memTasks) FindTasks(_ context.Context, f agentsmcp.TaskFilter) ([]*agentsmcp.Task, string, error) {
	if f.Cursor != "" {
		return nil, "", agentsmcp.Errorf(agentsmcp.EINVALID, "the benchmark store does not page")
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	items := []*agentsmcp.Task{}
	for _, t := range m.tasks {
		if (f.Status == "" || t.Status == f.Status) && (f.PlanID == "" || t.PlanID == f.PlanID) {
			items = append(items, copyTask(t))
		}
	}
	slices.SortFunc(items, func(a, b *agentsmcp.Task) int {
		return cmp.Or(b.CreatedAt.Compare(a.CreatedAt), strings.Compare(b.ID, a.ID))
	})
	return items[:min(len(items), storedform.PageSize(f.Limit))], "", nil
}

func (m *memTasks) UpdateTask(_ context.Context, t *agentsmcp.Task) error {
	if err := validate.TaskUpdate(t); err != nil {
		return err
	}
	c := copyTask(t)
	m.mu.Lock()
	defer m.mu.Unlock()
	old, ok := m.tasks[t.ID]
	switch {
	case !ok:
		return agentsmcp.Errorf(agentsmcp.ENOTFOUND, "task %q not found", t.ID)
	case old.Version != t.Version:
		return agentsmcp.Errorf(agentsmcp.ECONFLICT, "task %q changed since version %d was read", t.ID, t.Version)
	}
	c.CreatedAt, c.Lease = old.CreatedAt, old.Lease
	c.Version, c.UpdatedAt = old.Version+1, nowStored()
	m.tasks[t.ID] = c
	t.Version, t.UpdatedAt, t.History = c.Version, c.UpdatedAt, storedform.TrimHistory(t.History)
	return nil
}

// UpdateTaskSteps copies into the stored task only the step states and
// events of c, as the SQLite store writes only those.
func (m *memTasks) UpdateTaskSteps(_ context.Context, t *agentsmcp.Task, c agentsmcp.TaskChange) error {
	if err := validate.TaskChange(t, c); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	old, ok := m.tasks[t.ID]
	switch {
	case !ok:
		return agentsmcp.Errorf(agentsmcp.ENOTFOUND, "task %q not found", t.ID)
	case old.Version != t.Version:
		return agentsmcp.Errorf(agentsmcp.ECONFLICT, "task %q changed since version %d was read", t.ID, t.Version)
	}
	n := *old
	n.PlanID, n.Request, n.Status, n.Error, n.ErrorCode = t.PlanID, t.Request, t.Status, t.Error, t.ErrorCode
	n.Inputs, n.EndedAt = rawCopy(t.Inputs), stored(t.EndedAt)
	n.Steps = slices.Clone(old.Steps)
	for _, i := range c.Steps {
		s := t.Steps[i]
		s.Output = rawCopy(s.Output)
		s.StartedAt, s.EndedAt = stored(s.StartedAt), stored(s.EndedAt)
		n.Steps[i] = s
	}
	n.History = slices.Clip(old.History)
	for _, e := range t.History[len(t.History)-c.Events:] {
		e.At = stored(e.At)
		n.History = append(n.History, e)
	}
	n.History = storedform.TrimHistory(n.History)
	n.Version, n.UpdatedAt = old.Version+1, nowStored()
	m.tasks[t.ID] = &n
	t.Version, t.UpdatedAt = n.Version, n.UpdatedAt
	return nil
}

func (m *memTasks) AcquireTaskLease(_ context.Context, id, owner string, ttl time.Duration) (*agentsmcp.Task, error) {
	if err := validate.Lease(owner, ttl); err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	t, ok := m.tasks[id]
	if !ok {
		return nil, agentsmcp.Errorf(agentsmcp.ENOTFOUND, "task %q not found", id)
	}
	now := nowStored()
	if t.Lease.Owner != "" && t.Lease.Owner != owner && t.Lease.ExpiresAt.After(now) {
		return nil, agentsmcp.Errorf(agentsmcp.ECONFLICT, "the lease of task %q is held by another owner", id)
	}
	t.Lease = agentsmcp.TaskLease{Owner: owner, ExpiresAt: now.Add(time.Duration(ttl.Milliseconds()) * time.Millisecond)}
	return copyTask(t), nil
}

func (m *memTasks) ReleaseTaskLease(_ context.Context, id, owner string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	t, ok := m.tasks[id]
	if !ok {
		return agentsmcp.Errorf(agentsmcp.ENOTFOUND, "task %q not found", id)
	}
	if t.Lease.Owner == owner {
		t.Lease = agentsmcp.TaskLease{}
	}
	return nil
}

func (m *memTasks) FindTasksToResume(_ context.Context, now time.Time, limit int) ([]*agentsmcp.Task, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	now = stored(now)
	items := []*agentsmcp.Task{}
	for _, t := range m.tasks {
		if (t.Status == agentsmcp.TaskPending || t.Status == agentsmcp.TaskRunning) && !t.Lease.ExpiresAt.After(now) {
			items = append(items, copyTask(t))
		}
	}
	slices.SortFunc(items, func(a, b *agentsmcp.Task) int {
		return cmp.Or(a.CreatedAt.Compare(b.CreatedAt), strings.Compare(a.ID, b.ID))
	})
	return items[:min(len(items), storedform.PageSize(limit))], nil
}

func (m *memTasks) DeleteEndedTasks(ctx context.Context, endedBefore time.Time, limit int) (int64, error) {
	if err := ctx.Err(); err != nil {
		return 0, err // as a store would fail its round trip
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	var ended []*agentsmcp.Task
	for _, t := range m.tasks {
		if t.Status.Terminal() && !t.EndedAt.IsZero() && t.EndedAt.Before(endedBefore) {
			ended = append(ended, t)
		}
	}
	slices.SortFunc(ended, func(a, b *agentsmcp.Task) int {
		return cmp.Or(a.EndedAt.Compare(b.EndedAt), strings.Compare(a.ID, b.ID))
	})
	ended = ended[:min(len(ended), storedform.PageSize(limit))]
	for _, t := range ended {
		delete(m.tasks, t.ID)
	}
	return int64(len(ended)), nil
}

func copyPlan(p *agentsmcp.Plan) *agentsmcp.Plan {
	c := *p
	c.Steps = make([]agentsmcp.PlanStep, len(p.Steps))
	for i, s := range p.Steps {
		s.Arguments = rawCopy(s.Arguments)
		s.DependsOn = slices.Clone(s.DependsOn)
		if s.Retry != nil {
			r := *s.Retry
			s.Retry = &r
		}
		c.Steps[i] = s
	}
	c.Inputs = rawCopy(p.Inputs)
	c.CreatedAt = stored(p.CreatedAt)
	return &c
}

func (m *memTasks) CreatePlan(_ context.Context, p *agentsmcp.Plan) error {
	if err := validate.Plan(p); err != nil {
		return err
	}
	c := copyPlan(p)
	c.ID = cmp.Or(p.ID, agentsmcp.NewID(agentsmcp.PlanIDPrefix))
	if c.CreatedAt.IsZero() {
		c.CreatedAt = nowStored()
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, taken := m.plans[c.ID]; taken {
		return agentsmcp.Errorf(agentsmcp.ECONFLICT, "plan %q already exists", c.ID)
	}
	m.plans[c.ID] = c
	p.ID, p.CreatedAt = c.ID, c.CreatedAt
	return nil
}

func (m *memTasks) FindPlanByID(_ context.Context, id string) (*agentsmcp.Plan, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	p, ok := m.plans[id]
	if !ok {
		return nil, agentsmcp.Errorf(agentsmcp.ENOTFOUND, "plan %q not found", id)
	}
	return copyPlan(p), nil
}

func (m *memTasks) FindPlans(_ context.Context, f agentsmcp.PlanFilter) ([]*agentsmcp.Plan, string, error) {
	if f.Cursor != "" {
		return nil, "", agentsmcp.Errorf(agentsmcp.EINVALID, "the benchmark store does not page")
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	items := []*agentsmcp.Plan{}
	for _, p := range m.plans {
		if f.ThoughtID == "" || p.ThoughtID == f.ThoughtID {
			items = append(items, copyPlan(p))
		}
	}
	slices.SortFunc(items, func(a, b *agentsmcp.Plan) int {
		return cmp.Or(b.CreatedAt.Compare(a.CreatedAt), strings.Compare(b.ID, a.ID))
	})
	return items[:min(len(items), storedform.PageSize(f.Limit))], "", nil
}

// TestMemTasksConformance runs the store suite's task and plan tests on
// the benchmark's in-memory baseline, so that the baseline keeps the
// contracts the SQLite store is held to (but paging and counting, which it
// lacks).
func TestMemTasksConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) storetest.Services {
		name := t.Name()[strings.LastIndex(t.Name(), "/")+1:]
		switch {
		case !strings.HasPrefix(name, "Task") && !strings.HasPrefix(name, "Plan"):
			t.SkipNow() // another aggregate
		case strings.HasSuffix(name, "Paging") || strings.HasSuffix(name, "BadCursor"):
			t.Skip("the benchmark store does not page")
		case name == "TaskCountsByStatus":
			t.Skip("the benchmark store does not count (metrics only)")
		}
		m := newMemTasks()
		return storetest.Services{Tasks: m, Plans: m}
	})
}
