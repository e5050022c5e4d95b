package sqlite

import (
	"context"
	"fmt"

	agentsmcp "github.com/agents-mcp/agents-mcp"
)

// countTasksByStatusSQL reads only the index (status, created_at, id): a
// scan of the index, not of the task rows with their steps and history.
const countTasksByStatusSQL = "SELECT status, count(*) FROM tasks INDEXED BY tasks_status_created GROUP BY status"

// CountTasksByStatus counts the stored tasks by status, in one query. Every
// status of [agentsmcp.TaskStatuses] is in the map, with 0 when no task has
// it, so that a gauge fed from it drops to zero rather than keep its last
// value. It is meant for metrics: one scan of an index per call, so callers
// should cache it rather than call it per request.
func (db *DB) CountTasksByStatus(ctx context.Context) (map[agentsmcp.TaskStatus]int64, error) {
	rows, err := db.query(ctx, countTasksByStatusSQL)
	if err != nil {
		return nil, fmt.Errorf("count tasks by status: %w", err)
	}
	defer rows.Close()
	counts := make(map[agentsmcp.TaskStatus]int64, len(agentsmcp.TaskStatuses))
	for _, s := range agentsmcp.TaskStatuses {
		counts[s] = 0
	}
	for rows.Next() {
		var status string
		var n int64
		if err := rows.Scan(&status, &n); err != nil {
			return nil, fmt.Errorf("count tasks by status: %w", err)
		}
		counts[agentsmcp.TaskStatus(status)] = n
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("count tasks by status: %w", err)
	}
	return counts, nil
}
