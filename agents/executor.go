package agents

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/agents/planlang"
	"github.com/agents-mcp/agents-mcp/internal/mcpwire"
	"github.com/agents-mcp/agents-mcp/internal/storedform"
	"github.com/agents-mcp/agents-mcp/internal/validate"
)

// Executor runs plans as tasks: the DAG of each plan with bounded
// parallelism, retries with backoff, per-step timeouts, pauses for user
// inputs and confirmations, and cancellation. Every step transition is
// stored before anything depends on it, so a task survives a crash: the
// executor of any replica resumes it from its last stored state (see
// Run), and a step that ended is never run again.
//
// One replica at a time runs a task: the one holding its lease, which the
// runner renews while it runs.
type Executor struct {
	opts ExecutorOptions

	mu      sync.Mutex
	runners map[string]*runner // tasks running in this process, by id
	// claims are the tasks being started here (between the decision to
	// run one and its runner's start): Resume and the resume loop share the
	// lease owner, so the lease alone cannot keep them from both starting
	// the same task.
	claims  map[string]bool
	closing bool
	wg      sync.WaitGroup // runner goroutines
}

// ExecutorOptions configure an Executor. Tasks, Plans and Tools are
// required.
type ExecutorOptions struct {
	Tasks agentsmcp.TaskService
	Plans agentsmcp.PlanService
	Tools agentsmcp.ToolCaller
	// Catalog tells which tools are destructive (their steps need a
	// confirmation) and which may run again after an interruption
	// (read-only or idempotent ones). Nil: no tool is known to be either.
	Catalog agentsmcp.ToolCatalog
	// OnEnd is called once when a task run by this executor ends
	// (succeeded, failed or cancelled), from the task's goroutine and
	// before waiters are released: the learning loop. The context carries
	// a deadline, and the task's creator (agentsmcp.Task.Creator), whose
	// memory the task adds to, whoever resumed it and wherever it ended;
	// none for a task created without a principal.
	OnEnd func(ctx context.Context, t *agentsmcp.Task, p *agentsmcp.Plan)
	// Repairer chooses a replacement for a step whose tool failed for
	// good (see StepRepairer); nil: such a step fails its task.
	Repairer StepRepairer
	// RepairLLM returns the model a repair asks to choose the replacement
	// (RepairRequest.LLM), given the session of the request waiting for
	// the task (nil when none waits): the backend that request planned
	// with. Nil, or a nil LLM: the builtin choice.
	RepairLLM func(session *mcp.ServerSession) agentsmcp.LLM
	// Owner names this replica in task leases; default host-pid-random.
	Owner string
	// MaxParallel bounds the steps of one task running at once; default 8.
	MaxParallel int
	// StepTimeout bounds one attempt of a step without a timeout of its
	// own; default 2 minutes.
	StepTimeout time.Duration
	// Retry applies to steps without a retry policy of their own; default
	// 3 attempts, 200 ms doubling up to 5 s. Only retryable failures are
	// retried (see classifyFailure).
	Retry agentsmcp.RetryPolicy
	// LeaseTTL is how long a lease lasts unless renewed (every third of
	// it); a crashed replica's tasks are resumed elsewhere after it.
	// Default 30 s.
	LeaseTTL time.Duration
	// ResumeInterval is how often Run looks for tasks to resume; default
	// 5 s.
	ResumeInterval time.Duration
	Logger         *slog.Logger
	// OnChange, if set, is called after each task transition this
	// executor stores (a create or an update, whatever the replica that
	// runs the task), with the task as stored, from the goroutine that
	// stored it: the source of task notifications (ADR 0010, D5). It must
	// return at once and must not keep or change t.
	OnChange func(t *agentsmcp.Task)
}

// ResumeRequest is what resume_task supplies to a paused task.
type ResumeRequest struct {
	// Inputs are merged into the task's inputs (top-level keys replace).
	Inputs json.RawMessage `json:"inputs,omitempty"`
	// Confirm lists the steps the user allows to run; Reject those they
	// refuse (the steps are skipped, and so are their dependents).
	Confirm []string `json:"confirm,omitempty"`
	Reject  []string `json:"reject,omitempty"`
}

