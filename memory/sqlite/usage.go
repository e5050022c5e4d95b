package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"github.com/agents-mcp/agents-mcp/internal/storedform"
)

const (
	// insightUsageSQL reads the index (principal, bytes) alone.
	insightUsageSQL = "SELECT count(*), coalesce(sum(bytes), 0) FROM insights INDEXED BY insights_principal_bytes WHERE principal = ?"
	// taskUsageSQL reads the principal's rows through
	// tasks_principal_created: the rows, not their steps and events.
	taskUsageSQL = "SELECT count(*), coalesce(sum(bytes), 0) FROM tasks INDEXED BY tasks_principal_created WHERE principal = ?"
	// deleteOldInsightsSQL returns the ids of one batch of the oldest
	// insights, read off insights_created, for the outbox. Their appliesTo
	// rows go by ON DELETE CASCADE, their words by the FTS trigger.
	deleteOldInsightsSQL = `DELETE FROM insights WHERE pk IN
		(SELECT pk FROM insights INDEXED BY insights_created WHERE created_at < ? ORDER BY created_at, id LIMIT ?)
		RETURNING id`
)

var _ agentsmcp.UsageService = (*DB)(nil)
var _ agentsmcp.InsightPruner = (*DB)(nil)

// InsightUsage implements [agentsmcp.UsageService] from the index
// (principal, bytes).
func (db *DB) InsightUsage(ctx context.Context, principal string) (agentsmcp.Usage, error) {
	return db.usage(ctx, insightUsageSQL, agentsmcp.MemoryOwner(principal), "insights")
}

// TaskUsage implements [agentsmcp.UsageService].
func (db *DB) TaskUsage(ctx context.Context, principal string) (agentsmcp.Usage, error) {
	return db.usage(ctx, taskUsageSQL, principal, "tasks")
}

func (db *DB) usage(ctx context.Context, query, principal, what string) (agentsmcp.Usage, error) {
	row, err := db.queryRow(ctx, query, principal)
	if err != nil {
		return agentsmcp.Usage{}, fmt.Errorf("usage of %s: %w", what, err)
	}
	var u agentsmcp.Usage
	if err := row.Scan(&u.Count, &u.Bytes); err != nil {
		return agentsmcp.Usage{}, fmt.Errorf("usage of %s: %w", what, err)
	}
	return u, nil
}

// DeleteInsightsCreatedBefore implements [agentsmcp.InsightPruner] in one
// transaction, which also queues the removal of their vectors.
func (db *DB) DeleteInsightsCreatedBefore(ctx context.Context, createdBefore time.Time, limit int) (int64, error) {
	var n int64
	err := db.write(ctx, func(tx *sql.Tx) error {
		rows, err := db.txStmt(ctx, tx, deleteOldInsightsSQL).QueryContext(ctx, ceilMillis(createdBefore), storedform.PageSize(limit))
		if err != nil {
			return fmt.Errorf("delete old insights: %w", err)
		}
		var ids []string
		for rows.Next() {
			var id string
			if err := rows.Scan(&id); err != nil {
				rows.Close()
				return fmt.Errorf("delete old insights: %w", err)
			}
			ids = append(ids, id)
		}
		if err := rows.Close(); err != nil {
			return fmt.Errorf("delete old insights: %w", err)
		}
		if err := rows.Err(); err != nil {
			return fmt.Errorf("delete old insights: %w", err)
		}
		n = int64(len(ids))
		if len(ids) == 0 {
			return nil
		}
		return db.enqueue(ctx, tx, agentsmcp.NamespaceInsights, agentsmcp.OutboxDelete, ids...)
	})
	if err != nil {
		return 0, err
	}
	return n, nil
}
