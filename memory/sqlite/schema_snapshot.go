package sqlite

import (
	"context"
	"database/sql"
	_ "embed"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// A new database gets its schema from schemaSnapshot in one transaction
// instead of from the migrations one by one. The result is the same
// (TestSchemaSnapshotMatchesMigrations compares every schema object and
// the recorded versions) but the migrations rebuild and re-parse the schema
// at each step: creating a store took some 20 times longer that way, which
// every first start and every test that opens a fresh store paid, tenfold
// under the race detector. A database that already holds a schema, even a
// partial one, always takes the migrations.
//
// schema.sql is generated, never edited by hand: after adding a migration,
// run
//
//	go test ./memory/sqlite -run '^TestSchemaSnapshotMatchesMigrations$' -update-schema
//
// Its first line names the version it holds; a snapshot that lags the
// migrations is not used (and the test fails).
//
//go:embed schema.sql
var schemaSnapshot string

// schemaSnapshotHeader is the first line of schema.sql.
const schemaSnapshotHeader = "-- agents-mcp sqlite schema version "

// snapshotVersion is the schema version schema.sql holds, 0 when its
// header is missing.
func snapshotVersion() int {
	line, _, _ := strings.Cut(schemaSnapshot, "\n")
	v, err := strconv.Atoi(strings.TrimPrefix(line, schemaSnapshotHeader))
	if err != nil || !strings.HasPrefix(line, schemaSnapshotHeader) {
		return 0
	}
	return v
}

// createFromSnapshot gives a database that holds nothing but an empty
// schema_migrations the whole schema of SchemaVersion and records every
// migration as applied, in one transaction. It reports false, doing
// nothing, for any other database, and when the snapshot does not hold
// SchemaVersion.
func createFromSnapshot(ctx context.Context, w *sql.DB) (bool, error) {
	if snapshotVersion() != SchemaVersion {
		return false, nil
	}
	tx, err := w.BeginTx(ctx, nil) // BEGIN IMMEDIATE: see Open
	if err != nil {
		return false, fmt.Errorf("create schema: begin: %w", err)
	}
	defer func() { _ = tx.Rollback() }()
	var objects int
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master WHERE name <> 'schema_migrations'`).Scan(&objects); err != nil {
		return false, fmt.Errorf("create schema: %w", err)
	}
	var versions int
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM schema_migrations`).Scan(&versions); err != nil {
		return false, fmt.Errorf("create schema: %w", err)
	}
	if objects > 0 || versions > 0 {
		return false, nil
	}
	if _, err := tx.ExecContext(ctx, schemaSnapshot); err != nil {
		return false, fmt.Errorf("create schema from schema.sql: %w", err)
	}
	now := time.Now().UnixMilli()
	for _, m := range migrations {
		if _, err := tx.ExecContext(ctx, "INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)",
			m.version, m.name, now); err != nil {
			return false, fmt.Errorf("create schema: record %s: %w", m.name, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return false, fmt.Errorf("create schema: commit: %w", err)
	}
	return true, nil
}
