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

const patternColumns = "p.id, p.principal, p.goal, p.steps, p.uses, p.successes, p.last_used"

// recordPatternUseSQL inserts a pattern's first use or adds to its
// counters, and returns the row as it is after either.
const recordPatternUseSQL = `INSERT INTO patterns AS p (id, principal, goal, steps, uses, successes, last_used)
	VALUES (?, ?, ?, ?, 1, ?, ?)
	ON CONFLICT (id) DO UPDATE SET
		uses = p.uses + 1,
		successes = p.successes + excluded.successes,
		last_used = max(p.last_used, excluded.last_used)
	RETURNING id, principal, goal, steps, uses, successes, last_used`

const findPatternByIDSQL = "SELECT " + patternColumns + " FROM patterns p WHERE p.id = ?"

// RecordPatternUse implements [agentsmcp.PatternService] with one UPSERT
// on the pattern's id, which is derived from (principal, goal, steps) (see
// [storedform.PatternID]):
// the first use inserts, later ones add to the counters in SQL.
func (db *DB) RecordPatternUse(ctx context.Context, principal, goal string, steps []string, success bool, at time.Time) (*agentsmcp.PlanPattern, error) {
	if err := validate.PatternUse(goal, steps); err != nil {
		return nil, err
	}
	if at.IsZero() {
		at = now()
	}
	var successes int64
	if success {
		successes = 1
	}
	principal = agentsmcp.MemoryOwner(principal)
	var p *agentsmcp.PlanPattern
	err := db.write(ctx, func(tx *sql.Tx) (err error) {
		p, err = scanPattern(db.txStmt(ctx, tx, recordPatternUseSQL).QueryRowContext(ctx,
			storedform.PatternID(principal, goal, steps), principal, goal, encodeList(steps), successes, toMillis(at)))
		if err != nil {
			return fmt.Errorf("record use of pattern %.40q: %w", goal, err)
		}
		if p.Uses > 1 {
			return nil // indexed at its first use; goal and steps never change
		}
		return db.enqueue(ctx, tx, agentsmcp.NamespacePatterns, agentsmcp.OutboxUpsert, p.ID)
	})
	if err != nil {
		return nil, err
	}
	return p, nil
}

// FindPatternByID implements [agentsmcp.PatternService].
func (db *DB) FindPatternByID(ctx context.Context, id string) (*agentsmcp.PlanPattern, error) {
	row, err := db.queryRow(ctx, findPatternByIDSQL, id)
	if err != nil {
		return nil, fmt.Errorf("find pattern %q: %w", id, err)
	}
	p, err := scanPattern(row)
	if err != nil {
		return nil, notFound(err, "pattern", id)
	}
	return p, nil
}

// FindPatterns implements [agentsmcp.PatternService], reading the index
// (successes, id), or (principal, successes, id), backwards.
func (db *DB) FindPatterns(ctx context.Context, f agentsmcp.PatternFilter) ([]*agentsmcp.PlanPattern, string, error) {
	q, ok, err := patternQuery(f)
	if err != nil || !ok {
		return []*agentsmcp.PlanPattern{}, "", err
	}
	return findPage(ctx, db, q, f.Limit, "patterns", scanPattern, patternCursor,
		func(x *agentsmcp.PlanPattern) cursor { return cursor{n: x.Successes, id: x.ID} })
}

// patternQuery builds the page query of f; ok is false when f can match
// nothing.
func patternQuery(f agentsmcp.PatternFilter) (q *listQuery, ok bool, err error) {
	q = &listQuery{columns: patternColumns, from: "patterns p", keyN: "p.successes", keyID: "p.id"}
	if f.Principal != "" {
		q.and("p.principal = ?", f.Principal)
	}
	if f.Text != "" {
		match, ok := ftsQuery(f.Text)
		if !ok {
			return nil, false, nil
		}
		q.and("p.pk IN (SELECT rowid FROM patterns_fts WHERE patterns_fts MATCH ?)", match)
	}
	if f.Cursor != "" {
		c, err := decodeCursor(patternCursor, f.Cursor)
		if err != nil {
			return nil, false, err
		}
		q.after(c)
	}
	return q, true, nil
}

func scanPattern(row scanner) (*agentsmcp.PlanPattern, error) {
	var (
		p        agentsmcp.PlanPattern
		steps    string
		lastUsed int64
	)
	if err := row.Scan(&p.ID, &p.Principal, &p.Goal, &steps, &p.Uses, &p.Successes, &lastUsed); err != nil {
		return nil, err
	}
	list, err := decodeList(steps)
	if err != nil {
		return nil, err
	}
	p.Steps, p.LastUsed = list, fromMillis(lastUsed)
	return &p, nil
}
