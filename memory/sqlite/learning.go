package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/internal/validate"
)

const learningColumns = "l.id, l.task_id, l.plan_id, l.query, l.goal, l.steps, l.tools, l.upstreams, l.outcome, l.duration_ns, l.errors, l.retries, l.principal, l.created_at"

const (
	insertLearningSQL = `INSERT INTO learnings
		(id, task_id, plan_id, query, goal, steps, tools, upstreams, outcome, duration_ns, errors, retries, principal, created_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING pk`
	insertLearningToolSQL = `INSERT INTO learning_tools (tool, created_at, learning_id, learning_pk)
		VALUES (?, ?, ?, ?)`
	insertLearningUpstreamSQL = `INSERT INTO learning_upstreams (upstream, created_at, learning_id, learning_pk)
		VALUES (?, ?, ?, ?)`
)

const findLearningByIDSQL = "SELECT " + learningColumns + " FROM learnings l WHERE l.id = ?"

// CreateLearning implements [agentsmcp.LearningService]. On success l holds
// the stored ID, Principal and CreatedAt (UTC, at millisecond precision); the learning
// is committed to the WAL, which survives a crash of the process.
func (db *DB) CreateLearning(ctx context.Context, l *agentsmcp.Learning) error {
	if err := validate.Learning(l); err != nil {
		return err
	}
	id, created := l.ID, l.CreatedAt
	if id == "" {
		id = agentsmcp.NewID(agentsmcp.LearningIDPrefix)
	}
	if created.IsZero() {
		created = now()
	}
	createdMS := toMillis(created)
	principal := agentsmcp.MemoryOwner(l.Principal)
	err := db.write(ctx, func(tx *sql.Tx) error {
		var pk int64
		err := db.txStmt(ctx, tx, insertLearningSQL).QueryRowContext(ctx,
			id, l.TaskID, l.PlanID, l.Query, l.Goal, encodeList(l.Steps), encodeList(l.Tools), encodeList(l.Sources),
			string(l.Outcome), int64(l.Duration), encodeList(l.Errors), l.Retries, principal, createdMS,
		).Scan(&pk)
		if isUnique(err) {
			return agentsmcp.Errorf(agentsmcp.ECONFLICT, "learning %q already exists", id)
		} else if err != nil {
			return fmt.Errorf("insert learning: %w", err)
		}
		for _, tool := range distinct(l.Tools) {
			if _, err := db.txStmt(ctx, tx, insertLearningToolSQL).ExecContext(ctx, tool, createdMS, id, pk); err != nil {
				return fmt.Errorf("insert learning tool: %w", err)
			}
		}
		for _, up := range distinct(l.Sources) {
			if _, err := db.txStmt(ctx, tx, insertLearningUpstreamSQL).ExecContext(ctx, up, createdMS, id, pk); err != nil {
				return fmt.Errorf("insert learning upstream: %w", err)
			}
		}
		return db.enqueue(ctx, tx, agentsmcp.NamespaceLearnings, agentsmcp.OutboxUpsert, id)
	})
	if err != nil {
		return err
	}
	l.ID, l.Principal, l.CreatedAt = id, principal, fromMillis(createdMS)
	return nil
}

// FindLearningByID implements [agentsmcp.LearningService].
func (db *DB) FindLearningByID(ctx context.Context, id string) (*agentsmcp.Learning, error) {
	row, err := db.queryRow(ctx, findLearningByIDSQL, id)
	if err != nil {
		return nil, fmt.Errorf("find learning %q: %w", id, err)
	}
	l, err := scanLearning(row)
	if err != nil {
		return nil, notFound(err, "learning", id)
	}
	return l, nil
}

// learningsMarkSQL reads the last row id of the learnings: rows are only
// ever added, so it changes whenever one is.
const learningsMarkSQL = "SELECT coalesce(max(pk), 0) FROM learnings"

// LearningsMark implements recall.LearningsMarker: the row id of the last
// learning stored, 0 with none.
func (db *DB) LearningsMark(ctx context.Context) (int64, error) {
	row, err := db.queryRow(ctx, learningsMarkSQL)
	if err != nil {
		return 0, err
	}
	var mark int64
	if err := row.Scan(&mark); err != nil {
		return 0, fmt.Errorf("learnings mark: %w", err)
	}
	return mark, nil
}

// learningsAfterSQL reads the learnings stored after a row id, in the
// order stored.
const learningsAfterSQL = "SELECT l.pk, " + learningColumns + " FROM learnings l WHERE l.pk > ? ORDER BY l.pk LIMIT ?"

