package agents

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/agents/planlang"
	"github.com/agents-mcp/agents-mcp/internal/storedform"
)

// runner executes one task in this process. Its goroutine (run) owns the
// task state: step goroutines, questions to the user, lease renewals and
// requests from other goroutines all reach it as events, so the state
// needs no lock and every transition is stored in order.
type runner struct {
	e    *Executor
	task *agentsmcp.Task
	plan *agentsmcp.Plan
	// creator is the principal on whose behalf the steps run (nil for a
	// task created without one): in their context, so that the router's
	// call records and the audit trail name it, and checked against each
	// step's tool. OnEnd, and so the task's learning, runs as it too.
	creator *agentsmcp.Principal

	refs    [][]planlang.Ref // per step, its argument references
	refErrs []error          // per step, a malformed argument
	tools   map[string]*agentsmcp.ToolInfo
	outputs map[string]json.RawMessage // full outputs; stored ones may be cut
	// storedOutputBytes is the size of the outputs the task stores, kept
	// within storedOutputsBudget.
	storedOutputBytes int
	index             map[string]int // step id -> position

	events chan any
	done   chan struct{} // closed when run has returned

	stepCtx       context.Context // cancelled to stop the running steps
	stopSteps     context.CancelFunc
	caller        atomic.Pointer[callerRef]
	stopping      atomic.Bool // Close: start nothing new
	inflight      int
	asking        bool // a question to the user is open
	askedInput    bool // the user was asked for the missing inputs already
	askedConfirms []int
	cancelled     atomic.Bool // set before the steps are stopped for a cancel
	cancelWhy     string
	lost          bool // the lease went to another replica: write nothing
	dirty         bool
	// write is the per-step write in flight, nil when none; see persist.
	write *taskWrite
	// spare are step states no one holds: the snapshot of the write
	// before the last, reused by the next (see startWrite).
	spare []agentsmcp.StepState
	// mustSync: the state to write holds an answer of the user, which
	// must be stored before the runner acts on it.
	mustSync bool
	// replies are the resume requests applied and not yet stored: each
	// is answered once a write holding it has returned (see durable), or
	// left unanswered when that write fails and the runner ends first;
	// deliver then reports the request not delivered, and the caller
	// applies it to the stored task.
	replies []chan error
	// work hands steps to the runner's idle step workers (see startStep);
	// closed when the runner returns.
	work    chan launchStep
	workers int
	// strict: every step is stored running before its call, whatever its
	// tool; set for a task resumed after its executor stopped (see
	// storeBeforeCall).
	strict bool
	// stored is the task as last written, when the store can take a
	// write of what changed since (agentsmcp.TaskStepUpdater).
	stored storedTask
	// ended is the task as the runner left it in the store when it ended
	// or paused, in its stored form (agentsmcp.Task.StoredForm), for
	// Executor.Wait to return without reading it back; nil when the runner
	// did not store the last state of the task or keep its lease to the
	// end, or the store does not store tasks verbatim. Set before done is
	// closed, and not changed after.
	ended   *agentsmcp.Task
	started time.Time
	retries int
}

type callerRef struct{ c Caller }

// storedTask is what a runner knows to be stored of its task, so that a
// step transition writes the step states and events that changed rather
// than the whole task, so that a step of a large task costs a small write.
type storedTask struct {
	perStep bool // the store is an agentsmcp.TaskStepUpdater
	// known: steps, events and last are the stored task's; false after
	// the task changed under the runner.
	known  bool
	steps  []agentsmcp.StepState
	events int                 // len(History) as stored
	last   agentsmcp.TaskEvent // the newest event stored
}

// change returns what changed in t since it was stored, and false when
// t must be written whole: nothing is known of the stored task, its
// history may have been trimmed since, or its steps were replaced.
func (s *storedTask) change(t *agentsmcp.Task) (agentsmcp.TaskChange, bool) {
	if !s.perStep || !s.known || len(t.History) >= agentsmcp.MaxTaskHistory || len(t.History) < s.events ||
		len(t.Steps) != len(s.steps) {
		return agentsmcp.TaskChange{}, false
	}
	if s.events > 0 && !sameEvent(t.History[s.events-1], s.last) {
		return agentsmcp.TaskChange{}, false
	}
	c := agentsmcp.TaskChange{Steps: []int{}, Events: len(t.History) - s.events}
	for i := range t.Steps {
		if !sameStep(&t.Steps[i], &s.steps[i]) {
			c.Steps = append(c.Steps, i)
		}
	}
	return c, true
}

// remember records steps and history as stored. It keeps steps, which
// no one may change afterwards, and never changes them itself, and returns
// the steps it kept before: the runner reuses them for the snapshot of a
// later write (see startWrite), since the stores and OnChange do not keep
// the task they are given.
func (s *storedTask) remember(steps []agentsmcp.StepState, history []agentsmcp.TaskEvent) (old []agentsmcp.StepState) {
	old = s.steps
	s.known = true
	s.steps = steps
	s.events = len(history)
	if s.events > 0 {
		s.last = history[s.events-1]
	}
	return old
}

func sameEvent(a, b agentsmcp.TaskEvent) bool {
	return a.At.Equal(b.At) && a.Type == b.Type && a.StepID == b.StepID && a.Message == b.Message
}

func sameStep(a, b *agentsmcp.StepState) bool {
	return a.StepID == b.StepID && a.Status == b.Status && a.Attempts == b.Attempts && a.Error == b.Error &&
		a.Confirmed == b.Confirmed && a.Asks == b.Asks && a.RepairedTool == b.RepairedTool &&
		bytes.Equal(a.Output, b.Output) && bytes.Equal(a.RepairedArguments, b.RepairedArguments) &&
		a.StartedAt.Equal(b.StartedAt) && a.EndedAt.Equal(b.EndedAt)
}

