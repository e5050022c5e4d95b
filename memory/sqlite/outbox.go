package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/internal/storedform"
	"github.com/agents-mcp/agents-mcp/internal/validate"
)

const (
	enqueueOutboxSQL = `INSERT OR IGNORE INTO vector_outbox
		(key, namespace, doc_id, op, next_attempt_at, created_at) VALUES (?, ?, ?, ?, ?, ?)`
	// claimOutboxSQL leases the oldest due, unleased entries in one
	// statement on the single writer, so two claimers never share one.
	claimOutboxSQL = `UPDATE vector_outbox SET lease_owner = ?, lease_until = ?
		WHERE key IN (SELECT key FROM vector_outbox
			WHERE next_attempt_at <= ? AND lease_until <= ?
			ORDER BY next_attempt_at, key LIMIT ?)
		RETURNING namespace, doc_id, op, attempts, last_error, next_attempt_at, created_at`
	ackOutboxSQL   = "DELETE FROM vector_outbox WHERE key = ?"
	retryOutboxSQL = `UPDATE vector_outbox SET attempts = attempts + 1, last_error = ?,
		next_attempt_at = ?, lease_owner = '', lease_until = 0 WHERE key = ?`
)

const outboxBacklogSQL = "SELECT count(*), coalesce(min(created_at), 0) FROM vector_outbox"

// enqueue adds outbox entries inside the caller's transaction: the
// document and its pending index change commit together.
func (db *DB) enqueue(ctx context.Context, tx *sql.Tx, namespace string, op agentsmcp.OutboxOp, docIDs ...string) error {
	at := toMillis(now())
	for _, id := range docIDs {
		e := agentsmcp.OutboxEntry{Namespace: namespace, Op: op, DocID: id}
		if _, err := db.txStmt(ctx, tx, enqueueOutboxSQL).ExecContext(ctx, e.Key(), namespace, id, string(op), at, at); err != nil {
			return fmt.Errorf("enqueue %s: %w", e.Key(), err)
		}
	}
	return nil
}

// EnqueueOutbox implements [agentsmcp.OutboxService].
func (db *DB) EnqueueOutbox(ctx context.Context, namespace string, op agentsmcp.OutboxOp, docIDs ...string) error {
	if err := validate.OutboxRequest(namespace, op, docIDs); err != nil {
		return err
	}
	return db.write(ctx, func(tx *sql.Tx) error {
		return db.enqueue(ctx, tx, namespace, op, docIDs...)
	})
}

// ClaimOutbox implements [agentsmcp.OutboxService].
func (db *DB) ClaimOutbox(ctx context.Context, owner string, limit int, ttl time.Duration) ([]*agentsmcp.OutboxEntry, error) {
	if owner == "" || limit <= 0 || ttl <= 0 {
		return nil, agentsmcp.Errorf(agentsmcp.EINVALID, "claim needs an owner, a positive limit and a positive ttl")
	}
	t := now()
	nowMS := toMillis(t)
	var entries []*agentsmcp.OutboxEntry
	err := db.write(ctx, func(tx *sql.Tx) error {
		entries = entries[:0]
		rows, err := db.txStmt(ctx, tx, claimOutboxSQL).QueryContext(ctx, owner, toMillis(t.Add(ttl)), nowMS, nowMS, limit)
		if err != nil {
			return fmt.Errorf("claim outbox: %w", err)
		}
		defer rows.Close()
		for rows.Next() {
			var e agentsmcp.OutboxEntry
			var op string
			var next, created int64
			if err := rows.Scan(&e.Namespace, &e.DocID, &op, &e.Attempts, &e.LastError, &next, &created); err != nil {
				return fmt.Errorf("claim outbox: %w", err)
			}
			e.Op, e.NextAttemptAt, e.CreatedAt = agentsmcp.OutboxOp(op), fromMillis(next), fromMillis(created)
			entries = append(entries, &e)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, err
	}
	return entries, nil
}

// AckOutbox implements [agentsmcp.OutboxService].
func (db *DB) AckOutbox(ctx context.Context, keys ...string) error {
	if len(keys) == 0 {
		return nil
	}
	return db.write(ctx, func(tx *sql.Tx) error {
		for _, k := range keys {
			if _, err := db.txStmt(ctx, tx, ackOutboxSQL).ExecContext(ctx, k); err != nil {
				return fmt.Errorf("ack outbox %s: %w", k, err)
			}
		}
		return nil
	})
}

// RetryOutbox implements [agentsmcp.OutboxService].
func (db *DB) RetryOutbox(ctx context.Context, key, lastError string, next time.Time) error {
	return db.write(ctx, func(tx *sql.Tx) error {
		res, err := db.txStmt(ctx, tx, retryOutboxSQL).ExecContext(ctx, storedform.OutboxError(lastError), toMillis(next), key)
		if err != nil {
			return fmt.Errorf("retry outbox %s: %w", key, err)
		}
		if n, err := res.RowsAffected(); err != nil {
			return fmt.Errorf("retry outbox %s: %w", key, err)
		} else if n == 0 {
			return agentsmcp.Errorf(agentsmcp.ENOTFOUND, "outbox entry %q not found", key)
		}
		return nil
	})
}

// OutboxBacklog implements [agentsmcp.OutboxService].
func (db *DB) OutboxBacklog(ctx context.Context) (int64, time.Time, error) {
	row, err := db.queryRow(ctx, outboxBacklogSQL)
	if err != nil {
		return 0, time.Time{}, fmt.Errorf("outbox backlog: %w", err)
	}
	var n, oldest int64
	if err := row.Scan(&n, &oldest); err != nil {
		return 0, time.Time{}, fmt.Errorf("outbox backlog: %w", err)
	}
	if n == 0 {
		return 0, time.Time{}, nil
	}
	return n, fromMillis(oldest), nil
}

// documentIDsSQL reads a namespace's ids off the table's UNIQUE id index.
var documentIDsSQL = map[string]string{
	agentsmcp.NamespaceLearnings: "SELECT id FROM learnings WHERE id > ? ORDER BY id LIMIT ?",
	agentsmcp.NamespaceInsights:  "SELECT id FROM insights WHERE id > ? ORDER BY id LIMIT ?",
	agentsmcp.NamespacePatterns:  "SELECT id FROM patterns WHERE id > ? ORDER BY id LIMIT ?",
}

// ListDocumentIDs implements [agentsmcp.OutboxService].
func (db *DB) ListDocumentIDs(ctx context.Context, namespace, after string, limit int) ([]string, error) {
	q, ok := documentIDsSQL[namespace]
	if !ok {
		return nil, agentsmcp.Errorf(agentsmcp.EINVALID, "no documents are indexed in namespace %q", namespace)
	}
	rows, err := db.query(ctx, q, after, max(limit, 1))
	if err != nil {
		return nil, fmt.Errorf("list %s ids: %w", namespace, err)
	}
	defer rows.Close()
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, fmt.Errorf("list %s ids: %w", namespace, err)
		}
		ids = append(ids, id)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list %s ids: %w", namespace, err)
	}
	return ids, nil
}
