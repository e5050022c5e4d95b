// Package sqlite is the embedded default memory store: one SQLite database
// file, through the pure-Go driver modernc.org/sqlite (no cgo).
//
// A [*DB] implements every memory service of the root package
// ([agentsmcp.InsightService], [agentsmcp.LearningService],
// [agentsmcp.ToolPerformanceService], [agentsmcp.PatternService]), the
// agents' services ([agentsmcp.ThoughtService], [agentsmcp.PlanService],
// [agentsmcp.TaskService]), and passes the shared
// behavioural suite, memory/storetest.
//
// # Connections
//
// A DB holds two pools on the same file: one writer connection, so that
// writes queue in Go rather than fight over SQLite's single write lock, and
// a pool of read-only connections, which WAL lets read a consistent snapshot
// while the writer commits. Every write is one transaction on the writer.
//
// # Choices a store may make
//
// Text filters match whole words (FTS5, tokenizer unicode61: runs of letters
// and digits, case and accents folded); a word does not match as a prefix.
// Error texts of tool calls are counted under their
// internal/toolperf.ErrorClass, and so are the texts of rows written before
// classes were normalised, when they are read. Each tool keeps counting its
// 20 most frequent error classes, of which the [agentsmcp.MaxCommonErrors]
// most frequent are reported.
package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync/atomic"
	"time"

	agentsmcp "github.com/agents-mcp/agents-mcp"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// DB is an open memory store. It is safe for concurrent use; Close it when
// done.
type DB struct {
	path   string
	writer *sql.DB // exactly one connection: SQLite allows one writer at a time
	reader *sql.DB // read-only connections
	writes *stmtCache
	reads  *stmtCache
	// callAdds counts AddCallCount calls, to sweep expired counters
	// every so often (call_counter.go).
	callAdds atomic.Uint64
}

// writeStatements are prepared on the writer at Open; see [DB.txStmt].
var writeStatements = []string{
	insertInsightSQL, insertInsightAppliesToSQL, deleteInsightSQL,
	insertLearningSQL, insertLearningToolSQL, insertLearningUpstreamSQL,
	recordCallsSQL, recordLatencySQL, recordErrorSQL, trimErrorsSQL, selectWeightEpochSQL, recordWeightSQL,
	recordPatternUseSQL,
	insertThoughtSQL, insertPlanSQL,
	insertTaskSQL, updateTaskSQL, updateTaskIndexedSQL, insertTaskEventsSQL, deleteTaskStepsFromSQL, deleteTaskEventsSQL, acquireTaskLeaseSQL, releaseTaskLeaseSQL, taskExistsSQL, deleteEndedTasksSQL,
	deleteOldInsightsSQL,
	enqueueOutboxSQL, claimOutboxSQL, ackOutboxSQL, retryOutboxSQL,
	addCallCountSQL, deleteExpiredCallCountersSQL,
}

// Interface checks: *DB is every memory service.
var (
	_ agentsmcp.InsightService         = (*DB)(nil)
	_ agentsmcp.LearningService        = (*DB)(nil)
	_ agentsmcp.ToolPerformanceService = (*DB)(nil)
	_ agentsmcp.PatternService         = (*DB)(nil)
	_ agentsmcp.ThoughtService         = (*DB)(nil)
	_ agentsmcp.PlanService            = (*DB)(nil)
	_ agentsmcp.TaskService            = (*DB)(nil)
	_ agentsmcp.OutboxService          = (*DB)(nil)
)

const (
	// readers is the number of read-only connections.
	readers = 4
	// busyTimeout is how long a statement waits for a lock held by another
	// process on the same file before it fails. Within one DB, writes queue
	// for the single writer connection instead.
	busyTimeout = 5 * time.Second
)