// Events a runner receives.
type (
	stepRetrying struct {
		index    int
		attempts int
		err      string
		wait     time.Duration
	}
	stepDone struct {
		index    int
		attempts int
		status   agentsmcp.StepStatus
		output   json.RawMessage
		err      string
	}
	confirmAnswer struct {
		index     int
		confirmed bool
		asked     bool // false: the caller cannot be asked
	}
	inputsAnswer struct {
		values json.RawMessage
		ok     bool
		asked  bool
	}
	resumeDelivery struct {
		req    ResumeRequest
		caller Caller
		reply  chan error
	}
	// stepRepairFound is the repairer's answer for a step that failed
	// for good: a replacement, or why there is none.
	stepRepairFound struct {
		index  int
		failed string // the error the step failed with
		repair *StepRepair
		why    string // no repair: why
	}
	cancelRequest struct{ why string }
	leaseLost     struct{}
	stopRequest   struct{}
)

func newRunner(e *Executor, t *agentsmcp.Task, plan *agentsmcp.Plan, caller Caller, resumed bool) (*runner, error) {
	if len(t.Steps) != len(plan.Steps) {
		return nil, agentsmcp.Errorf(agentsmcp.EINVALID, "task %s has %d step states for the %d steps of plan %s", t.ID, len(t.Steps), len(plan.Steps), plan.ID)
	}
	r := &runner{
		e: e, task: t, plan: plan, creator: creatorOf(t),
		refs: make([][]planlang.Ref, len(plan.Steps)), refErrs: make([]error, len(plan.Steps)),
		tools:   make(map[string]*agentsmcp.ToolInfo),
		outputs: make(map[string]json.RawMessage),
		index:   make(map[string]int, len(plan.Steps)),
		events:  make(chan any, 64),
		work:    make(chan launchStep),
		done:    make(chan struct{}),
		started: time.Now(),
	}
	for i, s := range plan.Steps {
		if t.Steps[i].StepID != s.ID {
			return nil, agentsmcp.Errorf(agentsmcp.EINVALID, "task %s step %d is %q, plan step is %q", t.ID, i, t.Steps[i].StepID, s.ID)
		}
		r.index[s.ID] = i
		r.refs[i], r.refErrs[i] = planlang.FindRefs(r.stepArguments(i))
	}
	for i := range t.Steps {
		if s := t.Steps[i]; s.Status == agentsmcp.StepSucceeded && len(s.Output) > 0 {
			r.outputs[s.StepID] = s.Output
			r.storedOutputBytes += len(s.Output)
		}
	}
	// t is as stored at t.Version (see Executor.launch): the first
	// transition is written as a change already.
	_, r.stored.perStep = e.opts.Tasks.(agentsmcp.TaskStepUpdater)
	r.stored.remember(slices.Clone(t.Steps), t.History)
	r.stepCtx, r.stopSteps = context.WithCancel(context.Background())
	r.caller.Store(&callerRef{caller})
	r.lookupTools()
	if resumed {
		r.recoverInterrupted()
		r.strict = true
	}
	return r, nil
}

// lookupTools reads the annotations of the plan's tools: whether a step
// needs a confirmation, whether it may run again.
func (r *runner) lookupTools() {
	for i := range r.plan.Steps {
		if tool := r.stepTool(i); r.tools[tool] == nil {
			r.tools[tool] = r.lookupTool(tool)
		}
	}
}

// stepTool is the tool step i calls: the plan's, or the one its repair
// chose (stored in the task, so that any replica runs the repaired step).
func (r *runner) stepTool(i int) string { return stepToolOf(r.task, r.plan, i) }

func stepToolOf(t *agentsmcp.Task, plan *agentsmcp.Plan, i int) string {
	if tool := t.Steps[i].RepairedTool; tool != "" {
		return tool
	}
	return plan.Steps[i].Tool
}

// stepArguments are the arguments of step i's call, before references are
// resolved: the plan's, or its repair's.
func (r *runner) stepArguments(i int) json.RawMessage { return stepArgumentsOf(r.task, r.plan, i) }

func stepArgumentsOf(t *agentsmcp.Task, plan *agentsmcp.Plan, i int) json.RawMessage {
	if s := t.Steps[i]; s.RepairedTool != "" {
		return s.RepairedArguments
	}
	return plan.Steps[i].Arguments
}

// toolInfo returns the annotations of step i's tool. A tool unknown so far
// (its upstream was down) is looked up again, so that a destructive tool
// that comes back is not run as if it were harmless.
func (r *runner) toolInfo(i int) *agentsmcp.ToolInfo {
	tool := r.stepTool(i)
	if info := r.tools[tool]; info != nil {
		return info
	}
	info := r.lookupTool(tool)
	r.tools[tool] = info
	return info
}

// lookupTool returns tool's annotations, or nil when the catalog does not
// know it now (its call will say so).
func (r *runner) lookupTool(tool string) *agentsmcp.ToolInfo {
	if r.e.opts.Catalog == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	info, err := r.e.opts.Catalog.Tool(ctx, tool)
	if err != nil {
		return nil
	}
	return info
}

