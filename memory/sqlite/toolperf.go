package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"time"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/internal/toolperf"
	"github.com/agents-mcp/agents-mcp/internal/validate"
)

// keptErrorClasses is how many error classes a tool keeps counting. It is
// larger than the agentsmcp.MaxCommonErrors reported so that a new error
// has room to climb: with exactly MaxCommonErrors slots, a class seen once
// would be trimmed at once whenever the others had been seen twice, and
// could never become common however often it came afterwards.
const keptErrorClasses = 4 * agentsmcp.MaxCommonErrors

// trimErrorsSQL deletes the error classes of tool ?1 beyond the ?2 most
// frequent; among equals the most recent stay, so that a new class
// survives long enough to be counted.
const trimErrorsSQL = `DELETE FROM tool_errors WHERE tool = ?1 AND class NOT IN (
	SELECT class FROM tool_errors WHERE tool = ?1
	ORDER BY count DESC, last_at DESC, class LIMIT ?2)`

// Counter UPSERTs of RecordToolCalls, one set per tool of a batch
// (toolperf.CallTotals). recordCallsSQL's parameters: the tool, the
// calls, the failures, the latest call (ms), 1 when the batch has a
// success (the failure streak restarts), the failures after the last
// success, the latest success and failure (ms, NULL for none), the class of
// the last failure (empty for none).
const (
	recordCallsSQL = `INSERT INTO tool_performance (tool, calls, errors, last_call_at, weight_epoch,
			consecutive_failures, last_success_at, last_failure_at, last_error_class)
		VALUES (?1, ?2, ?3, ?4, ?4, ?6, ?7, ?8, ?9)
		ON CONFLICT (tool) DO UPDATE SET
			calls = calls + excluded.calls,
			errors = errors + excluded.errors,
			last_call_at = max(last_call_at, excluded.last_call_at),
			weight_epoch = coalesce(weight_epoch, excluded.weight_epoch),
			consecutive_failures = CASE WHEN ?5 = 1 THEN ?6 ELSE consecutive_failures + ?6 END,
			last_success_at = CASE WHEN ?7 IS NULL THEN last_success_at ELSE max(coalesce(last_success_at, ?7), ?7) END,
			last_failure_at = CASE WHEN ?8 IS NULL THEN last_failure_at ELSE max(coalesce(last_failure_at, ?8), ?8) END,
			last_error_class = CASE WHEN excluded.errors > 0 THEN excluded.last_error_class ELSE last_error_class END`
	recordLatencySQL = `INSERT INTO tool_latency (tool, bucket, calls) VALUES (?1, ?2, ?3)
		ON CONFLICT (tool, bucket) DO UPDATE SET calls = calls + ?3`
	recordErrorSQL = `INSERT INTO tool_errors (tool, class, count, last_at) VALUES (?1, ?2, ?3, ?4)
		ON CONFLICT (tool, class) DO UPDATE SET
			count = count + ?3,
			last_at = max(last_at, excluded.last_at)`
	// The outcome weights: the epoch is read in the write transaction
	// (the single writer), then both weights are scaled by ?2 when the
	// epoch moves to ?5, and the batch's weights added.
	selectWeightEpochSQL = `SELECT weight_epoch FROM tool_performance WHERE tool = ?`
	recordWeightSQL      = `UPDATE tool_performance SET
			success_weight = success_weight * ?2 + ?3,
			failure_weight = failure_weight * ?2 + ?4,
			weight_epoch = ?5
		WHERE tool = ?1`
)

// maxWeightExponent bounds how many half-lives a call may lie after the
// weights' epoch before the epoch moves to it: weights stay below
// 2^maxWeightExponent per call, far from the limits of a float64.
const maxWeightExponent = 32

// outcomeWeights are the factor that scales the stored weights, the
// factor of the weights of outcomes as of atMS, and the epoch they are then
// all relative to, given the stored epoch.
func outcomeWeights(epochMS, atMS int64) (scale, weight float64, newEpochMS int64) {
	epoch, at := fromMillis(epochMS), fromMillis(atMS)
	if w := toolperf.OutcomeWeight(at, epoch); w <= math.Exp2(maxWeightExponent) {
		return 1, w, epochMS
	}
	return toolperf.OutcomeWeight(epoch, at), 1, atMS
}

