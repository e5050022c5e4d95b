package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	agentsmcp "github.com/agents-mcp/agents-mcp"
)

const (
	addCallCountSQL = `INSERT INTO call_counters (key, count, expires_at) VALUES (?, ?, ?)
		ON CONFLICT (key) DO UPDATE SET count = count + excluded.count, expires_at = max(expires_at, excluded.expires_at)
		RETURNING count`
	// deleteExpiredCallCountersSQL drops a bounded batch of the counters
	// whose window is over, so that one add never pays for a long backlog.
	deleteExpiredCallCountersSQL = `DELETE FROM call_counters WHERE key IN
		(SELECT key FROM call_counters INDEXED BY call_counters_expires WHERE expires_at < ? LIMIT 64)`
)

// callCounterSweepEvery is how many adds pass between two deletions of
// expired counters.
const callCounterSweepEvery = 64

var _ agentsmcp.CallCounterService = (*DB)(nil)

// AddCallCount implements [agentsmcp.CallCounterService] in one statement
// on the writer, which serialises the adds of every process that opens the
// file; every callCounterSweepEvery-th add also deletes expired counters.
func (db *DB) AddCallCount(ctx context.Context, key string, expiresAt time.Time, n int64) (int64, error) {
	var count int64
	err := db.write(ctx, func(tx *sql.Tx) error {
		if db.callAdds.Add(1)%callCounterSweepEvery == 0 {
			if _, err := db.txStmt(ctx, tx, deleteExpiredCallCountersSQL).ExecContext(ctx, time.Now().UnixMilli()); err != nil {
				return fmt.Errorf("delete expired call counters: %w", err)
			}
		}
		if err := db.txStmt(ctx, tx, addCallCountSQL).QueryRowContext(ctx, key, n, ceilMillis(expiresAt)).Scan(&count); err != nil {
			return fmt.Errorf("add call count: %w", err)
		}
		return nil
	})
	return count, err
}