// recoverInterrupted decides what becomes of the steps that were running
// when the task's previous runner stopped (a crash, a shutdown): a tool
// that is read-only or idempotent runs again; any other may have had its
// effect, so the user must confirm running it again. Waiting steps are
// reconsidered.
func (r *runner) recoverInterrupted() {
	now := time.Now()
	storedform.AddEvent(r.task, agentsmcp.TaskEvent{At: now, Type: "resumed", Message: "resumed by " + r.e.opts.Owner + " after its previous executor stopped"})
	for i := range r.task.Steps {
		s := &r.task.Steps[i]
		switch s.Status {
		case agentsmcp.StepRunning:
			info := r.toolInfo(i)
			policy := r.e.opts.Retry
			if p := r.plan.Steps[i].Retry; p != nil {
				policy = *p
			}
			if s.Attempts >= policy.MaxAttempts {
				s.Status, s.EndedAt = agentsmcp.StepFailed, now
				s.Error = fmt.Sprintf("interrupted by a stop of its executor on each of its %d attempts; not tried again", s.Attempts)
				storedform.AddEvent(r.task, agentsmcp.TaskEvent{At: now, Type: "step_failed", StepID: s.StepID, Message: s.Error})
				continue
			}
			if info != nil && (info.ReadOnly || info.Idempotent) {
				s.Status, s.Error = agentsmcp.StepPending, ""
				storedform.AddEvent(r.task, agentsmcp.TaskEvent{At: now, Type: "step_interrupted", StepID: s.StepID, Message: "interrupted while running; running it again (the tool is read-only or idempotent)"})
			} else {
				// A new question, under a new key: the confirmation
				// given before, if any, was for the run that was cut.
				s.Status, s.Confirmed = agentsmcp.StepWaitingConfirmation, false
				reask(s)
				s.Error = "interrupted while running by a stop of its executor; it may have had effects: confirm it with resume_task to run it again, or reject it"
				storedform.AddEvent(r.task, agentsmcp.TaskEvent{At: now, Type: "step_interrupted", StepID: s.StepID, Message: s.Error})
			}
		case agentsmcp.StepWaitingInput, agentsmcp.StepWaitingConfirmation:
			// A confirmed step runs. A step still waiting keeps its
			// question (schedule makes a step whose inputs came pending),
			// so that its key does not change under the user's answer.
			if s.Error == "" || s.Confirmed && s.Status == agentsmcp.StepWaitingConfirmation {
				s.Status = agentsmcp.StepPending
			}
		}
	}
	r.dirty = true
}

func (r *runner) currentCaller() Caller {
	if ref := r.caller.Load(); ref != nil {
		return ref.c
	}
	return nil
}

// send delivers an event to the runner; false once the runner has ended.
func (r *runner) send(ev any) bool {
	select {
	case r.events <- ev:
		return true
	case <-r.done:
		return false
	}
}

// endedTask returns a copy of the task as the runner left it in the store
// when it ended or paused, or nil when a read must say (see ended). Only
// after done is closed.
func (r *runner) endedTask() *agentsmcp.Task {
	if r.ended == nil {
		return nil
	}
	return copyTask(r.ended)
}

func (r *runner) requestCancel(why string) { r.send(cancelRequest{why}) }
func (r *runner) stop()                    { r.stopping.Store(true); r.send(stopRequest{}) }
func (r *runner) abort()                   { r.stopSteps() }

// deliver hands a resume request to the running task and returns what
// applying it said; delivered is false when the runner has ended (the
// caller then resumes from the store).
func (r *runner) deliver(req ResumeRequest, caller Caller) (delivered bool, err error) {
	reply := make(chan error, 1)
	if !r.send(resumeDelivery{req, caller, reply}) {
		return false, nil
	}
	select {
	case err := <-reply:
		return true, err
	case <-r.done:
		return false, nil
	}
}

// run is the runner's goroutine.
func (r *runner) run() {
	ctx := context.Background()
	renewDone := make(chan struct{})
	renewCtx, stopRenew := context.WithCancel(ctx)
	go func() {
		defer close(renewDone)
		r.renewLease(renewCtx)
	}()
	defer func() {
		// A write in flight ends before the lease is released and before
		// Wait, which returns at done, reads the task.
		r.joinWrite()
		close(r.work) // the idle workers return; busy ones after their step
		stopRenew()
		<-renewDone
		r.stopSteps()
		if r.lost {
			r.ended = nil
			return
		}
		rctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		err := r.e.opts.Tasks.ReleaseTaskLease(rctx, r.task.ID, r.e.opts.Owner)
		cancel()
		if err != nil {
			r.ended = nil // the stored lease may still be this runner's
		} else if r.ended != nil {
			r.ended.Lease = agentsmcp.TaskLease{} // released without a new Version
		}
	}()

	if r.task.Status != agentsmcp.TaskRunning {
		r.task.Status = agentsmcp.TaskRunning
		storedform.AddEvent(r.task, agentsmcp.TaskEvent{At: time.Now(), Type: "running"})
		r.dirty = true
	}
	for {
		launch := r.schedule()
		if r.inflight == 0 && !r.asking && len(launch) == 0 {
			// The task ends, pauses or stops here: each way stores it at
			// once, with what changed since the last write.
			switch {
			case r.lost:
			case r.finishedAll() || r.cancelWhy != "":
				r.finish()
			case r.stopping.Load():
				// Left running in the store, lease released: resumed by
				// whoever looks next.
				r.persist(true)
			default:
				r.pause()
			}
			return
		}
		if !r.persist(r.storeBeforeCall(launch)) {
			return
		}
		for _, l := range launch {
			r.inflight++
			r.startStep(l)
		}
		var written <-chan struct{} // nil, which blocks, when no write is in flight
		if r.write != nil {
			written = r.write.done
		}
		select {
		case ev := <-r.events:
			r.apply(ev)
		case <-written:
			// What changed meanwhile goes in the next write, at the top
			// of the loop.
			if !r.finishWrite() {
				return
			}
			continue
		}
		if r.inflight > 0 {
			// One scheduling tick: let the step goroutines that are ready
			// (their calls returned with this one's) post their ends, so
			// that the transitions of a whole layer are stored in one
			// write rather than one each.
			runtime.Gosched()
		}
		// Take every event already queued, so that their transitions are
		// stored in one write.
		for more := true; more; {
			select {
			case ev := <-r.events:
				r.apply(ev)
			default:
				more = false
			}
		}
	}
}