// NewExecutor returns an executor; call Run to resume interrupted tasks and
// Close to stop.
func NewExecutor(opts ExecutorOptions) *Executor {
	if opts.Owner == "" {
		opts.Owner = defaultOwner()
	}
	if opts.MaxParallel <= 0 {
		opts.MaxParallel = 8
	}
	if opts.StepTimeout <= 0 {
		opts.StepTimeout = 2 * time.Minute
	}
	if opts.Retry.MaxAttempts <= 0 {
		opts.Retry = agentsmcp.RetryPolicy{MaxAttempts: 3, InitialBackoff: 200 * time.Millisecond, MaxBackoff: 5 * time.Second}
	}
	if opts.LeaseTTL <= 0 {
		opts.LeaseTTL = 30 * time.Second
	}
	if opts.ResumeInterval <= 0 {
		opts.ResumeInterval = 5 * time.Second
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.OnChange != nil {
		opts.Tasks = changeReporter{opts.Tasks, opts.OnChange}
	}
	return &Executor{opts: opts, runners: make(map[string]*runner), claims: make(map[string]bool)}
}

func defaultOwner() string {
	host, _ := os.Hostname()
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return fmt.Sprintf("%s-%d-%s", host, os.Getpid(), hex.EncodeToString(b))
}

// Owner is the lease owner name of this executor.
func (e *Executor) Owner() string { return e.opts.Owner }

// Start creates a task for plan (a stored plan: it needs its ID) with the
// user's inputs and the steps confirmed in advance, and starts it. The task
// belongs to the principal ctx carries (see [agentsmcp.Task.Principal]):
// its steps run on that principal's behalf and within its allowlist. It
// returns at once with the stored task; use Wait for the outcome. caller,
// when not nil, receives progress and is asked for what is missing.
// EINVALID for inputs that are not a JSON object or do not satisfy the
// plan's Inputs schema (missing values are not an error: the task asks for
// them), or confirmations of unknown steps.
func (e *Executor) Start(ctx context.Context, plan *agentsmcp.Plan, inputs json.RawMessage, confirm []string, caller Caller) (*agentsmcp.Task, error) {
	if plan == nil || plan.ID == "" {
		return nil, agentsmcp.Errorf(agentsmcp.EINVALID, "a stored plan is required")
	}
	if err := validate.Plan(plan); err != nil {
		return nil, err
	}
	if err := planlang.CheckInputs(plan, inputs, false); err != nil {
		return nil, err
	}
	t := &agentsmcp.Task{PlanID: plan.ID, Request: plan.Request, Status: agentsmcp.TaskPending, Inputs: inputs}
	if p := agentsmcp.PrincipalFrom(ctx); p != nil {
		// The steps run on the creator's behalf, within its allowlist,
		// wherever and whenever they run.
		t.Principal, t.PrincipalTools = p.ID, slices.Clone(p.Tools)
	}
	for _, s := range plan.Steps {
		t.Steps = append(t.Steps, agentsmcp.StepState{StepID: s.ID, Status: agentsmcp.StepPending})
	}
	for _, id := range confirm {
		i := slices.IndexFunc(t.Steps, func(s agentsmcp.StepState) bool { return s.StepID == id })
		if i < 0 {
			return nil, agentsmcp.Errorf(agentsmcp.EINVALID, "confirmed step %q is not a step of plan %s", id, plan.ID)
		}
		t.Steps[i].Confirmed = true
	}
	storedform.AddEvent(t, agentsmcp.TaskEvent{At: time.Now(), Type: "created", Message: fmt.Sprintf("plan %s, %d steps", plan.ID, len(plan.Steps))})
	addValuesFilledEvents(t, plan, time.Now())
	if err := e.refuseWhenClosing(); err != nil {
		return nil, err
	}
	// Created leased: another replica's resume loop must not take it.
	t.Lease = agentsmcp.TaskLease{Owner: e.opts.Owner, ExpiresAt: time.Now().Add(e.opts.LeaseTTL)}
	if err := e.opts.Tasks.CreateTask(ctx, t); err != nil {
		return nil, err
	}
	if !e.claim(t.ID) {
		_ = e.opts.Tasks.ReleaseTaskLease(context.WithoutCancel(ctx), t.ID, e.opts.Owner)
		return nil, agentsmcp.Errorf(agentsmcp.EUNAVAILABLE, "the server is shutting down; the task will run after the restart")
	}
	if err := e.launch(t, plan, caller, false); err != nil {
		// Not started here: with its lease released, a replica's resume
		// loop (or this one's, after a restart) runs it.
		_ = e.opts.Tasks.ReleaseTaskLease(context.WithoutCancel(ctx), t.ID, e.opts.Owner)
		return nil, err
	}
	return t, nil
}

// Task returns the stored state of a task. The runner stores its
// transitions in the background, one write at a time, so the state read
// may lag the running task by the transitions of one write (see persist in
// runner.go). ENOTFOUND for an unknown id.
func (e *Executor) Task(ctx context.Context, id string) (*agentsmcp.Task, error) {
	return e.opts.Tasks.FindTaskByID(ctx, id)
}

// Wait returns the task once it has ended or paused, or when ctx ends (with
// the state stored then, and no error). A task run by another replica is
// polled. A task whose runner in this process stored its end or pause is
// not read back when the store stores tasks verbatim
// ([agentsmcp.VerbatimTaskStore]): Wait returns a copy of what that runner
// stored, the task FindTaskByID would return (saving the read of a large
// task).
func (e *Executor) Wait(ctx context.Context, id string) (*agentsmcp.Task, error) {
	for {
		e.mu.Lock()
		r := e.runners[id]
		e.mu.Unlock()
		if r != nil {
			select {
			case <-r.done:
				if t := r.endedTask(); t != nil {
					return t, nil
				}
			case <-ctx.Done():
			}
		}
		t, err := e.opts.Tasks.FindTaskByID(context.WithoutCancel(ctx), id)
		if err != nil || t.Status.Terminal() || t.Status == agentsmcp.TaskPaused || ctx.Err() != nil {
			return t, err
		}
		if r == nil {
			select {
			case <-time.After(250 * time.Millisecond):
			case <-ctx.Done():
			}
		}
	}
}

// Resume answers a paused task (inputs, confirmations, rejections) and
// restarts it; it returns at once with the stored task. A task running in
// this process gets the answers directly. ECONFLICT for a task that has
// ended, or that another replica is running; EINVALID for inputs the
// plan's schema rejects or steps that are not waiting.
func (e *Executor) Resume(ctx context.Context, id string, req ResumeRequest, caller Caller) (*agentsmcp.Task, error) {
	if err := e.refuseWhenClosing(); err != nil {
		return nil, err
	}
	if ok, err := e.deliver(id, req, caller); ok {
		return e.taskAfterDelivery(ctx, id, err)
	}
	if !e.claim(id) {
		// Started here meanwhile (by the resume loop): answer its runner.
		if ok, err := e.deliver(id, req, caller); ok {
			return e.taskAfterDelivery(ctx, id, err)
		}
		return nil, agentsmcp.Errorf(agentsmcp.ECONFLICT, "task %s is being started; retry", id)
	}
	launched := false
	defer func() {
		if !launched {
			e.unclaim(id)
		}
	}()
	t, err := e.opts.Tasks.FindTaskByID(ctx, id)
	if err != nil {
		return nil, err
	}
	switch {
	case t.Status.Terminal():
		return nil, agentsmcp.Errorf(agentsmcp.ECONFLICT, "task %s has ended (%s); start a new one", id, t.Status)
	case t.Status != agentsmcp.TaskPaused && t.Lease.Owner != "" && time.Now().Before(t.Lease.ExpiresAt):
		return nil, agentsmcp.Errorf(agentsmcp.ECONFLICT, "task %s is %s on replica %s; resume it once it pauses", id, t.Status, t.Lease.Owner)
	}
	if mcpwire.IsBridgedCall(t) {
		return nil, agentsmcp.Errorf(agentsmcp.EINVALID, "task %s is a bridged upstream call, not a plan: answer it with tasks/update or by retrying its tools/call", id)
	}
	plan, err := e.opts.Plans.FindPlanByID(ctx, t.PlanID)
	if err != nil {
		return nil, err
	}
	if err := applyResume(t, plan, req); err != nil {
		return nil, err
	}
	t.Status = agentsmcp.TaskPending
	storedform.AddEvent(t, agentsmcp.TaskEvent{At: time.Now(), Type: "resumed", Message: describeResume(req)})
	if err := e.opts.Tasks.UpdateTask(ctx, t); err != nil {
		return nil, err
	}
	leased, err := e.opts.Tasks.AcquireTaskLease(ctx, id, e.opts.Owner, e.opts.LeaseTTL)
	if err != nil {
		// Another replica took it between our update and now: it runs the
		// task with our answers.
		return t, nil
	}
	launched = true
	if err := e.launch(leased, plan, caller, false); err != nil {
		return nil, err
	}
	return leased, nil
}

// RejectInputs records that the inputs given for steps of paused task id
// were refused by the plan's schema: refused maps a step to why. Each of
// those steps that still waits for inputs gets an inputs_rejected event
// with the reason, and a new question (its Asks grows), so that the
// answer is asked again under a new key (ADR 0010, A5); the task stays
// paused, and nothing else changes. ECONFLICT when the task is not paused
// or changed meanwhile (the answers lost a race), ENOTFOUND for an unknown
// id.
func (e *Executor) RejectInputs(ctx context.Context, id string, refused map[string]string) error {
	t, err := e.opts.Tasks.FindTaskByID(ctx, id)
	if err != nil {
		return err
	}
	if t.Status != agentsmcp.TaskPaused {
		return agentsmcp.Errorf(agentsmcp.ECONFLICT, "task %s is %s, not paused", id, t.Status)
	}
	now := time.Now()
	changed := false
	for i := range t.Steps {
		s := &t.Steps[i]
		why, ok := refused[s.StepID]
		if !ok || s.Status != agentsmcp.StepWaitingInput {
			continue
		}
		reask(s)
		storedform.AddEvent(t, agentsmcp.TaskEvent{At: now, Type: inputsRejected, StepID: s.StepID, Message: storedform.TruncateUTF8(why, maxEventMessageBytes)})
		changed = true
	}
	if !changed {
		return nil
	}
	return e.opts.Tasks.UpdateTask(ctx, t)
}

// deliver hands a resume request to the task's runner in this process;
// delivered is false when there is none (any more).
func (e *Executor) deliver(id string, req ResumeRequest, caller Caller) (delivered bool, err error) {
	e.mu.Lock()
	r := e.runners[id]
	e.mu.Unlock()
	if r == nil {
		return false, nil
	}
	return r.deliver(req, caller)
}

func (e *Executor) taskAfterDelivery(ctx context.Context, id string, err error) (*agentsmcp.Task, error) {
	if err != nil {
		return nil, err
	}
	return e.opts.Tasks.FindTaskByID(ctx, id)
}

// claim reserves the start of task id in this process; false when it runs
// or is being started here already, or the executor is closing.
func (e *Executor) claim(id string) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closing || e.runners[id] != nil || e.claims[id] {
		return false
	}
	e.claims[id] = true
	return true
}