// Reads of readToolPerformance, each followed by an optional WHERE tool = ?.
const (
	selectToolPerformanceSQL = `SELECT tool, calls, errors, last_call_at, success_weight, failure_weight, weight_epoch,
		consecutive_failures, last_success_at, last_failure_at, last_error_class FROM tool_performance`
	selectToolLatencySQL = "SELECT tool, bucket, calls FROM tool_latency"
	selectToolErrorsSQL  = "SELECT tool, class, count FROM tool_errors"
)

// RecordToolCall implements [agentsmcp.ToolPerformanceService]: a batch
// of one call.
func (db *DB) RecordToolCall(ctx context.Context, c agentsmcp.ToolCall) error {
	return db.RecordToolCalls(ctx, []agentsmcp.ToolCall{c})
}

// RecordToolCalls implements [agentsmcp.ToolPerformanceService] in one
// transaction, with one set of UPSERTs per tool of the batch. Every
// counter changes by an UPSERT that adds to the stored value on the
// writer, never by reading it into Go first; only the outcome weights'
// epoch is read, in that transaction, so no other write comes between the
// read and the update.
func (db *DB) RecordToolCalls(ctx context.Context, calls []agentsmcp.ToolCall) error {
	if err := validate.ToolCalls(calls); err != nil {
		return err
	}
	if len(calls) == 0 {
		return nil
	}
	totals := toolperf.SumCalls(calls, now())
	return db.write(ctx, func(tx *sql.Tx) error {
		for _, t := range totals {
			if err := db.recordTotals(ctx, tx, t); err != nil {
				return err
			}
		}
		return nil
	})
}

// recordTotals counts the calls of one tool of a batch in tx.
func (db *DB) recordTotals(ctx context.Context, tx *sql.Tx, t *toolperf.CallTotals) error {
	atMS := toMillis(t.LastCallAt)
	succeeded := 0
	if t.Succeeded {
		succeeded = 1
	}
	if _, err := db.txStmt(ctx, tx, recordCallsSQL).ExecContext(ctx, t.Tool, t.Calls, t.Errors, atMS, succeeded,
		t.TrailingFailures, optMillis(t.LastSuccessAt), optMillis(t.LastFailureAt), t.LastErrorClass); err != nil {
		return fmt.Errorf("record calls of %q: %w", t.Tool, err)
	}
	var epochMS int64
	if err := db.txStmt(ctx, tx, selectWeightEpochSQL).QueryRowContext(ctx, t.Tool).Scan(&epochMS); err != nil {
		return fmt.Errorf("record outcomes of %q: %w", t.Tool, err)
	}
	scale, weight, epochMS := outcomeWeights(epochMS, atMS)
	if _, err := db.txStmt(ctx, tx, recordWeightSQL).ExecContext(ctx, t.Tool, scale,
		t.Recent.Successes*weight, t.Recent.Failures*weight, epochMS); err != nil {
		return fmt.Errorf("record outcomes of %q: %w", t.Tool, err)
	}
	for bucket, n := range t.Buckets {
		if n == 0 {
			continue
		}
		if _, err := db.txStmt(ctx, tx, recordLatencySQL).ExecContext(ctx, t.Tool, bucket, n); err != nil {
			return fmt.Errorf("record latency of %q: %w", t.Tool, err)
		}
	}
	if len(t.ErrorClasses) == 0 {
		return nil
	}
	for _, e := range t.ErrorClasses {
		if _, err := db.txStmt(ctx, tx, recordErrorSQL).ExecContext(ctx, t.Tool, e.Class, e.Count, toMillis(e.LastAt)); err != nil {
			return fmt.Errorf("record error of %q: %w", t.Tool, err)
		}
	}
	if _, err := db.txStmt(ctx, tx, trimErrorsSQL).ExecContext(ctx, t.Tool, keptErrorClasses); err != nil {
		return fmt.Errorf("trim errors of %q: %w", t.Tool, err)
	}
	return nil
}

// optMillis is the ms of t, NULL for the zero time.
func optMillis(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return toMillis(t)
}

// FindToolPerformance implements [agentsmcp.ToolPerformanceService]. Its
// three reads share one snapshot.
func (db *DB) FindToolPerformance(ctx context.Context, tool string) (*agentsmcp.ToolPerformance, error) {
	if tool == "" {
		return nil, agentsmcp.Errorf(agentsmcp.ENOTFOUND, "tool %q has no recorded calls", tool)
	}
	perfs, err := db.readToolPerformance(ctx, tool)
	if err != nil {
		return nil, err
	}
	if len(perfs) == 0 {
		return nil, agentsmcp.Errorf(agentsmcp.ENOTFOUND, "tool %q has no recorded calls", tool)
	}
	return perfs[0], nil
}