// startStep runs step l on an idle step worker of the runner, or on a new
// one. A worker's stack has grown to what a tool call takes (the router,
// argument validation, the tool) once, instead of for each step in a new
// goroutine, which cost about a tenth of the executor's CPU. There are at
// most MaxParallel workers; past that (a worker that has reported its
// step and not yet come back) the step gets a goroutine of its own.
func (r *runner) startStep(l launchStep) {
	select {
	case r.work <- l:
		return
	default:
	}
	if r.workers >= r.e.opts.MaxParallel {
		go r.runStep(l.index, l.tool, l.args, l.attempts)
		return
	}
	r.workers++
	go func() {
		for {
			r.runStep(l.index, l.tool, l.args, l.attempts)
			var ok bool
			if l, ok = <-r.work; !ok {
				return
			}
		}
	}()
}

type launchStep struct {
	index    int
	tool     string // the plan's, or the repaired step's
	args     json.RawMessage
	attempts int
}

// schedule moves steps forward as far as they can go without waiting:
// skips the steps whose dependencies failed, marks the ones that wait for
// the user (asking them when possible), and returns the steps to start,
// already marked running.
func (r *runner) schedule() []launchStep {
	if r.lost {
		return nil
	}
	if r.cancelWhy != "" {
		r.endUnstarted(agentsmcp.StepCancelled, r.cancelWhy)
		return nil
	}
	var launch []launchStep
	now := time.Now()
	for changed := true; changed; {
		changed = false
		for i := range r.task.Steps {
			s := &r.task.Steps[i]
			if s.Status == agentsmcp.StepWaitingInput && len(r.missingInputs(i)) == 0 {
				s.Status, s.Error = agentsmcp.StepPending, ""
			}
			if s.Status == agentsmcp.StepWaitingConfirmation && s.Confirmed {
				s.Status, s.Error = agentsmcp.StepPending, ""
			}
			if s.Status != agentsmcp.StepPending {
				continue
			}
			ready, blocked := r.dependencies(i)
			switch {
			case blocked != "":
				r.endStep(i, agentsmcp.StepSkipped, nil, "not run: "+blocked, now)
				changed = true
			case !ready:
			case r.refErrs[i] != nil:
				r.endStep(i, agentsmcp.StepFailed, nil, "its arguments are malformed: "+agentsmcp.ErrorMessage(r.refErrs[i]), now)
				changed = true
			case !r.creator.MayUseTool(r.stepTool(i)):
				// Checked again at each step: the task may be resumed
				// anywhere, and nested tools (run_task) must not widen
				// what its creator may call. Before asking the user
				// anything: no confirmation can make the step run.
				r.endStep(i, agentsmcp.StepFailed, nil, fmt.Sprintf("tool %q is not allowed for the principal of the task", r.stepTool(i)), now)
				changed = true
			case len(r.missingInputs(i)) > 0:
				// Each time a step starts waiting is a new question
				// (ADR 0010, A4); a step that waits stays so until
				// answered, and is not counted again here.
				s.Status, s.Error = agentsmcp.StepWaitingInput, waitingForInputs(r.missingInputs(i))
				s.Asks++
				r.event("step_waiting_input", s.StepID, s.Error)
			case r.needsConfirmation(i) && !s.Confirmed:
				s.Status, s.Error = agentsmcp.StepWaitingConfirmation, r.confirmationQuestion(i)
				s.Asks++
				r.event("step_waiting_confirmation", s.StepID, s.Error)
			case r.stopping.Load() || r.inflight+len(launch) >= r.e.opts.MaxParallel:
			default:
				args, err := r.resolveArguments(i)
				if err != nil {
					r.endStep(i, agentsmcp.StepFailed, nil, "its arguments cannot be resolved: "+agentsmcp.ErrorMessage(err), now)
					changed = true
					continue
				}
				// The attempt is counted before the call, so that a step
				// whose call crashes the process is not retried forever.
				s.Status, s.Error, s.StartedAt, s.EndedAt = agentsmcp.StepRunning, "", now, time.Time{}
				s.Attempts++
				r.event("step_started", s.StepID, r.stepTool(i))
				launch = append(launch, launchStep{i, r.stepTool(i), args, s.Attempts - 1})
			}
		}
	}
	r.askUser()
	return launch
}

// resolveArguments returns the arguments of step i's call, its references
// resolved. Arguments without references, which FindRefs has parsed and
// found well formed already (refErrs), are ResolveRefs's answer as they
// are, without a second parse on the runner's goroutine. A number or
// boolean that a whole reference gives to a string-only parameter is
// passed as its text (see textForStringParams).
func (r *runner) resolveArguments(i int) (json.RawMessage, error) {
	args := r.stepArguments(i)
	if len(r.refs[i]) == 0 && r.refErrs[i] == nil && len(args) <= planlang.MaxResolvedArgumentsBytes {
		return args, nil
	}
	out, err := planlang.ResolveRefs(args, planlang.RefValues{Steps: r.outputs, Inputs: r.task.Inputs})
	if err != nil || r.refErrs[i] != nil {
		return out, err
	}
	if info := r.toolInfo(i); info != nil {
		out = textForStringParams(r.refs[i], out, info.InputSchema) // a sum for a message: its text
	}
	return out, nil
}

// dependencies reports whether step i may run (every dependency
// succeeded), or why it never will.
func (r *runner) dependencies(i int) (ready bool, blocked string) {
	ready = true
	for _, d := range r.plan.Steps[i].DependsOn {
		ds := r.task.Steps[r.index[d]]
		switch ds.Status {
		case agentsmcp.StepSucceeded:
		case agentsmcp.StepFailed, agentsmcp.StepSkipped, agentsmcp.StepCancelled:
			return false, fmt.Sprintf("its dependency %q %s", d, ds.Status)
		default:
			ready = false
		}
	}
	return ready, ""
}

