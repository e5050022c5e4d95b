package sqlite

import (
	"context"
	"database/sql"
	"flag"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

var updateSchema = flag.Bool("update-schema", false, "rewrite schema.sql from the migrations")

// openRaw opens a new database file with the writer's settings but no
// schema, so that a test can choose how the schema is made.
func openRaw(t *testing.T, name string) *sql.DB {
	t.Helper()
	w, err := sql.Open("sqlite", dsn(filepath.Join(t.TempDir(), name), nil))
	if err != nil {
		t.Fatal(err)
	}
	w.SetMaxOpenConns(1)
	t.Cleanup(func() { w.Close() })
	return w
}

// migrateStepwise applies every migration one by one, as a database
// created before the snapshot existed got its schema.
func migrateStepwise(t *testing.T, w *sql.DB) {
	t.Helper()
	ctx := context.Background()
	if _, err := w.ExecContext(ctx, createSchemaMigrationsSQL); err != nil {
		t.Fatal(err)
	}
	for _, m := range migrations {
		if err := apply(ctx, w, m); err != nil {
			t.Fatal(err)
		}
	}
}

// schemaSQL is what schema.sql holds for the schema behind w: the
// statements that create its objects (not schema_migrations, which
// migrate creates first, nor what SQLite makes by itself: its own tables,
// the shadow tables of full-text indexes, automatic indexes), tables
// first, then indexes, views and triggers, each kind in creation order.
func schemaSQL(t *testing.T, w *sql.DB) string {
	t.Helper()
	rows, err := w.Query(`SELECT sql FROM sqlite_master
		WHERE sql IS NOT NULL AND name NOT LIKE 'sqlite\_%' ESCAPE '\' AND name <> 'schema_migrations'
		AND name NOT IN (SELECT name FROM pragma_table_list WHERE type = 'shadow')
		ORDER BY CASE type WHEN 'table' THEN 0 WHEN 'index' THEN 1 WHEN 'view' THEN 2 ELSE 3 END, rowid`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var b strings.Builder
	fmt.Fprintf(&b, "%s%d\n", schemaSnapshotHeader, SchemaVersion)
	b.WriteString("-- Generated from migrations/ by TestSchemaSnapshotMatchesMigrations -update-schema: do not edit.\n")
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		b.WriteString(s + ";\n")
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// schemaState is everything about a database's schema that a store relies
// on: every object SQLite records (shadow tables included), the rows of
// every table, the recorded migrations and the user version.
func schemaState(t *testing.T, w *sql.DB) []string {
	t.Helper()
	var out []string
	rows, err := w.Query(`SELECT type, name, tbl_name, coalesce(sql, '') FROM sqlite_master`)
	if err != nil {
		t.Fatal(err)
	}
	var tables []string
	for rows.Next() {
		var typ, name, tbl, s string
		if err := rows.Scan(&typ, &name, &tbl, &s); err != nil {
			t.Fatal(err)
		}
		out = append(out, fmt.Sprintf("%s %s on %s: %s", typ, name, tbl, s))
		if typ == "table" && !strings.HasPrefix(s, "CREATE VIRTUAL") {
			tables = append(tables, name)
		}
	}
	rows.Close()
	for _, table := range tables {
		var n int
		if err := w.QueryRow(`SELECT count(*) FROM "` + table + `"`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		out = append(out, fmt.Sprintf("rows of %s: %d", table, n))
	}
	var uv int
	if err := w.QueryRow(`PRAGMA user_version`).Scan(&uv); err != nil {
		t.Fatal(err)
	}
	out = append(out, fmt.Sprintf("user_version %d", uv))
	mrows, err := w.Query(`SELECT version, name FROM schema_migrations ORDER BY version`)
	if err != nil {
		t.Fatal(err)
	}
	defer mrows.Close()
	for mrows.Next() {
		var v int
		var name string
		if err := mrows.Scan(&v, &name); err != nil {
			t.Fatal(err)
		}
		out = append(out, fmt.Sprintf("migration %d %s", v, name))
	}
	slices.Sort(out)
	return out
}

// TestSchemaSnapshotMatchesMigrations: a new database made from
// schema.sql is the database the migrations make step by step. When a
// migration is added, it fails until schema.sql is regenerated (the flag
// -update-schema does it).
func TestSchemaSnapshotMatchesMigrations(t *testing.T) {
	stepwise := openRaw(t, "stepwise.db")
	migrateStepwise(t, stepwise)
	if *updateSchema {
		if err := os.WriteFile("schema.sql", []byte(schemaSQL(t, stepwise)), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Log("schema.sql rewritten: rebuild and run the test again")
		return
	}
	if got := snapshotVersion(); got != SchemaVersion {
		t.Fatalf("schema.sql holds version %d, the migrations %d: regenerate it with\n"+
			"go test ./memory/sqlite -run '^TestSchemaSnapshotMatchesMigrations$' -update-schema", got, SchemaVersion)
	}
	if got, want := schemaSnapshot, schemaSQL(t, stepwise); got != want {
		t.Errorf("schema.sql differs from what the migrations make: regenerate it (-update-schema)")
	}

	fresh := openRaw(t, "fresh.db")
	if err := migrate(context.Background(), fresh); err != nil {
		t.Fatal(err)
	}
	var firstApplied, lastApplied int64
	if err := fresh.QueryRow(`SELECT min(applied_at), max(applied_at) FROM schema_migrations`).Scan(&firstApplied, &lastApplied); err != nil {
		t.Fatal(err)
	}
	if firstApplied != lastApplied {
		t.Errorf("a new database took the migrations one by one (applied_at %d … %d), not the snapshot", firstApplied, lastApplied)
	}
	want, got := schemaState(t, stepwise), schemaState(t, fresh)
	if !slices.Equal(got, want) {
		for _, line := range want {
			if !slices.Contains(got, line) {
				t.Errorf("missing from the snapshot's database: %s", line)
			}
		}
		for _, line := range got {
			if !slices.Contains(want, line) {
				t.Errorf("only in the snapshot's database: %s", line)
			}
		}
	}
}

// TestPartialSchemaTakesTheMigrations: a database that already holds part
// of the schema (here, at migration 3) is brought up to date step by step,
// never from the snapshot.
func TestPartialSchemaTakesTheMigrations(t *testing.T) {
	ctx := context.Background()
	w := openRaw(t, "partial.db")
	if _, err := w.ExecContext(ctx, createSchemaMigrationsSQL); err != nil {
		t.Fatal(err)
	}
	for _, m := range migrations[:3] {
		if err := apply(ctx, w, m); err != nil {
			t.Fatal(err)
		}
	}
	if created, err := createFromSnapshot(ctx, w); err != nil || created {
		t.Fatalf("createFromSnapshot on a database at version 3 = %v, %v; want false, nil", created, err)
	}
	if err := migrate(ctx, w); err != nil {
		t.Fatal(err)
	}
	stepwise := openRaw(t, "stepwise.db")
	migrateStepwise(t, stepwise)
	if got, want := schemaState(t, w), schemaState(t, stepwise); !slices.Equal(got, want) {
		t.Errorf("a database migrated from version 3 differs from one migrated from nothing:\n%s\nwant\n%s",
			strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// BenchmarkOpenNewStore is the cost of creating a store: every first start,
// and every test that opens a fresh one. Compare with
// BenchmarkMigrateStepwise, the schema made the way it was before the
// snapshot.
func BenchmarkOpenNewStore(b *testing.B) {
	for b.Loop() {
		db, err := Open(b.Context(), filepath.Join(b.TempDir(), "agents-mcp.db"))
		if err != nil {
			b.Fatal(err)
		}
		if err := db.Close(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkMigrateStepwise makes the schema of a new database with the
// migrations one by one, as Open did before schema.sql (the baseline of
// BenchmarkCreateFromSnapshot).
func BenchmarkMigrateStepwise(b *testing.B) {
	benchmarkSchema(b, func(ctx context.Context, w *sql.DB) error {
		if _, err := w.ExecContext(ctx, createSchemaMigrationsSQL); err != nil {
			return err
		}
		for _, m := range migrations {
			if err := apply(ctx, w, m); err != nil {
				return err
			}
		}
		return nil
	})
}

// BenchmarkCreateFromSnapshot makes the schema of a new database the way
// Open does.
func BenchmarkCreateFromSnapshot(b *testing.B) {
	benchmarkSchema(b, migrate)
}

func benchmarkSchema(b *testing.B, makeSchema func(context.Context, *sql.DB) error) {
	for b.Loop() {
		b.StopTimer()
		w, err := sql.Open("sqlite", dsn(filepath.Join(b.TempDir(), "s.db"), url.Values{"_journal_mode": {"WAL"}, "_synchronous": {"NORMAL"}}))
		if err != nil {
			b.Fatal(err)
		}
		w.SetMaxOpenConns(1)
		b.StartTimer()
		if err := makeSchema(b.Context(), w); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		w.Close()
		b.StartTimer()
	}
}
