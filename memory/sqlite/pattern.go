package sqlite

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/binary"
	"fmt"
	"time"

	agentsmcp "github.com/agents-mcp/agents-mcp"
)

const patternColumns = "p.id, p.goal, p.steps, p.uses, p.successes, p.last_used"

// recordPatternUseSQL inserts a pattern's first use or adds to its
// counters, and returns the row as it is after either.
const recordPatternUseSQL = `INSERT INTO patterns AS p (id, goal, steps, uses, successes, last_used)
	VALUES (?, ?, ?, 1, ?, ?)
	ON CONFLICT (id) DO UPDATE SET
		uses = p.uses + 1,
		successes = p.successes + excluded.successes,
		last_used = max(p.last_used, excluded.last_used)
	RETURNING id, goal, steps, uses, successes, last_used`

const findPatternByIDSQL = "SELECT " + patternColumns + " FROM patterns p WHERE p.id = ?"

// RecordPatternUse implements [agentsmcp.PatternService] with one UPSERT
// on the pattern's id, which is derived from (goal, steps) (see patternID):
// the first use inserts, later ones add to the counters in SQL.
func (db *DB) RecordPatternUse(ctx context.Context, goal string, steps []string, success bool, at time.Time) (*agentsmcp.PlanPattern, error) {
	switch {
	case goal == "":
		return nil, agentsmcp.Errorf(agentsmcp.EINVALID, "pattern goal is required")
	case len(goal) > agentsmcp.MaxQueryTextBytes:
		return nil, agentsmcp.Errorf(agentsmcp.EINVALID, "pattern goal is %d bytes; the limit is %d", len(goal), agentsmcp.MaxQueryTextBytes)
	case len(steps) > agentsmcp.MaxListItems:
		return nil, agentsmcp.Errorf(agentsmcp.EINVALID, "pattern has %d steps; the limit is %d", len(steps), agentsmcp.MaxListItems)
	}
	if at.IsZero() {
		at = now()
	}
	var successes int64
	if success {
		successes = 1
	}
	var p *agentsmcp.PlanPattern
	err := db.write(ctx, func(tx *sql.Tx) (err error) {
		p, err = scanPattern(db.txStmt(ctx, tx, recordPatternUseSQL).QueryRowContext(ctx,
			patternID(goal, steps), goal, encodeList(steps), successes, toMillis(at)))
		if err != nil {
			return fmt.Errorf("record use of pattern %.40q: %w", goal, err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return p, nil
}

// patternID is the id of the (goal, steps) pattern: "pat_" and the first
// 128 bits of SHA-256 over the JSON array [goal, steps...], written like a
// ULID. JSON makes the key unambiguous (["a b"] and ["a", "b"] differ), and
// a derived id makes the id itself the unique key, so the same pattern gets
// the same id in every store and replica. A collision of 128-bit hashes is
// not a practical concern.
func patternID(goal string, steps []string) string {
	sum := sha256.Sum256([]byte(encodeList(append([]string{goal}, steps...))))
	hi, lo := binary.BigEndian.Uint64(sum[0:8]), binary.BigEndian.Uint64(sum[8:16])
	// Crockford base32 of the 128 bits in 26 digits, as a ULID is written.
	const alphabet = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
	var out [26]byte
	for i := len(out) - 1; i >= 0; i-- {
		out[i] = alphabet[lo&31]
		lo = lo>>5 | hi<<59
		hi >>= 5
	}
	return agentsmcp.PatternIDPrefix + "_" + string(out[:])
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
// (successes, id) backwards.
func (db *DB) FindPatterns(ctx context.Context, f agentsmcp.PatternFilter) ([]*agentsmcp.PlanPattern, string, error) {
	q, ok, err := patternQuery(f)
	if err != nil || !ok {
		return []*agentsmcp.PlanPattern{}, "", err
	}
	size := pageSize(f.Limit)
	query, args := q.sql(size + 1)
	rows, err := db.query(ctx, query, args...)
	if err != nil {
		return nil, "", fmt.Errorf("find patterns: %w", err)
	}
	defer rows.Close()
	items := []*agentsmcp.PlanPattern{}
	for rows.Next() {
		p, err := scanPattern(rows)
		if err != nil {
			return nil, "", fmt.Errorf("find patterns: %w", err)
		}
		items = append(items, p)
	}
	if err := rows.Err(); err != nil {
		return nil, "", fmt.Errorf("find patterns: %w", err)
	}
	var next string
	if len(items) > size {
		items = items[:size]
		last := items[size-1]
		next = encodeCursor(patternCursor, cursor{n: last.Successes, id: last.ID})
	}
	return items, next, nil
}

// patternQuery builds the page query of f; ok is false when f can match
// nothing.
func patternQuery(f agentsmcp.PatternFilter) (q *listQuery, ok bool, err error) {
	q = &listQuery{columns: patternColumns, from: "patterns p", keyN: "p.successes", keyID: "p.id"}
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
	if err := row.Scan(&p.ID, &p.Goal, &steps, &p.Uses, &p.Successes, &lastUsed); err != nil {
		return nil, err
	}
	list, err := decodeList(steps)
	if err != nil {
		return nil, err
	}
	p.Steps, p.LastUsed = list, fromMillis(lastUsed)
	return &p, nil
}