// missingInputs lists the inputs step i references that the task lacks.
func (r *runner) missingInputs(i int) []string {
	if !slices.ContainsFunc(r.refs[i], func(ref planlang.Ref) bool { return ref.Kind == planlang.RefInput }) {
		return nil // most steps: no need to decode the inputs
	}
	have := planlang.InputNames(r.task.Inputs)
	var missing []string
	for _, ref := range r.refs[i] {
		if ref.Kind == planlang.RefInput && !have[ref.Name] && !slices.Contains(missing, ref.Name) {
			missing = append(missing, ref.Name)
		}
	}
	return missing
}

func (r *runner) needsConfirmation(i int) bool {
	if r.plan.Steps[i].NeedsConfirmation {
		return true
	}
	info := r.toolInfo(i)
	return info != nil && info.Destructive
}

func (r *runner) confirmationQuestion(i int) string {
	s := r.plan.Steps[i]
	why := "the plan asks for a confirmation"
	if info := r.toolInfo(i); info != nil && info.Destructive {
		why = "the tool is marked destructive"
	}
	return fmt.Sprintf("step %q calls %s, and %s: confirm it with resume_task (confirm: [%q]) or reject it", s.ID, r.stepTool(i), why, s.ID)
}

// askUser opens at most one question at a time: first the missing inputs,
// then the confirmations, in plan order. Without a caller that can be
// asked, the steps stay waiting and the task pauses.
func (r *runner) askUser() {
	caller := r.currentCaller()
	if r.asking || caller == nil || r.stopping.Load() || r.cancelWhy != "" {
		return
	}
	if !r.askedInput {
		var missing []string
		for i, s := range r.task.Steps {
			if s.Status == agentsmcp.StepWaitingInput {
				for _, m := range r.missingInputs(i) {
					if !slices.Contains(missing, m) {
						missing = append(missing, m)
					}
				}
			}
		}
		if len(missing) > 0 {
			schema, ok := elicitationSchema(r.plan.Inputs, missing)
			r.askedInput = true
			if ok {
				r.asking = true
				go r.askInputs(caller, schema, missing)
				return
			}
		}
	}
	for i, s := range r.task.Steps {
		if s.Status == agentsmcp.StepWaitingConfirmation && !s.Confirmed && !r.askedConfirm(i) {
			r.asking = true
			r.markAskedConfirm(i)
			go r.askConfirmation(caller, i)
			return
		}
	}
}

// askedConfirm remembers, for this run, the steps already asked about, so
// that a client that cannot answer is not asked again and again.
func (r *runner) askedConfirm(i int) bool {
	return slices.Contains(r.askedConfirms, i)
}

func (r *runner) markAskedConfirm(i int) { r.askedConfirms = append(r.askedConfirms, i) }

// forgetAskedConfirm lets step i be asked again: it waits for a new
// confirmation (an authorization, after it was confirmed once).
func (r *runner) forgetAskedConfirm(i int) {
	r.askedConfirms = slices.DeleteFunc(r.askedConfirms, func(j int) bool { return j == i })
}

func (r *runner) askInputs(caller Caller, schema json.RawMessage, missing []string) {
	values, ok, err := caller.Elicit(r.stepCtx, inputsQuestion(r.task, missing), schema)
	r.send(inputsAnswer{values: values, ok: ok && err == nil, asked: err == nil})
}

// inputsQuestion is the question for the inputs missing of task t.
func inputsQuestion(t *agentsmcp.Task, missing []string) string {
	return fmt.Sprintf("Task %q needs: %s", t.Request, strings.Join(missing, ", "))
}

// confirmSchema is the answer a confirmation question asks for.
var confirmSchema = json.RawMessage(`{"type":"object","properties":{"confirm":{"type":"boolean","title":"Run this step","description":"true runs the step; false skips it and the steps that depend on it"}},"required":["confirm"]}`)

// confirmQuestion is the question for step i of task t, which waits for a
// confirmation.
func confirmQuestion(t *agentsmcp.Task, plan *agentsmcp.Plan, i int) string {
	s := plan.Steps[i]
	args := string(stepArgumentsOf(t, plan, i))
	if len(args) > 500 {
		args = storedform.TruncateUTF8(args, 500) + "…"
	}
	msg := fmt.Sprintf("Allow step %q to call %s with %s?", s.ID, stepToolOf(t, plan, i), args)
	if s.Description != "" {
		msg += " (" + s.Description + ")"
	}
	return msg
}

func (r *runner) askConfirmation(caller Caller, i int) {
	values, ok, err := caller.Elicit(r.stepCtx, confirmQuestion(r.task, r.plan, i), confirmSchema)
	var answer struct {
		Confirm bool `json:"confirm"`
	}
	if ok && err == nil {
		_ = json.Unmarshal(values, &answer)
	}
	// Declining the question is a refusal of the step; failing to ask is
	// not an answer.
	r.send(confirmAnswer{index: i, confirmed: answer.Confirm, asked: err == nil})
}

