package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"slices"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/internal/storedform"
	"github.com/agents-mcp/agents-mcp/internal/validate"
)

const insightColumns = "i.id, i.text, i.type, i.applies_to, i.confidence, i.evidence, i.source, i.principal, i.created_at"

const (
	insertInsightSQL = `INSERT INTO insights
		(id, text, type, applies_to, confidence, evidence, source, principal, created_at, bytes)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING pk`
	insertInsightAppliesToSQL = `INSERT INTO insight_applies_to (value, created_at, insight_id, insight_pk)
		VALUES (?, ?, ?, ?)`
	deleteInsightSQL = "DELETE FROM insights WHERE id = ?"
)

const findInsightByIDSQL = "SELECT " + insightColumns + " FROM insights i WHERE i.id = ?"

// CreateInsight implements [agentsmcp.InsightService]. On success in holds
// the stored ID, Principal and CreatedAt (UTC, at millisecond precision).
func (db *DB) CreateInsight(ctx context.Context, in *agentsmcp.Insight) error {
	if err := validate.Insight(in); err != nil {
		return err
	}
	id, created := in.ID, in.CreatedAt
	if id == "" {
		id = agentsmcp.NewID(agentsmcp.InsightIDPrefix)
	}
	if created.IsZero() {
		created = now()
	}
	createdMS := toMillis(created)
	principal := agentsmcp.MemoryOwner(in.Principal)
	err := db.write(ctx, func(tx *sql.Tx) error {
		var pk int64
		err := db.txStmt(ctx, tx, insertInsightSQL).QueryRowContext(ctx,
			id, in.Text, string(in.Type), encodeList(in.AppliesTo), in.Confidence, encodeList(in.Evidence), in.Source, principal, createdMS,
			storedform.InsightBytes(in),
		).Scan(&pk)
		if isUnique(err) {
			return agentsmcp.Errorf(agentsmcp.ECONFLICT, "insight %q already exists", id)
		} else if err != nil {
			return fmt.Errorf("insert insight: %w", err)
		}
		for _, v := range distinct(in.AppliesTo) {
			if _, err := db.txStmt(ctx, tx, insertInsightAppliesToSQL).ExecContext(ctx, v, createdMS, id, pk); err != nil {
				return fmt.Errorf("insert insight appliesTo: %w", err)
			}
		}
		return db.enqueue(ctx, tx, agentsmcp.NamespaceInsights, agentsmcp.OutboxUpsert, id)
	})
	if err != nil {
		return err
	}
	in.ID, in.Principal, in.CreatedAt = id, principal, fromMillis(createdMS)
	return nil
}

// FindInsightByID implements [agentsmcp.InsightService].
func (db *DB) FindInsightByID(ctx context.Context, id string) (*agentsmcp.Insight, error) {
	row, err := db.queryRow(ctx, findInsightByIDSQL, id)
	if err != nil {
		return nil, fmt.Errorf("find insight %q: %w", id, err)
	}
	in, err := scanInsight(row)
	if err != nil {
		return nil, notFound(err, "insight", id)
	}
	return in, nil
}

// FindInsights implements [agentsmcp.InsightService]. A filter on AppliesTo
// reads the side table insight_applies_to in sort order; otherwise the
// insights table is read through its (type,) or (principal,) created_at, id
// index.
func (db *DB) FindInsights(ctx context.Context, f agentsmcp.InsightFilter) ([]*agentsmcp.Insight, string, error) {
	q, ok, err := insightQuery(f)
	if err != nil || !ok {
		return []*agentsmcp.Insight{}, "", err
	}
	return findPage(ctx, db, q, f.Limit, "insights", scanInsight, insightCursor,
		func(x *agentsmcp.Insight) cursor { return cursor{n: toMillis(x.CreatedAt), id: x.ID} })
}

// insightQuery builds the page query of f; ok is false when f can match
// nothing.
func insightQuery(f agentsmcp.InsightFilter) (q *listQuery, ok bool, err error) {
	q = &listQuery{columns: insightColumns, from: "insights i", keyN: "i.created_at", keyID: "i.id"}
	if f.AppliesTo != "" {
		// CROSS JOIN keeps the side table outer, so its primary key
		// (value, created_at, insight_id) yields the rows in order.
		q.from = "insight_applies_to a CROSS JOIN insights i ON i.pk = a.insight_pk"
		q.keyN, q.keyID = "a.created_at", "a.insight_id"
		q.and("a.value = ?", f.AppliesTo)
	}
	if f.Type != "" {
		q.and("i.type = ?", string(f.Type))
	}
	if f.Principal != "" {
		q.and("i.principal = ?", f.Principal)
	}
	if f.Text != "" {
		match, ok := ftsQuery(f.Text)
		if !ok {
			return nil, false, nil
		}
		q.and("i.pk IN (SELECT rowid FROM insights_fts WHERE insights_fts MATCH ?)", match)
	}
	if f.Cursor != "" {
		c, err := decodeCursor(insightCursor, f.Cursor)
		if err != nil {
			return nil, false, err
		}
		q.after(c)
	}
	return q, true, nil
}

// DeleteInsight implements [agentsmcp.InsightService]. Its appliesTo rows
// go by ON DELETE CASCADE, its words by the FTS trigger.
func (db *DB) DeleteInsight(ctx context.Context, id string) error {
	return db.write(ctx, func(tx *sql.Tx) error {
		res, err := db.txStmt(ctx, tx, deleteInsightSQL).ExecContext(ctx, id)
		if err != nil {
			return fmt.Errorf("delete insight %q: %w", id, err)
		}
		if n, err := res.RowsAffected(); err != nil {
			return fmt.Errorf("delete insight %q: %w", id, err)
		} else if n == 0 {
			return agentsmcp.Errorf(agentsmcp.ENOTFOUND, "insight %q not found", id)
		}
		return db.enqueue(ctx, tx, agentsmcp.NamespaceInsights, agentsmcp.OutboxDelete, id)
	})
}

type scanner interface{ Scan(dest ...any) error }

func scanInsight(row scanner) (*agentsmcp.Insight, error) {
	var (
		in                  agentsmcp.Insight
		appliesTo, evidence string
		created             int64
	)
	if err := row.Scan(&in.ID, &in.Text, &in.Type, &appliesTo, &in.Confidence, &evidence, &in.Source, &in.Principal, &created); err != nil {
		return nil, err
	}
	var err error
	if in.AppliesTo, err = decodeList(appliesTo); err != nil {
		return nil, err
	}
	if in.Evidence, err = decodeList(evidence); err != nil {
		return nil, err
	}
	in.CreatedAt = fromMillis(created)
	return &in, nil
}

// distinct returns list without repeats, in first-seen order: a side table
// holds a value once per item.
func distinct(list []string) []string {
	out := make([]string, 0, len(list))
	for _, v := range list {
		if !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	return out
}