// Open opens the database file at path, creating it and its directory when
// missing, and brings its schema up to date (see migrate.go). A database
// written by a newer agents-mcp, whose schema this binary does not know, is
// refused with an error. The path must name a file: ":memory:" is refused,
// since the writer and the readers must share one database.
func Open(ctx context.Context, path string) (*DB, error) {
	if path == "" || path == ":memory:" {
		return nil, fmt.Errorf("open sqlite store: path %q does not name a file", path)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("open sqlite store %q: %w", path, err)
	}
	if err := os.MkdirAll(filepath.Dir(abs), 0o700); err != nil {
		return nil, fmt.Errorf("open sqlite store: %w", err)
	}
	db := &DB{path: abs}

	// Why synchronous=NORMAL is durable enough: in WAL mode a commit is
	// complete once its frames are written to the -wal file, which happens
	// before Commit returns. NORMAL only skips the fsync of each commit
	// (fsyncs happen at checkpoints), so the data sits in the OS page cache:
	// a crash of this process, even kill -9 right after a write returned,
	// loses nothing, and the next Open replays the WAL. Only an OS crash or
	// power loss can lose the last commits, never corrupting the file; that
	// is the trade SQLite recommends for WAL, and it makes a small write
	// cost microseconds instead of an fsync.
	db.writer, err = sql.Open("sqlite", dsn(abs, url.Values{
		"_txlock":       {"immediate"}, // take the write lock at BEGIN: no deadlock on upgrade
		"_journal_mode": {"WAL"},
		"_synchronous":  {"NORMAL"},
		"_foreign_keys": {"1"},
		"_busy_timeout": {strconv.FormatInt(busyTimeout.Milliseconds(), 10)},
	}))
	if err != nil {
		return nil, fmt.Errorf("open sqlite store %q: %w", abs, err)
	}
	db.writer.SetMaxOpenConns(1)
	db.writer.SetMaxIdleConns(1)
	db.writer.SetConnMaxLifetime(0)
	db.writer.SetConnMaxIdleTime(0)
	db.writes = newStmtCache(db.writer)
	if err := migrate(ctx, db.writer); err != nil {
		db.writer.Close()
		return nil, fmt.Errorf("open sqlite store %q: %w", abs, err)
	}
	for _, q := range slices.Concat(writeStatements, upsertTaskStepsSQL) {
		if _, err := db.writes.get(ctx, q); err != nil {
			db.Close()
			return nil, fmt.Errorf("open sqlite store %q: prepare %.60q: %w", abs, q, err)
		}
	}

	// Readers open after the writer has switched the file to WAL and
	// created its schema; mode=ro makes a stray write fail loudly.
	db.reader, err = sql.Open("sqlite", dsn(abs, url.Values{
		"mode":          {"ro"},
		"_foreign_keys": {"1"},
		"_busy_timeout": {strconv.FormatInt(busyTimeout.Milliseconds(), 10)},
	}))
	if err != nil {
		db.writer.Close()
		return nil, fmt.Errorf("open sqlite store %q: %w", abs, err)
	}
	db.reader.SetMaxOpenConns(readers)
	db.reader.SetMaxIdleConns(readers)
	db.reads = newStmtCache(db.reader)
	if err := db.Ping(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("open sqlite store %q: %w", abs, err)
	}
	return db, nil
}

// dsn returns a file: URI for path. The driver hands only file: URIs to
// SQLite with their query intact (mode=ro would be dropped from a plain
// path), and the path is escaped so that '?', '#' or '%' in a directory
// name stay part of it.
func dsn(abs string, q url.Values) string {
	return "file:" + (&url.URL{Path: filepath.ToSlash(abs)}).EscapedPath() + "?" + q.Encode()
}

// Path returns the absolute path of the database file.
func (db *DB) Path() string { return db.path }

// Ping checks that both the writer and a reader can run a statement: the
// readiness probe of the store.
func (db *DB) Ping(ctx context.Context) error {
	for _, p := range []*sql.DB{db.writer, db.reader} {
		var one int
		if err := p.QueryRowContext(ctx, "SELECT 1").Scan(&one); err != nil {
			return fmt.Errorf("ping sqlite store: %w", err)
		}
	}
	return nil
}

// Close closes the readers, then the writer; the last connection to close
// checkpoints the WAL into the main file. Close waits for statements in
// flight; the DB must not be used afterwards.
func (db *DB) Close() error {
	var errs []error
	if db.reads != nil {
		errs = append(errs, db.reads.close())
	}
	if db.reader != nil {
		errs = append(errs, db.reader.Close())
	}
	if db.writes != nil {
		errs = append(errs, db.writes.close())
	}
	if db.writer != nil {
		// Keep the planner's statistics fresh for the next Open; cheap
		// when nothing changed.
		_, _ = db.writer.Exec("PRAGMA optimize")
		errs = append(errs, db.writer.Close())
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("close sqlite store: %w", err)
	}
	return nil
}

// write runs fn in one transaction on the writer and commits it.
func (db *DB) write(ctx context.Context, fn func(tx *sql.Tx) error) error {
	tx, err := db.writer.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	if err := fn(tx); err != nil {
		_ = tx.Rollback()
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	return nil
}

// isUnique reports whether err is a UNIQUE or PRIMARY KEY violation.
func isUnique(err error) bool {
	var e *sqlite.Error
	if !errors.As(err, &e) {
		return false
	}
	return e.Code() == sqlite3.SQLITE_CONSTRAINT_UNIQUE || e.Code() == sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY
}

// notFound maps sql.ErrNoRows to ENOTFOUND and wraps other errors.
func notFound(err error, what, id string) error {
	if errors.Is(err, sql.ErrNoRows) {
		return agentsmcp.Errorf(agentsmcp.ENOTFOUND, "%s %q not found", what, id)
	}
	return fmt.Errorf("find %s %q: %w", what, id, err)
}

// toMillis is the stored form of t: unix milliseconds.
func toMillis(t time.Time) int64 { return t.UnixMilli() }

// fromMillis is the time of a stored ms, in UTC.
func fromMillis(ms int64) time.Time { return time.UnixMilli(ms).UTC() }

// now is the current time at the stored precision.
func now() time.Time { return time.Now().UTC().Truncate(time.Millisecond) }