// apply changes the task state for one event.
func (r *runner) apply(ev any) {
	now := time.Now()
	switch ev := ev.(type) {
	case stepRetrying:
		s := &r.task.Steps[ev.index]
		s.Attempts = ev.attempts
		r.retries++
		r.event("step_retrying", s.StepID, fmt.Sprintf("attempt %d failed: %s; retrying in %v", ev.attempts, ev.err, ev.wait.Round(time.Millisecond)))
	case stepDone:
		r.inflight--
		s := &r.task.Steps[ev.index]
		s.Attempts = ev.attempts
		if ev.status == agentsmcp.StepRunning {
			// Stopped by Close: the step stays running in the store, and
			// whoever resumes the task decides whether it runs again.
			r.event("step_interrupted", s.StepID, "the executor is stopping")
			return
		}
		if ev.status == agentsmcp.StepWaitingConfirmation {
			// The step needs a person to authorize an integration: it
			// waits for a confirmation, asked like any other (ADR 0012).
			s.Status, s.Error, s.Confirmed = agentsmcp.StepWaitingConfirmation, storedform.TruncateUTF8(ev.err, agentsmcp.MaxTaskErrorBytes), false
			s.Asks++
			r.forgetAskedConfirm(ev.index)
			r.event("step_waiting_authorization", s.StepID, ev.err)
			return
		}
		if ev.status == agentsmcp.StepSucceeded {
			r.outputs[s.StepID] = ev.output
		}
		if ev.status == agentsmcp.StepFailed && r.mayRepair(ev.index) {
			// The step stays running while the repairer looks for another
			// tool, and counts as in flight, so that the task waits.
			r.inflight++
			go r.findRepair(r.callerValues(), ev.index, r.repairRequest(ev.index, ev.err))
			return
		}
		r.endStep(ev.index, ev.status, ev.output, ev.err, now)
	case stepRepairFound:
		r.inflight--
		r.applyRepair(ev, now)
	case confirmAnswer:
		r.asking = false
		s := &r.task.Steps[ev.index]
		if !ev.asked || s.Status != agentsmcp.StepWaitingConfirmation {
			return
		}
		if ev.confirmed {
			s.Confirmed = true
			r.event("step_confirmed", s.StepID, "confirmed by the user")
		} else {
			r.endStep(ev.index, agentsmcp.StepSkipped, nil, "rejected by the user", now)
		}
		r.mustSync = true
	case inputsAnswer:
		r.asking = false
		if !ev.ok {
			return
		}
		merged, err := planlang.MergeInputs(r.task.Inputs, ev.values)
		if err == nil {
			err = planlang.CheckInputs(r.plan, merged, false)
		}
		if err != nil {
			r.event(inputsRejected, "", agentsmcp.ErrorMessage(err))
			return
		}
		before := r.task.Inputs
		r.task.Inputs = merged
		inputsTaken(r.task, r.plan, before)
		r.event("inputs_received", "", describeResume(ResumeRequest{Inputs: ev.values}))
		r.mustSync = true
	case resumeDelivery:
		err := applyResume(r.task, r.plan, ev.req)
		if err == nil {
			if ev.caller != nil {
				r.caller.Store(&callerRef{ev.caller})
			}
			r.askedInput, r.askedConfirms = false, nil
			r.event("resumed", "", describeResume(ev.req))
			// Answered once stored: the caller then reads the task with
			// its answers, and a crash cannot lose an accepted answer.
			r.replies = append(r.replies, ev.reply)
			r.mustSync = true
			return
		}
		ev.reply <- err
	case cancelRequest:
		if r.cancelWhy == "" {
			r.cancelWhy = ev.why
			r.event("cancelling", "", ev.why)
			r.cancelled.Store(true)
			r.stopSteps()
		}
	case leaseLost:
		r.lost = true
		r.stopSteps()
	case stopRequest:
		// Checked by the loop through r.stopping.
	}
}

// endStep records the end of step i.
func (r *runner) endStep(i int, status agentsmcp.StepStatus, output json.RawMessage, errText string, now time.Time) {
	s := &r.task.Steps[i]
	s.Status, s.EndedAt = status, now
	s.Error = storedform.TruncateUTF8(errText, agentsmcp.MaxTaskErrorBytes)
	s.Output = storedOutput(output, r.storedOutputBytes)
	r.storedOutputBytes += len(s.Output)
	msg := errText
	if status == agentsmcp.StepSucceeded {
		msg = fmt.Sprintf("%d attempt(s)", max(s.Attempts, 1))
	}
	r.event("step_"+string(status), s.StepID, msg)
	r.progress(fmt.Sprintf("step %s %s", s.StepID, status))
}

// endUnstarted ends every step that has not ended and is not running.
func (r *runner) endUnstarted(status agentsmcp.StepStatus, why string) {
	now := time.Now()
	for i := range r.task.Steps {
		if s := r.task.Steps[i]; !stepEnded(s.Status) && s.Status != agentsmcp.StepRunning {
			r.endStep(i, status, nil, why, now)
		}
	}
}

func (r *runner) finishedAll() bool {
	for _, s := range r.task.Steps {
		if !stepEnded(s.Status) {
			return false
		}
	}
	return true
}

// finish ends the task, stores it and runs the learning loop.
func (r *runner) finish() {
	now := time.Now()
	t := r.task
	var failed []string
	for _, s := range t.Steps {
		if s.Status == agentsmcp.StepFailed {
			failed = append(failed, fmt.Sprintf("%s: %s", s.StepID, s.Error))
		}
	}
	switch {
	case r.cancelWhy != "":
		t.Status, t.Error = agentsmcp.TaskCancelled, r.cancelWhy
	case len(failed) > 0:
		t.Status = agentsmcp.TaskFailed
		t.Error = storedform.TruncateUTF8(fmt.Sprintf("%d step(s) failed: %s", len(failed), strings.Join(failed, "; ")), agentsmcp.MaxTaskErrorBytes)
	default:
		t.Status, t.Error = agentsmcp.TaskSucceeded, ""
	}
	t.EndedAt = now
	r.event(string(t.Status), "", t.Error)
	if !r.persist(true) {
		return
	}
	// Taken before OnEnd, which receives the runner's task.
	r.keepEnded()
	r.progress("task " + string(t.Status))
	if r.e.opts.OnEnd != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		if r.creator != nil {
			// What the task teaches is its creator's memory, whoever
			// resumed it and on whichever replica it ended.
			ctx = agentsmcp.WithPrincipal(ctx, r.creator)
		}
		r.e.opts.OnEnd(ctx, t, r.plan)
		cancel()
	}
}