// LearningsAfter implements recall.LearningsMarker: up to limit learnings
// stored after mark, in the order stored, and the mark of the last one read
// (mark itself when there is none).
func (db *DB) LearningsAfter(ctx context.Context, mark int64, limit int) ([]*agentsmcp.Learning, int64, error) {
	rows, err := db.query(ctx, learningsAfterSQL, mark, limit)
	if err != nil {
		return nil, mark, fmt.Errorf("learnings after %d: %w", mark, err)
	}
	defer rows.Close()
	var out []*agentsmcp.Learning
	for rows.Next() {
		l, err := scanLearning(pkScanner{row: rows, pk: &mark})
		if err != nil {
			return nil, mark, fmt.Errorf("learnings after %d: %w", mark, err)
		}
		out = append(out, l)
	}
	if err := rows.Err(); err != nil {
		return nil, mark, fmt.Errorf("learnings after %d: %w", mark, err)
	}
	return out, mark, nil
}

// pkScanner scans a row's leading pk into pk, the rest as row would.
type pkScanner struct {
	row scanner
	pk  *int64
}

func (s pkScanner) Scan(dst ...any) error { return s.row.Scan(append([]any{s.pk}, dst...)...) }

// FindLearnings implements [agentsmcp.LearningService]. A Tool filter reads
// the side table learning_tools in sort order (else an Upstream filter,
// learning_upstreams); otherwise the learnings table is read through its
// (outcome,) or (principal,) created_at, id index. Since and Until bound the sort key of
// whichever table leads.
func (db *DB) FindLearnings(ctx context.Context, f agentsmcp.LearningFilter) ([]*agentsmcp.Learning, string, error) {
	q, ok, err := learningQuery(f)
	if err != nil || !ok {
		return []*agentsmcp.Learning{}, "", err
	}
	return findPage(ctx, db, q, f.Limit, "learnings", scanLearning, learningCursor,
		func(x *agentsmcp.Learning) cursor { return cursor{n: toMillis(x.CreatedAt), id: x.ID} })
}

// learningQuery builds the page query of f; ok is false when f can match
// nothing.
func learningQuery(f agentsmcp.LearningFilter) (q *listQuery, ok bool, err error) {
	q = &listQuery{columns: learningColumns, from: "learnings l", keyN: "l.created_at", keyID: "l.id"}
	switch {
	case f.Tool != "":
		q.from = "learning_tools d CROSS JOIN learnings l ON l.pk = d.learning_pk"
		q.keyN, q.keyID = "d.created_at", "d.learning_id"
		q.and("d.tool = ?", f.Tool)
		if f.Source != "" {
			q.and(`EXISTS (SELECT 1 FROM learning_upstreams u
				WHERE u.upstream = ? AND u.created_at = d.created_at AND u.learning_id = d.learning_id)`, f.Source)
		}
	case f.Source != "":
		q.from = "learning_upstreams d CROSS JOIN learnings l ON l.pk = d.learning_pk"
		q.keyN, q.keyID = "d.created_at", "d.learning_id"
		q.and("d.upstream = ?", f.Source)
	}
	if f.Outcome != "" {
		q.and("l.outcome = ?", string(f.Outcome))
	}
	if f.Principal != "" {
		q.and("l.principal = ?", f.Principal)
	}
	if !f.Since.IsZero() {
		q.and(q.keyN+" >= ?", ceilMillis(f.Since))
	}
	if !f.Until.IsZero() {
		q.and(q.keyN+" < ?", ceilMillis(f.Until))
	}
	if f.Text != "" {
		match, ok := ftsQuery(f.Text)
		if !ok {
			return nil, false, nil
		}
		q.and("l.pk IN (SELECT rowid FROM learnings_fts WHERE learnings_fts MATCH ?)", match)
	}
	if f.Cursor != "" {
		c, err := decodeCursor(learningCursor, f.Cursor)
		if err != nil {
			return nil, false, err
		}
		q.after(c)
	}
	return q, true, nil
}

// ceilMillis is the first stored millisecond not before t, so that Since
// (inclusive) and Until (exclusive) keep their meaning for a t between two
// milliseconds.
func ceilMillis(t time.Time) int64 {
	ms := t.UnixMilli()
	if t.After(time.UnixMilli(ms)) {
		ms++
	}
	return ms
}

func scanLearning(row scanner) (*agentsmcp.Learning, error) {
	var (
		l                               agentsmcp.Learning
		steps, tools, upstreams, errors string
		duration, created               int64
	)
	if err := row.Scan(&l.ID, &l.TaskID, &l.PlanID, &l.Query, &l.Goal, &steps, &tools, &upstreams, &l.Outcome,
		&duration, &errors, &l.Retries, &l.Principal, &created); err != nil {
		return nil, err
	}
	for _, p := range []struct {
		dst *[]string
		src string
	}{{&l.Steps, steps}, {&l.Tools, tools}, {&l.Sources, upstreams}, {&l.Errors, errors}} {
		list, err := decodeList(p.src)
		if err != nil {
			return nil, err
		}
		*p.dst = list
	}
	l.Duration = time.Duration(duration)
	l.CreatedAt = fromMillis(created)
	return &l, nil
}
