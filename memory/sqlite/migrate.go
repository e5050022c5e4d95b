package sqlite

import (
	"context"
	"database/sql"
	"embed"
	"fmt"
	"io/fs"
	"path"
	"strconv"
	"strings"
	"time"
)

// Migrations are the files migrations/NNNN_name.sql, applied in order of
// NNNN, which must run 1, 2, 3… without gaps. A migration is never edited
// once released: a change of schema is a new file. Each runs in its own
// transaction together with its row in schema_migrations, so a crash leaves
// the schema at a whole version.
//
//go:embed migrations/*.sql
var migrationFiles embed.FS

// migration is one forward step of the schema.
type migration struct {
	version int
	name    string
	sql     string
}

// migrations lists the embedded migrations in order; it panics on a
// misnamed or missing file, which the tests catch before any release.
var migrations = func() []migration {
	names, err := fs.Glob(migrationFiles, "migrations/*.sql")
	if err != nil {
		panic(err)
	}
	var ms []migration
	for i, name := range names { // fs.Glob sorts
		base := path.Base(name)
		num, _, _ := strings.Cut(base, "_")
		v, err := strconv.Atoi(num)
		if err != nil || v != i+1 {
			panic(fmt.Sprintf("sqlite: migration %s: want version %d", name, i+1))
		}
		b, err := migrationFiles.ReadFile(name)
		if err != nil {
			panic(err)
		}
		ms = append(ms, migration{version: v, name: base, sql: string(b)})
	}
	return ms
}()

// SchemaVersion is the schema version this binary writes: the number of
// its migrations.
var SchemaVersion = len(migrations)

// createSchemaMigrationsSQL creates the table of the applied migrations.
const createSchemaMigrationsSQL = `CREATE TABLE IF NOT EXISTS schema_migrations (
		version    INTEGER PRIMARY KEY,
		name       TEXT    NOT NULL,
		applied_at INTEGER NOT NULL
	)`

// migrate brings the schema of the database behind w up to SchemaVersion.
// It refuses a database whose version is higher: an older binary must not
// write to a schema it does not know.
func migrate(ctx context.Context, w *sql.DB) error {
	if upToDate(ctx, w) {
		return nil
	}
	if _, err := w.ExecContext(ctx, createSchemaMigrationsSQL); err != nil {
		return fmt.Errorf("create schema_migrations: %w", err)
	}
	created, err := createFromSnapshot(ctx, w)
	if err != nil || created {
		return err
	}
	for _, m := range migrations {
		if err := apply(ctx, w, m); err != nil {
			return err
		}
	}
	return nil
}

// upToDate reports whether the database already records every migration
// of this binary: one read, where taking the write lock once per migration
// to find each applied was most of what opening a store cost. Any doubt (no
// schema_migrations table yet, a read error, another version) says false,
// and migrate goes the careful way.
func upToDate(ctx context.Context, w *sql.DB) bool {
	var current int
	err := w.QueryRowContext(ctx, "SELECT coalesce(max(version), 0) FROM schema_migrations").Scan(&current)
	return err == nil && current == SchemaVersion
}

// apply runs m unless the database already has it. The version is read
// inside the write transaction, so two processes opening the same new file
// do not both apply m.
func apply(ctx context.Context, w *sql.DB, m migration) (err error) {
	tx, err := w.BeginTx(ctx, nil) // BEGIN IMMEDIATE: see Open
	if err != nil {
		return fmt.Errorf("migration %s: begin: %w", m.name, err)
	}
	defer func() {
		if err != nil {
			_ = tx.Rollback()
		}
	}()
	var current int
	if err := tx.QueryRowContext(ctx, "SELECT coalesce(max(version), 0) FROM schema_migrations").Scan(&current); err != nil {
		return fmt.Errorf("read schema version: %w", err)
	}
	if current > SchemaVersion {
		return fmt.Errorf("database schema version %d is newer than this binary knows (%d): upgrade agents-mcp or use another data directory", current, SchemaVersion)
	}
	if current >= m.version {
		return tx.Rollback()
	}
	if current != m.version-1 {
		return fmt.Errorf("migration %s: database is at version %d", m.name, current)
	}
	if _, err := tx.ExecContext(ctx, m.sql); err != nil {
		return fmt.Errorf("migration %s: %w", m.name, err)
	}
	if _, err := tx.ExecContext(ctx, "INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)",
		m.version, m.name, time.Now().UnixMilli()); err != nil {
		return fmt.Errorf("migration %s: record: %w", m.name, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("migration %s: commit: %w", m.name, err)
	}
	return nil
}