func (e *Executor) unclaim(id string) {
	e.mu.Lock()
	delete(e.claims, id)
	e.mu.Unlock()
}

// Cancel stops a task: its running steps are cancelled, the others will
// not run. A task running in another replica is marked cancelled in the
// store, which that replica notices at its next write or lease renewal.
// Cancelling a task that has ended returns it unchanged.
func (e *Executor) Cancel(ctx context.Context, id string) (*agentsmcp.Task, error) {
	e.mu.Lock()
	r := e.runners[id]
	e.mu.Unlock()
	if r != nil {
		r.requestCancel("cancelled by the user")
		select {
		case <-r.done:
			if t := r.endedTask(); t != nil {
				return t, nil
			}
		case <-ctx.Done():
		}
		return e.opts.Tasks.FindTaskByID(context.WithoutCancel(ctx), id)
	}
	for {
		t, err := e.opts.Tasks.FindTaskByID(ctx, id)
		if err != nil || t.Status.Terminal() {
			return t, err
		}
		now := time.Now()
		for i := range t.Steps {
			if s := &t.Steps[i]; !stepEnded(s.Status) {
				s.Status, s.Error, s.EndedAt = agentsmcp.StepCancelled, "cancelled by the user", now
			}
		}
		t.Status, t.EndedAt, t.Error = agentsmcp.TaskCancelled, now, "cancelled by the user"
		storedform.AddEvent(t, agentsmcp.TaskEvent{At: now, Type: "cancelled", Message: "cancelled by the user"})
		err = e.opts.Tasks.UpdateTask(ctx, t)
		if agentsmcp.ErrorCode(err) == agentsmcp.ECONFLICT {
			continue // the runner wrote meanwhile: cancel the newer state
		}
		return t, err
	}
}

