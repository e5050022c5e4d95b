package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	agentsmcp "github.com/agents-mcp/agents-mcp"
)

// MaxErrorClassBytes bounds an error class: the error text of a tool call
// is cut to its first line, trimmed of space, and cut to this many bytes
// (on a character boundary) before it is counted.
const MaxErrorClassBytes = 200

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

// Counter UPSERTs of RecordToolCall.
const (
	recordCallSQL = `INSERT INTO tool_performance (tool, calls, errors, last_call_at)
		VALUES (?, 1, ?, ?)
		ON CONFLICT (tool) DO UPDATE SET
			calls = calls + 1,
			errors = errors + excluded.errors,
			last_call_at = max(last_call_at, excluded.last_call_at)`
	recordLatencySQL = `INSERT INTO tool_latency (tool, bucket, calls) VALUES (?, ?, 1)
		ON CONFLICT (tool, bucket) DO UPDATE SET calls = calls + 1`
	recordErrorSQL = `INSERT INTO tool_errors (tool, class, count, last_at) VALUES (?, ?, 1, ?)
		ON CONFLICT (tool, class) DO UPDATE SET
			count = count + 1,
			last_at = max(last_at, excluded.last_at)`
)

// Reads of readToolPerformance, each followed by an optional WHERE tool = ?.
const (
	selectToolPerformanceSQL = "SELECT tool, calls, errors, last_call_at FROM tool_performance"
	selectToolLatencySQL     = "SELECT tool, bucket, calls FROM tool_latency"
	selectToolErrorsSQL      = "SELECT tool, class, count FROM tool_errors"
)

// RecordToolCall implements [agentsmcp.ToolPerformanceService]. Every
// counter changes by an UPSERT that adds to the stored value inside one
// transaction on the writer, never by reading it into Go first.
func (db *DB) RecordToolCall(ctx context.Context, c agentsmcp.ToolCall) error {
	switch {
	case c.Tool == "":
		return agentsmcp.Errorf(agentsmcp.EINVALID, "tool call: tool is required")
	case c.Duration < 0:
		return agentsmcp.Errorf(agentsmcp.EINVALID, "tool call %q: duration %v is negative", c.Tool, c.Duration)
	}
	at := c.At
	if at.IsZero() {
		at = now()
	}
	atMS := toMillis(at)
	var failed int64
	if c.Error != "" {
		failed = 1
	}
	return db.write(ctx, func(tx *sql.Tx) error {
		if _, err := db.txStmt(ctx, tx, recordCallSQL).ExecContext(ctx, c.Tool, failed, atMS); err != nil {
			return fmt.Errorf("record call of %q: %w", c.Tool, err)
		}
		if _, err := db.txStmt(ctx, tx, recordLatencySQL).ExecContext(ctx, c.Tool, bucketOf(c.Duration)); err != nil {
			return fmt.Errorf("record latency of %q: %w", c.Tool, err)
		}
		if failed == 0 {
			return nil
		}
		if _, err := db.txStmt(ctx, tx, recordErrorSQL).ExecContext(ctx, c.Tool, errorClass(c.Error), atMS); err != nil {
			return fmt.Errorf("record error of %q: %w", c.Tool, err)
		}
		if _, err := db.txStmt(ctx, tx, trimErrorsSQL).ExecContext(ctx, c.Tool, keptErrorClasses); err != nil {
			return fmt.Errorf("trim errors of %q: %w", c.Tool, err)
		}
		return nil
	})
}

// bucketOf is the histogram bucket of d: the first bound d does not
// exceed, or the open last bucket.
func bucketOf(d time.Duration) int {
	for i, bound := range agentsmcp.LatencyBucketBounds {
		if d <= bound {
			return i
		}
	}
	return len(agentsmcp.LatencyBucketBounds)
}

// errorClass normalises an error text; see MaxErrorClassBytes.
func errorClass(text string) string {
	line, _, _ := strings.Cut(text, "\n")
	line = strings.TrimSpace(line)
	line = agentsmcp.TruncateUTF8(line, MaxErrorClassBytes)
	if line == "" {
		return "error"
	}
	return line
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
	perfs = []*agentsmcp.ToolPerformance{}
	err = eachRow(ctx, tx, selectToolPerformanceSQL+where+" ORDER BY calls DESC, tool", args,
		func(rows *sql.Rows) error {
			p := &agentsmcp.ToolPerformance{
				Buckets:      make([]int64, len(agentsmcp.LatencyBucketBounds)+1),
				CommonErrors: map[string]int64{},
			}
			var last int64
			if err := rows.Scan(&p.Tool, &p.Calls, &p.Errors, &last); err != nil {
				return err
			}
			p.LastCallAt = fromMillis(last)
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
			if p := byTool[t]; p != nil && len(p.CommonErrors) < agentsmcp.MaxCommonErrors {
				p.CommonErrors[class] = count
			}
			return nil
		})
	if err != nil {
		return nil, err
	}
	return perfs, nil
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
