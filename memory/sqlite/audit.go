package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/internal/validate"
)

var _ agentsmcp.AuditService = (*DB)(nil)

const auditColumns = "a.id, a.at, a.request_id, a.principal, a.kind, a.target, a.transport, a.arguments, a.outcome, a.error, a.latency_ns, a.client, a.client_profile"

const (
	// insertAuditSQL skips an entry already stored, by its key (at, id):
	// see CreateAuditEntries.
	insertAuditSQL = `INSERT INTO audit_entries
		(id, at, request_id, principal, kind, target, transport, arguments, outcome, error, latency_ns, client, client_profile)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`
	// deleteAuditSQL deletes one chunk of the entries older than a time,
	// oldest first, off the table's key (at, id).
	deleteAuditSQL = `DELETE FROM audit_entries WHERE (at, id) IN
		(SELECT at, id FROM audit_entries WHERE at < ? ORDER BY at, id LIMIT ?)`
)

// auditInsertRows is how many entries insertAuditRowsSQL inserts: one
// statement per chunk costs a fraction of one per entry in database/sql
// and the driver (about a third less per entry in BenchmarkAuditInsert).
const (
	auditInsertRows  = 32
	auditColumnCount = 13
)

// insertAuditRowsSQL is insertAuditSQL for auditInsertRows entries.
var insertAuditRowsSQL = strings.Replace(insertAuditSQL, "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
	strings.TrimSuffix(strings.Repeat("(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?), ", auditInsertRows), ", "), 1)

// auditDeleteChunk is how many entries one retention transaction deletes:
// small enough that the single writer is held for milliseconds, so other
// writes interleave with a large retention delete.
const auditDeleteChunk = 2000

// auditCursor is the cursor kind of FindAuditEntries (see cursor.go).
const auditCursor = "a"

// The audit statements join those prepared at Open (see writeStatements
// in sqlite.go), which every write statement must be.
func init() {
	writeStatements = append(writeStatements, insertAuditSQL, insertAuditRowsSQL, deleteAuditSQL, deleteOldestAuditSQL)
}

// CreateAuditEntries implements [agentsmcp.AuditService]: every entry is
// validated first, then all are inserted in one transaction, so a batch is
// stored whole or not at all. IDs and times are assigned into the entries
// before the write; an entry already stored is skipped. The table's key is
// (at, id), and a retry resends an entry with the at and id it was given,
// so a retried entry is found by it; two entries with one id and different
// times, which only a caller choosing ids could write, are both kept.
func (db *DB) CreateAuditEntries(ctx context.Context, entries []*agentsmcp.AuditEntry) error {
	if err := validate.AuditBatch(entries); err != nil {
		return err
	}
	if len(entries) == 0 {
		return nil
	}
	t := now()
	for _, e := range entries {
		if e.ID == "" {
			e.ID = agentsmcp.NewID(agentsmcp.AuditIDPrefix)
		}
		if e.At.IsZero() {
			e.At = t
		}
		e.At = fromMillis(toMillis(e.At))
	}
	return db.write(ctx, func(tx *sql.Tx) error {
		args := make([]any, 0, auditInsertRows*auditColumnCount)
		for len(entries) > 0 {
			// Full chunks go in one statement each, the rest one by one.
			query, n := insertAuditSQL, 1
			if len(entries) >= auditInsertRows {
				query, n = insertAuditRowsSQL, auditInsertRows
			}
			args = args[:0]
			for _, e := range entries[:n] {
				args = append(args, e.ID, toMillis(e.At), e.RequestID, e.Principal, string(e.Kind), e.Target,
					e.Transport, string(e.Arguments), string(e.Outcome), e.Error, int64(e.Latency), e.Client, e.ClientProfile)
			}
			if _, err := db.txStmt(ctx, tx, query).ExecContext(ctx, args...); err != nil {
				return fmt.Errorf("insert audit entries: %w", err)
			}
			entries = entries[n:]
		}
		return nil
	})
}

// FindAuditEntries implements [agentsmcp.AuditService]. The table is
// ordered by (at, id), and each filter has an index ending in (at, id) (for
// kind and outcome, of their uncommon values: see migration 0011), so
// SQLite reads a page off one of them newest first; Since and Until bound
// at.
func (db *DB) FindAuditEntries(ctx context.Context, f agentsmcp.AuditFilter) ([]*agentsmcp.AuditEntry, string, error) {
	q, err := auditQuery(f)
	if err != nil {
		return nil, "", err
	}
	return findPage(ctx, db, q, f.Limit, "audit entries", scanAuditEntry, auditCursor,
		func(x *agentsmcp.AuditEntry) cursor { return cursor{n: toMillis(x.At), id: x.ID} })
}