// Run resumes the tasks that need an executor (pending or running, with a
// free or expired lease: their replica crashed or stopped) at once and every
// ResumeInterval, until ctx ends.
func (e *Executor) Run(ctx context.Context) {
	tick := time.NewTicker(e.opts.ResumeInterval)
	defer tick.Stop()
	for {
		e.resumeOrphans(ctx)
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

func (e *Executor) resumeOrphans(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	tasks, err := e.opts.Tasks.FindTasksToResume(ctx, time.Now(), 50)
	if err != nil {
		e.opts.Logger.Warn("looking for tasks to resume failed", "error", err)
		return
	}
	for _, t := range tasks {
		if !e.claim(t.ID) {
			continue // runs here, or Resume is starting it
		}
		leased, err := e.opts.Tasks.AcquireTaskLease(ctx, t.ID, e.opts.Owner, e.opts.LeaseTTL)
		if err != nil || (leased.Status != agentsmcp.TaskPending && leased.Status != agentsmcp.TaskRunning) {
			// Another replica was faster, or the task moved on since it
			// was listed.
			if err == nil {
				_ = e.opts.Tasks.ReleaseTaskLease(context.WithoutCancel(ctx), t.ID, e.opts.Owner)
			}
			e.unclaim(t.ID)
			continue
		}
		if mcpwire.IsBridgedCall(leased) { // bridged.go
			e.failOrphanedBridged(ctx, leased, t.Lease.Owner)
			e.unclaim(t.ID)
			continue
		}
		plan, err := e.opts.Plans.FindPlanByID(ctx, leased.PlanID)
		if err != nil {
			// A plan that is gone or broken is a fault of the stored
			// data; any other failure is the store's.
			code := agentsmcp.EUNAVAILABLE
			if c := agentsmcp.ErrorCode(err); c == agentsmcp.ENOTFOUND || c == agentsmcp.EINVALID {
				code = agentsmcp.EINTERNAL
			}
			e.failUnrunnable(ctx, leased, code, fmt.Sprintf("its plan %s cannot be read: %s", leased.PlanID, agentsmcp.ErrorMessage(err)))
			e.unclaim(t.ID)
			continue
		}
		e.opts.Logger.Info("resuming task", "task", t.ID, "status", string(t.Status))
		if err := e.launch(leased, plan, nil, true); err != nil {
			e.opts.Logger.Warn("resuming a task failed", "task", t.ID, "error", err)
			_ = e.opts.Tasks.ReleaseTaskLease(context.WithoutCancel(ctx), t.ID, e.opts.Owner)
		}
	}
}

// failUnrunnable ends a task that cannot be resumed, keeping its history,
// with the error code of the executor's fault (see Task.ErrorCode).
func (e *Executor) failUnrunnable(ctx context.Context, t *agentsmcp.Task, code, why string) {
	now := time.Now()
	t.Status, t.EndedAt, t.ErrorCode = agentsmcp.TaskFailed, now, code
	t.Error = storedform.TruncateUTF8("cannot resume: "+why, agentsmcp.MaxTaskErrorBytes)
	storedform.AddEvent(t, agentsmcp.TaskEvent{At: now, Type: "failed", Message: t.Error})
	if err := e.opts.Tasks.UpdateTask(ctx, t); err != nil {
		e.opts.Logger.Warn("marking an unrunnable task failed", "task", t.ID, "error", err)
	}
	_ = e.opts.Tasks.ReleaseTaskLease(ctx, t.ID, e.opts.Owner)
}

// Close stops the executor: no task starts any more, running steps may
// finish until ctx ends, then they are cancelled. Stopped tasks stay
// running in the store with their lease released, so that a replica (or
// this one after a restart) resumes them.
func (e *Executor) Close(ctx context.Context) error {
	e.mu.Lock()
	e.closing = true
	runners := make([]*runner, 0, len(e.runners))
	for _, r := range e.runners {
		runners = append(runners, r)
	}
	e.mu.Unlock()
	for _, r := range runners {
		r.stop()
	}
	done := make(chan struct{})
	go func() {
		e.wg.Wait()
		close(done)
	}()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
	}
	for _, r := range runners {
		r.abort()
	}
	<-done
	return ctx.Err()
}

func (e *Executor) refuseWhenClosing() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closing {
		return agentsmcp.Errorf(agentsmcp.EUNAVAILABLE, "the server is shutting down; retry on another replica or after the restart")
	}
	return nil
}