// pause stores the task as paused: nothing can run until the user answers.
func (r *runner) pause() {
	var waiting []string
	for _, s := range r.task.Steps {
		if s.Status == agentsmcp.StepWaitingInput || s.Status == agentsmcp.StepWaitingConfirmation {
			waiting = append(waiting, fmt.Sprintf("%s (%s)", s.StepID, s.Status))
		}
	}
	r.task.Status = agentsmcp.TaskPaused
	msg := "waiting for the user: " + strings.Join(waiting, ", ") + "; answer with resume_task"
	r.event("paused", "", msg)
	if r.persist(true) {
		r.keepEnded()
		r.progress("task paused: " + msg)
	}
}

// keepEnded keeps the task as just stored, every change written, for
// Wait (see ended), when the store stores tasks verbatim.
func (r *runner) keepEnded() {
	if storedform.TasksVerbatim(r.e.opts.Tasks) {
		r.ended = storedform.Task(r.task)
	}
}

// maxEventMessageBytes bounds the message of the runner's events: the
// whole text of an error is in its step's Error, and the history must leave
// room for outputs within MaxTaskBytes (see storedOutputsBudget).
const maxEventMessageBytes = 512

func (r *runner) event(typ, stepID, msg string) {
	msg = storedform.TruncateUTF8(msg, maxEventMessageBytes)
	storedform.AddEvent(r.task, agentsmcp.TaskEvent{At: time.Now(), Type: typ, StepID: stepID, Message: msg})
	r.dirty = true
}

func (r *runner) progress(msg string) {
	c := r.currentCaller()
	if c == nil {
		return
	}
	done := 0
	for _, s := range r.task.Steps {
		if stepEnded(s.Status) {
			done++
		}
	}
	c.Progress(context.Background(), done, len(r.task.Steps), msg)
}

// taskWrite is a per-step write of the task that runs while the runner
// goes on (see persist). Its goroutine is the runner's: the runner waits
// for done before its next write and before it returns.
type taskWrite struct {
	snap *agentsmcp.Task // the task as written: the runner's, at the time
	done chan struct{}   // closed when the store has answered
	err  error
}

// persist stores what changed of the task, and reports whether the runner
// may go on. With sync (or an answer of the user to store, mustSync), the
// task is stored when persist returns: whatever was written before, then
// the current state. Otherwise the write may run in the background while
// the runner goes on (see storeBeforeCall for when that is safe): with a
// write in flight already, what changed waits for the next write, so that
// the transitions made while the store works share one write (a group
// commit), and the runner never waits for a write nothing depends on.
// Writes are made one at a time, in order, each holding the whole state of
// the task at the time, so the store never goes back to an older state.
func (r *runner) persist(sync bool) bool {
	sync = sync || r.mustSync
	if r.write != nil {
		if !sync {
			return !r.lost
		}
		if !r.finishWrite() {
			return false
		}
	}
	if r.lost {
		return false
	}
	if !r.dirty {
		if sync {
			r.durable()
		}
		return true
	}
	if !sync {
		if c, ok := r.stored.change(r.task); ok {
			r.startWrite(c)
			return true
		}
	}
	if !r.persistNow() {
		return false
	}
	r.durable()
	return true
}

// storeBeforeCall reports whether the steps of launch must be stored
// running before their calls start. A step that is not stored running and
// whose process crashes runs again at the resume, as if it had never
// started: harmless for a read-only or idempotent tool, whose interrupted
// steps run again at a resume anyway (recoverInterrupted). Any other tool
// may have had its effect, so its step must be stored running first: the
// resume then asks the user before running it again. A runner resumed
// after a stop is strict, so that a call that crashes the process counts
// as an attempt and is not tried forever.
func (r *runner) storeBeforeCall(launch []launchStep) bool {
	for _, l := range launch {
		if r.strict {
			return true
		}
		// Looked up by schedule already (needsConfirmation).
		if info := r.tools[l.tool]; info == nil || !info.ReadOnly && !info.Idempotent {
			return true
		}
	}
	return false
}

// startWrite starts the per-step write of change c, on a copy of the
// task: the runner changes its steps in place. The history and inputs are
// shared, since they are only appended to or replaced.
func (r *runner) startWrite(c agentsmcp.TaskChange) {
	snap := *r.task
	// Into the steps of the write before last, which no one holds any
	// more: a 200-step task would otherwise allocate and collect 40 KB
	// per write.
	snap.Steps = append(r.spare[:0], r.task.Steps...)
	r.spare = nil
	snap.History = r.task.History[:len(r.task.History):len(r.task.History)]
	w := &taskWrite{snap: &snap, done: make(chan struct{})}
	r.write, r.dirty = w, false
	go func() {
		defer close(w.done)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		w.err = r.e.opts.Tasks.(agentsmcp.TaskStepUpdater).UpdateTaskSteps(ctx, w.snap, c)
	}()
}

// finishWrite waits for the write in flight and takes its result. A
// failed write stored nothing: its changes are still the runner's, and are
// written again at once, with persistNow's handling of conflicts and
// errors.
func (r *runner) finishWrite() bool {
	w := r.write
	<-w.done
	r.write = nil
	if w.err == nil {
		r.task.Version, r.task.UpdatedAt = w.snap.Version, w.snap.UpdatedAt
		r.spare = r.stored.remember(w.snap.Steps, w.snap.History)
		return true
	}
	r.dirty = true
	return r.persistNow()
}

// joinWrite waits for the write in flight, if any, as the runner ends;
// its result no longer matters: the task is resumed from what is stored.
func (r *runner) joinWrite() {
	if r.write != nil {
		<-r.write.done
		r.write = nil
	}
}

