package admin

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"runtime/debug"
	"slices"
	"sync"
	"time"

	agentsmcp "github.com/agents-mcp/agents-mcp"
)

// This file holds long operations: started by a request, run by the
// Handler, watched through GET /operations/{id}.

// Operation kinds.
const (
	OperationRefresh = "upstream_refresh"
	OperationReindex = "reindex"
)

// Operation statuses. An operation is running until it ends succeeded,
// failed (Error says why) or cancelled (by a caller, or because the server
// stopped).
const (
	OperationRunning   = "running"
	OperationSucceeded = "succeeded"
	OperationFailed    = "failed"
	OperationCancelled = "cancelled"
)

// OperationIDPrefix is the prefix of operation ids.
const OperationIDPrefix = "op"

// Operation is a snapshot of one long operation. Operations live in the
// memory of the replica that runs them: another replica does not know
// them, and a restart forgets them.
type Operation struct {
	ID     string `json:"id"`
	Kind   string `json:"kind"`
	Target string `json:"target,omitempty"` // the upstream of a refresh
	Status string `json:"status"`
	// Stage, Progress and Total say how far it got: Progress of Total
	// units of the current stage.
	Stage    string     `json:"stage,omitempty"`
	Progress int        `json:"progress"`
	Total    int        `json:"total"`
	Message  string     `json:"message,omitempty"`
	Error    *ErrorBody `json:"error,omitempty"`
	// Result is what the operation produced: the upstream's status after
	// a refresh.
	Result    any       `json:"result,omitempty"`
	CreatedAt time.Time `json:"createdAt"`
	UpdatedAt time.Time `json:"updatedAt"`
	EndedAt   time.Time `json:"endedAt,omitzero"`
}

// operationFunc is the work of an operation. It reports progress with a
// message, returns its result, and must end soon after ctx does.
type operationFunc func(ctx context.Context, report func(p Progress, message string)) (any, error)

type operation struct {
	Operation // guarded by operations.mu
	key       string
	cancel    context.CancelCauseFunc
	done      chan struct{}
}

// operations is the registry of a Handler's operations: at most max of
// them, the ended ones forgotten ttl after they end (or sooner, oldest
// first, to make room). It owns their goroutines, which end when their
// work ends, at their timeout, when cancelled, or at close.
type operations struct {
	max    int
	ttl    time.Duration
	logger *slog.Logger

	base context.Context
	stop context.CancelCauseFunc
	wg   sync.WaitGroup

	mu     sync.Mutex
	byID   map[string]*operation
	closed bool
}

// Causes of cancellation, shown in the operation's message.
var (
	errCancelledByCaller = errors.New("cancelled through the admin API")
	errShutdown          = errors.New("cancelled: the server is shutting down")
)

func newOperations(max int, ttl time.Duration, logger *slog.Logger) *operations {
	base, stop := context.WithCancelCause(context.Background())
	return &operations{max: max, ttl: ttl, logger: logger, base: base, stop: stop, byID: map[string]*operation{}}
}

// start runs fn as a new operation of kind on target, within timeout. A
// running operation of the same kind and target is returned instead of
// starting another.
func (o *operations) start(kind, target string, timeout time.Duration, fn operationFunc) (Operation, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.closed {
		return Operation{}, agentsmcp.Errorf(agentsmcp.EUNAVAILABLE, "the server is shutting down")
	}
	now := time.Now().UTC()
	o.pruneLocked(now)
	key := kind + "\x00" + target
	for _, op := range o.byID {
		if op.key == key && op.Status == OperationRunning {
			return op.Operation, nil
		}
	}
	if len(o.byID) >= o.max && !o.evictOldestEndedLocked() {
		return Operation{}, errorf(http.StatusTooManyRequests, CodeRateLimited, "%d operations are running, the most this server keeps; try again when one has ended", len(o.byID))
	}
	ctx, cancel := context.WithCancelCause(o.base)
	op := &operation{
		Operation: Operation{
			ID: agentsmcp.NewID(OperationIDPrefix), Kind: kind, Target: target, Status: OperationRunning,
			CreatedAt: now, UpdatedAt: now,
		},
		key:    key,
		cancel: cancel,
		done:   make(chan struct{}),
	}
	o.byID[op.ID] = op
	o.wg.Add(1)
	go o.run(ctx, op, timeout, fn)
	return op.Operation, nil
}