// launch starts the runner of a leased task that the caller has claimed;
// the claim ends either way. The runner works on its own copy: t stays
// the caller's. t must be as stored at t.Version (as CreateTask,
// UpdateTask or AcquireTaskLease left it): the runner writes only what it
// changes from there.
func (e *Executor) launch(t *agentsmcp.Task, plan *agentsmcp.Plan, caller Caller, resumed bool) error {
	defer e.unclaim(t.ID)
	if t.Status.Terminal() {
		return agentsmcp.Errorf(agentsmcp.ECONFLICT, "task %s has ended (%s)", t.ID, t.Status)
	}
	r, err := newRunner(e, cloneTask(t), plan, caller, resumed)
	if err != nil {
		return err
	}
	e.mu.Lock()
	if e.closing {
		e.mu.Unlock()
		return agentsmcp.Errorf(agentsmcp.EUNAVAILABLE, "the server is shutting down")
	}
	if _, dup := e.runners[t.ID]; dup {
		e.mu.Unlock()
		return agentsmcp.Errorf(agentsmcp.ECONFLICT, "task %s is already running here", t.ID)
	}
	e.runners[t.ID] = r
	e.wg.Add(1)
	e.mu.Unlock()
	go func() {
		defer e.wg.Done()
		r.run()
		e.mu.Lock()
		delete(e.runners, t.ID)
		e.mu.Unlock()
		close(r.done)
	}()
	return nil
}

func stepEnded(s agentsmcp.StepStatus) bool {
	switch s {
	case agentsmcp.StepSucceeded, agentsmcp.StepFailed, agentsmcp.StepSkipped, agentsmcp.StepCancelled:
		return true
	}
	return false
}

func describeResume(req ResumeRequest) string {
	var parts []string
	if len(req.Inputs) > 0 {
		var m map[string]json.RawMessage
		_ = json.Unmarshal(req.Inputs, &m)
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		parts = append(parts, fmt.Sprintf("inputs %v", keys))
	}
	if len(req.Confirm) > 0 {
		parts = append(parts, fmt.Sprintf("confirmed %v", req.Confirm))
	}
	if len(req.Reject) > 0 {
		parts = append(parts, fmt.Sprintf("rejected %v", req.Reject))
	}
	if len(parts) == 0 {
		return "resumed"
	}
	return fmt.Sprint(parts)
}

func cloneTask(t *agentsmcp.Task) *agentsmcp.Task {
	c := *t
	c.Steps = slices.Clone(t.Steps)
	c.History = slices.Clone(t.History)
	c.Inputs = slices.Clone(t.Inputs)
	return &c
}