// ListToolPerformance implements [agentsmcp.ToolPerformanceService].
func (db *DB) ListToolPerformance(ctx context.Context) ([]*agentsmcp.ToolPerformance, error) {
	return db.readToolPerformance(ctx, "")
}

// readToolPerformance reads the figures of tool, or of every tool when
// tool is empty, most called first, in one read transaction.
func (db *DB) readToolPerformance(ctx context.Context, tool string) (perfs []*agentsmcp.ToolPerformance, err error) {
	tx, err := db.reader.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, fmt.Errorf("read tool performance: %w", err)
	}
	defer func() { _ = tx.Rollback() }()
	where, args := "", []any{}
	if tool != "" {
		where, args = " WHERE tool = ?", []any{tool}
	}

	byTool := map[string]*agentsmcp.ToolPerformance{}
	counted := map[string][]toolperf.ErrorClassCount{}
	perfs = []*agentsmcp.ToolPerformance{}
	err = eachRow(ctx, tx, selectToolPerformanceSQL+where+" ORDER BY calls DESC, tool", args,
		func(rows *sql.Rows) error {
			p := &agentsmcp.ToolPerformance{
				Buckets:      make([]int64, len(agentsmcp.LatencyBucketBounds)+1),
				CommonErrors: map[string]int64{},
			}
			var (
				last                                int64
				epoch, lastSuccessAt, lastFailureAt sql.NullInt64
			)
			if err := rows.Scan(&p.Tool, &p.Calls, &p.Errors, &last, &p.Recent.Successes, &p.Recent.Failures, &epoch,
				&p.ConsecutiveFailures, &lastSuccessAt, &lastFailureAt, &p.LastErrorClass); err != nil {
				return err
			}
			p.LastCallAt = fromMillis(last)
			p.Recent.At = nullMillis(epoch)
			p.LastSuccessAt, p.LastFailureAt = nullMillis(lastSuccessAt), nullMillis(lastFailureAt)
			byTool[p.Tool] = p
			perfs = append(perfs, p)
			return nil
		})
	if err != nil || len(perfs) == 0 {
		return perfs, err
	}
	err = eachRow(ctx, tx, selectToolLatencySQL+where, args, func(rows *sql.Rows) error {
		var (
			t      string
			bucket int
			calls  int64
		)
		if err := rows.Scan(&t, &bucket, &calls); err != nil {
			return err
		}
		if p := byTool[t]; p != nil && bucket >= 0 && bucket < len(p.Buckets) {
			p.Buckets[bucket] = calls
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	err = eachRow(ctx, tx, selectToolErrorsSQL+where+" ORDER BY tool, count DESC, last_at DESC, class", args,
		func(rows *sql.Rows) error {
			var (
				t, class string
				count    int64
			)
			if err := rows.Scan(&t, &class, &count); err != nil {
				return err
			}
			if byTool[t] != nil {
				counted[t] = append(counted[t], toolperf.ErrorClassCount{Class: class, Count: count})
			}
			return nil
		})
	if err != nil {
		return nil, err
	}
	// Rows written before classes were normalised hold error texts: they
	// are served as classes.
	for _, p := range perfs {
		p.CommonErrors = toolperf.CommonErrors(counted[p.Tool])
		p.LastErrorClass = toolperf.LastErrorClass(p.LastErrorClass)
	}
	return perfs, nil
}

// nullMillis is the time of a stored ms, zero for NULL.
func nullMillis(ms sql.NullInt64) time.Time {
	if !ms.Valid {
		return time.Time{}
	}
	return fromMillis(ms.Int64)
}

// eachRow runs a query in tx and calls each for every row.
func eachRow(ctx context.Context, tx *sql.Tx, q string, args []any, each func(*sql.Rows) error) error {
	rows, err := tx.QueryContext(ctx, q, args...)
	if err != nil {
		return fmt.Errorf("read tool performance: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		if err := each(rows); err != nil {
			return fmt.Errorf("read tool performance: %w", err)
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("read tool performance: %w", err)
	}
	return nil
}