func (o *operations) run(ctx context.Context, op *operation, timeout time.Duration, fn operationFunc) {
	defer o.wg.Done()
	defer close(op.done)
	defer op.cancel(nil)
	tctx, cancelTimeout := context.WithTimeout(ctx, timeout)
	defer cancelTimeout()

	report := func(p Progress, message string) {
		o.mu.Lock()
		defer o.mu.Unlock()
		op.Stage, op.Progress, op.Total, op.UpdatedAt = p.Stage, p.Done, p.Total, time.Now().UTC()
		if message != "" {
			op.Message = message
		}
	}
	result, err := runRecovered(tctx, fn, report)

	o.mu.Lock()
	defer o.mu.Unlock()
	now := time.Now().UTC()
	op.Result, op.UpdatedAt, op.EndedAt = result, now, now
	switch {
	case err == nil:
		op.Status = OperationSucceeded
	case ctx.Err() != nil:
		op.Status, op.Message = OperationCancelled, context.Cause(ctx).Error()
	case tctx.Err() != nil:
		op.Status = OperationFailed
		op.Error = &ErrorBody{Code: CodeUnavailable, Message: fmt.Sprintf("the operation did not finish within %s", timeout)}
	default:
		op.Status = OperationFailed
		status, body := statusOf(err)
		if status == http.StatusInternalServerError {
			o.logger.Error("admin operation failed", "operation", op.ID, "kind", op.Kind, "target", op.Target, "err", err)
		}
		op.Error = &body
	}
}

// runRecovered runs fn, turning a panic into an internal error: an
// operation's goroutine must not take the server down.
func runRecovered(ctx context.Context, fn operationFunc, report func(Progress, string)) (result any, err error) {
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("operation panicked: %v\n%s", v, debug.Stack())
		}
	}()
	return fn(ctx, report)
}

// get returns the operation with id; ENOTFOUND when unknown or forgotten.
func (o *operations) get(id string) (Operation, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.pruneLocked(time.Now())
	op, ok := o.byID[id]
	if !ok {
		return Operation{}, agentsmcp.Errorf(agentsmcp.ENOTFOUND, "no operation with id %q on this replica (operations live in the memory of the replica that started them; ended ones are kept for %s)", id, o.ttl)
	}
	return op.Operation, nil
}

// list returns every operation kept, newest first.
func (o *operations) list() []Operation {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.pruneLocked(time.Now())
	out := make([]Operation, 0, len(o.byID))
	for _, op := range o.byID {
		out = append(out, op.Operation)
	}
	slices.SortFunc(out, func(a, b Operation) int {
		return cmp.Or(b.CreatedAt.Compare(a.CreatedAt), cmp.Compare(b.ID, a.ID))
	})
	return out
}

// cancel stops a running operation and waits, within ctx, for it to end.
// Cancelling a cancelled operation is a no-op; one that ended otherwise is
// a conflict.
func (o *operations) cancel(ctx context.Context, id string) (Operation, error) {
	o.mu.Lock()
	o.pruneLocked(time.Now())
	op, ok := o.byID[id]
	if !ok {
		o.mu.Unlock()
		return Operation{}, agentsmcp.Errorf(agentsmcp.ENOTFOUND, "no operation with id %q", id)
	}
	switch op.Status {
	case OperationRunning:
	case OperationCancelled:
		snap := op.Operation
		o.mu.Unlock()
		return snap, nil
	default:
		status := op.Status
		o.mu.Unlock()
		return Operation{}, agentsmcp.Errorf(agentsmcp.ECONFLICT, "operation %s has already ended: %s", id, status)
	}
	o.mu.Unlock()
	op.cancel(errCancelledByCaller)
	select {
	case <-op.done:
	case <-ctx.Done():
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	return op.Operation, nil
}

// close cancels every operation, refuses new ones, and waits within ctx
// for the running ones to end.
func (o *operations) close(ctx context.Context) error {
	o.mu.Lock()
	o.closed = true
	o.mu.Unlock()
	o.stop(errShutdown)
	done := make(chan struct{})
	go func() { // ends with the last operation, which was just cancelled
		o.wg.Wait()
		close(done)
	}()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("admin operations still running: %w", ctx.Err())
	}
}