// DeleteAuditEntriesBefore implements [agentsmcp.AuditService]. It deletes
// in chunks of auditDeleteChunk entries, one transaction each, oldest first;
// when ctx ends part-way, what was deleted stays deleted and is counted.
func (db *DB) DeleteAuditEntriesBefore(ctx context.Context, t time.Time) (int64, error) {
	before := ceilMillis(t)
	var total int64
	for {
		var n int64
		err := db.write(ctx, func(tx *sql.Tx) error {
			res, err := db.txStmt(ctx, tx, deleteAuditSQL).ExecContext(ctx, before, auditDeleteChunk)
			if err != nil {
				return fmt.Errorf("delete audit entries: %w", err)
			}
			n, err = res.RowsAffected()
			return err
		})
		if err != nil {
			return total, err
		}
		total += n
		if n < auditDeleteChunk {
			return total, nil
		}
	}
}

// Statements of DeleteOldestAuditEntries. The count, on a reader, reads
// the smallest index that holds every entry (SQLite picks it); the delete
// takes one chunk of the oldest entries off the table's key.
const (
	countAuditSQL        = `SELECT count(*) FROM audit_entries`
	deleteOldestAuditSQL = `DELETE FROM audit_entries WHERE (at, id) IN
		(SELECT at, id FROM audit_entries ORDER BY at, id LIMIT ?)`
)

// DeleteOldestAuditEntries implements [agentsmcp.AuditService]: it counts
// the entries once, then deletes the surplus oldest first in chunks of
// auditDeleteChunk, one transaction each. Retention deleting meanwhile
// may leave fewer than keep.
func (db *DB) DeleteOldestAuditEntries(ctx context.Context, keep int64) (int64, error) {
	if keep < 0 {
		return 0, agentsmcp.Errorf(agentsmcp.EINVALID, "audit size bound %d is negative", keep)
	}
	var count int64
	row, err := db.queryRow(ctx, countAuditSQL)
	if err == nil {
		err = row.Scan(&count)
	}
	if err != nil {
		return 0, fmt.Errorf("count audit entries: %w", err)
	}
	var total int64
	for surplus := count - keep; surplus > 0; {
		var n int64
		err := db.write(ctx, func(tx *sql.Tx) error {
			res, err := db.txStmt(ctx, tx, deleteOldestAuditSQL).ExecContext(ctx, min(surplus, auditDeleteChunk))
			if err != nil {
				return fmt.Errorf("delete oldest audit entries: %w", err)
			}
			n, err = res.RowsAffected()
			return err
		})
		if err != nil {
			return total, err
		}
		total += n
		surplus -= n
		if n < auditDeleteChunk {
			return total, nil
		}
	}
	return total, nil
}

// auditQuery builds the page query of f.
func auditQuery(f agentsmcp.AuditFilter) (*listQuery, error) {
	if err := validate.AuditFilter(f); err != nil {
		return nil, err
	}
	q := &listQuery{columns: auditColumns, from: "audit_entries a", keyN: "a.at", keyID: "a.id"}
	for _, eq := range []struct{ column, value string }{
		{"a.principal", f.Principal}, {"a.kind", string(f.Kind)}, {"a.target", f.Target}, {"a.outcome", string(f.Outcome)},
	} {
		if eq.value != "" {
			q.and(eq.column+" = ?", eq.value)
		}
	}
	// The kind and outcome indexes hold only the uncommon values (see
	// migration 0011); the literal condition lets SQLite use them.
	if f.Kind != "" && f.Kind != agentsmcp.AuditToolCall {
		q.and("a.kind != 'tool_call'")
	}
	if f.Outcome != "" && f.Outcome != agentsmcp.AuditOK {
		q.and("a.outcome != 'ok'")
	}
	if f.RequestID != "" {
		// The literal condition lets SQLite use the partial index.
		q.and("a.request_id = ? AND a.request_id != ''", f.RequestID)
	}
	if !f.Since.IsZero() {
		q.and("a.at >= ?", ceilMillis(f.Since))
	}
	if !f.Until.IsZero() {
		q.and("a.at < ?", ceilMillis(f.Until))
	}
	if f.Cursor != "" {
		c, err := decodeCursor(auditCursor, f.Cursor)
		if err != nil {
			return nil, err
		}
		q.after(c)
	}
	return q, nil
}

func scanAuditEntry(row scanner) (*agentsmcp.AuditEntry, error) {
	var (
		e             agentsmcp.AuditEntry
		at, latency   int64
		kind, outcome string
		arguments     string
	)
	if err := row.Scan(&e.ID, &at, &e.RequestID, &e.Principal, &kind, &e.Target, &e.Transport,
		&arguments, &outcome, &e.Error, &latency, &e.Client, &e.ClientProfile); err != nil {
		return nil, err
	}
	e.At = fromMillis(at)
	e.Kind, e.Outcome = agentsmcp.AuditKind(kind), agentsmcp.AuditOutcome(outcome)
	if arguments != "" {
		e.Arguments = json.RawMessage(arguments)
	}
	e.Latency = time.Duration(latency)
	return &e, nil
}
