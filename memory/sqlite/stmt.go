package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"sync"
)

// stmtCache keeps the prepared statements of one pool by SQL text, so that
// SQLite parses and plans each statement once per connection instead of on
// every call (about a fifth of the cost of a small write). The texts are a
// small fixed set: list queries vary only by which filters are set.
type stmtCache struct {
	pool *sql.DB
	mu   sync.Mutex
	m    map[string]*sql.Stmt
}

func newStmtCache(pool *sql.DB) *stmtCache {
	return &stmtCache{pool: pool, m: map[string]*sql.Stmt{}}
}

// get returns the statement for query, preparing it on first use. The lock
// is not held while preparing: preparing waits for a free connection, and
// a caller holding one must not wait for the lock.
func (c *stmtCache) get(ctx context.Context, query string) (*sql.Stmt, error) {
	c.mu.Lock()
	s := c.m[query]
	c.mu.Unlock()
	if s != nil {
		return s, nil
	}
	s, err := c.pool.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if old := c.m[query]; old != nil {
		s.Close()
		return old, nil
	}
	c.m[query] = s
	return s, nil
}

// close closes every statement.
func (c *stmtCache) close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	var errs []error
	for q, s := range c.m {
		errs = append(errs, s.Close())
		delete(c.m, q)
	}
	return errors.Join(errs...)
}

// txStmt returns the cached writer statement for query bound to tx. Write
// statements are prepared at Open (see writeStatements): preparing inside
// a transaction would wait for the writer's only connection, which the
// transaction holds.
func (db *DB) txStmt(ctx context.Context, tx *sql.Tx, query string) *sql.Stmt {
	db.writes.mu.Lock()
	s := db.writes.m[query]
	db.writes.mu.Unlock()
	if s == nil {
		panic("sqlite: write statement not prepared at Open: " + query)
	}
	return tx.StmtContext(ctx, s)
}

// query runs a cached read statement on the reader pool.
func (db *DB) query(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	s, err := db.reads.get(ctx, query)
	if err != nil {
		return nil, err
	}
	return s.QueryContext(ctx, args...)
}

// queryRow runs a cached read statement on the reader pool for one row.
func (db *DB) queryRow(ctx context.Context, query string, args ...any) (scanner, error) {
	s, err := db.reads.get(ctx, query)
	if err != nil {
		return nil, err
	}
	return s.QueryRowContext(ctx, args...), nil
}