// pruneLocked forgets the operations that ended more than ttl ago.
func (o *operations) pruneLocked(now time.Time) {
	for id, op := range o.byID {
		if op.Status != OperationRunning && now.Sub(op.EndedAt) > o.ttl {
			delete(o.byID, id)
		}
	}
}

// evictOldestEndedLocked forgets the ended operation that ended first,
// reporting whether there was one.
func (o *operations) evictOldestEndedLocked() bool {
	var oldest *operation
	for _, op := range o.byID {
		if op.Status != OperationRunning && (oldest == nil || op.EndedAt.Before(oldest.EndedAt)) {
			oldest = op
		}
	}
	if oldest == nil {
		return false
	}
	delete(o.byID, oldest.ID)
	return true
}

// acceptOperation answers 202 Accepted with the operation and where to
// watch it.
func acceptOperation(w http.ResponseWriter, op Operation) {
	w.Header().Set("Location", Prefix+"/operations/"+op.ID)
	writeJSON(w, http.StatusAccepted, map[string]Operation{"operation": op})
}

// POST /reindex: 202 with the reindex operation (the running one, if a
// reindex is running already).
func (h *Handler) reindex(w http.ResponseWriter, r *http.Request) error {
	if h.opts.Reindex == nil {
		return unavailable("reindexing")
	}
	if _, err := queryParams(r); err != nil {
		return err
	}
	if err := noBody(r); err != nil {
		return err
	}
	reindex := h.opts.Reindex
	op, err := h.ops.start(OperationReindex, "", h.opts.ReindexTimeout, func(ctx context.Context, report func(Progress, string)) (any, error) {
		report(Progress{Stage: "start"}, "rebuilding the vector index from the store")
		// The operation shows overall figures: the stages done so far
		// plus the current one.
		var mu sync.Mutex
		var stage string
		var doneBefore, totalBefore, done, total int
		err := reindex(ctx, func(p Progress) {
			mu.Lock()
			defer mu.Unlock()
			if p.Stage != stage {
				doneBefore, totalBefore, stage = doneBefore+done, totalBefore+total, p.Stage
			}
			done, total = p.Done, p.Total
			report(Progress{Stage: p.Stage, Done: doneBefore + done, Total: totalBefore + total},
				fmt.Sprintf("%s: %d of %d documents", p.Stage, p.Done, p.Total))
		})
		if err == nil {
			mu.Lock()
			report(Progress{Stage: "done", Done: doneBefore + done, Total: totalBefore + total}, "the vector index is rebuilt")
			mu.Unlock()
		}
		return nil, err
	})
	if err != nil {
		return err
	}
	acceptOperation(w, op)
	return nil
}

// GET /operations: newest first.
func (h *Handler) listOperations(w http.ResponseWriter, r *http.Request) error {
	return writeOffsetPage(w, r, h.ops.list)
}

// GET /operations/{id}
func (h *Handler) getOperation(w http.ResponseWriter, r *http.Request) error {
	if _, err := queryParams(r); err != nil {
		return err
	}
	id, err := pathID(r, OperationIDPrefix, "operation")
	if err != nil {
		return err
	}
	op, err := h.ops.get(id)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, op)
	return nil
}

// POST /operations/{id}/cancel: the operation once it stopped (or still
// running, if it did not stop within RequestTimeout).
func (h *Handler) cancelOperation(w http.ResponseWriter, r *http.Request) error {
	if _, err := queryParams(r); err != nil {
		return err
	}
	if err := noBody(r); err != nil {
		return err
	}
	id, err := pathID(r, OperationIDPrefix, "operation")
	if err != nil {
		return err
	}
	ctx, cancel := h.requestContext(r)
	defer cancel()
	op, err := h.ops.cancel(ctx, id)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, op)
	return nil
}