// durable is called when every change so far is stored: the resume
// requests applied are answered.
func (r *runner) durable() {
	r.mustSync = false
	for _, reply := range r.replies {
		reply <- nil
	}
	r.replies = nil
}

// persistNow stores the task if it changed, in this goroutine, and
// reports whether the runner may go on. No write may be in flight. A
// conflict means someone else wrote the task: a cancel from another
// replica is honoured; anything else means this runner no longer owns the
// task. A store that keeps failing stops the runner too: its task, still
// running with an expiring lease, is resumed later.
func (r *runner) persistNow() bool {
	if !r.dirty || r.lost {
		return !r.lost
	}
	backoff := 100 * time.Millisecond
	for attempt := 1; ; attempt++ {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		var err error
		if c, ok := r.stored.change(r.task); ok {
			err = r.e.opts.Tasks.(agentsmcp.TaskStepUpdater).UpdateTaskSteps(ctx, r.task, c)
		} else {
			err = r.e.opts.Tasks.UpdateTask(ctx, r.task)
		}
		cancel()
		switch {
		case err == nil:
			r.dirty = false
			steps := append(r.spare[:0], r.task.Steps...) // see startWrite
			r.spare = r.stored.remember(steps, r.task.History)
			return true
		case agentsmcp.ErrorCode(err) == agentsmcp.ECONFLICT:
			if r.adoptExternalCancel() {
				continue
			}
			r.e.opts.Logger.Warn("task changed under its runner; stopping", "task", r.task.ID)
			r.lost = true
			r.stopSteps()
			return false
		case agentsmcp.ErrorCode(err) == agentsmcp.EINVALID:
			// A bug of ours, not a state to retry: resuming would only
			// meet it again, so the task ends failed, saying why.
			r.e.opts.Logger.Error("task state rejected by the store", "task", r.task.ID, "error", err)
			r.lost = true
			r.stopSteps()
			r.failRejected(err)
			return false
		case attempt >= 8:
			r.e.opts.Logger.Error("storing the task keeps failing; leaving it to be resumed", "task", r.task.ID, "error", err)
			r.lost = true
			r.stopSteps()
			return false
		}
		time.Sleep(backoff)
		backoff = min(backoff*2, 5*time.Second)
	}
}

// failRejected marks the stored task failed after the store rejected the
// runner's state of it, keeping the stored steps, and releases its lease.
func (r *runner) failRejected(rejection error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	stored, err := r.e.opts.Tasks.FindTaskByID(ctx, r.task.ID)
	if err == nil && !stored.Status.Terminal() {
		now := time.Now()
		stored.Status, stored.EndedAt, stored.ErrorCode = agentsmcp.TaskFailed, now, agentsmcp.EINTERNAL
		stored.Error = storedform.TruncateUTF8("internal error: the executor produced a task state the store rejects: "+agentsmcp.ErrorMessage(rejection), agentsmcp.MaxTaskErrorBytes)
		storedform.AddEvent(stored, agentsmcp.TaskEvent{At: now, Type: "failed", Message: stored.Error})
		err = r.e.opts.Tasks.UpdateTask(ctx, stored)
	}
	if err != nil {
		r.e.opts.Logger.Error("marking a rejected task failed", "task", r.task.ID, "error", err)
	}
	_ = r.e.opts.Tasks.ReleaseTaskLease(ctx, r.task.ID, r.e.opts.Owner)
}

// adoptExternalCancel re-reads the task after a conflict; when it was
// cancelled elsewhere (cancel_task on another replica), the runner takes
// that as its own cancel request and continues from the stored version.
func (r *runner) adoptExternalCancel() bool {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	stored, err := r.e.opts.Tasks.FindTaskByID(ctx, r.task.ID)
	if err != nil || stored.Status != agentsmcp.TaskCancelled {
		return false
	}
	// Continue from the stored version, as cancelled: what is written next
	// only adds how the running steps ended. It is written whole: the
	// steps stored are the canceller's now, not the ones last written here.
	r.task.Version = stored.Version
	r.stored.known = false
	r.task.Status, r.task.EndedAt = stored.Status, stored.EndedAt
	if r.cancelWhy == "" {
		r.cancelWhy = cmp.Or(stored.Error, "cancelled")
		r.cancelled.Store(true)
		r.stopSteps()
	}
	return true
}

// renewLease keeps the lease while the runner lives, and tells it when the
// lease went to someone else or the task was cancelled elsewhere. When
// renewals keep failing, the runner gives up the task before its lease can
// expire (the last renewal that could still keep it failed), so that no
// other replica ever takes over a task this one still runs.
func (r *runner) renewLease(ctx context.Context) {
	every := r.e.opts.LeaseTTL / 3
	tick := time.NewTicker(every)
	defer tick.Stop()
	leaseUntil := time.Now().Add(r.e.opts.LeaseTTL) // acquired just before the runner started
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		rctx, cancel := context.WithTimeout(ctx, every)
		t, err := r.e.opts.Tasks.AcquireTaskLease(rctx, r.task.ID, r.e.opts.Owner, r.e.opts.LeaseTTL)
		cancel()
		switch {
		case ctx.Err() != nil:
			return // the runner is done
		case agentsmcp.ErrorCode(err) == agentsmcp.ECONFLICT:
			r.send(leaseLost{})
			return
		case err != nil:
			if !time.Now().Add(every).Before(leaseUntil) {
				r.e.opts.Logger.Error("renewing a task lease keeps failing; giving the task up before the lease expires", "task", r.task.ID, "error", err)
				r.send(leaseLost{})
				return
			}
			r.e.opts.Logger.Warn("renewing a task lease failed", "task", r.task.ID, "error", err)
		default:
			leaseUntil = t.Lease.ExpiresAt
			if t.Status == agentsmcp.TaskCancelled {
				r.send(cancelRequest{why: t.Error})
			}
		}
	}
}
