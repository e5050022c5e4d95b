package admin

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/internal/testutil"
)

// blockUntilCancelled is an operation that reports progress once and then
// waits for its context.
func blockUntilCancelled(ctx context.Context, report func(Progress, string)) (any, error) {
	report(Progress{Stage: "waiting", Done: 1, Total: 3}, "waiting")
	<-ctx.Done()
	return nil, ctx.Err()
}

func waitEnded(t *testing.T, o *operations, id string) Operation {
	t.Helper()
	var op Operation
	testutil.EventuallyState(t, 5*time.Second, "operation "+id+" ends", func() (bool, string) {
		var err error
		if op, err = o.get(id); err != nil {
			t.Fatal(err)
		}
		return op.Status != OperationRunning, fmt.Sprintf("%+v", op)
	})
	return op
}

func TestOperationsRegistry(t *testing.T) {
	o := newOperations(3, time.Hour, slog.New(slog.DiscardHandler))
	t.Cleanup(func() { _ = o.close(context.Background()) })

	a, err := o.start("k", "a", time.Minute, blockUntilCancelled)
	if err != nil || a.Status != OperationRunning || !strings.HasPrefix(a.ID, OperationIDPrefix+"_") {
		t.Fatalf("start: %+v, %v", a, err)
	}
	// The same kind and target while running: the same operation.
	if again, err := o.start("k", "a", time.Minute, blockUntilCancelled); err != nil || again.ID != a.ID {
		t.Fatalf("second start of k/a: %+v, %v", again, err)
	}
	if _, err := o.start("k", "b", time.Minute, blockUntilCancelled); err != nil {
		t.Fatal(err)
	}
	c, err := o.start("k", "c", time.Minute, blockUntilCancelled)
	if err != nil {
		t.Fatal(err)
	}
	// Full of running operations: refused, rate limited.
	_, err = o.start("k", "d", time.Minute, blockUntilCancelled)
	if status, body := statusOf(err); status != http.StatusTooManyRequests || body.Code != CodeRateLimited {
		t.Fatalf("start beyond the bound: %d %+v", status, body)
	}

	// Progress is visible while running.
	testutil.EventuallyState(t, 5*time.Second, "progress 1", func() (bool, string) {
		op, _ := o.get(a.ID)
		return op.Progress == 1, fmt.Sprintf("%+v", op)
	})
	if op, _ := o.get(a.ID); op.Total != 3 || op.Stage != "waiting" || op.Message != "waiting" {
		t.Fatalf("progress %+v", op)
	}

	// Cancelling stops it and says by whom; cancelling again is a no-op.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	got, err := o.cancel(ctx, c.ID)
	if err != nil || got.Status != OperationCancelled || got.Message != errCancelledByCaller.Error() || got.EndedAt.IsZero() {
		t.Fatalf("cancel: %+v, %v", got, err)
	}
	if again, err := o.cancel(ctx, c.ID); err != nil || again.Status != OperationCancelled {
		t.Fatalf("cancel again: %+v, %v", again, err)
	}
	// With one operation ended, a new one evicts it.
	d, err := o.start("k", "d", time.Minute, blockUntilCancelled)
	if err != nil {
		t.Fatalf("start after an operation ended: %v", err)
	}
	if _, err := o.get(c.ID); agentsmcp.ErrorCode(err) != agentsmcp.ENOTFOUND {
		t.Fatalf("the evicted operation is still there: %v", err)
	}
	if list := o.list(); len(list) != 3 || list[0].ID != d.ID {
		t.Fatalf("list, newest first: %+v", list)
	}

	// close cancels the running ones, waits for them, and refuses more.
	if err := o.close(ctx); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{a.ID, d.ID} {
		if op, _ := o.get(id); op.Status != OperationCancelled || op.Message != errShutdown.Error() {
			t.Fatalf("after close: %+v", op)
		}
	}
	if _, err := o.start("k", "e", time.Minute, blockUntilCancelled); agentsmcp.ErrorCode(err) != agentsmcp.EUNAVAILABLE {
		t.Fatalf("start after close: %v", err)
	}
}

func TestOperationOutcomes(t *testing.T) {
	o := newOperations(10, time.Hour, slog.New(slog.DiscardHandler))
	t.Cleanup(func() { _ = o.close(context.Background()) })
	start := func(target string, timeout time.Duration, fn operationFunc) Operation {
		t.Helper()
		op, err := o.start("k", target, timeout, fn)
		if err != nil {
			t.Fatal(err)
		}
		return waitEnded(t, o, op.ID)
	}

	ok := start("ok", time.Minute, func(context.Context, func(Progress, string)) (any, error) { return "result", nil })
	if ok.Status != OperationSucceeded || ok.Result != "result" || ok.Error != nil {
		t.Fatalf("success: %+v", ok)
	}
	slow := start("slow", 20*time.Millisecond, blockUntilCancelled)
	if slow.Status != OperationFailed || slow.Error == nil || slow.Error.Code != CodeUnavailable || !strings.Contains(slow.Error.Message, "did not finish within 20ms") {
		t.Fatalf("timeout: %+v", slow)
	}
	invalid := start("invalid", time.Minute, func(context.Context, func(Progress, string)) (any, error) {
		return nil, agentsmcp.Errorf(agentsmcp.ENOTFOUND, "upstream x does not exist")
	})
	if invalid.Status != OperationFailed || *invalid.Error != (ErrorBody{CodeNotFound, "upstream x does not exist"}) {
		t.Fatalf("application error: %+v", invalid)
	}
	internal := start("internal", time.Minute, func(context.Context, func(Progress, string)) (any, error) {
		return nil, errors.New("sql: connection refused at /var/lib/secret.db")
	})
	if internal.Error == nil || *internal.Error != (ErrorBody{CodeInternal, "internal error"}) {
		t.Fatalf("internal error leaked or lost: %+v", internal)
	}
	panicked := start("panic", time.Minute, func(context.Context, func(Progress, string)) (any, error) { panic("boom") })
	if panicked.Status != OperationFailed || panicked.Error.Code != CodeInternal {
		t.Fatalf("panic: %+v", panicked)
	}
}

func TestOperationsExpire(t *testing.T) {
	o := newOperations(10, 30*time.Millisecond, slog.New(slog.DiscardHandler))
	t.Cleanup(func() { _ = o.close(context.Background()) })
	op, err := o.start("k", "", time.Minute, func(context.Context, func(Progress, string)) (any, error) { return nil, nil })
	if err != nil {
		t.Fatal(err)
	}
	waitEnded(t, o, op.ID)
	time.Sleep(60 * time.Millisecond)
	if _, err := o.get(op.ID); agentsmcp.ErrorCode(err) != agentsmcp.ENOTFOUND {
		t.Fatalf("an operation ended past its ttl is still kept: %v", err)
	}
	if len(o.list()) != 0 {
		t.Fatal("list still has it")
	}
}

// TestCloseWaitsWithinItsContext: an operation that ignores cancellation
// makes Close return an error at its deadline rather than hang.
func TestCloseWaitsWithinItsContext(t *testing.T) {
	o := newOperations(10, time.Hour, slog.New(slog.DiscardHandler))
	release := make(chan struct{})
	if _, err := o.start("k", "", time.Minute, func(context.Context, func(Progress, string)) (any, error) {
		<-release
		return nil, nil
	}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer cancel()
	if err := o.close(ctx); err == nil {
		t.Fatal("close returned while an operation was still running")
	}
	close(release)
	if err := o.close(context.Background()); err != nil {
		t.Fatal(err)
	}
}
